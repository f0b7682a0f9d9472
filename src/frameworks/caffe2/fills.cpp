#include "fills.h"

#include <cstring>
#include <limits>

#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"
#include "../tensorflow/wire.h"  // the protobuf wire reader and writer the TensorFlow framework wrote

namespace amanda::caffe2_frontend::detail {

namespace c2 = amanda_caffe2;
namespace wire = tf_frontend::detail::wire;
using ir::DType;

namespace {

enum class Field { Floats, Ints };

struct Fill {
  std::string_view type;
  DType dtype;
  Field field;
};

// Caffe2's given_tensor_fill_op.cc: the element type each op makes from its `values`.
constexpr Fill kFills[] = {
    {"GivenTensorFill", DType::Float32, Field::Floats},     {"GivenTensorDoubleFill", DType::Float64, Field::Floats},
    {"GivenTensorIntFill", DType::Int32, Field::Ints},      {"GivenTensorInt64Fill", DType::Int64, Field::Ints},
    {"GivenTensorInt16Fill", DType::Int16, Field::Ints},    {"GivenTensorBoolFill", DType::Bool, Field::Ints},
};

const Fill* by_type(std::string_view t) {
  for (const auto& f : kFills)
    if (f.type == t) return &f;
  return nullptr;
}

const Fill* by_dtype(DType t) {
  for (const auto& f : kFills)
    if (f.dtype == t) return &f;
  return nullptr;
}

template <class T>
void put(std::string& bytes, size_t i, T v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

template <class T>
T get(const ir::Tensor& t, size_t i) {
  T v;
  std::memcpy(&v, t.data + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

std::string_view fill_for(DType t) {
  const Fill* f = by_dtype(t);
  return f ? f->type : std::string_view();
}

std::optional<FillResult> read_fill(const c2::OperatorDef& op) {
  const Fill* f = by_type(op.type());
  if (!f || op.input_size() || op.output_size() != 1 || op.arg_size() != 2 || op.has_name() || op.has_device_option() ||
      op.has_engine() || op.control_input_size() || op.has_is_gradient_op() || op.has_debug_info() || op.has_domain() ||
      op.has_op_version() || !op.GetReflection()->GetUnknownFields(op).empty())
    return std::nullopt;
  const c2::Argument* values = nullptr;
  const c2::Argument* shape = nullptr;
  bool shape_first = false;
  for (const auto& a : op.arg()) {
    if (!a.GetReflection()->GetUnknownFields(a).empty()) return std::nullopt;
    if (a.name() == "values" && !values) values = &a;
    else if (a.name() == "shape" && !shape) shape_first = !values, shape = &a;
    else return std::nullopt;
  }
  if (!values || !shape) return std::nullopt;
  auto only = [](const c2::Argument& a, Field field) {
    bool other = a.has_f() || a.has_i() || a.has_s() || a.has_t() || a.has_n() || a.strings_size() || a.tensors_size() ||
                 a.nets_size() || a.qtensors_size();
    return !other && (field == Field::Floats ? a.ints_size() == 0 : a.floats_size() == 0);
  };
  if (!only(*shape, Field::Ints) || !only(*values, f->field)) return std::nullopt;
  uint64_t count = 1;
  std::vector<int64_t> dims;
  for (int64_t d : shape->ints()) {
    if (d < 0) return std::nullopt;
    if (d && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) return std::nullopt;
    count *= static_cast<uint64_t>(d);
    dims.push_back(d);
  }
  uint64_t n = f->field == Field::Floats ? values->floats_size() : values->ints_size();
  if (n != count) return std::nullopt;
  size_t es = ir::dtype_size(f->dtype);
  std::string bytes(n * es, '\0');
  for (size_t i = 0; i < n; ++i) {
    switch (f->dtype) {
      case DType::Float32: put<float>(bytes, i, values->floats(i)); break;
      case DType::Float64: put<double>(bytes, i, values->floats(i)); break;
      case DType::Int64: put<int64_t>(bytes, i, values->ints(i)); break;
      case DType::Int32: {
        int64_t v = values->ints(i);
        if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;  // would not come back the same
        put<int32_t>(bytes, i, static_cast<int32_t>(v));
        break;
      }
      case DType::Int16: {
        int64_t v = values->ints(i);
        if (v < INT16_MIN || v > INT16_MAX) return std::nullopt;
        put<int16_t>(bytes, i, static_cast<int16_t>(v));
        break;
      }
      case DType::Bool: {
        int64_t v = values->ints(i);
        if (v != 0 && v != 1) return std::nullopt;
        put<uint8_t>(bytes, i, static_cast<uint8_t>(v));
        break;
      }
      default: return std::nullopt;
    }
  }
  FillResult r;
  r.tensor = ir::Tensor::from_bytes(f->dtype, std::move(dims), std::move(bytes));
  r.default_fill = by_dtype(f->dtype) == f;
  r.shape_first = shape_first;
  return r;
}

void write_fill(const ir::Tensor& t, std::string_view type, bool shape_first, const std::string& blob, c2::OperatorDef& op) {
  const Fill* f = type.empty() ? by_dtype(t.dtype) : by_type(type);
  if (!f) throw Error("initializer '" + blob + "': Caffe2 has no GivenTensor*Fill for " + std::string(ir::dtype_name(t.dtype)) + " tensors");
  if (f->dtype != t.dtype)
    throw Error("initializer '" + blob + "': " + std::string(f->type) + " makes " + std::string(ir::dtype_name(f->dtype)) +
                ", not " + std::string(ir::dtype_name(t.dtype)));
  std::optional<uint64_t> n = t.element_count();
  if (!n || t.size != *n * ir::dtype_size(t.dtype)) throw Error("initializer '" + blob + "': its bytes do not match its shape");
  op.set_type(std::string(f->type));
  c2::Argument* values = nullptr;
  c2::Argument* shape = nullptr;
  if (shape_first) {
    shape = op.add_arg();
    values = op.add_arg();
  } else {
    values = op.add_arg();
    shape = op.add_arg();
  }
  values->set_name("values");
  shape->set_name("shape");
  for (int64_t d : t.shape) shape->add_ints(d);
  if (f->field == Field::Floats) values->mutable_floats()->Reserve(static_cast<int>(*n));
  else values->mutable_ints()->Reserve(static_cast<int>(*n));
  for (size_t i = 0; i < *n; ++i) {
    switch (t.dtype) {
      case DType::Float32: values->add_floats(get<float>(t, i)); break;
      case DType::Float64: {
        double v = get<double>(t, i);
        if (static_cast<double>(static_cast<float>(v)) != v && v == v)
          throw Error("initializer '" + blob + "': value " + std::to_string(i) + " of this float64 tensor is not a float32, and " +
                      "GivenTensorDoubleFill holds its values as floats: it would not be the same tensor");
        values->add_floats(static_cast<float>(v));
        break;
      }
      case DType::Int64: values->add_ints(get<int64_t>(t, i)); break;
      case DType::Int32: values->add_ints(get<int32_t>(t, i)); break;
      case DType::Int16: values->add_ints(get<int16_t>(t, i)); break;
      case DType::Bool: values->add_ints(get<uint8_t>(t, i) ? 1 : 0); break;
      default: break;
    }
  }
}

namespace {

// One Argument's wire bytes: its name and its floats (as little-endian bytes) or ints.
struct WireArg {
  std::string_view name;
  std::string floats;  // 4 bytes per value
  std::vector<int64_t> ints;
  bool has_floats = false, has_ints = false;
};

bool read_arg(std::string_view b, WireArg& a) {
  wire::Reader r(b);
  while (!r.done()) {
    uint32_t f, t;
    if (!r.tag(f, t)) return false;
    if (f == 1 && t == wire::kLen) {
      if (!r.bytes(a.name)) return false;
    } else if (f == 5 && t == wire::kFixed32) {
      // The run of unpacked floats protobuf writes: tag 0x2d then 4 bytes, again and again.
      a.has_floats = true;
      const uint8_t* p = r.p - 1;
      const uint8_t* start = p;
      size_t n = 0;
      while (r.e - p >= 5 && *p == 0x2d) {
        p += 5;
        ++n;
      }
      size_t at = a.floats.size();
      a.floats.resize(at + 4 * n);
      for (size_t k = 0; k < n; ++k) std::memcpy(a.floats.data() + at + 4 * k, start + 5 * k + 1, 4);
      r.p = p;
      if (n == 0) return false;
    } else if (f == 5 && t == wire::kLen) {  // packed
      std::string_view packed;
      if (!r.bytes(packed) || packed.size() % 4) return false;
      a.has_floats = true;
      a.floats.append(packed);
    } else if (f == 6 && t == wire::kVarint) {
      uint64_t v;
      if (!r.varint(v)) return false;
      a.has_ints = true;
      a.ints.push_back(static_cast<int64_t>(v));
    } else if (f == 6 && t == wire::kLen) {
      std::string_view packed;
      if (!r.bytes(packed)) return false;
      wire::Reader q(packed);
      a.has_ints = true;
      while (!q.done()) {
        uint64_t v;
        if (!q.varint(v)) return false;
        a.ints.push_back(static_cast<int64_t>(v));
      }
    } else {
      return false;  // another field (or a wire type protobuf would refuse): protobuf decides
    }
  }
  return true;
}

}  // namespace

std::optional<WireFill> read_fill_wire(std::string_view bytes) {
  wire::Reader r(bytes);
  WireFill w;
  int outputs = 0;
  bool has_type = false;
  WireArg args[2];
  int n_args = 0;
  args[0].floats.reserve(bytes.size() / 5 * 4);  // unpacked floats: 5 bytes each on the wire, 4 in memory
  while (!r.done()) {
    uint32_t f, t;
    if (!r.tag(f, t) || t != wire::kLen) return std::nullopt;
    std::string_view b;
    if (!r.bytes(b)) return std::nullopt;
    if (f == 2) {
      w.blob = b;
      ++outputs;
    } else if (f == 4) {
      w.type = b;
      has_type = true;
    } else if (f == 5) {
      if (n_args == 2 || !read_arg(b, args[n_args++])) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  const Fill* fill = has_type ? by_type(w.type) : nullptr;
  if (!fill || outputs != 1 || n_args != 2) return std::nullopt;
  int vi = args[0].name == "values" ? 0 : 1;
  WireArg& values = args[vi];
  const WireArg& shape = args[1 - vi];
  if (values.name != "values" || shape.name != "shape" || shape.has_floats) return std::nullopt;
  if (fill->field == Field::Floats ? values.has_ints : values.has_floats) return std::nullopt;
  uint64_t count = 1;
  std::vector<int64_t> dims;
  for (int64_t d : shape.ints) {
    if (d < 0) return std::nullopt;
    if (d && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) return std::nullopt;
    count *= static_cast<uint64_t>(d);
    dims.push_back(d);
  }
  uint64_t n = fill->field == Field::Floats ? values.floats.size() / 4 : values.ints.size();
  if (n != count) return std::nullopt;
  std::string out;
  switch (fill->dtype) {
    case DType::Float32: out = std::move(values.floats); break;
    case DType::Float64:
      out.resize(n * 8);
      for (size_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, values.floats.data() + 4 * i, 4);
        put<double>(out, i, v);
      }
      break;
    default: {
      out.resize(n * ir::dtype_size(fill->dtype));
      for (size_t i = 0; i < n; ++i) {
        int64_t v = values.ints[i];
        switch (fill->dtype) {
          case DType::Int64: put<int64_t>(out, i, v); break;
          case DType::Int32:
            if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
            put<int32_t>(out, i, static_cast<int32_t>(v));
            break;
          case DType::Int16:
            if (v < INT16_MIN || v > INT16_MAX) return std::nullopt;
            put<int16_t>(out, i, static_cast<int16_t>(v));
            break;
          case DType::Bool:
            if (v != 0 && v != 1) return std::nullopt;
            put<uint8_t>(out, i, static_cast<uint8_t>(v));
            break;
          default: return std::nullopt;
        }
      }
    }
  }
  w.fill.tensor = ir::Tensor::from_bytes(fill->dtype, std::move(dims), std::move(out));
  w.fill.default_fill = by_dtype(fill->dtype) == fill;
  w.fill.shape_first = vi == 1;
  return w;
}

void write_fill_wire(const ir::Tensor& t, std::string_view type, bool shape_first, const std::string& blob, std::string& out) {
  const Fill* f = type.empty() ? by_dtype(t.dtype) : by_type(type);
  if (!f) throw Error("initializer '" + blob + "': Caffe2 has no GivenTensor*Fill for " + std::string(ir::dtype_name(t.dtype)) + " tensors");
  if (f->dtype != t.dtype)
    throw Error("initializer '" + blob + "': " + std::string(f->type) + " makes " + std::string(ir::dtype_name(f->dtype)) +
                ", not " + std::string(ir::dtype_name(t.dtype)));
  std::optional<uint64_t> count = t.element_count();
  if (!count || t.size != *count * ir::dtype_size(t.dtype)) throw Error("initializer '" + blob + "': its bytes do not match its shape");
  size_t n = *count;
  auto int_at = [&](size_t i) -> int64_t {
    switch (t.dtype) {
      case DType::Int64: return get<int64_t>(t, i);
      case DType::Int32: return get<int32_t>(t, i);
      case DType::Int16: return get<int16_t>(t, i);
      case DType::Bool: return get<uint8_t>(t, i) ? 1 : 0;
      default: return 0;
    }
  };
  // Sizes first, so that the op is written once, in place, into `out`.
  size_t values_size = wire::len_size(1, 6);
  if (f->field == Field::Floats) {
    values_size += 5 * n;
  } else {
    for (size_t i = 0; i < n; ++i) values_size += 1 + wire::varint_size(static_cast<uint64_t>(int_at(i)));
  }
  size_t shape_size = wire::len_size(1, 5);
  for (int64_t d : t.shape) shape_size += 1 + wire::varint_size(static_cast<uint64_t>(d));
  size_t op_size = wire::len_size(2, blob.size()) + wire::len_size(4, f->type.size()) + wire::len_size(5, values_size) +
                   wire::len_size(5, shape_size);
  out.reserve(out.size() + wire::len_size(2, op_size));
  wire::put_tag(out, 2, wire::kLen);
  wire::put_varint(out, op_size);
  wire::put_len(out, 2, blob);
  wire::put_len(out, 4, f->type);
  auto put_shape = [&] {
    wire::put_tag(out, 5, wire::kLen);
    wire::put_varint(out, shape_size);
    wire::put_len(out, 1, "shape");
    for (int64_t d : t.shape) {
      wire::put_tag(out, 6, wire::kVarint);
      wire::put_varint(out, static_cast<uint64_t>(d));
    }
  };
  if (shape_first) put_shape();
  wire::put_tag(out, 5, wire::kLen);
  wire::put_varint(out, values_size);
  wire::put_len(out, 1, "values");
  if (f->field == Field::Floats) {
    size_t at = out.size();
    out.resize(at + 5 * n);
    char* p = out.data() + at;
    for (size_t i = 0; i < n; ++i, p += 5) {
      float v;
      if (t.dtype == DType::Float64) {
        double d = get<double>(t, i);
        v = static_cast<float>(d);
        if (static_cast<double>(v) != d && d == d)
          throw Error("initializer '" + blob + "': value " + std::to_string(i) + " of this float64 tensor is not a float32, and " +
                      "GivenTensorDoubleFill holds its values as floats: it would not be the same tensor");
      } else {
        std::memcpy(&v, t.data + 4 * i, 4);
      }
      *p = 0x2d;
      std::memcpy(p + 1, &v, 4);
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      wire::put_tag(out, 6, wire::kVarint);
      wire::put_varint(out, static_cast<uint64_t>(int_at(i)));
    }
  }
  if (!shape_first) put_shape();
}

}  // namespace amanda::caffe2_frontend::detail
