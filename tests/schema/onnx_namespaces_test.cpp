// The ONNX namespaces, generated from libonnx's registry:
//  - every opset of every domain exports to YAML (and JSON) and loads back equal;
//  - the registry's resolution (largest version <= V that declares the op) agrees with libonnx's
//    own OpSchemaRegistry::Schema(op, V, domain) for every op name and every version;
//  - the registry loads them lazily.
#include <gtest/gtest.h>

#include <onnx/defs/schema.h>

#include <map>
#include <set>

#include "schema_test_util.h"
#include "amanda/text/value_text.h"

namespace amanda::schema::testing {
namespace {

using onnx_frontend::onnx_namespace;
using onnx_frontend::onnx_namespace_family;

// Domain -> [first, last] opset, as libonnx has them ("" is ai.onnx).
std::map<std::string, std::pair<int, int>> domains() {
  const auto& m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  return {m.begin(), m.end()};
}

// The first difference between two namespaces, or "".
std::string diff(const NamespaceSchema& a, const NamespaceSchema& b) {
  if (a.name != b.name) return "name " + a.name + " vs " + b.name;
  if (a.type_system != b.type_system) return "type_system";
  if (a.ops.size() != b.ops.size()) return "op count " + std::to_string(a.ops.size()) + " vs " + std::to_string(b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const OpSchema &x = *a.ops[i], &y = *b.ops[i];
    std::string at = a.name + " " + x.type + ": ";
    if (x.type != y.type) return at + "type " + y.type;
    if (x.domain != y.domain) return at + "domain";
    if (x.since_version != y.since_version) return at + "since_version";
    if (x.deprecated != y.deprecated) return at + "deprecated";
    if (x.attrs.size() != y.attrs.size()) return at + "attr count";
    for (size_t j = 0; j < x.attrs.size(); ++j)
      if (!(x.attrs[j] == y.attrs[j])) {
        const AttrType &p = x.attrs[j].type, &q = y.attrs[j].type;
        return at + "attr " + x.attrs[j].name + " (" + text::value_to_text(p.value, text::Format::Json) + " vs " +
               text::value_to_text(q.value, text::Format::Json) + ", form " + std::to_string(int(p.form)) + "/" +
               std::to_string(int(q.form)) + ")";
      }
    if (!(x.inputs == y.inputs)) return at + "inputs";
    if (!(x.outputs == y.outputs)) return at + "outputs";
    if (!(x.type_constraints == y.type_constraints)) return at + "type_constraints";
    if (x.ops.has_value() != y.ops.has_value() || x.edges.has_value() != y.edges.has_value()) return at + "body";
    if (x.declared_in != y.declared_in) return at + "declared_in";
  }
  return {};
}

class OnnxNamespaces : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new Registry;
    reg_->add_provider(onnx_frontend::make_onnx_namespace_provider());
  }
  static void TearDownTestSuite() {
    delete reg_;
    reg_ = nullptr;
  }
  static Registry* reg_;
};
Registry* OnnxNamespaces::reg_ = nullptr;

TEST_F(OnnxNamespaces, NamesCoverEveryDomainAndOpset) {
  std::vector<std::string> expected;
  for (const auto& [domain, range] : domains())
    for (int v = range.first; v <= range.second; ++v) expected.push_back(onnx_namespace(domain, v));
  std::vector<std::string> listed = reg_->list("amanda/onnx");
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> sorted = listed;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, expected);
  // The issue's opsets: ai.onnx 1-17, ai.onnx.ml 1-3, ai.onnx.preview.training 1.
  for (int v = 1; v <= 17; ++v) EXPECT_TRUE(reg_->known("amanda/onnx/" + std::to_string(v))) << v;
  for (int v = 1; v <= 3; ++v) EXPECT_TRUE(reg_->known("amanda/onnx/ai.onnx.ml/" + std::to_string(v))) << v;
  EXPECT_TRUE(reg_->known("amanda/onnx/ai.onnx.preview.training/1"));
  // Sorted by path, then version (9 before 10).
  auto at = [&](const std::string& n) { return std::find(listed.begin(), listed.end(), n) - listed.begin(); };
  EXPECT_LT(at("amanda/onnx/9"), at("amanda/onnx/10"));
  EXPECT_EQ(onnx_namespace_family(""), "amanda/onnx");
  EXPECT_EQ(onnx_namespace_family("ai.onnx"), "amanda/onnx");
  EXPECT_EQ(onnx_namespace("ai.onnx.ml", 3), "amanda/onnx/ai.onnx.ml/3");
}

