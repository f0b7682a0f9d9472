#include "frontends/torchscript/importer.h"
