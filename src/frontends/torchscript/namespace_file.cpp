#include "frontends/torchscript/namespace_file.h"
