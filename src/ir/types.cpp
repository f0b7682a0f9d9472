#include "amanda/ir/types.h"

#include <cctype>
#include <charconv>
#include <cstring>

#include "amanda/ir/graph.h"
#include "amanda/ir/value.h"

namespace amanda::ir {

TypeTable::TypeTable() { types_.emplace_back(); }

namespace {
// The interning key: the fields' bytes (kind, elem, ranked, inner, then each dim's raw value).
std::string key_of(const TypeData& t) {
  std::string k;
  k.reserve(8 + 8 * t.dims.size());
  k.push_back(static_cast<char>(t.kind));
  k.push_back(static_cast<char>(t.elem));
  k.push_back(static_cast<char>(t.ranked));
  k.append(reinterpret_cast<const char*>(&t.inner.value), sizeof(uint32_t));
  for (Dim d : t.dims) {
    int64_t r = d.raw();
    k.append(reinterpret_cast<const char*>(&r), sizeof r);
  }
  return k;
}
}  // namespace

TypeId TypeTable::intern(const TypeData& t) {
  auto [it, fresh] = index_.try_emplace(key_of(t), static_cast<uint32_t>(types_.size()));
  if (fresh) {
    types_.push_back(t);
    if (!t.ranked) types_.back().dims.clear();
  }
  return TypeId(it->second);
}

TypeId TypeTable::tensor(ElemType e, std::span<const Dim> dims) {
  TypeData t;
  t.elem = e;
  t.ranked = true;
  t.dims.assign(dims.begin(), dims.end());
  return intern(t);
}

TypeId TypeTable::unranked(ElemType e) {
  TypeData t;
  t.elem = e;
  return intern(t);
}

size_t TypeTable::memory_bytes() const {
  size_t n = types_.capacity() * sizeof(TypeData) + index_.capacity() * (sizeof(std::string) + sizeof(uint32_t) + 1);
  for (const auto& t : types_) n += t.dims.capacity() * sizeof(Dim);
  return n;
}

// ---- text

std::optional<ElemType> elem_from_any_name(std::string_view s) {
  if (auto d = dtype_from_name(s)) return d;
  // Capitalised names (the seed's `Float(1, 784)`, TorchScript's scalar type names).
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != s)
    if (auto d = dtype_from_name(lower)) return d;
  if (lower == "byte") return DType::UInt8;
  if (lower == "char") return DType::Int8;
  if (lower == "short") return DType::Int16;
  if (lower == "complexfloat") return DType::Complex64;
  if (lower == "complexdouble") return DType::Complex128;
  if (lower == "complexhalf") return DType::Complex32;
  return std::nullopt;
}

namespace {

void format_rec(const Graph& g, TypeId id, std::string& out) {
  const TypeData& t = g.types().get(id);
  switch (t.kind) {
    case TypeKind::Tensor:
    case TypeKind::SparseTensor: {
      if (t.kind == TypeKind::SparseTensor) out += "sparse(";
      out += dtype_name(t.elem);
      out += '[';
      if (!t.ranked) out += '*';
      for (size_t i = 0; i < t.dims.size(); ++i) {
        if (i) out += ", ";
        Dim d = t.dims[i];
        if (d.is_known()) out += std::to_string(d.value());
        else if (d.is_symbol()) out += g.str(d.sym());
        else out += '?';
      }
      out += ']';
      if (t.kind == TypeKind::SparseTensor) out += ')';
      return;
    }
    case TypeKind::Sequence: out += "seq("; break;
    case TypeKind::Optional: out += "optional("; break;
    case TypeKind::Map:
      out += "map(";
      out += dtype_name(t.elem);
      out += ", ";
      break;
  }
  if (t.inner) format_rec(g, t.inner, out);
  else out += '?';
  out += ')';
}

struct Parser {
  Graph& g;
  std::string_view s;
  size_t i = 0;
  void ws() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  std::string_view word() {
    ws();
    size_t b = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.' || s[i] == ':')) ++i;
    return s.substr(b, i - b);
  }
  // A dimension: an integer, `?`, or a symbol name.
  std::optional<Dim> dim() {
    ws();
    if (eat('?')) return Dim::unknown();
    std::string_view w = word();
    if (w.empty()) return std::nullopt;
    int64_t v = 0;
    auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec == std::errc() && r.ptr == w.data() + w.size()) return v < 0 ? Dim::unknown() : Dim::known(v);
    return Dim::symbol(g.sym(w));
  }
  // `[d, d, ...]` or `(d, d, ...)` after an element type; `[*]` an unknown rank.
  bool dims(char close, TypeData& t) {
    t.ranked = true;
    if (eat('*')) {
      t.ranked = false;
      return eat(close);
    }
    if (eat(close)) return true;
    do {
      auto d = dim();
      if (!d) return false;
      t.dims.push_back(*d);
    } while (eat(','));
    return eat(close);
  }
  std::optional<TypeId> type() {
    std::string_view head = word();
    if (head.empty()) return std::nullopt;
    TypeData t;
    if (head == "seq" || head == "optional" || head == "sequence") {
      t.kind = head == "optional" ? TypeKind::Optional : TypeKind::Sequence;
      if (!eat('(')) return std::nullopt;
      auto in = type();
      if (!in || !eat(')')) return std::nullopt;
      t.inner = *in;
      return g.types().intern(t);
    }
    if (head == "map") {
      t.kind = TypeKind::Map;
      if (!eat('(')) return std::nullopt;
      auto k = elem_from_any_name(word());
      if (!k || !eat(',')) return std::nullopt;
      t.elem = *k;
      auto in = type();
      if (!in || !eat(')')) return std::nullopt;
      t.inner = *in;
      return g.types().intern(t);
    }
    if (head == "tensor" || head == "sparse_tensor" || head == "sparse") {
      // ONNX's tensor(float) (unknown rank) or our sparse(float32[2, 3]).
      if (!eat('(')) return std::nullopt;
      auto in = type();
      if (!in || !eat(')')) return std::nullopt;
      if (head == "tensor") return in;
      t = g.types().get(*in);
      if (t.kind != TypeKind::Tensor) return std::nullopt;
      t.kind = TypeKind::SparseTensor;
      return g.types().intern(t);
    }
    auto e = elem_from_any_name(head);
    if (!e) return std::nullopt;
    t.elem = *e;
    if (eat('[')) {
      if (!dims(']', t)) return std::nullopt;
    } else if (eat('(')) {
      if (!dims(')', t)) return std::nullopt;  // the seed's Float(1, 784)
    }
    return g.types().intern(t);
  }
};

}  // namespace

