// The namespace registry: names and versions, hierarchical listing, folders and search paths,
// lazy loading, and resolution in versioned families.
#include <gtest/gtest.h>

#include "schema_test_util.h"

namespace amanda::schema::testing {
namespace {

TEST(Versions, Compare) {
  EXPECT_LT(compare_versions("1.13.1", "1.14"), 0);
  EXPECT_LT(compare_versions("1.14", "2.0"), 0);
  EXPECT_LT(compare_versions("9", "13"), 0);
  EXPECT_GT(compare_versions("1.10", "1.9"), 0);
  EXPECT_EQ(compare_versions("1.0", "1"), 0);
  EXPECT_EQ(compare_versions("01", "1"), 0);
  EXPECT_EQ(compare_versions("1.4.0", "1.4.0"), 0);
  EXPECT_GT(compare_versions("2.0", "1.99.99"), 0);
  EXPECT_TRUE(is_version("13"));
  EXPECT_TRUE(is_version("1.13.1"));
  EXPECT_FALSE(is_version("onnx"));
  EXPECT_FALSE(is_version(""));
}

TEST(Names, SplitVersion) {
  EXPECT_EQ(split_version("amanda/onnx/13"), (std::pair<std::string, std::string>{"amanda/onnx", "13"}));
  EXPECT_EQ(split_version("amanda/onnx/ai.onnx.ml/3"), (std::pair<std::string, std::string>{"amanda/onnx/ai.onnx.ml", "3"}));
  EXPECT_EQ(split_version("amanda/tensorflow/1.13.1"), (std::pair<std::string, std::string>{"amanda/tensorflow", "1.13.1"}));
  EXPECT_EQ(split_version("amanda/onnx"), (std::pair<std::string, std::string>{"amanda/onnx", ""}));
  EXPECT_EQ(split_version("13"), (std::pair<std::string, std::string>{"13", ""}));
}

TEST(Names, ANamespaceNameIsAPath) {
  for (const char* ok : {"amanda", "amanda/onnx/13", "amanda/onnx/ai.onnx.ml/3", "amanda/tensorflow/1.13.1", "my-org/x_y/v1+cu11"})
    EXPECT_TRUE(valid_namespace_name(ok)) << ok;
  struct Bad {
    const char* name;
    const char* why;
  };
  for (const Bad& b : {Bad{"", "empty"}, Bad{"/amanda/onnx", "starts or ends with '/'"}, Bad{"amanda/onnx/", "starts or ends with '/'"},
                       Bad{"amanda//onnx", "empty part"}, Bad{"amanda/../onnx", "'..' part"}, Bad{"amanda/./onnx", "'.' part"},
                       Bad{"amanda/tensor flow", "the character ' '"}, Bad{"amanda\\onnx", "the character '\\'"},
                       Bad{"amanda/onnx:13", "the character ':'"}}) {
    std::string why;
    EXPECT_FALSE(valid_namespace_name(b.name, &why)) << b.name;
    EXPECT_NE(why.find(b.why), std::string::npos) << b.name << ": " << why;
  }
}

// A family amanda/t with versions 1, 1.5 and 2 built from YAML text.
std::string family_schema(const std::string& version, const std::vector<std::string>& ops) {
  std::string s = "namespace:\n  name: amanda/t/" + version + "\n  type_system: python\n  op_schemas:\n";
  for (const auto& op : ops) s += "    - type: " + op + "\n      attrs: { v: {type: str, default: '" + version + "'} }\n";
  return s;
}

TEST(Registry, ResolutionInAFamilyTakesTheLargestVersionAtMostTheOneAsked) {
  Registry reg;
  reg.add(parse_schema(family_schema("1", {"A", "B"}), reg.type_systems()));
  reg.add(parse_schema(family_schema("2", {"B", "C"}), reg.type_systems()));
  reg.add(parse_schema(family_schema("1.5", {"A"}), reg.type_systems()));
  auto declared = [&](const char* ns, const char* op) -> std::string {
    const OpSchema* s = reg.resolve(ns, op);
    return s ? s->declared_in : "none";
  };
  EXPECT_EQ(declared("amanda/t/1", "A"), "amanda/t/1");
  EXPECT_EQ(declared("amanda/t/1.5", "A"), "amanda/t/1.5");
  EXPECT_EQ(declared("amanda/t/2", "A"), "amanda/t/1.5");
  EXPECT_EQ(declared("amanda/t/2", "B"), "amanda/t/2");
  EXPECT_EQ(declared("amanda/t/1.5", "B"), "amanda/t/1");
  EXPECT_EQ(declared("amanda/t/1", "C"), "none");  // only from 2 on
  EXPECT_EQ(declared("amanda/t/2", "D"), "none");
  EXPECT_EQ(declared("amanda/t", "A"), "none");  // the family itself declares nothing
  EXPECT_EQ(reg.list("amanda/t"), (std::vector<std::string>{"amanda/t/1", "amanda/t/1.5", "amanda/t/2"}));
}

TEST(Registry, UnversionedNamespacesResolveOnlyInThemselves) {
  Registry reg;
  reg.add(parse_schema("namespace: {name: amanda/adhoc, type_system: python, op_schemas: [{type: X}]}", reg.type_systems()));
  EXPECT_NE(reg.resolve("amanda/adhoc", "X"), nullptr);
  EXPECT_EQ(reg.resolve("amanda/adhoc", "Y"), nullptr);
  EXPECT_EQ(reg.resolve("amanda/nowhere", "X"), nullptr);
  EXPECT_EQ(reg.find("amanda/nowhere"), nullptr);
  EXPECT_FALSE(reg.known("amanda/nowhere"));
}

TEST(Registry, AddReplacesANamespaceOfTheSameName) {
  Registry reg;
  reg.add_provider(onnx_frontend::make_onnx_namespace_provider());
  size_t before = reg.list().size();
  reg.add(parse_schema("namespace: {name: amanda/onnx/13, type_system: onnx, op_schemas: [{type: Mine}]}", reg.type_systems()));
  EXPECT_EQ(reg.list().size(), before);
  EXPECT_NE(reg.resolve("amanda/onnx/13", "Mine"), nullptr);
  EXPECT_EQ(reg.find("amanda/onnx/13")->ops.size(), 1u);
  // Resolution still walks down to the generated opsets for the rest.
  EXPECT_NE(reg.resolve("amanda/onnx/13", "Conv"), nullptr);
}

TEST(Registry, ListIsHierarchical) {
  Registry reg;
  reg.add_folder(shipped_namespaces().string());
  reg.add_provider(onnx_frontend::make_onnx_namespace_provider());
  reg.add(parse_schema("namespace: {name: amanda/onnxruntime/1, type_system: onnx, op_schemas: []}", reg.type_systems()));
  auto onnx = reg.list("amanda/onnx");
  EXPECT_EQ(std::count(onnx.begin(), onnx.end(), "amanda/onnxruntime/1"), 0);  // a prefix is a whole path part
  EXPECT_EQ(reg.list("amanda/onnx/ai.onnx.ml"),
            (std::vector<std::string>{"amanda/onnx/ai.onnx.ml/1", "amanda/onnx/ai.onnx.ml/2", "amanda/onnx/ai.onnx.ml/3"}));
  EXPECT_EQ(reg.list("amanda/tensorflow"), (std::vector<std::string>{"amanda/tensorflow/1.13.1"}));
  EXPECT_EQ(reg.list("amanda/tensorflow/1.13.1"), (std::vector<std::string>{"amanda/tensorflow/1.13.1"}));
  EXPECT_TRUE(reg.list("amanda/tensor").empty());
  EXPECT_EQ(reg.list("amanda").size(), reg.list().size());
  EXPECT_EQ(reg.loaded_count(), 1u);  // only the one added directly
}

TEST(Registry, FoldersMapFilesToNamespaces) {
  TempDir dir;
  spit(dir / "tensorflow/2.0.yaml", "namespace: {name: amanda/tensorflow/2.0, type_system: python, op_schemas: [{type: Relu}]}\n");
  spit(dir / "amanda/custom/1.yml", "namespace: {name: amanda/custom/1, type_system: cpp, op_schemas: []}\n");
  spit(dir / "json/1.json", R"({"namespace": {"name": "amanda/json/1", "type_system": "python", "op_schemas": []}})");
  spit(dir / "notes.txt", "not a schema");
  spit(dir / "bad name/1.yaml", "namespace: {name: x, type_system: python}\n");
  spit(dir / "liar/1.yaml", "namespace:\n  name: amanda/someone/else\n  type_system: python\n");
  Registry reg;
  reg.add_folder(dir.path().string());
  EXPECT_EQ(reg.list(), (std::vector<std::string>{"amanda/custom/1", "amanda/json/1", "amanda/liar/1", "amanda/tensorflow/2.0"}));
  EXPECT_EQ(reg.loaded_count(), 0u);
  EXPECT_NE(reg.resolve("amanda/tensorflow/2.0", "Relu"), nullptr);
  EXPECT_EQ(reg.loaded_count(), 1u);
  EXPECT_NE(reg.find("amanda/json/1"), nullptr);
  // A file that declares another namespace than its place says is refused when it is read.
  try {
    reg.find("amanda/liar/1");
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    std::string m = strip(e.what(), dir.path().string() + "/");
    EXPECT_EQ(m, "liar/1.yaml:2:3: error: file liar/1.yaml is where namespace amanda/liar/1 should be, but it declares amanda/someone/else");
  }
  // A folder that does not exist adds nothing.
  reg.add_folder((dir / "nope").string());
  EXPECT_EQ(reg.list().size(), 4u);
}

TEST(Registry, SearchPathAndEnvironment) {
  TempDir a, b;
  spit(a / "x/1.yaml", "namespace: {name: amanda/x/1, type_system: python, op_schemas: []}\n");
  spit(b / "y/1.yaml", "namespace: {name: amanda/y/1, type_system: python, op_schemas: []}\n");
  Registry reg;
  reg.add_search_path(a.path().string() + "::" + b.path().string() + ":");
  EXPECT_TRUE(reg.known("amanda/x/1"));
  EXPECT_TRUE(reg.known("amanda/y/1"));

  const char* old = std::getenv("AMANDA_SCHEMA_PATH");
  std::string saved = old ? old : "";
  setenv("AMANDA_SCHEMA_PATH", (a.path().string() + ":" + b.path().string()).c_str(), 1);
  auto def = make_default_registry();
  if (old) setenv("AMANDA_SCHEMA_PATH", saved.c_str(), 1); else unsetenv("AMANDA_SCHEMA_PATH");
  EXPECT_TRUE(def->known("amanda/x/1"));
  EXPECT_TRUE(def->known("amanda/y/1"));
  EXPECT_TRUE(def->known("amanda/tensorflow/1.13.1"));  // the shipped ones too
  EXPECT_TRUE(def->known("amanda/pytorch/1.4.0"));
}

// A provider of namespaces built in code (the way the ONNX ones are made).
class CodeProvider final : public Provider {
 public:
  mutable int loads = 0;
  std::vector<std::string> names() const override { return {"amanda/code/1", "amanda/code/2"}; }
  std::unique_ptr<NamespaceSchema> load(const std::string& name, const TypeSystems&) const override {
    ++loads;
    auto ns = std::make_unique<NamespaceSchema>();
    ns->name = name;
    ns->type_system = "python";
    auto op = std::make_unique<OpSchema>();
    op->type = name == "amanda/code/1" ? "Old" : "New";
    AttrType t;
    t.type = "int";
    op->attrs.push_back({"k", t});
    ns->add(std::move(op));
    return ns;  // types are compiled by the registry
  }
};

TEST(Registry, ProvidersLoadLazilyAndOnce) {
  Registry reg;
  auto p = std::make_shared<CodeProvider>();
  reg.add_provider(p);
  EXPECT_EQ(p->loads, 0);
  EXPECT_TRUE(reg.known("amanda/code/2"));
  EXPECT_EQ(p->loads, 0);
  const OpSchema* old = reg.resolve("amanda/code/2", "Old");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->declared_in, "amanda/code/1");
  EXPECT_EQ(p->loads, 2);
  reg.resolve("amanda/code/2", "Old");
  EXPECT_EQ(p->loads, 2);
  EXPECT_EQ(reg.loaded_count(), 2u);
  // Its types were compiled: values are checked.
  Validated v = validate_text("graph:\n  namespace: amanda/code/2\n  ops:\n    - {type: Old, name: o, attrs: {k: x}}\n", reg);
  EXPECT_EQ(v.messages(), "o: error: attribute 'k': wrong type: 'x' is not of type 'int'\n");
}

TEST(Registry, NamespacesBuiltInCodeAreCompiledWhenAdded) {
  Registry reg;
  auto ns = std::make_unique<NamespaceSchema>();
  ns->name = "amanda/built/1";
  ns->type_system = "python";
  auto op = std::make_unique<OpSchema>();
  op->type = "Op";
  AttrType t;
  t.type = "List[int]";
  op->attrs.push_back({"dims", t});
  ns->add(std::move(op));
  EXPECT_THROW(ns->add(std::make_unique<OpSchema>(*ns->ops[0])), Error);  // duplicate type
  reg.add(std::move(ns));
  Validated v = validate_text("graph:\n  namespace: amanda/built/1\n  ops:\n    - {type: Op, name: o, attrs: {dims: [1, a]}}\n", reg);
  EXPECT_EQ(v.messages(), "o: error: attribute 'dims': wrong type: [1, 'a'] is not of type 'List[int]'\n");

  auto bad = std::make_unique<NamespaceSchema>();
  bad->name = "amanda/built/2";
  bad->type_system = "java";
  EXPECT_THROW(reg.add(std::move(bad)), Error);
}

}  // namespace
}  // namespace amanda::schema::testing