TEST_F(OnnxNamespaces, EveryOpsetExportsAndLoadsBackEqual) {
  size_t namespaces = 0, ops = 0;
  for (const auto& name : reg_->list("amanda/onnx")) {
    const NamespaceSchema* ns = reg_->find(name);
    ASSERT_NE(ns, nullptr) << name;
    for (text::Format f : {text::Format::Yaml, text::Format::Json}) {
      std::string t = namespace_to_text(*ns, f);
      std::unique_ptr<NamespaceSchema> back;
      try {
        back = parse_namespace(text::parse_tree(t, f, name), reg_->type_systems());
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " (" << text::format_name(f) << "): " << e.what();
        continue;
      }
      EXPECT_EQ(diff(*ns, *back), "") << name << " (" << text::format_name(f) << ")";
      // And once more: the exported text is a fixed point.
      EXPECT_EQ(namespace_to_text(*back, f), t) << name;
    }
    ++namespaces;
    ops += ns->ops.size();
  }
  // Every schema libonnx has, in exactly one namespace.
  size_t lib = 0;
  auto ds = domains();
  for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history())
    if (ds.count(s.domain()) && s.SinceVersion() >= ds[s.domain()].first && s.SinceVersion() <= ds[s.domain()].second) ++lib;
  EXPECT_EQ(ops, lib);
  EXPECT_EQ(namespaces, reg_->list("amanda/onnx").size());
  RecordProperty("onnx_namespaces", std::to_string(namespaces));
  RecordProperty("onnx_op_schemas", std::to_string(ops));
  std::cout << "[ figures  ] " << namespaces << " ONNX namespaces (" << ops << " op schemas) exported to YAML and JSON and loaded back equal\n";
}

