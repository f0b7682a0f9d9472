// Ops the libtorch-free reader writes as other ops (decompose.cpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frameworks/torchscript/runtime.h"

namespace amanda::torchscript {

// Calls an op by its base name (`aten::slice`) with positional arguments, as the code would.
using CallOp = std::function<VRef(const std::string& base, std::vector<VRef> args)>;

// Helpers the decomposition files share: dimension `d` of a rank-`rank` tensor as an index
// (negative counts from the end; nothing when out of range), and a list value of ints.
inline std::optional<size_t> wrap_dim(int64_t d, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (d < -r || d >= r) return std::nullopt;
  return static_cast<size_t>(d < 0 ? d + r : d);
}
inline VRef int_list_value(const std::vector<int64_t>& v) {
  std::vector<VRef> items;
  items.reserve(v.size());
  for (int64_t x : v) items.push_back(make_int(x));
  return make_list(std::move(items));
}

// List-valued ops become one op per element, so that each element is a value of the graph:
// chunk / split / split_with_sizes / tensor_split / unsafe_* -> aten::slice per piece, unbind ->
// aten::select per index, broadcast_tensors -> aten::expand per tensor; stack -> aten::cat of
// aten::unsqueeze (ONNX has no op that takes or makes a list of a length only the graph knows).
// nullopt when the op is none of those or a size it needs is not known.
std::optional<VRef> decompose(const std::string& op_type, const Args& a, const CallOp& call);
// movedim / moveaxis -> aten::permute, roll -> aten::slice + aten::cat (decompose_layout.cpp;
// decompose() asks it for the ops it has no rule for).
std::optional<VRef> decompose_layout(const std::string& op_type, const Args& a, const CallOp& call);
// linalg_vector_norm / linalg_matrix_norm / linalg_norm -> abs, sum, amax, pow, ... (decompose_norms.cpp)
std::optional<VRef> decompose_norms(const std::string& op_type, const Args& a, const CallOp& call);

}  // namespace amanda::torchscript
