#include "amanda/schema/schema.h"

#include <cctype>

#include "amanda/text/value_text.h"

namespace amanda::schema {

using text::Tree;

// ---------------------------------------------------------------- names and versions

int compare_versions(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    size_t ie = a.find('.', i), je = b.find('.', j);
    if (ie == std::string_view::npos) ie = a.size();
    if (je == std::string_view::npos) je = b.size();
    std::string_view pa = i < a.size() ? a.substr(i, ie - i) : std::string_view("0");
    std::string_view pb = j < b.size() ? b.substr(j, je - j) : std::string_view("0");
    bool na = !pa.empty() && std::all_of(pa.begin(), pa.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    bool nb = !pb.empty() && std::all_of(pb.begin(), pb.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (na && nb) {
      while (pa.size() > 1 && pa[0] == '0') pa.remove_prefix(1);
      while (pb.size() > 1 && pb[0] == '0') pb.remove_prefix(1);
      if (pa.size() != pb.size()) return pa.size() < pb.size() ? -1 : 1;
      if (int c = pa.compare(pb)) return c < 0 ? -1 : 1;
    } else if (na != nb) {
      return na ? 1 : -1;  // 1.0 > 1.0rc... is not modelled; numbers sort after words
    } else if (int c = pa.compare(pb)) {
      return c < 0 ? -1 : 1;
    }
    i = ie + 1;
    j = je + 1;
  }
  return 0;
}

bool is_version(std::string_view s) { return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])); }

bool valid_namespace_name(std::string_view s, std::string* why) {
  auto bad = [&](std::string m) {
    if (why) *why = std::move(m);
    return false;
  };
  if (s.empty()) return bad("a namespace name is a path such as amanda/onnx/13; it is empty");
  if (s.front() == '/' || s.back() == '/') return bad("a namespace name is a relative path such as amanda/onnx/13; '" + std::string(s) + "' starts or ends with '/'");
  size_t start = 0;
  while (start <= s.size()) {
    size_t e = s.find('/', start);
    if (e == std::string_view::npos) e = s.size();
    std::string_view part = s.substr(start, e - start);
    if (part.empty()) return bad("namespace name '" + std::string(s) + "' has an empty part ('//')");
    if (part == "." || part == "..") return bad("namespace name '" + std::string(s) + "' has a '" + std::string(part) + "' part");
    for (char c : part)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+'))
        return bad("namespace name '" + std::string(s) + "' has the character '" + std::string(1, c) +
                   "'; use letters, digits, '.', '_', '-', '+' between '/'");
    start = e + 1;
  }
  return true;
}

std::pair<std::string, std::string> split_version(std::string_view ns) {
  size_t p = ns.rfind('/');
  if (p == std::string_view::npos) return {std::string(ns), ""};
  std::string_view last = ns.substr(p + 1);
  if (!is_version(last)) return {std::string(ns), ""};
  return {std::string(ns.substr(0, p)), std::string(last)};
}

// ---------------------------------------------------------------- model

bool AttrType::required() const {
  if (optional) return false;
  switch (form) {
    case Form::Type: return true;
    case Form::Default: return false;
    case Form::Constant: return false;  // implied when absent
    case Form::OneOf: return !one_of_default;
  }
  return true;
}

const ir::Value* AttrType::default_value() const {
  if (form == Form::Default) return &value;
  if (form == Form::OneOf && one_of_default) return &*one_of_default;
  return nullptr;
}

bool AttrType::operator==(const AttrType& o) const {
  return form == o.form && type == o.type && value == o.value && options == o.options &&
         one_of_default == o.one_of_default && optional == o.optional;
}

std::string_view arity_name(Arity a) {
  switch (a) {
    case Arity::Single: return "single";
    case Arity::Optional: return "optional";
    case Arity::Variadic: return "variadic";
  }
  return "?";
}

