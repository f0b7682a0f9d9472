// The amanda/caffe2/1.13 namespace (namespaces/caffe2/1.13.yaml, generated from Caffe2's operator
// schemas by scripts/gen_caffe2_namespace.py): it loads, every net of ../shared/caffe2/models
// validates against it with no problem (no unknown op, no unknown argument, ports named by the
// schemas), and a net with an op or an argument Caffe2 does not have, or too many inputs, is
// reported.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <google/protobuf/text_format.h>

#include "amanda/schema/registry.h"
#include "amanda/schema/validate.h"
#include "amanda_caffe2.pb.h"
#include "netdef.h"
#include "test_files.h"

namespace amanda::caffe2_frontend {
namespace {

namespace fs = std::filesystem;
using test_files::slurp;

const fs::path kModels = AMANDA_CAFFE2_MODELS;

text::Document read_model(const fs::path& dir) {
  if (fs::exists(dir / "predict_net.pb")) {
    std::string p = slurp(dir / "predict_net.pb");
    std::optional<std::string> i;
    if (fs::exists(dir / "init_net.pb")) i = slurp(dir / "init_net.pb");
    std::optional<NetBytes> ib;
    if (i) ib = NetBytes{*i, false};
    return import_net({p, false}, ib);
  }
  std::string t = slurp(dir / "predict_net.pbtxt");
  return import_net({t, true}, std::nullopt);
}

TEST(Caffe2Namespace, Loads) {
  auto reg = schema::make_default_registry();
  const schema::NamespaceSchema* ns = reg->find(kCaffe2Namespace);
  ASSERT_NE(ns, nullptr);
  EXPECT_GT(ns->ops.size(), 600u);
  const schema::OpSchema* conv = ns->find("Conv");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->inputs.size(), 3u);
  EXPECT_EQ(conv->inputs[1].expected_name(), "filter");
  EXPECT_NE(conv->attr("kernel_h"), nullptr);  // ConvPoolOpBase's arguments
  EXPECT_NE(ns->find("SpatialBN"), nullptr);
  EXPECT_NE(ns->find("GivenTensorFill"), nullptr);
  EXPECT_NE(ns->find("EQ"), nullptr);  // declared through a macro
}

TEST(Caffe2Namespace, EveryModelValidates) {
  auto reg = schema::make_default_registry();
  int models = 0;
  size_t ops = 0;
  for (const auto& e : fs::directory_iterator(kModels)) {
    SCOPED_TRACE(e.path().string());
    text::Document doc = read_model(e.path());
    Diagnostics diags;
    schema::ValidationResult r = schema::validate(doc.graph, *reg, diags);
    EXPECT_TRUE(r.ok()) << diags.str();
    EXPECT_GT(r.ops_checked, 10u);
    ops += r.ops_checked;
    ++models;
  }
  EXPECT_EQ(models, 7);
  std::printf("validated %zu ops of %d nets\n", ops, models);
}

TEST(Caffe2Namespace, ProblemsAreReported) {
  auto reg = schema::make_default_registry();
  const char* bad = R"pb(
    op { input: "x" output: "y" type: "NoSuchOp" }
    op { input: "y" output: "z" type: "Relu" arg { name: "no_such_arg" i: 1 } }
    op { input: "z" input: "z" input: "z" output: "w" type: "Relu" }
    op { input: "w" input: "k" output: "v" type: "Conv" arg { name: "order" i: 3 } }
    external_input: "x" external_input: "k")pb";
  text::Document doc = import_net({bad, true}, std::nullopt);
  Diagnostics diags;
  schema::ValidationResult r = schema::validate(doc.graph, *reg, diags);
  std::string s = diags.str();
  EXPECT_NE(s.find("unknown op type 'NoSuchOp'"), std::string::npos) << s;
  EXPECT_NE(s.find("no_such_arg"), std::string::npos) << s;
  EXPECT_NE(s.find("order"), std::string::npos) << s;  // a string argument given an int
  EXPECT_GE(r.problems, 4u) << s;
}

}  // namespace
}  // namespace amanda::caffe2_frontend
