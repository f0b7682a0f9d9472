#include "amanda/schema/type_system.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <unordered_map>

namespace amanda::schema {

namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits "a, b<c, d>, e" at top-level commas.
std::vector<std::string> split_args(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '[' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::string last = trim(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

TypeRef make(Type::Kind k, std::string text, std::string name = {}, std::vector<TypeRef> args = {}) {
  auto t = std::make_shared<Type>();
  t->kind = k;
  t->text = std::move(text);
  t->name = name.empty() ? t->text : std::move(name);
  t->args = std::move(args);
  return t;
}

// Element type names every built-in system understands for DType values (TensorFlow's, NumPy's,
// ONNX's and PyTorch's spellings).
bool known_dtype(std::string_view s) {
  static constexpr std::string_view names[] = {
      "bool",     "int8",     "int16",     "int32",      "int64",   "uint8",  "uint16", "uint32", "uint64",
      "float16",  "half",     "bfloat16",  "float32",    "float",   "float64", "double", "complex64",
      "complex128", "string", "qint8",     "quint8",     "qint16",  "quint16", "qint32", "resource", "variant",
      "int",      "long",     "short",     "byte",       "char",    "cfloat", "cdouble", "uint",
  };
  for (std::string_view n : names)
    if (s == n) return true;
  return false;
}

// One spelling per element type ("float" and "float32" are one tensorflow.DType).
std::string_view canonical_dtype(std::string_view s) {
  if (s == "float" || s == "float32") return "float32";
  if (s == "double" || s == "float64") return "float64";
  if (s == "half" || s == "float16") return "float16";
  if (s == "int" || s == "int32") return "int32";
  if (s == "long" || s == "int64") return "int64";
  if (s == "short" || s == "int16") return "int16";
  if (s == "byte" || s == "uint8") return "uint8";
  if (s == "char" || s == "int8") return "int8";
  if (s == "cfloat" || s == "complex64") return "complex64";
  if (s == "cdouble" || s == "complex128") return "complex128";
  return s;
}

// A type system described by a table of names plus the bracket syntaxes it uses.
class TableTypeSystem : public TypeSystem {
 public:
  struct Syntax {
    bool suffix_list = false;      // T[] and T[N]
    bool suffix_optional = false;  // T?
    bool generic_square = false;   // List[T], Optional[T], Dict[K, V], Union[A, B], Tuple[...]
    bool generic_angle = false;    // std::vector<T>, std::optional<T>
    bool repeated = false;         // "repeated T"
    bool bracket_list = false;     // [T]
    bool paren_dims = false;       // Float(1, 784, ...): a tensor type with dims
    bool paren_generic = false;    // tensor(float), seq(T), optional(T), map(K, V)
    bool unknown_dotted_is_any = false;  // message/table names: maps
  };
  TableTypeSystem(std::string name, std::unordered_map<std::string, Type::Kind> table, Syntax syn)
      : name_(std::move(name)), table_(std::move(table)), syn_(syn) {}

  std::string_view name() const override { return name_; }

  TypeRef parse(std::string_view expr, std::string* error) const override {
    std::string s = trim(expr);
    if (s.empty()) {
      if (error) *error = "empty type";
      return nullptr;
    }
    std::string err;
    TypeRef t = parse_rec(s, err, 0);
    if (!t && error) *error = err.empty() ? "unknown " + name_ + " type '" + s + "'" : err;
    return t;
  }

 protected:
  virtual TypeRef special(const std::string& s, std::string& err) const { return nullptr; }

  TypeRef parse_rec(const std::string& s, std::string& err, int depth) const {
    if (depth > 32) {
      err = "type expression nests too deeply";
      return nullptr;
    }
    if (TypeRef t = special(s, err)) return t;
    if (!err.empty()) return nullptr;
    if (syn_.repeated && s.rfind("repeated ", 0) == 0) {
      TypeRef e = parse_rec(trim(s.substr(9)), err, depth + 1);
      return e ? make(Type::Kind::List, s, "repeated", {e}) : nullptr;
    }
    if (syn_.suffix_optional && s.size() > 1 && s.back() == '?') {
      TypeRef e = parse_rec(s.substr(0, s.size() - 1), err, depth + 1);
      return e ? make(Type::Kind::Optional, s, "Optional", {e}) : nullptr;
    }
    if (syn_.suffix_list && s.back() == ']' && s.find('[') != std::string::npos) {
      size_t open = s.rfind('[');
      std::string inner = s.substr(open + 1, s.size() - open - 2);
      bool numeric = std::all_of(inner.begin(), inner.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      if (open > 0 && numeric) {
        TypeRef e = parse_rec(s.substr(0, open), err, depth + 1);
        return e ? make(Type::Kind::List, s, "List", {e}) : nullptr;
      }
    }
    if (syn_.bracket_list && s.front() == '[' && s.back() == ']') {
      TypeRef e = parse_rec(trim(s.substr(1, s.size() - 2)), err, depth + 1);
      return e ? make(Type::Kind::List, s, "List", {e}) : nullptr;
    }
    auto generic = [&](char open, char close) -> TypeRef {
      size_t p = s.find(open);
      if (p == std::string::npos || s.back() != close || p == 0) return nullptr;
      std::string head = trim(s.substr(0, p));
      std::vector<TypeRef> args;
      for (const auto& a : split_args(s.substr(p + 1, s.size() - p - 2))) {
        TypeRef t = parse_rec(a, err, depth + 1);
        if (!t) return nullptr;
        args.push_back(t);
      }
      return generic_head(head, s, std::move(args), err);
    };
    if (syn_.generic_square && s.back() == ']') return generic('[', ']');
    if (syn_.generic_angle && s.back() == '>') return generic('<', '>');
    if (syn_.paren_generic && s.back() == ')') return generic('(', ')');
    if (syn_.paren_dims && s.back() == ')') {
      size_t p = s.find('(');
      std::string head = trim(s.substr(0, p));
      auto it = table_.find(head);
      if (it == table_.end() || it->second != Type::Kind::Tensor) {
        err = "unknown " + name_ + " tensor type '" + head + "'";
        return nullptr;
      }
      auto t = std::make_shared<Type>();
      t->kind = Type::Kind::Tensor;
      t->text = s;
      t->name = head;
      t->has_dims = true;
      for (const auto& a : split_args(s.substr(p + 1, s.size() - p - 2)))
        if (a.find('=') == std::string::npos) t->dims.push_back(a);  // strides=..., device=... are not dims
      return t;
    }
    auto it = table_.find(s);
    if (it != table_.end()) return make(it->second, s);
    if (syn_.unknown_dotted_is_any && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
        std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }))
      return make(Type::Kind::Map, s);
    err = "unknown " + name_ + " type '" + s + "'";
    return nullptr;
  }

  virtual TypeRef generic_head(const std::string& head, const std::string& s, std::vector<TypeRef> args,
                               std::string& err) const {
    static const std::unordered_map<std::string, Type::Kind> heads = {
        {"List", Type::Kind::List},          {"list", Type::Kind::List},          {"Sequence", Type::Kind::List},
        {"std::vector", Type::Kind::List},   {"vector", Type::Kind::List},        {"Tuple", Type::Kind::List},
        {"tuple", Type::Kind::List},         {"std::array", Type::Kind::List},    {"seq", Type::Kind::List},
        {"Optional", Type::Kind::Optional},  {"std::optional", Type::Kind::Optional}, {"optional", Type::Kind::Optional},
        {"Dict", Type::Kind::Map},           {"dict", Type::Kind::Map},           {"std::map", Type::Kind::Map},
        {"map", Type::Kind::Map},            {"Mapping", Type::Kind::Map},        {"Union", Type::Kind::Union},
        {"std::variant", Type::Kind::Union},
    };
    auto it = heads.find(head);
    if (it == heads.end()) {
      err = "unknown " + name_ + " generic type '" + head + "'";
      return nullptr;
    }
    Type::Kind k = it->second;
    if ((k == Type::Kind::List || k == Type::Kind::Optional) && args.empty()) {
      err = "'" + s + "' needs a type argument";
      return nullptr;
    }
    if (k == Type::Kind::List && args.size() > 1) args = {make(Type::Kind::Any, "Any")};  // tuples: any element
    return make(k, s, head, std::move(args));
  }

  std::string name_;
  std::unordered_map<std::string, Type::Kind> table_;
  Syntax syn_;
};

using K = Type::Kind;

class TorchScriptTypes final : public TableTypeSystem {
 public:
  TorchScriptTypes()
      : TableTypeSystem("torchscript",
                        {{"int", K::Int}, {"float", K::Float}, {"bool", K::Bool}, {"str", K::String},
                         {"complex", K::Float}, {"Scalar", K::Float}, {"number", K::Float}, {"None", K::Null},
                         {"NoneType", K::Null}, {"Any", K::Any}, {"t", K::Any}, {"type", K::TypeValue},
                         {"Device", K::Any}, {"Layout", K::Any}, {"MemoryFormat", K::Any}, {"ScalarType", K::Any},
                         {"Generator", K::Any}, {"Storage", K::Any}, {"Stream", K::Any}, {"SymInt", K::Int},
                         {"QScheme", K::Any}, {"Dimname", K::String}, {"Tensor", K::Tensor}, {"Float", K::Tensor},
                         {"Double", K::Tensor}, {"Half", K::Tensor}, {"BFloat16", K::Tensor}, {"Long", K::Tensor},
                         {"Int", K::Tensor}, {"Short", K::Tensor}, {"Char", K::Tensor}, {"Byte", K::Tensor},
                         {"Bool", K::Tensor}, {"ComplexFloat", K::Tensor}, {"ComplexDouble", K::Tensor},
                         {"QInt8", K::Tensor}, {"QUInt8", K::Tensor}, {"QInt32", K::Tensor}},
                        Syntax{.suffix_list = true, .suffix_optional = true, .generic_square = true, .paren_dims = true}) {}
};

class OnnxTypes final : public TableTypeSystem {
 public:
  OnnxTypes()
      : TableTypeSystem("onnx",
                        {{"int", K::Int}, {"float", K::Float}, {"string", K::String}, {"tensor", K::Tensor},
                         {"graph", K::Graph}, {"sparse_tensor", K::Tensor}, {"type_proto", K::TypeValue},
                         {"ints", K::List}, {"floats", K::List}, {"strings", K::List}, {"tensors", K::List},
                         {"graphs", K::List}, {"sparse_tensors", K::List}, {"type_protos", K::List},
                         {"type", K::TypeValue}, {"dtype", K::DType}, {"shape", K::Shape}, {"bool", K::Bool},
                         {"any", K::Any}},
                        Syntax{}) {}

 protected:
  TypeRef special(const std::string& s, std::string& err) const override {
    static const std::unordered_map<std::string, K> lists = {
        {"ints", K::Int}, {"floats", K::Float}, {"strings", K::String}, {"tensors", K::Tensor},
        {"graphs", K::Graph}, {"sparse_tensors", K::Tensor}, {"type_protos", K::TypeValue}};
    auto it = lists.find(s);
    if (it != lists.end()) return make(K::List, s, s, {make(it->second, s.substr(0, s.size() - 1))});
    // A value type: tensor(float), seq(tensor(int64)), optional(...), map(int64, tensor(float)),
    // sparse_tensor(float). As an attribute's type it means "a string naming such a type".
    if (s.back() == ')' && s.find('(') != std::string::npos) {
      if (!valid_value_type(s)) {
        err = "unknown onnx value type '" + s + "'";
        return nullptr;
      }
      return make(K::TypeValue, s);
    }
    return nullptr;
  }

 public:
  static bool valid_value_type(std::string_view s) {
    static const char* elems[] = {"float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string", "bool",
                                  "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16"};
    auto p = s.find('(');
    if (p == std::string_view::npos) {
      for (const char* e : elems)
        if (s == e) return true;
      return false;
    }
    if (s.back() != ')') return false;
    std::string head(s.substr(0, p));
    std::string inner = trim(s.substr(p + 1, s.size() - p - 2));
    if (head == "tensor" || head == "sparse_tensor") {
      for (const char* e : elems)
        if (inner == e) return true;
      return false;
    }
    if (head == "seq" || head == "optional") return valid_value_type(inner);
    if (head == "map") {
      auto parts = split_args(inner);
      return parts.size() == 2 && valid_value_type(parts[0]) && valid_value_type(parts[1]);
    }
    return false;
  }

  bool is_instance(const ir::Value& v, const Type& t) const override {
    if (t.kind == K::TypeValue) return v.is_string() && valid_value_type(v.as_string());
    return TableTypeSystem::is_instance(v, t);
  }

  // ONNX keeps float attributes as float32: 0.01 and 0.00999999977648258 are the same value.
  bool equal(const ir::Value& a, const ir::Value& b, const Type& t) const override {
    auto as_f32 = [](const ir::Value& v) { return static_cast<float>(v.is_int() ? static_cast<double>(v.as_int()) : v.as_float()); };
    auto num = [](const ir::Value& v) { return v.is_int() || v.is_float(); };
    if (t.kind == K::Float && num(a) && num(b)) return as_f32(a) == as_f32(b);
    if (t.kind == K::List && !t.args.empty() && t.args[0]->kind == K::Float && a.is_list() && b.is_list()) {
      const auto &x = a.as_list(), &y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!num(x[i]) || !num(y[i]) || as_f32(x[i]) != as_f32(y[i])) return false;
      return true;
    }
    return TableTypeSystem::equal(a, b, t);
  }
};

}  // namespace

