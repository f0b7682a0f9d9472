// The GivenTensor*Fill family: an init net's op that fills one blob with literal values, as a
// tensor and back (docs/caffe2.md, "Init nets"). One entry per op type: the element type it makes
// and the Argument field its `values` use.
#pragma once

#include <optional>
#include <string_view>

#include "amanda/ir/tensor.h"
#include "amanda_caffe2.pb.h"

namespace amanda::caffe2_frontend::detail {

struct FillResult {
  ir::Tensor tensor;
  bool default_fill = true;  // the op is the one fill_for(tensor.dtype) names
  bool shape_first = false;  // `shape` came before `values`
};

// The tensor of a plain fill: no inputs, one output, exactly the arguments `values` and `shape`,
// as many values as the shape holds, and no other field. Otherwise nullopt (the op stays an op).
std::optional<FillResult> read_fill(const amanda_caffe2::OperatorDef& op);

// The same straight from an OperatorDef's wire bytes, without protobuf (an init net is almost all
// fills of large tensors; docs/caffe2.md, "How the bytes are read and written"). Strict: anything
// read_fill would not take, or any field it does not expect, gives nullopt and the op is parsed by
// protobuf instead. `blob` and `type` view `bytes`.
struct WireFill {
  FillResult fill;
  std::string_view blob, type;
};
std::optional<WireFill> read_fill_wire(std::string_view bytes);

// Appends the NetDef field `op` (tag, length, OperatorDef bytes) of the fill of `t` that writes
// `blob`, in protobuf's own serialisation (fields in number order, repeated floats unpacked).
// Throws like write_fill.
void write_fill_wire(const ir::Tensor& t, std::string_view type, bool shape_first, const std::string& blob, std::string& out);

// The fill op type for an element type ("" when Caffe2 has none).
std::string_view fill_for(ir::DType t);

// Writes the fill of `t` into `op` (its output set by the caller). `type`: the op type ("" for
// fill_for). Throws amanda::Error naming `blob` when Caffe2 has no fill for the element type.
void write_fill(const ir::Tensor& t, std::string_view type, bool shape_first, const std::string& blob,
                amanda_caffe2::OperatorDef& op);

}  // namespace amanda::caffe2_frontend::detail
