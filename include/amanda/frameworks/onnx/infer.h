// Type and shape inference for graphs in the ONNX namespaces, with libonnx's own per-op inference
// functions (each OpSchema's TypeAndShapeInferenceFunction, or the function body's when an op is
// defined by one), driven through an onnx::InferenceContext implemented over ir::Graph: no
// ModelProto is built. Subgraphs (If, Loop, Scan) are inferred through GraphInferencer, with outer
// values reached through the capture ports.
//
// The rules follow onnx::shape_inference (1.12) so that results agree with
// `onnx.shape_inference.infer_shapes(model, strict_mode=True)`: nodes in body order; initializers
// (and Constant outputs) are input data; a declared type (value_info, graph input/output) is merged
// with the inferred one (mergeShapesAndTypes: a known dimension is kept, others take the
// inferred one) and a conflict is an error. Unknown dimensions stay unknown (libonnx names them
// `unk__N`); symbolic dimensions flow as the graph's interned symbols.
#pragma once

#include <string>
#include <vector>

#include "amanda/ir/graph.h"

namespace amanda::onnx_frontend {

struct InferOptions {
  // Also write the results as the `@type`/`@shape` (graph ports: `type`/`shape`) attributes that
  // the exporter turns into value_info. Off: only the ports' TypeIds change.
  bool write_attrs = true;
  // Also propagate the values of small integer tensors (onnx's data propagation, `data_prop=True`
  // of onnx.shape_inference.infer_shapes): Shape, Gather, Concat, ... computed from the inferred
  // shapes, so that a Reshape whose shape input is computed gets [N, ...]. libonnx's propagation
  // functions, and ours for the ops it has none for (data_prop.h: Div, Identity).
  bool data_propagation = false;
};

struct InferResult {
  size_t ops = 0;            // ops visited (nested ones included)
  size_t inferred = 0;       // ops whose inference function ran without error
  size_t no_schema = 0;      // ops with no schema at the graph's opset (custom domains, ...)
  size_t typed_ports = 0;    // output ports with a type afterwards
  std::vector<std::string> errors;  // "path: message", one per failing op, in order
  bool ok() const { return errors.empty(); }
};

// Infers every op output of `g` (an imported ONNX graph, or any graph in amanda/onnx/V).
InferResult infer_types(ir::Graph& g, const InferOptions& options = {});

}  // namespace amanda::onnx_frontend
