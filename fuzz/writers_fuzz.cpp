// libFuzzer target: the writers (issue 32). Input: a graph document in the YAML form (the seeds
// are TensorFlow, TF.js and ONNX graphs). It is written with every writer into a fresh output
// folder: ONNX (with external data), a GraphDef .pb and .pbtxt, a TF.js model.json, a SavedModel
// folder, YAML. Property: each writer creates only its format's files (never a name taken from
// the input), a writer that fails leaves nothing, and nothing outside the output folder changes.
#include <cstdio>
#include <cstdlib>

#include <google/protobuf/stubs/logging.h>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/savedmodel.h"
#include "amanda/frameworks/tensorflow/tfjs.h"
#include "amanda/support/gate.h"
#include "amanda/text/document.h"
#include "files_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

namespace {

using namespace amanda;

void check(const fuzz::Sandbox& box, const char* writer, bool ok, const std::string& allowed) {
  std::string bad = fuzz::unexpected_file(box.out, ok ? allowed : std::string("$^"));
  if (!bad.empty()) {
    std::fprintf(stderr, "the %s writer %s '%s'\n", writer, ok ? "made" : "failed and left", bad.c_str());
    std::abort();
  }
  fuzz::remove_tree(box.out);
  ::mkdir(box.out.c_str(), 0755);
}

template <class F>
bool attempt(F f) {
  try {
    f();
    return true;
  } catch (const Error&) {
    return false;
  } catch (const ParseError&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::small_budgets();
  std::unique_ptr<text::Document> doc;
  try {
    Diagnostics diags;
    doc = std::make_unique<text::Document>(
        text::parse(std::string_view(reinterpret_cast<const char*>(data), size), text::Format::Yaml, "in.yaml", diags));
  } catch (const Error&) {
    return 0;
  } catch (const ParseError&) {
    return 0;
  }
  fuzz::Sandbox box;
  const std::string o = box.out;
  bool ok = attempt([&] {
    onnx_frontend::ExportOptions eo;
    eo.external_data = true;
    eo.threshold = 16;
    onnx_frontend::write_model(*doc, o + "/m.onnx", eo);
  });
  check(box, "ONNX", ok, "m\\.onnx(\\.data)?");
  for (const char* name : {"/g.pb", "/g.pbtxt"}) {
    ok = attempt([&] {
      WriteGate out(o + name);
      tf_frontend::write_graph(*doc, out);
      out.commit();
    });
    check(box, "GraphDef", ok, std::string(name + 1) == "g.pb" ? "g\\.pb" : "g\\.pbtxt");
  }
  ok = attempt([&] {
    WriteGate out(o + "/model.json");
    tf_frontend::write_tfjs(*doc, out);
    out.commit();
  });
  check(box, "TF.js", ok, "model\\.json|group[0-9]+-shard[0-9]+of[0-9]+\\.bin");
  ok = attempt([&] {
    WriteGate out(o + "/sm");
    tf_frontend::write_saved_model(*doc, out);
    out.commit();
  });
  check(box, "SavedModel", ok, "sm(/saved_model\\.pb|/variables(/variables\\.(index|data-00000-of-00001))?)?");
  ok = attempt([&] { text::write_file(*doc, o + "/g.yaml", text::Format::Yaml); });
  check(box, "YAML", ok, "g\\.yaml(\\.data)?");
  if (!box.outside_intact()) {
    std::fprintf(stderr, "the folder outside the output changed\n");
    std::abort();
  }
  return 0;
}