const AttrSchema* PortSchema::attr(std::string_view name) const {
  for (const auto& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

std::optional<std::string> PortSchema::expected_name() const {
  const AttrSchema* n = attr("name");
  if (!n) return std::nullopt;
  if ((n->type.form == AttrType::Form::Constant || n->type.form == AttrType::Form::Default) && n->type.value.is_string())
    return n->type.value.as_string();
  return std::nullopt;
}

bool PortSchema::operator==(const PortSchema& o) const {
  return attrs == o.attrs && arity == o.arity && min_arity == o.min_arity && homogeneous == o.homogeneous && type == o.type;
}

const AttrSchema* OpSchema::attr(std::string_view name) const {
  for (const auto& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

const OpSchema* NamespaceSchema::find(std::string_view type) const {
  auto it = by_type.find(absl::string_view(type.data(), type.size()));
  return it == by_type.end() ? nullptr : it->second;
}

OpSchema& NamespaceSchema::add(std::unique_ptr<OpSchema> op) {
  if (by_type.contains(op->type)) throw Error("namespace " + name + ": duplicate op type '" + op->type + "'");
  op->declared_in = name;
  ops.push_back(std::move(op));
  by_type[ops.back()->type] = ops.back().get();
  return *ops.back();
}

// ---------------------------------------------------------------- reading

namespace {

[[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) { throw ParseError(loc, msg); }

std::string string_of(const Tree& t, const char* what) {
  if (!t.is_scalar() || !(t.scalar.is_string() || t.scalar.is_int() || t.scalar.is_float()))
    fail(t.loc, std::string("expected ") + what + " (a string)");
  return t.text;
}

void check_keys(const Tree& t, std::initializer_list<std::string_view> allowed, const std::string& where) {
  for (size_t i = 0; i < t.entries.size(); ++i) {
    bool ok = false;
    for (auto a : allowed) ok = ok || t.entries[i].first == a;
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(t.key_locs[i], "unknown key '" + t.entries[i].first + "' in " + where + "; expected " + list);
    }
  }
}

class SchemaReader {
 public:
  SchemaReader(const TypeSystems& types) : types_(types) {}

  std::unique_ptr<NamespaceSchema> run(const Tree& doc) {
    if (!doc.is_map()) fail(doc.loc, "a namespace schema file is a mapping with the key 'namespace'");
    check_keys(doc, {"namespace"}, "a namespace schema file");
    const Tree* ns = doc.find("namespace");
    if (!ns) fail(doc.loc, "a namespace schema file needs the top-level key 'namespace'");
    if (!ns->is_map()) fail(ns->loc, "'namespace' must be a mapping with name, type_system and op_schemas");
    check_keys(*ns, {"name", "type_system", "op_schemas", "description"}, "a namespace");
    auto out = std::make_unique<NamespaceSchema>();
    out->loc = ns->loc;
    const Tree* name = ns->find("name");
    if (!name) fail(ns->loc, "namespace has no name");
    out->name = string_of(*name, "a namespace name");
    std::string why;
    if (!valid_namespace_name(out->name, &why)) fail(name->loc, why);
    const Tree* ts = ns->find("type_system");
    if (!ts) fail(ns->loc, "namespace has no type_system (one of: python, cpp, protobuf, flatbuffers, torchscript, onnx, or a registered one)");
    out->type_system = string_of(*ts, "a type system name");
    out->types = types_.find(out->type_system);
    if (!out->types) {
      std::string known;
      for (const auto& n : types_.names()) known += (known.empty() ? "" : ", ") + n;
      fail(ts->loc, "unknown type system '" + out->type_system + "'; known: " + known);
    }
    ts_ = out->types;
    if (const Tree* ops = ns->find("op_schemas")) {
      if (!ops->is_seq()) fail(ops->loc, "op_schemas must be a list");
      for (const Tree& o : ops->items) {
        auto op = op_schema(o);
        if (const OpSchema* first = out->find(op->type))
          fail(o.loc, "duplicate op type '" + op->type + "' in namespace " + out->name + " (first declared at line " +
                          std::to_string(first->loc.line) + ")");
        out->add(std::move(op));
      }
    }
    return out;
  }

 private:
  std::unique_ptr<OpSchema> op_schema(const Tree& t) {
    if (!t.is_map()) fail(t.loc, "an op schema is a mapping with type, attrs, input_ports, output_ports");
    check_keys(t, {"type", "attrs", "input_ports", "output_ports", "ops", "edges", "since_version", "deprecated",
                   "domain", "type_constraints", "description"},
               "an op schema");
    auto op = std::make_unique<OpSchema>();
    op->loc = t.loc;
    const Tree* type = t.find("type");
    if (!type) fail(t.loc, "op schema has no type");
    op->type = string_of(*type, "an op type");
    if (const Tree* a = t.find("attrs")) op->attrs = attr_map(*a, "attrs of " + op->type);
    if (const Tree* p = t.find("input_ports")) op->inputs = ports(*p, op->type);
    if (const Tree* p = t.find("output_ports")) op->outputs = ports(*p, op->type);
    if (const Tree* x = t.find("ops")) op->ops = *x;
    if (const Tree* x = t.find("edges")) op->edges = *x;
    if (const Tree* x = t.find("since_version")) {
      if (!x->scalar.is_int()) fail(x->loc, "since_version must be an integer");
      op->since_version = x->scalar.as_int();
    }
    if (const Tree* x = t.find("deprecated")) {
      if (!x->scalar.is_bool()) fail(x->loc, "deprecated must be true or false");
      op->deprecated = x->scalar.as_bool();
    }
    if (const Tree* x = t.find("domain")) op->domain = string_of(*x, "a domain");
    if (const Tree* x = t.find("type_constraints")) {
      if (!x->is_seq()) fail(x->loc, "type_constraints must be a list of {name, allowed}");
      for (const Tree& c : x->items) {
        if (!c.is_map()) fail(c.loc, "a type constraint is {name: T, allowed: [types]}");
        check_keys(c, {"name", "allowed", "description"}, "a type constraint");
        TypeConstraint tc;
        const Tree* n = c.find("name");
        if (!n) fail(c.loc, "type constraint has no name");
        tc.name = string_of(*n, "a type constraint name");
        if (const Tree* al = c.find("allowed")) {
          if (!al->is_seq()) fail(al->loc, "allowed must be a list of types");
          for (const Tree& s : al->items) tc.allowed.push_back(string_of(s, "a type"));
        }
        op->type_constraints.push_back(std::move(tc));
      }
    }
    return op;
  }

  std::vector<PortSchema> ports(const Tree& t, const std::string& op) {
    if (!t.is_seq()) fail(t.loc, "ports of " + op + " must be a list");
    std::vector<PortSchema> out;
    for (const Tree& p : t.items) {
      if (!p.is_map()) fail(p.loc, "a port schema is a mapping with attrs");
      check_keys(p, {"attrs", "arity", "min_arity", "homogeneous", "type", "description"}, "a port schema");
      PortSchema ps;
      if (const Tree* a = p.find("attrs")) ps.attrs = attr_map(*a, "port attrs of " + op);
      if (const Tree* a = p.find("arity")) {
        std::string s = string_of(*a, "an arity");
        if (s == "single") ps.arity = Arity::Single;
        else if (s == "optional") ps.arity = Arity::Optional;
        else if (s == "variadic") ps.arity = Arity::Variadic;
        else fail(a->loc, "arity must be single, optional or variadic, not '" + s + "'");
        ps.arity_given = true;
      }
      if (const Tree* a = p.find("min_arity")) {
        if (!a->scalar.is_int() || a->scalar.as_int() < 0) fail(a->loc, "min_arity must be a non-negative integer");
        ps.min_arity = static_cast<uint32_t>(a->scalar.as_int());
      }
      if (const Tree* a = p.find("homogeneous")) {
        if (!a->scalar.is_bool()) fail(a->loc, "homogeneous must be true or false");
        ps.homogeneous = a->scalar.as_bool();
      }
      if (const Tree* a = p.find("type")) ps.type = string_of(*a, "a type");
      out.push_back(std::move(ps));
    }
    return out;
  }

  std::vector<AttrSchema> attr_map(const Tree& t, const std::string& where) {
    if (!t.is_map()) fail(t.loc, where + " must be a mapping from attribute names to attr_types");
    std::vector<AttrSchema> out;
    for (const auto& [k, v] : t.entries) out.push_back({k, attr_type(v, k)});
    return out;
  }

  TypeRef compile(const std::string& type, const SourceLoc& loc, const std::string& attr) {
    std::string err;
    TypeRef r = ts_->parse(type, &err);
    if (!r) fail(loc, "attribute '" + attr + "': " + err);
    return r;
  }

  // A value as the message shows it: 'text' for strings, the YAML text otherwise.
  static std::string shown(const Tree& t) {
    if (!t.is_scalar()) return t.is_seq() ? "a list" : "a mapping";
    return t.scalar.is_string() ? "'" + t.text + "'" : t.text;
  }

  void check_value(const Tree& v, const AttrType& at, const char* what, const std::string& attr) {
    if (!ts_->is_instance(at.value, *at.compiled))
      fail(v.loc, "attribute '" + attr + "': " + what + " " + shown(v) + " is not of type '" + at.type + "' in the " +
                      std::string(ts_->name()) + " type system");
  }

  AttrType attr_type(const Tree& t, const std::string& attr) {
    AttrType at;
    at.loc = t.loc;
    const std::string forms =
        "attribute '" + attr +
        "': unknown attr_type form: expected a type, {type, default}, {type, constant} or {one_of: [...], default}";
    if (t.is_scalar()) {
      if (!t.scalar.is_string()) fail(t.loc, forms + " (found " + shown(t) + ", which is not a type name)");
      at.form = AttrType::Form::Type;
      at.type = t.text;
      at.compiled = compile(at.type, t.loc, attr);
      return at;
    }
    if (!t.is_map()) fail(t.loc, forms + " (found a list)");
    for (size_t i = 0; i < t.entries.size(); ++i) {
      const auto& k = t.entries[i].first;
      if (k != "type" && k != "default" && k != "constant" && k != "one_of" && k != "optional" && k != "description")
        fail(t.key_locs[i], forms + " (unknown key '" + k + "')");
    }
    const Tree *type = t.find("type"), *def = t.find("default"), *con = t.find("constant"), *one = t.find("one_of"),
               *opt = t.find("optional");
    if (opt) {
      if (!opt->scalar.is_bool()) fail(opt->loc, "attribute '" + attr + "': optional must be true or false");
      at.optional = opt->scalar.as_bool();
    }
    if (one) {
      if (type || con) fail(t.loc, forms + " (one_of cannot be combined with type or constant)");
      if (!one->is_seq()) fail(one->loc, "attribute '" + attr + "': one_of must be a list of attr_types");
      if (one->items.empty()) fail(one->loc, "attribute '" + attr + "': one_of has no options");
      at.form = AttrType::Form::OneOf;
      for (const Tree& o : one->items) at.options.push_back(attr_type(o, attr));
      if (def) {
        ir::Value d = def->to_value();
        if (!one_of_accepts(at, d)) {
          std::string options;
          for (const auto& o : at.options)
            options += (options.empty() ? "" : ", ") +
                       (o.form == AttrType::Form::Constant ? text_of(o.value) : o.form == AttrType::Form::OneOf ? "one_of" : o.type);
          fail(def->loc, "attribute '" + attr + "': default " + shown(*def) + " is not one of the one_of options (" + options + ")");
        }
        at.one_of_default = std::move(d);
      }
      return at;
    }
    if (!type) fail(t.loc, forms + " (no 'type')");
    if (def && con) fail(t.loc, forms + " (both default and constant)");
    at.type = string_of(*type, "a type");
    at.compiled = compile(at.type, type->loc, attr);
    if (def) {
      at.form = AttrType::Form::Default;
      at.value = def->to_value();
      check_value(*def, at, "default", attr);
    } else if (con) {
      at.form = AttrType::Form::Constant;
      at.value = con->to_value();
      check_value(*con, at, "constant", attr);
    } else {
      at.form = AttrType::Form::Type;
    }
    return at;
  }

  bool one_of_accepts(const AttrType& at, const ir::Value& v) const {
    for (const auto& o : at.options) {
      switch (o.form) {
        case AttrType::Form::Type:
        case AttrType::Form::Default:
          if (ts_->is_instance(v, *o.compiled)) return true;
          break;
        case AttrType::Form::Constant:
          if (ts_->is_instance(v, *o.compiled) && ts_->equal(v, o.value, *o.compiled)) return true;
          break;
        case AttrType::Form::OneOf:
          if (one_of_accepts(o, v)) return true;
          break;
      }
    }
    return false;
  }

  static std::string text_of(const ir::Value& v) {
    if (v.is_string()) return "'" + v.as_string() + "'";
    std::string s = text::value_to_text(ir::Value(ir::Value::List{v}), text::Format::Json);
    // "[x]\n" -> "x"
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
    size_t b = s.find_first_not_of(" \n"), e = s.find_last_not_of(" \n");
    return b == std::string::npos ? s : s.substr(b, e - b + 1);
  }

  const TypeSystems& types_;
  const TypeSystem* ts_ = nullptr;
};

// ---------------------------------------------------------------- writing

ir::Value attr_type_value(const AttrType& at) {
  using M = ir::Value::Map;
  if (at.form == AttrType::Form::Type && !at.optional) return ir::Value(at.type);
  M m;
  switch (at.form) {
    case AttrType::Form::Type: m.push_back({"type", ir::Value(at.type)}); break;
    case AttrType::Form::Default:
      m.push_back({"type", ir::Value(at.type)});
      m.push_back({"default", at.value});
      break;
    case AttrType::Form::Constant:
      m.push_back({"type", ir::Value(at.type)});
      m.push_back({"constant", at.value});
      break;
    case AttrType::Form::OneOf: {
      ir::Value::List l;
      for (const auto& o : at.options) l.push_back(attr_type_value(o));
      m.push_back({"one_of", ir::Value(std::move(l))});
      if (at.one_of_default) m.push_back({"default", *at.one_of_default});
      break;
    }
  }
  if (at.optional) m.push_back({"optional", ir::Value(true)});
  return ir::Value(std::move(m));
}

ir::Value attrs_value(const std::vector<AttrSchema>& attrs) {
  ir::Value::Map m;
  for (const auto& a : attrs) m.push_back({a.name, attr_type_value(a.type)});
  return ir::Value(std::move(m));
}

ir::Value ports_value(const std::vector<PortSchema>& ports) {
  ir::Value::List l;
  for (const auto& p : ports) {
    ir::Value::Map m;
    if (!p.attrs.empty()) m.push_back({"attrs", attrs_value(p.attrs)});
    if (p.arity_given) m.push_back({"arity", ir::Value(std::string(arity_name(p.arity)))});
    if (p.arity == Arity::Variadic) {
      m.push_back({"min_arity", ir::Value(static_cast<int64_t>(p.min_arity))});
      m.push_back({"homogeneous", ir::Value(p.homogeneous)});
    }
    if (!p.type.empty()) m.push_back({"type", ir::Value(p.type)});
    l.push_back(ir::Value(std::move(m)));
  }
  return ir::Value(std::move(l));
}

}  // namespace

std::unique_ptr<NamespaceSchema> parse_namespace(const Tree& doc, const TypeSystems& types) {
  return SchemaReader(types).run(doc);
}

std::unique_ptr<NamespaceSchema> read_namespace(const std::string& path, const TypeSystems& types) {
  return parse_namespace(text::read_tree(path), types);
}

std::string namespace_to_text(const NamespaceSchema& ns, text::Format format) {
  ir::Value::List ops;
  for (const auto& op : ns.ops) {
    ir::Value::Map m;
    m.push_back({"type", ir::Value(op->type)});
    if (!op->domain.empty()) m.push_back({"domain", ir::Value(op->domain)});
    if (op->since_version) m.push_back({"since_version", ir::Value(*op->since_version)});
    if (op->deprecated) m.push_back({"deprecated", ir::Value(true)});
    if (!op->attrs.empty()) m.push_back({"attrs", attrs_value(op->attrs)});
    if (!op->inputs.empty()) m.push_back({"input_ports", ports_value(op->inputs)});
    if (!op->outputs.empty()) m.push_back({"output_ports", ports_value(op->outputs)});
    if (!op->type_constraints.empty()) {
      ir::Value::List tcs;
      for (const auto& tc : op->type_constraints) {
        ir::Value::List allowed;
        for (const auto& a : tc.allowed) allowed.push_back(ir::Value(a));
        tcs.push_back(ir::Value(ir::Value::Map{{"name", ir::Value(tc.name)}, {"allowed", ir::Value(std::move(allowed))}}));
      }
      m.push_back({"type_constraints", ir::Value(std::move(tcs))});
    }
    if (op->ops) m.push_back({"ops", op->ops->to_value()});
    if (op->edges) m.push_back({"edges", op->edges->to_value()});
    ops.push_back(ir::Value(std::move(m)));
  }
  ir::Value::Map nsm;
  nsm.push_back({"name", ir::Value(ns.name)});
  nsm.push_back({"type_system", ir::Value(ns.type_system)});
  nsm.push_back({"op_schemas", ir::Value(std::move(ops))});
  ir::Value root(ir::Value::Map{{"namespace", ir::Value(std::move(nsm))}});
  return text::value_to_text(root, format);
}

void compile_types(NamespaceSchema& ns, const TypeSystems& types) {
  ns.types = types.find(ns.type_system);
  if (!ns.types) throw Error("namespace " + ns.name + ": unknown type system '" + ns.type_system + "'");
  // A namespace repeats few type expressions many times (the PyTorch one: 40,000 attrs, a handful
  // of types): each is parsed once. Compiled types are immutable, so they can be shared.
  absl::flat_hash_map<std::string, TypeRef> compiled;
  std::function<void(AttrType&)> fix = [&](AttrType& at) {
    if (!at.type.empty()) {
      TypeRef& t = compiled[at.type];
      if (!t) {
        std::string err;
        t = ns.types->parse(at.type, &err);
        if (!t) throw Error("namespace " + ns.name + ": " + err);
      }
      at.compiled = t;
    }
    for (auto& o : at.options) fix(o);
  };
  for (auto& op : ns.ops) {
    for (auto& a : op->attrs) fix(a.type);
    for (auto* ports : {&op->inputs, &op->outputs})
      for (auto& p : *ports)
        for (auto& a : p.attrs) fix(a.type);
  }
}

}  // namespace amanda::schema
