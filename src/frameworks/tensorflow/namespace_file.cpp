// The compact form of the TensorFlow namespaces (namespaces/tensorflow/**/*.tfops), written by
// scripts/gen_tf_namespaces.py. The seed-format JSON of amanda/tensorflow/2.2 is 1 MB and takes
// ~90 ms to load; this is 0.3 MB and reads in a few ms. It carries exactly the shapes the
// generator makes from an OpDef:
//
//   amanda-tfops 1                                first line: the format and its version
//   namespace<TAB>NAME<TAB>TYPE_SYSTEM
//   op<TAB>TYPE                                   an op; the lines below belong to it
//   attr<TAB>NAME<TAB>TYPE<TAB>FLAG<TAB>DEFAULT<TAB>ONE_OF
//        FLAG: '-' required, 'd' DEFAULT (JSON) is the default, '?' optional without a default;
//        ONE_OF: empty, or comma-separated constants of TYPE (allowed dtypes or strings)
//   in|out<TAB>ARITY<TAB>MIN<TAB>NAME<TAB>KEY=VALUE,...
//        ARITY '1' (single) or '*' (variadic, at least MIN); keys type_attr, number_attr,
//        type_list_attr (str constants), type (a DType constant), is_ref (=1: constant true)
//
// A port is what the seed's TensorFlow namespace writes (`name: {type: str, constant: a}`,
// `type_attr: {type: str, constant: T}`); the YAML/JSON forms of the same namespace
// (`amanda schema export`) load back equal.
#include <algorithm>
#include <filesystem>
#include <mutex>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "amanda/frameworks/tensorflow/namespaces.h"
#include "amanda/schema/compact_file.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"

namespace amanda::tf_frontend {

namespace {

constexpr std::string_view kMagic = "amanda-tfops 1";

schema::AttrType constant(std::string_view type, ir::Value v) {
  schema::AttrType a;
  a.form = schema::AttrType::Form::Constant;
  a.type = std::string(type);
  a.value = std::move(v);
  return a;
}

ir::Value from_json(const rapidjson::Value& j) {
  if (j.IsNull()) return ir::Value();
  if (j.IsBool()) return ir::Value(j.GetBool());
  if (j.IsInt64()) return ir::Value(j.GetInt64());
  if (j.IsNumber()) return ir::Value(j.GetDouble());
  if (j.IsString()) return ir::Value(std::string(j.GetString(), j.GetStringLength()));
  if (j.IsArray()) {
    ir::Value::List l;
    l.reserve(j.Size());
    for (const auto& x : j.GetArray()) l.push_back(from_json(x));
    return ir::Value(std::move(l));
  }
  ir::Value::Map m;
  for (const auto& kv : j.GetObject()) m.push_back({std::string(kv.name.GetString(), kv.name.GetStringLength()), from_json(kv.value)});
  return ir::Value(std::move(m));
}

// The .tfops lines on the shared compact reader: op lines carry the type alone, attribute lines
// their type, flag, default and one_of, port lines their arity, minimum, name and keys.
class Reader final : public schema::CompactReader {
 public:
  using CompactReader::CompactReader;

 private:
  std::string_view magic() const override { return kMagic; }
  std::string_view file_kind() const override { return "a .tfops"; }
  size_t max_fields() const override { return 6; }
  size_t op_fields() const override { return 2; }
  std::string_view op_usage() const override { return "op<TAB>TYPE"; }
  bool member(std::string_view tag, const std::string_view* f, size_t n, schema::OpSchema& op) override {
    if (tag == "attr") {
      if (n != 6 || f[1].empty()) fail("expected 'attr<TAB>NAME<TAB>TYPE<TAB>FLAG<TAB>DEFAULT<TAB>ONE_OF'");
      if (op.attr(f[1])) fail("attribute '" + std::string(f[1]) + "' given twice");
      op.attrs.push_back({std::string(f[1]), attr(f)});
      return true;
    }
    if (tag == "in" || tag == "out") {
      if (n != 5) fail("expected '" + std::string(tag) + "<TAB>ARITY<TAB>MIN<TAB>NAME<TAB>KEYS'");
      (tag == "in" ? op.inputs : op.outputs).push_back(port(f));
      return true;
    }
    return false;
  }

  ir::Value json(std::string_view s) {
    rapidjson::Document d;
    d.Parse<rapidjson::kParseNanAndInfFlag>(s.data(), s.size());
    if (d.HasParseError()) fail(std::string("bad default value: ") + rapidjson::GetParseError_En(d.GetParseError()));
    return from_json(d);
  }

