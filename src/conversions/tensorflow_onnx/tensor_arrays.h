// (tensor_arrays.cpp) TF1 TensorArrayV3 loops as the TensorList forms the TF1 loop lowering converts.
#pragma once

#include <cstddef>

#include "amanda/ir/graph.h"

namespace amanda::conversions {
size_t rewrite_tensor_arrays(ir::Graph& g);
}
