#include "frontends/torchscript/pickle.h"