std::string format_type(const Graph& g, TypeId t) {
  if (!t) return "?";
  std::string out;
  format_rec(g, t, out);
  return out;
}

std::optional<TypeId> parse_type(Graph& g, std::string_view s) {
  Parser p{g, s};
  auto t = p.type();
  p.ws();
  if (!t || p.i != s.size()) return std::nullopt;
  return t;
}

// ---- attributes

TypeId type_from_attrs(Graph& g, const Value* type, const Value* shape) {
  if (!type || !type->is_string()) return TypeId();
  auto t = parse_type(g, type->as_string());
  if (!t) return TypeId();
  if (!shape || !shape->is_list()) return *t;
  // A separate shape list: ints, strings (symbols) and nulls (unknown).
  TypeData d = g.types().get(*t);
  if (d.kind != TypeKind::Tensor && d.kind != TypeKind::SparseTensor) return *t;
  if (d.ranked) return *t;  // the type string already gave the shape
  d.ranked = true;
  d.dims.clear();
  for (const auto& x : shape->as_list()) {
    if (x.is_int()) d.dims.push_back(x.as_int() < 0 ? Dim::unknown() : Dim::known(x.as_int()));
    else if (x.is_string() && !x.as_string().empty()) d.dims.push_back(Dim::symbol(g.sym(x.as_string())));
    else d.dims.push_back(Dim::unknown());
  }
  return g.types().intern(d);
}

void derive_port_types(Graph& g) {
  const SymbolTable& st = g.symbols();
  Symbol keys[4] = {st.find("type"), st.find("shape"), st.find("@type"), st.find("@shape")};
  if (keys[0] == SymbolTable::kNone && keys[2] == SymbolTable::kNone) return;
  auto visit = [&](PortId p, bool graph_port) {
    // Op ports: the `@type` annotation the importers write, else the seed's plain `type`.
    Symbol tk = keys[graph_port ? 0 : 2], sk = keys[graph_port ? 1 : 3];
    const Value* t = tk == SymbolTable::kNone ? nullptr : g.attr(p, tk);
    if (!t && !graph_port && keys[0] != SymbolTable::kNone) {
      tk = keys[0];
      sk = keys[1];
      t = g.attr(p, tk);
    }
    if (!t) return;
    const Value* s = sk == SymbolTable::kNone ? nullptr : g.attr(p, sk);
    g.set_port_type(p, type_from_attrs(g, t, s));
  };
  auto visit_op = [&](OpId op) {
    bool gp = g.is_graph(op);
    for (PortId p : g.inputs(op)) visit(p, gp);
    for (PortId p : g.outputs(op)) visit(p, gp);
  };
  visit_op(g.root());
  for (uint32_t i = 2; i < g.id_bound(); ++i)
    if (g.valid(OpId(i))) visit_op(OpId(i));
}

void write_type_attrs(Graph& g, PortId p, TypeId t) {
  bool gp = g.is_graph(g.port_op(p));
  Symbol tk = g.sym(gp ? "type" : "@type"), sk = g.sym(gp ? "shape" : "@shape");
  g.set_port_type(p, t);
  if (!t) {
    g.erase_attr(p, tk);
    g.erase_attr(p, sk);
    return;
  }
  const TypeData& d = g.types().get(t);
  if (d.kind == TypeKind::Tensor) {
    g.set_attr(p, tk, Value(std::string(dtype_name(d.elem))));
    if (!d.ranked) {
      g.erase_attr(p, sk);
      return;
    }
    Value::List l;
    for (Dim x : d.dims) l.push_back(x.is_known() ? Value(x.value()) : x.is_symbol() ? Value(std::string(g.str(x.sym()))) : Value());
    g.set_attr(p, sk, Value(std::move(l)));
    return;
  }
  g.set_attr(p, tk, Value(format_type(g, t)));
  g.erase_attr(p, sk);
}

}  // namespace amanda::ir