// ---------------------------------------------------------------- shared semantics

bool TypeSystem::is_instance(const ir::Value& v, const Type& t) const {
  switch (t.kind) {
    case K::Any: return true;
    case K::Null: return v.is_null();
    case K::Bool: return v.is_bool();
    case K::Int: return v.is_int();
    case K::Float: return v.is_float() || v.is_int();
    case K::String: return v.is_string();
    case K::List:
      if (!v.is_list()) return false;
      if (t.args.empty()) return true;
      for (const auto& x : v.as_list())
        if (!is_instance(x, *t.args[0])) return false;
      return true;
    case K::Map: return v.is_map();
    case K::Tensor:
      if (v.is_tensor()) return true;
      // TorchScript-style tensor types are also written as type strings.
      return false;
    case K::Graph: return v.is_graph();
    case K::DType: return v.is_string() && known_dtype(v.as_string());
    case K::Shape:
      if (v.is_null()) return true;
      if (!v.is_list()) return false;
      for (const auto& d : v.as_list())
        if (!(d.is_null() || d.is_string() || (d.is_int() && d.as_int() >= -1))) return false;
      return true;
    case K::TypeValue: {
      if (!v.is_string()) return false;
      std::string err;
      return parse(v.as_string(), &err) != nullptr;
    }
    case K::Optional: return v.is_null() || (!t.args.empty() && is_instance(v, *t.args[0]));
    case K::Union:
      for (const auto& a : t.args)
        if (is_instance(v, *a)) return true;
      return false;
    case K::Custom: return false;
  }
  return false;
}

