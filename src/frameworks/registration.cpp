// The one file that names the built-in frameworks and the conversion extensions between them.
// Adding a framework: one line here, its folder under src/frameworks/, its library linked into
// amanda_frameworks (CMakeLists.txt). See docs/architecture.md, "Adding a framework".
#include "amanda/pipeline/framework.h"

namespace amanda::frameworks {
std::unique_ptr<pipeline::Framework> make_onnx();
std::unique_ptr<pipeline::Framework> make_pytorch();
std::unique_ptr<pipeline::Framework> make_tensorflow();
std::unique_ptr<pipeline::Framework> make_text();
std::unique_ptr<pipeline::Framework> make_caffe2();
std::unique_ptr<pipeline::Framework> make_nd4j();
}  // namespace amanda::frameworks
namespace amanda::conversions {
std::unique_ptr<pipeline::ConversionExtension> make_tensorflow_to_onnx();
std::unique_ptr<pipeline::ConversionExtension> make_onnx_to_tensorflow();
std::unique_ptr<pipeline::ConversionExtension> make_nd4j_to_onnx();
}  // namespace amanda::conversions

namespace amanda::pipeline {

void register_builtin_frameworks(FrameworkRegistry& r) {
  // Detection ties go to the earlier registration; the text forms read what no other claims.
  r.add(frameworks::make_onnx());
  r.add(frameworks::make_pytorch());
  r.add(frameworks::make_tensorflow());
  r.add(frameworks::make_caffe2());
  r.add(frameworks::make_nd4j());
  r.add(frameworks::make_text());
  r.add(conversions::make_tensorflow_to_onnx());
  r.add(conversions::make_onnx_to_tensorflow());
  r.add(conversions::make_nd4j_to_onnx());
  // Without --to and without an output that says otherwise, a conversion aims at ONNX.
  r.set_default_target("onnx");
}

}  // namespace amanda::pipeline
