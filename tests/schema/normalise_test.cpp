// Normalising: --fill-defaults adds the attributes a schema gives a default for, --drop-defaults
// removes the ones equal to their default; one undoes the other.
#include <gtest/gtest.h>

#include "schema_test_util.h"

namespace amanda::schema::testing {
namespace {

text::Document read_seed(const char* name) {
  Diagnostics d;
  return text::read_file((golden_seed_dir() / name).string(), d);
}

std::string yaml_of(const text::Document& doc) { return text::to_text(doc, text::Format::Yaml); }

TEST(Normalise, DropThenFillGivesTheSeedGraphBack) {
  auto reg = tool_registry();
  text::Document doc = read_seed("tf_graph.yaml");
  const std::string original = yaml_of(doc);

  ValidateOptions drop;
  drop.drop_defaults = true;
  Diagnostics diags;
  ValidationResult r = validate(doc.graph, *reg, diags, drop);
  EXPECT_TRUE(r.ok()) << diags.str();
  // MatMul's transpose_a and transpose_b (false), VariableV2's container and shared_name ("").
  EXPECT_EQ(r.dropped, 4u);
  EXPECT_EQ(r.filled, 0u);
  ir::OpId mm = doc.graph.find_op(doc.graph.root(), "dense/MatMul");
  ASSERT_TRUE(mm);
  EXPECT_EQ(doc.graph.attr(mm, doc.graph.sym("transpose_a")), nullptr);
  EXPECT_NE(doc.graph.attr(mm, doc.graph.sym("T")), nullptr);  // no default: kept
  const std::string dropped = yaml_of(doc);
  EXPECT_EQ(dropped.find("transpose_a"), std::string::npos);
  EXPECT_EQ(dropped.find("shared_name"), std::string::npos);

  // The dropped graph is still valid, and filling brings back exactly what was there.
  ValidateOptions fill;
  fill.fill_defaults = true;
  diags.clear();
  r = validate(doc.graph, *reg, diags, fill);
  EXPECT_TRUE(r.ok()) << diags.str();
  EXPECT_EQ(r.filled, 4u);
  EXPECT_EQ(yaml_of(doc), original);

  // Filling a full graph changes nothing.
  diags.clear();
  r = validate(doc.graph, *reg, diags, fill);
  EXPECT_EQ(r.filled, 0u);
  EXPECT_EQ(yaml_of(doc), original);
}

constexpr const char* kSchema = R"(
namespace:
  name: amanda/norm/1
  type_system: python
  op_schemas:
    - type: Conv
      attrs:
        padding:
          one_of:
            - { type: str, constant: SAME }
            - { type: str, constant: VALID }
          default: VALID
        dilations: { type: "List[int]", default: [1, 1] }
        alpha: { type: float, default: 0.5 }
        groups: { type: int, optional: true }
        kind: { type: str, constant: conv }
      input_ports:
        - attrs:
            name: { type: str, constant: x }
            layout: { type: str, default: NCHW }
      output_ports:
        - attrs:
            name: { type: str, constant: y }
)";

TEST(Normalise, OneOfDefaultsPortAttributesAndNumbers) {
  Registry reg;
  reg.add(parse_schema(kSchema, reg.type_systems()));
  const char* graph = R"(
graph:
  namespace: amanda/norm/1
  ops:
    - type: Conv
      name: c
      attrs: { padding: VALID, dilations: [1, 1], alpha: 0.5, kind: conv }
      input_ports: [{ name: x, attrs: { layout: NCHW } }]
      output_ports: [{ name: y }]
    - type: Conv
      name: d
      input_ports: [{ name: x }]
)";
  text::Document doc = parse_graph(graph);
  ValidateOptions drop;
  drop.drop_defaults = true;
  Diagnostics diags;
  ValidationResult r = validate(doc.graph, reg, diags, drop);
  EXPECT_TRUE(r.ok()) << diags.str();
  EXPECT_EQ(r.dropped, 4u);  // padding (the one_of's default), dilations, alpha, layout; not the constant
  ir::OpId c = doc.graph.find_op(doc.graph.root(), "c");
  EXPECT_EQ(doc.graph.attrs(c).size(), 1u);
  EXPECT_TRUE(doc.graph.attrs(doc.graph.input(c, 0)).empty());

