#include "frontends/torchscript/zip.h"
