#include "frontends/torchscript/ast.h"
