// TensorFlow -> ONNX beyond the tables: a TensorFlow graph has no graph ports (its placeholders are
// the inputs, the outputs are what the caller fetches), TF1 loops and conds are frames of ops that
// become ONNX Loop/If, and after the tables the outputs need their value names and every value
// its type (docs/tensorflow.md, "Conversion to ONNX").
#include "amanda/frameworks/onnx/infer.h"
#include "amanda/frameworks/tensorflow/onnx_boundary.h"
#include "amanda/pipeline/pipeline.h"

namespace amanda::conversions {

namespace {

void finish(ir::Graph& g) {
  // The ops the tables made have no value names or types yet: the graph outputs need both.
  tf_frontend::name_onnx_outputs(g);
  if (!g.ops_of_type("Loop").empty()) {
    // TF1 loops: the bodies' inputs and the Loops' outputs take the ranks inference gives around them.
    onnx_frontend::InferOptions first;
    first.write_attrs = false;
    for (int round = 0; round < 4; ++round) {
      try {
        onnx_frontend::infer_types(g, first);
      } catch (const std::exception&) {
      }
      if (!tf_frontend::type_loop_bodies(g)) break;
    }
  }
  onnx_frontend::InferOptions o;
  o.write_attrs = true;
  try {
    onnx_frontend::infer_types(g, o);
  } catch (const std::exception&) {
  }
}

class TensorFlowToOnnx final : public pipeline::ConversionExtension {
 public:
  std::string_view name() const override { return "tensorflow-onnx"; }
  bool applies(std::string_view from, std::string_view to) const override {
    // PyTorch is reached from TensorFlow through ONNX (the planner's chain, issue 29): the same
    // boundary; the finish (ONNX value_info) only when ONNX is the target.
    return from.starts_with("amanda/tensorflow/") && (to.starts_with("amanda/onnx/") || to.starts_with("amanda/pytorch/"));
  }
  void contribute_passes(pipeline::PassList& passes, const pipeline::ConversionInfo& info) const override {
    passes.add({"tensorflow-onnx.boundary", pipeline::Stage::Boundary,
                "placeholders become graph inputs, fetched tensors graph outputs; TF1 loops and conds become Loop and If",
                [](pipeline::PassContext& c) { tf_frontend::make_onnx_boundary(c.doc.graph, c.request.options.all("outputs")); }});
    if (!info.target_ns.starts_with("amanda/onnx/")) return;
    passes.add({"tensorflow-onnx.finish", pipeline::Stage::Finish,
                "graph outputs take their names; every value its inferred type and shape (value_info)",
                [](pipeline::PassContext& c) { finish(c.doc.graph); }});
  }
};

}  // namespace

std::unique_ptr<pipeline::ConversionExtension> make_tensorflow_to_onnx() { return std::make_unique<TensorFlowToOnnx>(); }

}  // namespace amanda::conversions
