// (tensor_arrays.cpp) SameDiff's TF1 TensorArrays outside loops, as the tensors they hold.
#pragma once

#include <cstddef>

#include "amanda/ir/graph.h"

namespace amanda::conversions {
// Returns how many arrays became their tensors; leaves the others (the table then refuses their ops by name).
size_t rewrite_static_tensor_arrays(ir::Graph& g);
}  // namespace amanda::conversions