bool TypeSystem::is_subtype(const Type& a, const Type& b) const {
  if (b.kind == K::Any) return true;
  if (a.text == b.text) return true;
  if (b.kind == K::Optional) return a.kind == K::Null || (!b.args.empty() && is_subtype(a, *b.args[0])) ||
                                    (a.kind == K::Optional && !a.args.empty() && !b.args.empty() && is_subtype(*a.args[0], *b.args[0]));
  // A union is a subtype when each of its members is (Union[int, bool] <: Union[int, bool, str]).
  if (a.kind == K::Union) {
    for (const auto& x : a.args)
      if (!is_subtype(*x, b)) return false;
    return !a.args.empty();
  }
  if (b.kind == K::Union) {
    for (const auto& x : b.args)
      if (is_subtype(a, *x)) return true;
    return false;
  }
  if (a.kind != b.kind) return a.kind == K::Int && b.kind == K::Float;
  switch (a.kind) {
    case K::List:
      if (b.args.empty()) return true;
      return !a.args.empty() && is_subtype(*a.args[0], *b.args[0]);
    case K::Tensor:
      // "Tensor" is every tensor type; otherwise the element type must agree, and b's dims (if
      // any) must equal a's.
      if (b.name == "Tensor" || b.name == "tensor") return true;
      if (a.name != b.name) return false;
      if (!b.has_dims) return true;
      return a.has_dims && a.dims == b.dims;
    default: return a.name == b.name;
  }
}

