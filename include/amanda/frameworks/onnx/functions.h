// ONNX function bodies as a way down: an op that an older opset lacks but that ONNX defines as a
// function of other ops (LayerNormalization, NegativeLogLikelihoodLoss, CastLike, Range, the
// window functions, ...) is replaced by its body, taken from libonnx's schema (including the
// context-dependent builders, which read the op's attributes and input types). The body's ops are
// then converted like any other op of the graph.
#pragma once

#include <string>

#include "amanda/ir/graph.h"

namespace amanda::onnx_frontend {

// Replaces `op` (an op of the default ONNX domain in namespace `ns`, "amanda/onnx/N") by its
// function body inlined in op's scope. Returns "" when done, else why it cannot (no function in
// libonnx, an input type the builder needs is unknown, ...); then nothing has changed.
std::string expand_function(ir::Graph& g, ir::OpId op, const std::string& ns);

}  // namespace amanda::onnx_frontend

namespace amanda::onnx_frontend {
// Whether libonnx defines a function body (plain or context-dependent) for the op in opset `ns`.
bool has_function_body(const std::string& type, const std::string& ns);
// Whether a C++ lowering writes the op in opset `ns` when the table's rule for it refuses (ReduceSum
// with axes at run time, Slice/Pad/TopK with inputs at run time, ...: ConvertOptions::lowers_refused).
bool lowers_refused(const std::string& type, const std::string& ns);
}  // namespace amanda::onnx_frontend
