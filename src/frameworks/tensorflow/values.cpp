// TensorFlow's values <-> the IR's (values.h).
#include "values.h"

#include <cstring>
#include <limits>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"

namespace amanda::tf_frontend::detail {

namespace tf = tensorflow;

namespace {

struct DtypeRow {
  tf::DataType tf;
  std::string_view name;
  ir::DType ir;
};

// tf.DType.name spellings; the IR element type of each (quantised types keep their bytes).
constexpr DtypeRow kDtypes[] = {
    {tf::DT_FLOAT, "float32", ir::DType::Float32},     {tf::DT_DOUBLE, "float64", ir::DType::Float64},
    {tf::DT_INT32, "int32", ir::DType::Int32},         {tf::DT_UINT8, "uint8", ir::DType::UInt8},
    {tf::DT_INT16, "int16", ir::DType::Int16},         {tf::DT_INT8, "int8", ir::DType::Int8},
    {tf::DT_STRING, "string", ir::DType::String},      {tf::DT_COMPLEX64, "complex64", ir::DType::Complex64},
    {tf::DT_INT64, "int64", ir::DType::Int64},         {tf::DT_BOOL, "bool", ir::DType::Bool},
    {tf::DT_QINT8, "qint8", ir::DType::Int8},          {tf::DT_QUINT8, "quint8", ir::DType::UInt8},
    {tf::DT_QINT32, "qint32", ir::DType::Int32},       {tf::DT_BFLOAT16, "bfloat16", ir::DType::BFloat16},
    {tf::DT_QINT16, "qint16", ir::DType::Int16},       {tf::DT_QUINT16, "quint16", ir::DType::UInt16},
    {tf::DT_UINT16, "uint16", ir::DType::UInt16},      {tf::DT_COMPLEX128, "complex128", ir::DType::Complex128},
    {tf::DT_HALF, "float16", ir::DType::Float16},      {tf::DT_RESOURCE, "resource", ir::DType::Undefined},
    {tf::DT_VARIANT, "variant", ir::DType::Undefined}, {tf::DT_UINT32, "uint32", ir::DType::UInt32},
    {tf::DT_UINT64, "uint64", ir::DType::UInt64},
};

// A double as float32 (an attribute's `f`), overflowing to infinity: a plain cast of an
// out-of-range double is undefined, and a YAML document may say 1e300.
float to_float(double v) {
  if (v > 3.4028234663852886e38) return std::numeric_limits<float>::infinity();
  if (v < -3.4028234663852886e38) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

const DtypeRow* row(int dt) {
  for (const auto& r : kDtypes)
    if (r.tf == dt) return &r;
  return nullptr;
}

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// The typed field a tensor of `dt` uses, as a uniform view: how many values it holds, and how to
// append value i's bytes (as the IR element) / set it from the IR element's bytes.
struct Typed {
  int count = 0;        // values in the field (complex: pairs)
  int per_element = 1;  // field entries per element
};

Typed typed_count(const tf::TensorProto& t, ir::DType d) {
  switch (d) {
    case ir::DType::Float32: return {t.float_val_size(), 1};
    case ir::DType::Float64: return {t.double_val_size(), 1};
    case ir::DType::Int8: case ir::DType::Int16: case ir::DType::Int32: case ir::DType::UInt8: case ir::DType::UInt16:
      return {t.int_val_size(), 1};
    case ir::DType::Int64: return {t.int64_val_size(), 1};
    case ir::DType::Bool: return {t.bool_val_size(), 1};
    case ir::DType::Float16: case ir::DType::BFloat16: return {t.half_val_size(), 1};
    case ir::DType::UInt32: return {t.uint32_val_size(), 1};
    case ir::DType::UInt64: return {t.uint64_val_size(), 1};
    case ir::DType::Complex64: return {t.scomplex_val_size() / 2, 2};
    case ir::DType::Complex128: return {t.dcomplex_val_size() / 2, 2};
    case ir::DType::String: return {t.string_val_size(), 1};
    default: return {};
  }
}

// Appends value i of the typed field as IR element bytes.
void append_typed(const tf::TensorProto& t, ir::DType d, int i, std::string& out) {
  switch (d) {
    case ir::DType::Float32: store(out, t.float_val(i)); break;
    case ir::DType::Float64: store(out, t.double_val(i)); break;
    case ir::DType::Int8: store(out, static_cast<int8_t>(t.int_val(i))); break;
    case ir::DType::Int16: store(out, static_cast<int16_t>(t.int_val(i))); break;
    case ir::DType::Int32: store(out, static_cast<int32_t>(t.int_val(i))); break;
    case ir::DType::UInt8: store(out, static_cast<uint8_t>(t.int_val(i))); break;
    case ir::DType::UInt16: store(out, static_cast<uint16_t>(t.int_val(i))); break;
    case ir::DType::Int64: store(out, t.int64_val(i)); break;
    case ir::DType::Bool: store(out, static_cast<uint8_t>(t.bool_val(i) ? 1 : 0)); break;
    case ir::DType::Float16: case ir::DType::BFloat16: store(out, static_cast<uint16_t>(t.half_val(i))); break;
    case ir::DType::UInt32: store(out, t.uint32_val(i)); break;
    case ir::DType::UInt64: store(out, t.uint64_val(i)); break;
    case ir::DType::Complex64: store(out, t.scomplex_val(2 * i)); store(out, t.scomplex_val(2 * i + 1)); break;
    case ir::DType::Complex128: store(out, t.dcomplex_val(2 * i)); store(out, t.dcomplex_val(2 * i + 1)); break;
    default: break;
  }
}

// Appends IR element i (at p) to the typed field.
void add_typed(tf::TensorProto& t, ir::DType d, const uint8_t* p) {
  switch (d) {
    case ir::DType::Float32: t.add_float_val(load<float>(p)); break;
    case ir::DType::Float64: t.add_double_val(load<double>(p)); break;
    case ir::DType::Int8: t.add_int_val(load<int8_t>(p)); break;
    case ir::DType::Int16: t.add_int_val(load<int16_t>(p)); break;
    case ir::DType::Int32: t.add_int_val(load<int32_t>(p)); break;
    case ir::DType::UInt8: t.add_int_val(load<uint8_t>(p)); break;
    case ir::DType::UInt16: t.add_int_val(load<uint16_t>(p)); break;
    case ir::DType::Int64: t.add_int64_val(load<int64_t>(p)); break;
    case ir::DType::Bool: t.add_bool_val(load<uint8_t>(p) != 0); break;
    case ir::DType::Float16: case ir::DType::BFloat16: t.add_half_val(load<uint16_t>(p)); break;
    case ir::DType::UInt32: t.add_uint32_val(load<uint32_t>(p)); break;
    case ir::DType::UInt64: t.add_uint64_val(load<uint64_t>(p)); break;
    case ir::DType::Complex64: t.add_scomplex_val(load<float>(p)); t.add_scomplex_val(load<float>(p + 4)); break;
    case ir::DType::Complex128: t.add_dcomplex_val(load<double>(p)); t.add_dcomplex_val(load<double>(p + 8)); break;
    default: break;
  }
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

constexpr std::pair<AttrKind, std::string_view> kKindNames[] = {
    {AttrKind::S, "string"},        {AttrKind::I, "int"},
    {AttrKind::F, "float"},         {AttrKind::B, "bool"},
    {AttrKind::Type, "type"},       {AttrKind::Shape, "shape"},
    {AttrKind::Tensor, "tensor"},   {AttrKind::Func, "func"},
    {AttrKind::Placeholder, "placeholder"},
    {AttrKind::ListS, "list(string)"}, {AttrKind::ListI, "list(int)"},
    {AttrKind::ListF, "list(float)"},  {AttrKind::ListB, "list(bool)"},
    {AttrKind::ListType, "list(type)"}, {AttrKind::ListShape, "list(shape)"},
    {AttrKind::ListTensor, "list(tensor)"}, {AttrKind::ListFunc, "list(func)"},
};

// The schema's attribute type (the python type system's spelling the generator writes) -> kind.
std::optional<AttrKind> kind_of_hint(std::string_view h) {
  static constexpr std::pair<std::string_view, AttrKind> table[] = {
      {"str", AttrKind::S}, {"int", AttrKind::I}, {"float", AttrKind::F}, {"bool", AttrKind::B},
      {"tensorflow.DType", AttrKind::Type}, {"tensorflow.TensorShape", AttrKind::Shape},
      {"tensorflow.Tensor", AttrKind::Tensor}, {"tensorflow.NameAttrList", AttrKind::Func},
      {"List[str]", AttrKind::ListS}, {"List[int]", AttrKind::ListI}, {"List[float]", AttrKind::ListF},
      {"List[bool]", AttrKind::ListB}, {"List[tensorflow.DType]", AttrKind::ListType},
      {"List[tensorflow.TensorShape]", AttrKind::ListShape}, {"List[tensorflow.Tensor]", AttrKind::ListTensor},
      {"List[tensorflow.NameAttrList]", AttrKind::ListFunc},
  };
  for (auto [n, k] : table)
    if (n == h) return k;
  return std::nullopt;
}

bool is_shape(const ir::Value& v) {
  if (v.is_null()) return true;
  if (!v.is_list()) return false;
  for (const auto& d : v.as_list())
    if (!(d.is_null() || (d.is_int() && d.as_int() >= 0))) return false;
  return true;
}

bool fits(const ir::Value& v, AttrKind k) {
  auto all = [&](AttrKind e) {
    if (!v.is_list()) return false;
    for (const auto& x : v.as_list())
      if (!fits(x, e)) return false;
    return true;
  };
  switch (k) {
    case AttrKind::S: return v.is_string();
    case AttrKind::I: return v.is_int();
    case AttrKind::F: return v.is_float();
    case AttrKind::B: return v.is_bool();
    case AttrKind::Type: return v.is_string() && dtype_from_name(v.as_string()).has_value();
    case AttrKind::Shape: return is_shape(v);
    case AttrKind::Tensor: return v.is_tensor();
    case AttrKind::Func: return v.is_map() && v.find("name") && v.find("name")->is_string();
    case AttrKind::Placeholder: return v.is_map() && v.as_map().size() == 1 && v.find("placeholder") && v.find("placeholder")->is_string();
    case AttrKind::ListS: return all(AttrKind::S);
    case AttrKind::ListI: return all(AttrKind::I);
    case AttrKind::ListF: return all(AttrKind::F);
    case AttrKind::ListB: return all(AttrKind::B);
    case AttrKind::ListType: return all(AttrKind::Type);
    case AttrKind::ListShape: return all(AttrKind::Shape);
    case AttrKind::ListTensor: return all(AttrKind::Tensor);
    case AttrKind::ListFunc: return all(AttrKind::Func);
    case AttrKind::Unsupported: return false;
  }
  return false;
}

AttrKind own_kind(const ir::Value& v) {
  using K = ir::Value::Kind;
  switch (v.kind()) {
    case K::Null: return AttrKind::Shape;
    case K::Bool: return AttrKind::B;
    case K::Int: return AttrKind::I;
    case K::Float: return AttrKind::F;
    case K::String: return AttrKind::S;
    case K::Tensor: return AttrKind::Tensor;
    case K::Map: return fits(v, AttrKind::Placeholder) ? AttrKind::Placeholder : AttrKind::Func;
    case K::List: {
      if (v.as_list().empty()) return AttrKind::ListI;  // an empty list is `list {}` whatever its kind
      switch (own_kind(v.as_list()[0])) {
        case AttrKind::S: return AttrKind::ListS;
        case AttrKind::I: return AttrKind::ListI;
        case AttrKind::F: return AttrKind::ListF;
        case AttrKind::B: return AttrKind::ListB;
        case AttrKind::Tensor: return AttrKind::ListTensor;
        case AttrKind::Func: return AttrKind::ListFunc;
        default: return AttrKind::ListShape;
      }
    }
    default: return AttrKind::Unsupported;
  }
}

}  // namespace

std::optional<std::string_view> dtype_name(int dt) {
  if (const DtypeRow* r = row(dt)) return r->name;
  if (dt > 100) {
    if (const DtypeRow* r = row(dt - 100)) {
      static std::string refs[128];  // "float32_ref", built once per base type
      std::string& s = refs[dt - 100];
      if (s.empty()) s = std::string(r->name) + "_ref";
      return std::string_view(s);
    }
  }
  return std::nullopt;
}

std::optional<tf::DataType> dtype_from_name(std::string_view name) {
  bool ref = name.ends_with("_ref");
  if (ref) name.remove_suffix(4);
  for (const auto& r : kDtypes)
    if (r.name == name) return static_cast<tf::DataType>(r.tf + (ref ? 100 : 0));
  return std::nullopt;
}

ir::DType ir_dtype(tf::DataType dt) {
  const DtypeRow* r = row(dt);
  return r ? r->ir : ir::DType::Undefined;
}

tf::DataType tf_dtype(ir::DType t) {
  for (const auto& r : kDtypes)
    if (r.ir == t) return r.tf;  // the first row of an IR type is its plain TensorFlow type
  return tf::DT_INVALID;
}

std::optional<ir::Value> shape_value(const tf::TensorShapeProto& s) {
  if (s.unknown_rank()) {
    if (s.dim_size()) return std::nullopt;
    return ir::Value();
  }
  ir::Value::List dims;
  dims.reserve(s.dim_size());
  for (const auto& d : s.dim()) {
    if (!d.name().empty() || d.size() < -1) return std::nullopt;
    dims.push_back(d.size() == -1 ? ir::Value() : ir::Value(static_cast<int64_t>(d.size())));
  }
  return ir::Value(std::move(dims));
}

bool shape_proto(const ir::Value& v, tf::TensorShapeProto& s) {
  s.Clear();
  if (v.is_null()) {
    s.set_unknown_rank(true);
    return true;
  }
  if (!v.is_list()) return false;
  for (const auto& d : v.as_list()) {
    if (d.is_null()) s.add_dim()->set_size(-1);
    else if (d.is_int() && d.as_int() >= 0) s.add_dim()->set_size(d.as_int());
    else return false;
  }
  return true;
}

ir::Value TensorMeta::to_value() const {
  ir::Value::Map m;
  if (storage != "content") m.push_back({"storage", ir::Value(storage)});
  if (values >= 0) m.push_back({"values", ir::Value(values)});
  if (!tf_dtype.empty()) m.push_back({"dtype", ir::Value(tf_dtype)});
  if (version_number) m.push_back({"version_number", ir::Value(static_cast<int64_t>(version_number))});
  if (m.empty()) return ir::Value();
  return ir::Value(std::move(m));
}

TensorMeta TensorMeta::from_value(const ir::Value* v) {
  TensorMeta m;
  if (!v || !v->is_map()) return m;
  if (const auto* s = v->find("storage"); s && s->is_string()) m.storage = s->as_string();
  if (const auto* s = v->find("values"); s && s->is_int()) m.values = s->as_int();
  if (const auto* s = v->find("dtype"); s && s->is_string()) m.tf_dtype = s->as_string();
  if (const auto* s = v->find("version_number"); s && s->is_int()) m.version_number = static_cast<int32_t>(s->as_int());
  return m;
}

namespace {
// Bytes a reader computed, charged to the memory budget while they live.
struct ChargedBuffer final : Buffer {
  ChargedBuffer(uint64_t n, const std::string& what) : charge(n, what) {}
  const uint8_t* data() const override { return reinterpret_cast<const uint8_t*>(bytes.data()); }
  size_t size() const override { return bytes.size(); }
  MemoryCharge charge;
  std::string bytes;
};
}  // namespace

std::optional<ir::Tensor> tensor_from_proto(const tf::TensorProto& t, TensorMeta& meta, const std::string& where,
                                            std::string* content) {
  ir::DType d = ir_dtype(t.dtype());
  if (d == ir::DType::Undefined) return std::nullopt;
  if (!t.has_tensor_shape() && t.tensor_shape().dim_size()) return std::nullopt;
  std::vector<int64_t> shape;
  if (t.tensor_shape().unknown_rank()) return std::nullopt;
  for (const auto& dim : t.tensor_shape().dim()) {
    if (dim.size() < 0 || !dim.name().empty()) return std::nullopt;
    shape.push_back(dim.size());
  }
  meta = TensorMeta();
  if (tf_dtype(d) != t.dtype()) meta.tf_dtype = std::string(*dtype_name(t.dtype()));
  meta.version_number = t.version_number();
  ir::Tensor probe;
  probe.dtype = d;
  probe.shape = shape;
  std::optional<uint64_t> count = probe.element_count();
  if (!count) throw Error(where + ": tensor shape " + shape_text(shape) + " has too many elements");
  Typed typed = typed_count(t, d);
  if (d == ir::DType::String) {
    if (!t.tensor_content().empty()) return std::nullopt;
    uint64_t n = static_cast<uint64_t>(typed.count);
    if (n > *count)
      throw Error(where + ": string tensor holds " + std::to_string(n) + " values, its shape " + shape_text(shape) +
                  " has " + std::to_string(*count));
    if (n == 0 && *count > 0) return std::nullopt;  // (zero strings: not a form TensorFlow writes)
    meta.storage = "typed";
    if (n != *count) meta.values = static_cast<int64_t>(n);
    // Charged before the strings are made: a Const of shape [10^9] with one string_val is a few
    // bytes in the file and tens of gigabytes expanded. (Charged for the run: the IR's string
    // tensors carry no owner to refund it.)
    uint64_t longest = 0;
    for (uint64_t i = 0; i < n; ++i) longest = std::max<uint64_t>(longest, t.string_val(static_cast<int>(i)).size());
    Budget::run().charge(BudgetKind::Memory,
                         checked_mul(*count, checked_add(sizeof(std::string), longest, where), where),
                         where + ": a string tensor of shape " + shape_text(shape));
    ir::Tensor out;
    out.dtype = d;
    out.shape = std::move(shape);
    out.strings.reserve(*count);
    for (uint64_t i = 0; i < *count; ++i) out.strings.push_back(t.string_val(static_cast<int>(std::min(i, n - 1))));
    return out;
  }
  uint64_t esize = ir::dtype_size(d);
  if (content && !content->empty()) {
    if (typed.count) return std::nullopt;
    uint64_t want = *count * esize;
    if (content->size() != want)
      throw Error(where + ": tensor_content holds " + std::to_string(content->size()) + " bytes, but shape " +
                  shape_text(shape) + " of " + std::string(*dtype_name(t.dtype())) + " needs " + std::to_string(want));
    auto buf = make_buffer(std::move(*content));
    return ir::Tensor::borrow(d, std::move(shape), buf, buf->data(), buf->size());
  }
  if (!t.tensor_content().empty()) {
    if (typed.count) return std::nullopt;  // both forms: kept whole by the caller
    uint64_t want = *count * esize;
    if (t.tensor_content().size() != want)
      throw Error(where + ": tensor_content holds " + std::to_string(t.tensor_content().size()) + " bytes, but shape " +
                  shape_text(shape) + " of " + std::string(*dtype_name(t.dtype())) + " needs " + std::to_string(want));
    return ir::Tensor::from_bytes(d, std::move(shape), t.tensor_content());
  }
  uint64_t n = static_cast<uint64_t>(typed.count);
  if (n > *count)
    throw Error(where + ": tensor holds " + std::to_string(n) + " values, but its shape " + shape_text(shape) + " has " +
                std::to_string(*count));
  if (*count > (uint64_t(1) << 34) / std::max<uint64_t>(esize, 1))
    throw Error(where + ": tensor of shape " + shape_text(shape) + " is too large to expand from " + std::to_string(n) + " values");
  // The expanded bytes are charged to the memory budget before they are made (a 50-byte .pb
  // whose Const fills 6e8 zeros took 2.3 GB unseen), and refunded when the tensor is freed.
  auto buf = std::make_shared<ChargedBuffer>(*count * esize, where + ": tensor of shape " + shape_text(shape) + " expanded from " +
                                                                 std::to_string(n) + " values");
  std::string& bytes = buf->bytes;
  bytes.reserve(*count * esize);
  if (n == 0) {
    if (*count) meta.storage = "none";
    bytes.assign(*count * esize, '\0');
  } else {
    meta.storage = "typed";
    if (n != *count) meta.values = static_cast<int64_t>(n);
    for (uint64_t i = 0; i < n; ++i) append_typed(t, d, static_cast<int>(i), bytes);
    std::string_view last(bytes.data() + bytes.size() - esize, esize);
    std::string tail(last);
    for (uint64_t i = n; i < *count; ++i) bytes += tail;
  }
  const uint8_t* data = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t size = bytes.size();
  ir::Tensor out = ir::Tensor::borrow(d, std::move(shape), std::move(buf), data, size);
  out.borrowed_from_file = false;  // (computed, not in a mapped file)
  return out;
}

void tensor_to_proto(const ir::Tensor& t, const TensorMeta& meta, tf::TensorProto& out, bool without_content) {
  out.Clear();
  tf::DataType dt = tf_dtype(t.dtype);
  if (!meta.tf_dtype.empty())
    if (auto d = dtype_from_name(meta.tf_dtype)) dt = *d;
  out.set_dtype(dt);
  auto* shape = out.mutable_tensor_shape();
  for (int64_t d : t.shape) shape->add_dim()->set_size(d);
  if (meta.version_number) out.set_version_number(meta.version_number);
  uint64_t count = t.element_count().value_or(0);
  if (t.dtype == ir::DType::String) {
    uint64_t n = meta.values >= 0 ? std::min<uint64_t>(static_cast<uint64_t>(meta.values), t.strings.size()) : t.strings.size();
    for (uint64_t i = 0; i < n; ++i) out.add_string_val(t.strings[i]);
    return;
  }
  if (meta.storage == "none") return;
  if (meta.storage == "typed") {
    size_t esize = ir::dtype_size(t.dtype);
    uint64_t n = meta.values >= 0 ? std::min<uint64_t>(static_cast<uint64_t>(meta.values), count) : count;
    if (esize == 0 || t.size < n * esize) n = 0;
    for (uint64_t i = 0; i < n; ++i) add_typed(out, t.dtype, t.data + i * esize);
    return;
  }
  // (assign: one copy; set_tensor_content(ptr, n) made a std::string and then copied it again)
  if (t.size && !without_content) out.mutable_tensor_content()->assign(reinterpret_cast<const char*>(t.data), t.size);
}

std::string_view kind_name(AttrKind k) {
  for (auto [kk, n] : kKindNames)
    if (kk == k) return n;
  return "unsupported";
}

std::optional<AttrKind> kind_from_name(std::string_view s) {
  for (auto [k, n] : kKindNames)
    if (n == s) return k;
  return std::nullopt;
}

AttrKind kind_of(const tf::AttrValue& v) {
  switch (v.value_case()) {
    case tf::AttrValue::kS: return AttrKind::S;
    case tf::AttrValue::kI: return AttrKind::I;
    case tf::AttrValue::kF: return AttrKind::F;
    case tf::AttrValue::kB: return AttrKind::B;
    case tf::AttrValue::kType: return AttrKind::Type;
    case tf::AttrValue::kShape: return AttrKind::Shape;
    case tf::AttrValue::kTensor: return AttrKind::Tensor;
    case tf::AttrValue::kFunc: return AttrKind::Func;
    case tf::AttrValue::kPlaceholder: return AttrKind::Placeholder;
    case tf::AttrValue::kList: {
      const auto& l = v.list();
      int kinds = (l.s_size() > 0) + (l.i_size() > 0) + (l.f_size() > 0) + (l.b_size() > 0) + (l.type_size() > 0) +
                  (l.shape_size() > 0) + (l.tensor_size() > 0) + (l.func_size() > 0);
      if (kinds > 1) return AttrKind::Unsupported;
      if (l.s_size()) return AttrKind::ListS;
      if (l.f_size()) return AttrKind::ListF;
      if (l.b_size()) return AttrKind::ListB;
      if (l.type_size()) return AttrKind::ListType;
      if (l.shape_size()) return AttrKind::ListShape;
      if (l.tensor_size()) return AttrKind::ListTensor;
      if (l.func_size()) return AttrKind::ListFunc;
      return AttrKind::ListI;
    }
    default: return AttrKind::Unsupported;
  }
}

bool fits_kind(const ir::Value& v, AttrKind k) { return fits(v, k); }
float to_float32(double v) { return to_float(v); }

AttrKind implied_kind(const ir::Value& v, std::string_view hint) {
  if (auto h = kind_of_hint(hint); h && fits(v, *h)) return *h;
  return own_kind(v);
}

std::optional<AttrOut> attr_from_proto(const tf::AttrValue& v, const std::string& where, std::string* content) {
  AttrOut out;
  switch (v.value_case()) {
    case tf::AttrValue::kS: out.value = ir::Value(v.s()); return out;
    case tf::AttrValue::kI: out.value = ir::Value(static_cast<int64_t>(v.i())); return out;
    case tf::AttrValue::kF: out.value = ir::Value(static_cast<double>(v.f())); return out;
    case tf::AttrValue::kB: out.value = ir::Value(v.b()); return out;
    case tf::AttrValue::kType: {
      auto n = dtype_name(v.type());
      if (!n) return std::nullopt;
      out.value = ir::Value(*n);
      return out;
    }
    case tf::AttrValue::kShape: {
      auto s = shape_value(v.shape());
      if (!s) return std::nullopt;
      out.value = std::move(*s);
      return out;
    }
    case tf::AttrValue::kTensor: {
      TensorMeta m;
      auto t = tensor_from_proto(v.tensor(), m, where, content);
      if (!t) return std::nullopt;
      out.value = ir::Value(std::move(*t));
      out.tensor_meta = m.to_value();
      return out;
    }
    case tf::AttrValue::kFunc: {
      if (v.func().attr_size()) return std::nullopt;  // (function attributes: kept whole)
      out.value = ir::Value(ir::Value::Map{{"name", ir::Value(v.func().name())}});
      return out;
    }
    case tf::AttrValue::kPlaceholder:
      out.value = ir::Value(ir::Value::Map{{"placeholder", ir::Value(v.placeholder())}});
      return out;
    case tf::AttrValue::kList: {
      const auto& l = v.list();
      ir::Value::List items;
      switch (kind_of(v)) {
        case AttrKind::ListS: for (const auto& x : l.s()) items.push_back(ir::Value(x)); break;
        case AttrKind::ListI: for (auto x : l.i()) items.push_back(ir::Value(static_cast<int64_t>(x))); break;
        case AttrKind::ListF: for (auto x : l.f()) items.push_back(ir::Value(static_cast<double>(x))); break;
        case AttrKind::ListB: for (auto x : l.b()) items.push_back(ir::Value(x)); break;
        case AttrKind::ListType:
          for (auto x : l.type()) {
            auto n = dtype_name(x);
            if (!n) return std::nullopt;
            items.push_back(ir::Value(*n));
          }
          break;
        case AttrKind::ListShape:
          for (const auto& x : l.shape()) {
            auto s = shape_value(x);
            if (!s) return std::nullopt;
            items.push_back(std::move(*s));
          }
          break;
        case AttrKind::ListTensor: {
          ir::Value::List metas;
          bool any = false;
          for (const auto& x : l.tensor()) {
            TensorMeta m;
            auto t = tensor_from_proto(x, m, where);
            if (!t) return std::nullopt;
            items.push_back(ir::Value(std::move(*t)));
            metas.push_back(m.to_value());
            any |= !metas.back().is_null();
          }
          if (any) out.tensor_meta = ir::Value(std::move(metas));
          break;
        }
        case AttrKind::ListFunc:
          for (const auto& x : l.func()) {
            if (x.attr_size()) return std::nullopt;
            items.push_back(ir::Value(ir::Value::Map{{"name", ir::Value(x.name())}}));
          }
          break;
        default: return std::nullopt;
      }
      out.value = ir::Value(std::move(items));
      return out;
    }
    default: return std::nullopt;
  }
}

bool attr_to_proto(const ir::Value& v, AttrKind kind, const ir::Value* tensor_meta, tf::AttrValue& out, bool without_content) {
  out.Clear();
  if (!fits(v, kind)) return false;
  switch (kind) {
    case AttrKind::S: out.set_s(v.as_string()); return true;
    case AttrKind::I: out.set_i(v.as_int()); return true;
    case AttrKind::F: out.set_f(to_float(v.as_float())); return true;
    case AttrKind::B: out.set_b(v.as_bool()); return true;
    case AttrKind::Type: out.set_type(*dtype_from_name(v.as_string())); return true;
    case AttrKind::Shape: return shape_proto(v, *out.mutable_shape());
    case AttrKind::Tensor:
      tensor_to_proto(v.as_tensor(), TensorMeta::from_value(tensor_meta), *out.mutable_tensor(), without_content);
      return true;
    case AttrKind::Func: out.mutable_func()->set_name(v.find("name")->as_string()); return true;
    case AttrKind::Placeholder: out.set_placeholder(v.find("placeholder")->as_string()); return true;
    default: break;
  }
  auto* l = out.mutable_list();
  const auto& items = v.as_list();
  for (size_t i = 0; i < items.size(); ++i) {
    const ir::Value& x = items[i];
    switch (kind) {
      case AttrKind::ListS: l->add_s(x.as_string()); break;
      case AttrKind::ListI: l->add_i(x.as_int()); break;
      case AttrKind::ListF: l->add_f(to_float(x.as_float())); break;
      case AttrKind::ListB: l->add_b(x.as_bool()); break;
      case AttrKind::ListType: l->add_type(*dtype_from_name(x.as_string())); break;
      case AttrKind::ListShape:
        if (!shape_proto(x, *l->add_shape())) return false;
        break;
      case AttrKind::ListTensor: {
        const ir::Value* m = nullptr;
        if (tensor_meta && tensor_meta->is_list() && i < tensor_meta->as_list().size()) m = &tensor_meta->as_list()[i];
        tensor_to_proto(x.as_tensor(), TensorMeta::from_value(m), *l->add_tensor());
        break;
      }
      case AttrKind::ListFunc: l->add_func()->set_name(x.find("name")->as_string()); break;
      default: return false;
    }
  }
  return true;
}

std::string serialize(const google::protobuf::MessageLite& m) {
  // Sized once: growing a string to a 14 MB GraphDef copies it again and again.
  std::string out(m.ByteSizeLong(), '\0');
  google::protobuf::io::ArrayOutputStream a(out.data(), static_cast<int>(out.size()));
  google::protobuf::io::CodedOutputStream c(&a);
  c.SetSerializationDeterministic(true);
  m.SerializeWithCachedSizes(&c);
  return out;
}

}  // namespace amanda::tf_frontend::detail