bool TypeSystem::equal(const ir::Value& a, const ir::Value& b, const Type& t) const {
  if (t.kind == K::DType && a.is_string() && b.is_string()) return canonical_dtype(a.as_string()) == canonical_dtype(b.as_string());
  if ((t.kind == K::Float || t.kind == K::Any) && (a.is_int() || a.is_float()) && (b.is_int() || b.is_float()))
    return (a.is_int() ? static_cast<double>(a.as_int()) : a.as_float()) == (b.is_int() ? static_cast<double>(b.as_int()) : b.as_float());
  if (t.kind == K::TypeValue && a.is_string() && b.is_string()) {
    std::string e;
    TypeRef x = parse(a.as_string(), &e), y = parse(b.as_string(), &e);
    // One type however it is spelled: "Float(1,100)" is "Float(1, 100)".
    if (x && y) return x->text == y->text || (is_subtype(*x, *y) && is_subtype(*y, *x));
  }
  return a == b;
}

bool TypeSystem::is_subtype(std::string_view a, std::string_view b) const {
  std::string e;
  TypeRef x = parse(a, &e), y = parse(b, &e);
  return x && y && is_subtype(*x, *y);
}

bool TypeSystem::is_instance(const ir::Value& v, std::string_view type) const {
  std::string e;
  TypeRef t = parse(type, &e);
  return t && is_instance(v, *t);
}

// ---------------------------------------------------------------- the built-in systems