TEST_F(OnnxNamespaces, ExportThroughTheToolLoadsBack) {
  TempDir tmp;
  for (const std::string name : {"amanda/onnx/13", "amanda/onnx/ai.onnx.ml/3"}) {
    fs::path out = tmp / "exported.yaml";
    RunResult r = run_amanda({"schema", "export", name, "-o", out.string()});
    ASSERT_EQ(r.code, 0) << r.err;
    auto back = read_namespace(out.string(), reg_->type_systems());
    EXPECT_EQ(diff(*reg_->find(name), *back), "") << name;
    // A graph validated with the exported file as --schema gives the same answers.
    r = run_amanda({"schema", "export", name, "--to", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto json = parse_namespace(text::parse_tree(r.out, text::Format::Json, "stdout"), reg_->type_systems());
    EXPECT_EQ(diff(*reg_->find(name), *json), "") << name;
  }
}

// What resolution must agree on: the schema libonnx returns and ours describe the same thing.
std::string compare(const onnx::OpSchema& lib, const OpSchema& ours) {
  std::string at = lib.domain() + "::" + lib.Name() + " v" + std::to_string(lib.SinceVersion()) + ": ";
  if (ours.type != lib.Name()) return at + "name " + ours.type;
  if (ours.since_version != lib.SinceVersion())
    return at + "since_version " + (ours.since_version ? std::to_string(*ours.since_version) : "none");
  if (ours.domain != (lib.domain().empty() ? "ai.onnx" : lib.domain())) return at + "domain " + ours.domain;
  if (ours.deprecated != lib.Deprecated()) return at + "deprecated";
  if (ours.attrs.size() != lib.attributes().size()) return at + "attribute count";
  for (const auto& [name, a] : lib.attributes()) {
    const AttrSchema* x = ours.attr(name);
    if (!x) return at + "no attribute " + name;
    if (x->type.required() != a.required) return at + "attribute " + name + " required";
  }
  auto ports = [&](const std::vector<onnx::OpSchema::FormalParameter>& l, const std::vector<PortSchema>& o,
                   const char* side) -> std::string {
    if (l.size() != o.size()) return at + side + " count";
    for (size_t i = 0; i < l.size(); ++i) {
      if (o[i].expected_name() != l[i].GetName()) return at + side + " " + l[i].GetName() + " name";
      if (o[i].type != l[i].GetTypeStr()) return at + side + " " + l[i].GetName() + " type";
      Arity want = l[i].GetOption() == onnx::OpSchema::Single     ? Arity::Single
                   : l[i].GetOption() == onnx::OpSchema::Optional ? Arity::Optional
                                                                   : Arity::Variadic;
      if (o[i].arity != want) return at + side + " " + l[i].GetName() + " arity";
      if (want == Arity::Variadic && (o[i].min_arity != static_cast<uint32_t>(l[i].GetMinArity()) ||
                                      o[i].homogeneous != l[i].GetIsHomogeneous()))
        return at + side + " " + l[i].GetName() + " variadic";
    }
    return {};
  };
  if (auto d = ports(lib.inputs(), ours.inputs, "input"); !d.empty()) return d;
  if (auto d = ports(lib.outputs(), ours.outputs, "output"); !d.empty()) return d;
  if (ours.type_constraints.size() != lib.typeConstraintParams().size()) return at + "type constraint count";
  for (size_t i = 0; i < ours.type_constraints.size(); ++i)
    if (ours.type_constraints[i].name != lib.typeConstraintParams()[i].type_param_str ||
        ours.type_constraints[i].allowed != lib.typeConstraintParams()[i].allowed_type_strs)
      return at + "type constraint " + ours.type_constraints[i].name;
  return {};
}

// Every op name libonnx knows (of any domain), asked in every domain at every version of that
// domain: libonnx and the registry return the same schema, or both none.
TEST_F(OnnxNamespaces, ResolutionAgreesWithLibonnxForEveryOpAndVersion) {
  std::set<std::string> names;
  for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) names.insert(s.Name());
  size_t checks = 0, found = 0, failures = 0;
  for (const auto& [domain, range] : domains()) {
    for (int v = range.first; v <= range.second; ++v) {
      std::string ns = onnx_namespace(domain, v);
      for (const auto& name : names) {
        const onnx::OpSchema* lib = onnx::OpSchemaRegistry::Schema(name, v, domain);
        const OpSchema* ours = reg_->resolve(ns, name);
        ++checks;
        if (!lib || !ours) {
          if (lib != nullptr || ours != nullptr) {
            ++failures;
            ADD_FAILURE() << ns << " " << name << ": libonnx " << (lib ? "has" : "has no") << " schema, we have "
                          << (ours ? ours->declared_in : "none");
          }
          continue;
        }
        ++found;
        std::string d = compare(*lib, *ours);
        if (!d.empty()) {
          ++failures;
          ADD_FAILURE() << ns << ": " << d;
        }
        // And the namespace it was declared in is the libonnx since_version's.
        if (ours->declared_in != onnx_namespace(domain, lib->SinceVersion())) {
          ++failures;
          ADD_FAILURE() << ns << " " << name << " declared in " << ours->declared_in;
        }
        if (failures > 20) FAIL() << "too many differences";
      }
    }
  }
  // The issue's ranges are all covered.
  EXPECT_GE(domains()[""].second, 17);
  EXPECT_GE(domains()["ai.onnx.ml"].second, 3);
  EXPECT_TRUE(domains().count("ai.onnx.preview.training"));
  EXPECT_GT(found, 1000u);
  RecordProperty("resolution_checks", std::to_string(checks));
  std::cout << "[ figures  ] " << checks << " resolution checks (" << found << " with a schema) agree with libonnx\n";
}

// Spot checks that make the rule visible.
TEST_F(OnnxNamespaces, ResolutionPicksTheLargestVersionAtMostTheOneAsked) {
  struct Case {
    const char* ns;
    const char* op;
    int since;
  };
  for (const Case& c : {Case{"amanda/onnx/13", "Conv", 11}, Case{"amanda/onnx/10", "Conv", 1}, Case{"amanda/onnx/11", "Conv", 11},
                        Case{"amanda/onnx/17", "Relu", 14}, Case{"amanda/onnx/5", "Reshape", 5}, Case{"amanda/onnx/4", "Reshape", 1},
                        Case{"amanda/onnx/ai.onnx.ml/3", "LabelEncoder", 2}, Case{"amanda/onnx/ai.onnx.ml/1", "LabelEncoder", 1},
                        Case{"amanda/onnx/ai.onnx.preview.training/1", "Gradient", 1}}) {
    const OpSchema* s = reg_->resolve(c.ns, c.op);
    ASSERT_NE(s, nullptr) << c.ns << " " << c.op;
    EXPECT_EQ(s->since_version, c.since) << c.ns << " " << c.op;
  }
  EXPECT_EQ(reg_->resolve("amanda/onnx/11", "Einsum"), nullptr);  // since 12
  EXPECT_NE(reg_->resolve("amanda/onnx/12", "Einsum"), nullptr);
  EXPECT_EQ(reg_->resolve("amanda/onnx/13", "LabelEncoder"), nullptr);  // another domain
  EXPECT_EQ(reg_->resolve("amanda/onnx/13", "NoSuchOp"), nullptr);
}

// A model importing several domains: each prefixed op resolves in its own domain at the imported
// version; a nested graph may import other versions.
TEST_F(OnnxNamespaces, ImportsResolveEachDomainInItsOwnVersion) {
  const char* graph = R"(
graph:
  namespace: amanda/onnx/13
  attrs:
    imports: { ai.onnx.ml: amanda/onnx/ai.onnx.ml/3, ai.onnx.preview.training: amanda/onnx/ai.onnx.preview.training/1 }
  ops:
    - type: ai.onnx.ml::LabelEncoder
      name: enc
      attrs: { keys_strings: [a, b], values_int64s: [1, 2] }
      input_ports: [{name: X}]
      output_ports: [{name: Y}]
    - type: Relu
      name: relu
      input_ports: [{name: X}]
      output_ports: [{name: Y}]
    - type: ai.onnx.preview.training::Gradient
      name: grad
      attrs: { xs: [x], y: loss }
      input_ports: [{name: Inputs.0}]
      output_ports: [{name: Outputs.0}]
    - type: If
      name: branch
      attrs:
        then_branch: !graph
          name: then
          attrs:
            imports: { ai.onnx.ml: amanda/onnx/ai.onnx.ml/1 }
          ops:
            - type: ai.onnx.ml::LabelEncoder
              name: enc
              attrs: { keys_strings: [a, b], values_int64s: [1, 2] }
              input_ports: [{name: X}]
              output_ports: [{name: Y}]
        else_branch: !graph
          name: else
          ops:
            - type: ai.onnx.ml::LabelEncoder
              name: enc
              attrs: { keys_strings: [a, b], values_int64s: [1, 2] }
              input_ports: [{name: X}]
              output_ports: [{name: Y}]
      input_ports: [{name: cond}]
      output_ports: [{name: outputs}]
)";
  Validated v = validate_text(graph, *reg_);
  EXPECT_EQ(v.result.ops_checked, 6u);
  // Only the then-branch, which imports ai.onnx.ml opset 1 (LabelEncoder v1: classes_strings...).
  EXPECT_EQ(v.messages(),
            "branch/then/enc: error: unknown attribute 'keys_strings' on op type LabelEncoder of amanda/onnx/ai.onnx.ml/1 "
            "(its attributes: classes_strings, default_int64, default_string)\n"
            "branch/then/enc: error: unknown attribute 'values_int64s' on op type LabelEncoder of amanda/onnx/ai.onnx.ml/1 "
            "(its attributes: classes_strings, default_int64, default_string)\n");
  EXPECT_EQ(v.result.by_type.at("amanda/onnx/ai.onnx.ml/3 LabelEncoder").ops, 2u);
  EXPECT_EQ(v.result.by_type.at("amanda/onnx/ai.onnx.ml/1 LabelEncoder").ops, 1u);
  EXPECT_EQ(v.result.by_type.at("amanda/onnx/ai.onnx.preview.training/1 Gradient").problems, 0u);
  EXPECT_EQ(v.result.by_type.at("amanda/onnx/13 Relu").ops, 1u);
}

