#include "fills.h"

#include <cstring>
#include <limits>

#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"

namespace amanda::caffe2_frontend::detail {

namespace c2 = amanda_caffe2;
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

}  // namespace amanda::caffe2_frontend::detail
