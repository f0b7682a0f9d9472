// The nd4j namespace's compact form (namespaces/nd4j/1.0.nd4jops), written by
// scripts/gen_nd4j_namespace.py from nd4j's op descriptors (nd4j-op-def.pbtxt):
//
//   amanda-nd4jops 1                       first line: the format and its version
//   namespace<TAB>NAME
//   op<TAB>NAME<TAB>DECLARATION            an op (CUSTOM_OP_IMPL, LEGACY_XYZ, ...); lines below belong to it
//   in|out<TAB>INDEX<TAB>NAME              an input or output tensor
//   arg<TAB>TYPE<TAB>INDEX<TAB>NAME<TAB>ATTR   an ordered argument: TYPE int64, int32, double, float,
//                                          bool, dtype or string; INDEX within its list; ATTR the
//                                          IR attribute that holds it
//   alias<TAB>NAME                         a second name libnd4j registers for the op
//
// 718 ops, 4,342 argument descriptors; about 100 KB, read in a few ms.
#include <algorithm>
#include <mutex>

#include "amanda/support/file.h"
#include "frameworks/nd4j/nd4j.h"

namespace amanda::nd4j {

namespace {

constexpr std::string_view kMagic = "amanda-nd4jops 1";

std::optional<ArgList> list_of(std::string_view type) {
  if (type == "int64" || type == "int32") return ArgList::Int;
  if (type == "double" || type == "float") return ArgList::Float;
  if (type == "bool") return ArgList::Bool;
  if (type == "dtype") return ArgList::DType;
  if (type == "string") return ArgList::String;
  return std::nullopt;
}

// An argument's type in nd4j's type system (type_system.cpp).
std::string fb_type(const ArgDesc& a) { return a.type; }

std::string_view rest_type(ArgList l) {
  switch (l) {
    case ArgList::Int: return "[int64]";
    case ArgList::Float: return "[double]";
    case ArgList::Bool: return "[bool]";
    case ArgList::DType: return "[dtype]";
    default: return "[string]";
  }
}

schema::AttrType optional_type(std::string type) {
  schema::AttrType t;
  t.type = std::move(type);
  t.optional = true;
  return t;
}

schema::PortSchema port(const std::string& name, bool variadic) {
  schema::PortSchema p;
  p.arity = variadic ? schema::Arity::Variadic : schema::Arity::Optional;
  p.arity_given = true;
  p.min_arity = variadic ? 0 : 1;
  schema::AttrType n;
  n.form = schema::AttrType::Form::Constant;
  n.type = "string";  // port names: a string constant
  n.value = ir::Value(name);
  p.attrs.push_back({"name", n});
  return p;
}

size_t split(std::string_view s, std::string_view* f, size_t n) {
  size_t k = 0;
  while (true) {
    size_t t = s.find('\t');
    if (k == n) return n + 1;
    f[k++] = s.substr(0, t);
    if (t == std::string_view::npos) return k;
    s.remove_prefix(t + 1);
  }
}

bool parse_index(std::string_view s, uint32_t& out) {
  if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  out = static_cast<uint32_t>(std::stoul(std::string(s)));
  return true;
}

}  // namespace

std::string_view list_name(ArgList l) {
  static constexpr std::string_view names[] = {"int", "float", "bool", "dtype", "string"};
  return names[static_cast<int>(l)];
}
std::string rest_attr(ArgList l) { return "rest_" + std::string(list_name(l)); }

std::vector<const ArgDesc*> OpDesc::list(ArgList l) const {
  std::vector<const ArgDesc*> out;
  for (const auto& a : args)
    if (a.list == l) out.push_back(&a);
  std::stable_sort(out.begin(), out.end(), [](const ArgDesc* a, const ArgDesc* b) { return a->index < b->index; });
  return out;
}

const ArgDesc* OpDesc::arg_by_attr(std::string_view attr) const {
  for (const auto& a : args)
    if (a.attr == attr) return &a;
  return nullptr;
}

std::unique_ptr<Descriptors> Descriptors::parse(std::string_view text, const std::string& path) {
  auto d = std::make_unique<Descriptors>();
  uint32_t line = 0;
  auto fail = [&](const std::string& msg) { throw ParseError(SourceLoc{path, line, 0}, msg); };
  OpDesc* op = nullptr;
  size_t pos = 0;
  std::string_view f[6];
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line;
    if (line == 1) {
      if (l != kMagic) fail("not an .nd4jops namespace file (the first line must be '" + std::string(kMagic) + "')");
      continue;
    }
    if (l.empty() || l[0] == '#') continue;
    size_t n = split(l, f, 5);
    std::string_view tag = f[0];
    if (tag == "namespace") {
      if (n != 2 || !d->name_.empty()) fail("expected one 'namespace<TAB>NAME' line");
      d->name_ = std::string(f[1]);
      continue;
    }
    if (d->name_.empty()) fail("expected the 'namespace' line");
    if (tag == "op") {
      if (n != 3 || f[1].empty()) fail("expected 'op<TAB>NAME<TAB>DECLARATION'");
      d->ops_.push_back(std::make_unique<OpDesc>());
      op = d->ops_.back().get();
      op->name = std::string(f[1]);
      op->declaration = std::string(f[2]);
      continue;
    }
    if (!op) fail("'" + std::string(tag) + "' before the first 'op' line");
    uint32_t index = 0;
    if (tag == "in" || tag == "out") {
      if (n != 3 || !parse_index(f[1], index) || f[2].empty()) fail("expected '" + std::string(tag) + "<TAB>INDEX<TAB>NAME'");
      auto& v = tag == "in" ? op->inputs : op->outputs;
      if (index != v.size()) fail("tensor index " + std::to_string(index) + " out of order (expected " + std::to_string(v.size()) + ")");
      v.emplace_back(f[2]);
    } else if (tag == "arg") {
      if (n != 5 || !parse_index(f[2], index) || f[3].empty() || f[4].empty())
        fail("expected 'arg<TAB>TYPE<TAB>INDEX<TAB>NAME<TAB>ATTR'");
      auto lst = list_of(f[1]);
      if (!lst) fail("unknown argument type '" + std::string(f[1]) + "'");
      if (op->arg_by_attr(f[4])) fail("attribute '" + std::string(f[4]) + "' given twice in op " + op->name);
      op->args.push_back(ArgDesc{*lst, std::string(f[1]), index, std::string(f[3]), std::string(f[4])});
    } else if (tag == "alias") {
      if (n != 2 || f[1].empty()) fail("expected 'alias<TAB>NAME'");
      op->aliases.emplace_back(f[1]);
    } else {
      fail("unknown line kind '" + std::string(tag) + "'");
    }
  }
  if (d->name_.empty()) fail("expected the 'namespace' line");
  for (const auto& o : d->ops_) {
    d->index_.emplace_back(o->name, o.get());
    for (const auto& a : o->aliases) d->index_.emplace_back(a, o.get());
  }
  std::sort(d->index_.begin(), d->index_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < d->index_.size(); ++i)
    if (d->index_[i].first == d->index_[i - 1].first) throw Error(path + ": error: op '" + d->index_[i].first + "' given twice");
  return d;
}