TEST(OnnxLaziness, LoadingOneOpsetDoesNotLoadTheOthers) {
  Registry reg;
  reg.add_provider(onnx_frontend::make_onnx_namespace_provider());
  reg.add_folder(shipped_namespaces().string());
  EXPECT_EQ(reg.loaded_count(), 0u);
  EXPECT_GE(reg.list().size(), 24u);
  EXPECT_TRUE(reg.known("amanda/onnx/13"));
  EXPECT_EQ(reg.loaded_count(), 0u);  // list and known read names only
  const NamespaceSchema* ns = reg.find("amanda/onnx/13");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(reg.loaded_count(), 1u);
  EXPECT_EQ(reg.find("amanda/onnx/13"), ns);  // cached
  EXPECT_EQ(reg.loaded_count(), 1u);
  // Conv was last declared in opset 11: resolving it in 13 reads 13, 12 and 11 and no more.
  const OpSchema* conv = reg.resolve("amanda/onnx/13", "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->declared_in, "amanda/onnx/11");
  EXPECT_EQ(reg.loaded_count(), 3u);
  // Validating an opset-13 graph of ops declared in 13 loads nothing else.
  Registry reg2;
  reg2.add_provider(onnx_frontend::make_onnx_namespace_provider());
  Validated v = validate_text(R"(
graph:
  namespace: amanda/onnx/13
  ops:
    - { type: Sigmoid, name: s, input_ports: [{name: X}], output_ports: [{name: Y}] }
)", reg2);
  EXPECT_TRUE(v.result.ok()) << v.messages();
  EXPECT_EQ(reg2.loaded_count(), 1u);
}

// ONNX attributes: defaults come from libonnx, optional ones without a default may be absent,
// float defaults compare as float32.
TEST_F(OnnxNamespaces, AttributeForms) {
  const OpSchema* conv = reg_->resolve("amanda/onnx/13", "Conv");
  ASSERT_NE(conv, nullptr);
  const AttrSchema* auto_pad = conv->attr("auto_pad");
  ASSERT_NE(auto_pad, nullptr);
  EXPECT_EQ(auto_pad->type.form, AttrType::Form::Default);
  EXPECT_EQ(auto_pad->type.value, ir::Value("NOTSET"));
  const AttrSchema* strides = conv->attr("strides");
  ASSERT_NE(strides, nullptr);
  EXPECT_EQ(strides->type.form, AttrType::Form::Type);
  EXPECT_TRUE(strides->type.optional);
  EXPECT_FALSE(strides->type.required());
  const OpSchema* lrn = reg_->resolve("amanda/onnx/13", "LRN");
  ASSERT_NE(lrn, nullptr);
  EXPECT_TRUE(lrn->attr("size")->type.required());
  const TypeSystem* onnx_types = reg_->type_systems().find("onnx");
  // alpha's default is float32(0.0001): 0.0001 written in a model is the same value.
  EXPECT_TRUE(onnx_types->equal(ir::Value(0.0001), lrn->attr("alpha")->type.value, *lrn->attr("alpha")->type.compiled));
  EXPECT_FALSE(onnx_types->equal(ir::Value(0.0002), lrn->attr("alpha")->type.value, *lrn->attr("alpha")->type.compiled));
  ValidateOptions opt;
  opt.drop_defaults = true;
  text::Document doc = parse_graph(R"(
graph:
  namespace: amanda/onnx/13
  ops:
    - type: LRN
      name: lrn
      attrs: { size: 3, alpha: 0.0001, beta: 0.75, bias: 1 }
      input_ports: [{name: X}]
      output_ports: [{name: Y}]
)");
  Diagnostics diags;
  ValidationResult r = validate(doc.graph, *reg_, diags, opt);
  EXPECT_TRUE(r.ok()) << diags.str();
  EXPECT_EQ(r.dropped, 3u);  // alpha, beta, bias; size has no default
}

}  // namespace
}  // namespace amanda::schema::testing
