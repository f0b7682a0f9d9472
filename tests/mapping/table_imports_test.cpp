// Table headers' `imports:` (a rule's op type PREFIX::T is op T of another namespace, as TF.js's
// fused ops appear in a TensorFlow graph), and the bits() function the TF StridedSlice rules use.
#include <gtest/gtest.h>

#include "amanda/io/io.h"
#include "amanda/mapping/engine.h"
#include "amanda/text/tree.h"

using namespace amanda;
using namespace amanda::mapping;

namespace {

std::unique_ptr<Table> table(const std::string& yaml) { return parse_table(text::parse_tree(yaml, text::Format::Yaml, "t.yaml")); }

std::string problems(const Table& t) {
  auto reg = io::default_registry();
  Diagnostics d;
  check_table(t, *reg, d);
  return d.str();
}

const char* kRule = R"yaml(
  rules:
    - rule_name: prelu
      src: {type: tfjs::Prelu, input_ports: [{name: x, ref: x}, {name: PORT, ref: a}], output_ports: [{name: output, ref: y}]}
      dst: {graph: "y = PRelu(x, a)"}
)yaml";

std::string with(const std::string& head, const std::string& port) {
  std::string r = kRule;
  r.replace(r.find("PORT"), 4, port);
  return head + r;
}

}  // namespace

TEST(TableImports, PrefixedTypesResolveInTheImportedNamespace) {
  std::string head = "table:\n  src: amanda/tensorflow/2.2\n  dst: amanda/onnx/13\n  imports: {tfjs: amanda/tensorflow/tfjs/4.22}\n";
  auto t = table(with(head, "alpha"));
  ASSERT_EQ(t->imports.size(), 1u);
  EXPECT_EQ(problems(*t), "");
  // the imported namespace's schema names the ports: a wrong one is reported
  EXPECT_NE(problems(*table(with(head, "slope"))).find("slope"), std::string::npos);
  // without the import the type is not in the src namespace
  std::string bare = "table:\n  src: amanda/tensorflow/2.2\n  dst: amanda/onnx/13\n";
  EXPECT_NE(problems(*table(with(bare, "alpha"))).find("'tfjs::Prelu' is not in namespace amanda/tensorflow/2.2"), std::string::npos);
  // two files of one (src, dst) pair must agree on a prefix
  TableSet set;
  set.add(table(with(head, "alpha")));
  std::string other = "table:\n  src: amanda/tensorflow/2.2\n  dst: amanda/onnx/13\n  imports: {tfjs: amanda/tensorflow/1.13.1}\n  rules: []\n";
  EXPECT_THROW(set.add(table(other)), ParseError);
  EXPECT_THROW(table("table:\n  src: amanda/tensorflow/2.2\n  dst: amanda/onnx/13\n  imports: [tfjs]\n  rules: []\n"), ParseError);
}

TEST(TableImports, BitsOfAMask) {
  auto eval = [](const std::string& e) { return value_str(parse_expr(e, {})->eval(Bindings{})); };
  EXPECT_EQ(eval("bits(6, 4)"), "[0, 1, 1, 0]");
  EXPECT_EQ(eval("bits(0, 3)"), "[0, 0, 0]");
  EXPECT_EQ(eval("bits(5, 0)"), "[]");
  EXPECT_EQ(eval("[7, 8, 9] * (1 - bits(5, 3))"), "[0, 8, 0]");
  EXPECT_THROW(eval("bits(1, 65)"), std::exception);
}