  schema::AttrType attr(const std::string_view* f) {
    schema::AttrType t;
    std::string type(f[2]);
    if (type.empty()) fail("an attribute without a type");
    std::string_view flag = f[3], def = f[4], one_of = f[5];
    if (!one_of.empty()) {
      t.form = schema::AttrType::Form::OneOf;
      while (true) {
        size_t c = one_of.find(',');
        t.options.push_back(constant(type, ir::Value(one_of.substr(0, c))));
        if (c == std::string_view::npos) break;
        one_of.remove_prefix(c + 1);
      }
      if (flag == "d") t.one_of_default = json(def);
    } else if (flag == "d") {
      t.form = schema::AttrType::Form::Default;
      t.type = std::move(type);
      t.value = json(def);
    } else {
      t.type = std::move(type);
    }
    if (flag == "?") t.optional = true;
    else if (flag != "-" && flag != "d") fail("bad attribute flag '" + std::string(flag) + "' (-, d or ?)");
    if (flag != "d" && !def.empty()) fail("a default value without the flag 'd'");
    return t;
  }

  schema::PortSchema port(const std::string_view* f) {
    schema::PortSchema p;
    if (f[1] == "1") p.arity = schema::Arity::Single;
    else if (f[1] == "*") p.arity = schema::Arity::Variadic;
    else fail("bad arity '" + std::string(f[1]) + "' (1 or *)");
    p.arity_given = true;
    if (f[2].empty() || !std::all_of(f[2].begin(), f[2].end(), [](char c) { return c >= '0' && c <= '9'; }) || f[2].size() > 6)
      fail("bad minimum arity '" + std::string(f[2]) + "'");
    p.min_arity = static_cast<uint32_t>(std::stoul(std::string(f[2])));
    if (f[3].empty()) fail("a port without a name");
    p.attrs.push_back({"name", constant("str", ir::Value(f[3]))});
    std::string_view kv = f[4];
    while (!kv.empty()) {
      size_t c = kv.find(',');
      std::string_view item = kv.substr(0, c);
      size_t eq = item.find('=');
      if (eq == std::string_view::npos) fail("expected KEY=VALUE, found '" + std::string(item) + "'");
      std::string_view k = item.substr(0, eq), v = item.substr(eq + 1);
      if (k == "type_attr" || k == "number_attr" || k == "type_list_attr")
        p.attrs.push_back({std::string(k), constant("str", ir::Value(v))});
      else if (k == "type")
        p.attrs.push_back({"type", constant("tensorflow.DType", ir::Value(v))});
      else if (k == "is_ref" && v == "1")
        p.attrs.push_back({"is_ref", constant("bool", ir::Value(true))});
      else
        fail("unknown port key '" + std::string(k) + "'");
      if (c == std::string_view::npos) break;
      kv.remove_prefix(c + 1);
    }
    return p;
  }
};

// amanda/tensorflow/... -> <shipped namespaces>/tensorflow/....tfops; lists the folder only.
std::vector<std::pair<std::string, std::string>> tfops_files() {
  std::vector<std::pair<std::string, std::string>> out;
  std::string root = schema::shipped_namespace_dir();
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root + "/tensorflow", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != ".tfops") continue;
    std::filesystem::path rel = std::filesystem::relative(it->path(), root, ec);
    if (ec) continue;
    rel.replace_extension();
    out.emplace_back("amanda/" + rel.generic_string(), it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class TfProvider final : public schema::Provider {
 public:
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [name, file] : tfops_files()) out.push_back(name);
    return out;
  }
  std::unique_ptr<schema::NamespaceSchema> load(const std::string& name, const schema::TypeSystems& types) const override {
    for (const auto& [n, file] : tfops_files()) {
      if (n != name) continue;
      auto ns = read_tfops(map_file(file)->view(), file, types);
      if (ns->name != name) throw Error(file + ": error: the file holds namespace '" + ns->name + "', not '" + name + "'");
      return ns;
    }
    return nullptr;
  }
};

}  // namespace

std::unique_ptr<schema::NamespaceSchema> read_tfops(std::string_view text, const std::string& path,
                                                    const schema::TypeSystems& types) {
  auto ns = Reader(text, path).run();
  for (auto& op : ns->ops) op->declared_in = ns->name;
  try {
    schema::compile_types(*ns, types);
  } catch (const Error& e) {
    throw Error(path + ": error: " + e.what());
  }
  return ns;
}

std::shared_ptr<schema::Provider> make_tf_namespace_provider() { return std::make_shared<TfProvider>(); }

schema::Registry& tf_registry() {
  static schema::Registry* reg = [] {
    auto* r = new schema::Registry();  // never freed: shared by every import of the process
    r->add_provider(make_tf_namespace_provider());
    return r;
  }();
  return *reg;
}

}  // namespace amanda::tf_frontend
