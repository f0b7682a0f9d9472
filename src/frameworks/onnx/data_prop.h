// Data propagation for ops whose libonnx (1.12) schema has none: the values of small integer
// tensors (shapes and their arithmetic) computed at inference time, so that a Reshape or Expand
// whose shape input is computed from Shape(x) gets x's symbolic dimensions. One entry per op;
// libonnx's own functions (Shape, Gather, Slice, Concat, Unsqueeze, Squeeze, Cast, Add, Sub, Mul,
// Size; Add, Sub, Mul from opset 14) are used where they exist, and an op here never replaces
// one of them.
#pragma once

#include <functional>
#include <string_view>

#include <onnx/defs/shape_inference.h>
#include <onnx/onnx_pb.h>

namespace amanda::onnx_frontend::detail {

using DataPropFn = std::function<void(onnx::DataPropagationContext&)>;

// The propagation function of an ai.onnx op that libonnx lacks one for, or nullptr.
const DataPropFn* extra_data_propagation(std::string_view op_type);

// Output shapes from propagated values, for ai.onnx ops whose libonnx (1.12) inference function
// reads only constant data, never getSymbolicInput (Reshape). Runs after libonnx's function, only
// when that one gave output 0 no shape; writes the shape into `out` (output 0's inferred type).
using ShapeFromDataFn = std::function<void(onnx::InferenceContext&, onnx::TypeProto& out)>;
const ShapeFromDataFn* shape_from_data(std::string_view op_type);

}  // namespace amanda::onnx_frontend::detail
