// ONNX -> TensorFlow beyond the tables: values no graph input changes (shapes computed with
// Shape -> Gather -> Concat, masks built from Range, ...) are folded into constants first, so that
// TF.js runs fewer ops and rules read shapes and bounds as constants.
#include "amanda/interp/fold.h"
#include "amanda/pipeline/pipeline.h"
#include "amanda/pipeline/fold.h"

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
                [](pipeline::PassContext& c) { pipeline::fold_and_type(c); }});
  }
};

}  // namespace

std::unique_ptr<pipeline::ConversionExtension> make_onnx_to_tensorflow() { return std::make_unique<OnnxToTensorFlow>(); }

}  // namespace amanda::conversions
