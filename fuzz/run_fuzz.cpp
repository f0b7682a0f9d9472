// libFuzzer target: `amanda run` on small models (an ONNX ModelProto: the seeds are small
// generated models of the ops issue 32 names: Div/Mod of INT_MIN, Loop, Range, ConstantOfShape,
// Expand, Tile, EyeLike, Slice of huge shapes), with inputs of zeros, under small budgets.
// Property: the run ends with a result or an amanda::Error (a budget, a kernel's refusal), never a
// crash, a signal (SIGFPE), a hang or an allocation past the budget (-rss_limit_mb).
#include <cstdio>
#include <cstdlib>

#include <google/protobuf/stubs/logging.h>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/interp/executor.h"
#include "files_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amanda;
  fuzz::small_budgets();
  std::unique_ptr<text::Document> doc;
  try {
    doc = std::make_unique<text::Document>(
        onnx_frontend::import_model_buffer(make_buffer(std::string(reinterpret_cast<const char*>(data), size))));
  } catch (const Error&) {
    return 0;
  } catch (const ParseError&) {
    return 0;
  }
  try {
    interp::Executor ex(doc->graph);
    if (!ex.missing_kernels().empty()) return 0;
    std::map<std::string, interp::RValue> feeds;
    for (const auto& s : ex.inputs()) {
      if (s.has_initializer) continue;
      if (!s.has_shape || s.dtype == ir::DType::Undefined || s.dtype == ir::DType::String) return 0;
      interp::Shape shape;
      for (int64_t d : s.shape) shape.push_back(d < 0 ? 1 : d);
      feeds.emplace(s.name, interp::RValue(interp::Tensor(s.dtype, shape)));  // (charged: the budget refuses huge shapes)
    }
    ex.run(feeds);
  } catch (const Error&) {
  } catch (const ParseError&) {
  }
  return 0;
}
