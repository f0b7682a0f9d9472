// ONNX -> TensorFlow beyond the tables: values no graph input changes (shapes computed with
// Shape -> Gather -> Concat, masks built from Range, ...) are folded into constants first, so that
// TF.js runs fewer ops and rules read shapes and bounds as constants.
#include "amanda/interp/fold.h"
#include "amanda/pipeline/pipeline.h"

namespace amanda::conversions {

namespace {

class OnnxToTensorFlow final : public pipeline::ConversionExtension {
 public:
  std::string_view name() const override { return "onnx-tensorflow"; }
  bool applies(std::string_view from, std::string_view to) const override {
    return from.starts_with("amanda/onnx/") && to.starts_with("amanda/tensorflow/");
  }
  void contribute_passes(pipeline::PassList& passes, const pipeline::ConversionInfo& info) const override {
    passes.add({"onnx-tensorflow.fold", pipeline::Stage::Prepare,
                "fold the values no graph input changes into constants (shapes, bounds, masks), typing between rounds",
                [](pipeline::PassContext& c) {
                  const pipeline::Framework* f = pipeline::FrameworkRegistry::instance().for_namespace(c.info.source_ns);
                  if (!f) return;
                  pipeline::InferRequest with_values;
                  with_values.propagate_values = true;
                  with_values.registry = &c.registry;
                  for (int round = 0; round < 8 && c.doc.graph.type_str(c.doc.graph.root()).starts_with("amanda/onnx/"); ++round) {
                    f->prepare(c.doc.graph, with_values);
                    if (!interp::fold_constants(c.doc.graph).folded) break;
                  }
                  pipeline::InferRequest plain;
                  plain.registry = &c.registry;
                  f->prepare(c.doc.graph, plain);
                }});
  }
};

}  // namespace

std::unique_ptr<pipeline::ConversionExtension> make_onnx_to_tensorflow() { return std::make_unique<OnnxToTensorFlow>(); }

}  // namespace amanda::conversions
