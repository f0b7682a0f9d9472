// Constant folding with the reference interpreter, for graphs of the ONNX namespace: every value
// that does not depend on a graph input (Constant ops, initializers, the Shape and Size of values
// whose shape is fully known, and what ops compute from those alone) is computed once and put in
// a Constant op; the ops that made it go away when nothing else reads them. Torch exports compute
// many shapes, slice bounds and masks this way (vit_b_16, swin_t), which a table into a namespace
// without dynamic shapes (amanda/core) needs as constants.
#pragma once

#include <cstddef>

#include "amanda/ir/graph.h"

namespace amanda::interp {

struct FoldResult {
  size_t folded = 0;   // values replaced by Constant ops
  size_t erased = 0;   // ops removed because nothing read them any more
  bool ran = false;    // false: nothing to fold, or the graph's inputs have no static shape
};

// Folds the root scope of `g` (an ONNX graph whose inputs have static shapes; else nothing is done).
FoldResult fold_constants(ir::Graph& g);

}  // namespace amanda::interp