const OpDesc* Descriptors::find(std::string_view type) const {
  auto it = std::lower_bound(index_.begin(), index_.end(), type, [](const auto& e, std::string_view t) { return e.first < t; });
  return it != index_.end() && it->first == type ? it->second : nullptr;
}

size_t Descriptors::argument_count() const {
  size_t n = 0;
  for (const auto& o : ops_) n += o->inputs.size() + o->outputs.size() + o->args.size();
  return n;
}

std::unique_ptr<schema::NamespaceSchema> Descriptors::schema(const schema::TypeSystems& types) const {
  auto ns = std::make_unique<schema::NamespaceSchema>();
  ns->name = name_;
  ns->type_system = "nd4j";
  if (!types.find("nd4j")) throw Error("the nd4j namespace needs the nd4j type system (nd4j::add_to(registry))");
  auto add = [&](const OpDesc& o, const std::string& type) {
    auto s = std::make_unique<schema::OpSchema>();
    s->type = type;
    s->declared_in = name_;
    for (const auto& in : o.inputs) s->inputs.push_back(port(in, false));
    s->inputs.push_back(port("more", true));
    for (const auto& out : o.outputs) s->outputs.push_back(port(out, false));
    s->outputs.push_back(port("more", true));
    for (const auto& a : o.args) s->attrs.push_back({a.attr, optional_type(fb_type(a))});
    for (int l = 0; l < kArgLists; ++l)
      s->attrs.push_back({rest_attr(ArgList(l)), optional_type(std::string(rest_type(ArgList(l))))});
    ns->add(std::move(s));
  };
  for (const auto& o : ops_) {
    add(*o, o->name);
    for (const auto& a : o->aliases) add(*o, a);
  }
  if (!ns->find(kConstantOp)) {  // Amanda's spelling of a CONSTANT variable (nd4j.h)
    auto c = std::make_unique<schema::OpSchema>();
    c->type = std::string(kConstantOp);
    c->declared_in = name_;
    schema::AttrType t;
    t.type = "tensor";
    c->attrs.push_back({"value", t});
    c->outputs.push_back(port("outputs", false));
    ns->add(std::move(c));
  }
  schema::compile_types(*ns, types);
  return ns;
}

const Descriptors& Descriptors::shipped() {
  static const Descriptors* d = [] {
    std::string file = schema::shipped_namespace_dir() + "/nd4j/1.0.nd4jops";
    return parse(map_file(file)->view(), file).release();  // never freed: shared by the process
  }();
  return *d;
}

namespace {
class Provider final : public schema::Provider {
 public:
  std::vector<std::string> names() const override { return {std::string(kNamespace)}; }
  std::unique_ptr<schema::NamespaceSchema> load(const std::string& name, const schema::TypeSystems& types) const override {
    if (name != kNamespace) return nullptr;
    return Descriptors::shipped().schema(types);
  }
};
}  // namespace

std::shared_ptr<schema::Provider> make_namespace_provider() { return std::make_shared<Provider>(); }

}  // namespace amanda::nd4j