std::unique_ptr<TypeSystem> make_python_type_system() {
  return std::make_unique<TableTypeSystem>(
      "python",
      std::unordered_map<std::string, K>{
          {"str", K::String}, {"bool", K::Bool}, {"int", K::Int}, {"float", K::Float}, {"None", K::Null},
          {"NoneType", K::Null}, {"list", K::List}, {"tuple", K::List}, {"dict", K::Map}, {"object", K::Any},
          {"Any", K::Any}, {"bytes", K::String}, {"type", K::TypeValue}, {"numpy.ndarray", K::Tensor},
          {"numpy.dtype", K::DType}, {"tensorflow.DType", K::DType}, {"tf.DType", K::DType},
          {"tensorflow.TensorShape", K::Shape}, {"tf.TensorShape", K::Shape}, {"tensorflow.Tensor", K::Tensor},
          {"tensorflow.GraphDef", K::Graph}, {"tensorflow.NameAttrList", K::Map}, {"torch.dtype", K::DType},
          {"torch.Size", K::Shape}, {"torch.Tensor", K::Tensor}},
      TableTypeSystem::Syntax{.suffix_list = true, .generic_square = true});
}

std::unique_ptr<TypeSystem> make_cpp_type_system() {
  return std::make_unique<TableTypeSystem>(
      "cpp",
      std::unordered_map<std::string, K>{
          {"int", K::Int}, {"long", K::Int}, {"int8_t", K::Int}, {"int16_t", K::Int}, {"int32_t", K::Int},
          {"int64_t", K::Int}, {"uint8_t", K::Int}, {"uint16_t", K::Int}, {"uint32_t", K::Int}, {"uint64_t", K::Int},
          {"size_t", K::Int}, {"float", K::Float}, {"double", K::Float}, {"bool", K::Bool},
          {"std::string", K::String}, {"string", K::String}, {"char*", K::String}, {"std::nullptr_t", K::Null},
          {"void", K::Null}, {"auto", K::Any}},
      TableTypeSystem::Syntax{.suffix_list = true, .generic_angle = true});
}

std::unique_ptr<TypeSystem> make_protobuf_type_system() {
  return std::make_unique<TableTypeSystem>(
      "protobuf",
      std::unordered_map<std::string, K>{
          {"int32", K::Int}, {"int64", K::Int}, {"uint32", K::Int}, {"uint64", K::Int}, {"sint32", K::Int},
          {"sint64", K::Int}, {"fixed32", K::Int}, {"fixed64", K::Int}, {"sfixed32", K::Int}, {"sfixed64", K::Int},
          {"float", K::Float}, {"double", K::Float}, {"bool", K::Bool}, {"string", K::String}, {"bytes", K::String},
          {"google.protobuf.Any", K::Any}},
      TableTypeSystem::Syntax{.generic_angle = true, .repeated = true, .unknown_dotted_is_any = true});
}

std::unique_ptr<TypeSystem> make_flatbuffers_type_system() {
  return std::make_unique<TableTypeSystem>(
      "flatbuffers",
      std::unordered_map<std::string, K>{
          {"bool", K::Bool}, {"byte", K::Int}, {"ubyte", K::Int}, {"short", K::Int}, {"ushort", K::Int},
          {"int", K::Int}, {"uint", K::Int}, {"long", K::Int}, {"ulong", K::Int}, {"int8", K::Int},
          {"uint8", K::Int}, {"int16", K::Int}, {"uint16", K::Int}, {"int32", K::Int}, {"uint32", K::Int},
          {"int64", K::Int}, {"uint64", K::Int}, {"float", K::Float}, {"double", K::Float}, {"float32", K::Float},
          {"float64", K::Float}, {"string", K::String}},
      TableTypeSystem::Syntax{.bracket_list = true, .unknown_dotted_is_any = true});
}

std::unique_ptr<TypeSystem> make_torchscript_type_system() { return std::make_unique<TorchScriptTypes>(); }
std::unique_ptr<TypeSystem> make_onnx_type_system() { return std::make_unique<OnnxTypes>(); }

TypeSystems::TypeSystems() {
  add(make_python_type_system());
  add(make_cpp_type_system());
  add(make_protobuf_type_system());
  add(make_flatbuffers_type_system());
  add(make_torchscript_type_system());
  add(make_onnx_type_system());
}

void TypeSystems::add(std::unique_ptr<TypeSystem> ts) {
  std::string n(ts->name());
  systems_[n] = std::move(ts);
}

const TypeSystem* TypeSystems::find(std::string_view name) const {
  auto it = systems_.find(name);
  return it == systems_.end() ? nullptr : it->second.get();
}

std::vector<std::string> TypeSystems::names() const {
  std::vector<std::string> r;
  for (const auto& [n, _] : systems_) r.push_back(n);
  return r;
}

}  // namespace amanda::schema