  ValidateOptions fill;
  fill.fill_defaults = true;
  diags.clear();
  r = validate(doc.graph, reg, diags, fill);
  EXPECT_TRUE(r.ok()) << diags.str();
  EXPECT_EQ(r.filled, 8u);  // four on each op: padding, dilations, alpha, the port's layout
  for (const char* name : {"c", "d"}) {
    ir::OpId op = doc.graph.find_op(doc.graph.root(), name);
    EXPECT_EQ(*doc.graph.attr(op, doc.graph.sym("padding")), ir::Value("VALID")) << name;
    EXPECT_EQ(*doc.graph.attr(op, doc.graph.sym("dilations")), ir::Value(ir::Value::List{1, 1})) << name;
    EXPECT_EQ(*doc.graph.attr(op, doc.graph.sym("alpha")), ir::Value(0.5)) << name;
    EXPECT_EQ(doc.graph.attr(op, doc.graph.sym("groups")), nullptr) << name;  // optional: no default to fill
    EXPECT_EQ(*doc.graph.attr(doc.graph.input(op, 0), doc.graph.sym("layout")), ir::Value("NCHW")) << name;
  }
}

TEST(Normalise, ValuesOnlyEqualToTheDefaultUnderTheTypeSystemAreDropped) {
  Registry reg;
  reg.add(parse_schema(kSchema, reg.type_systems()));
  // 0.5 written as 0.50 is the default; 1 for a float default 0.5 is not; [1, 1, 1] is not [1, 1].
  text::Document doc = parse_graph(R"(
graph:
  namespace: amanda/norm/1
  ops:
    - { type: Conv, name: c, attrs: { alpha: 0.50, dilations: [1, 1, 1], padding: SAME } }
)");
  ValidateOptions drop;
  drop.drop_defaults = true;
  Diagnostics diags;
  ValidationResult r = validate(doc.graph, reg, diags, drop);
  EXPECT_TRUE(r.ok()) << diags.str();
  EXPECT_EQ(r.dropped, 1u);
  ir::OpId c = doc.graph.find_op(doc.graph.root(), "c");
  EXPECT_EQ(doc.graph.attr(c, doc.graph.sym("alpha")), nullptr);
  EXPECT_NE(doc.graph.attr(c, doc.graph.sym("dilations")), nullptr);
}

TEST(Normalise, InvalidValuesAreNeitherDroppedNorHidden) {
  Registry reg;
  reg.add(parse_schema(kSchema, reg.type_systems()));
  text::Document doc = parse_graph(R"(
graph:
  namespace: amanda/norm/1
  ops:
    - { type: Conv, name: c, attrs: { padding: FULL } }
)");
  ValidateOptions both;
  both.drop_defaults = true;
  both.fill_defaults = true;
  Diagnostics diags;
  ValidationResult r = validate(doc.graph, reg, diags, both);
  EXPECT_EQ(diags.str(), "c: error: attribute 'padding': one_of mismatch: 'FULL' is not one of ('SAME', 'VALID')\n");
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_EQ(r.filled, 2u);  // dilations, alpha
}

// Through the tool: -o writes the normalised graph, only when it is valid.
TEST(Normalise, Tool) {
  TempDir tmp;
  std::string seed = (golden_seed_dir() / "tf_graph.yaml").string();
  RunResult r = run_amanda({"validate", seed, "--drop-defaults", "-o", (tmp / "dropped.yaml").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("(0 defaults filled, 4 dropped)"), std::string::npos) << r.err;
  std::string dropped = slurp(tmp / "dropped.yaml");
  EXPECT_EQ(dropped.find("transpose_a"), std::string::npos);

  r = run_amanda({"validate", (tmp / "dropped.yaml").string(), "--fill-defaults", "-o", (tmp / "filled.yaml").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("(4 defaults filled, 0 dropped)"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(tmp / "filled.yaml"), yaml_of(read_seed("tf_graph.yaml")));

  r = run_amanda({"validate", (golden_schema_dir() / "violations" / "wrong_type.yaml").string(), "--fill-defaults", "-o",
                  (tmp / "never.yaml").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_FALSE(fs::exists(tmp / "never.yaml"));
}

}  // namespace
}  // namespace amanda::schema::testing
