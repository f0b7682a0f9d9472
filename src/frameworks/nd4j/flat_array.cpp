#include "frameworks/nd4j/flat_array.h"

#include <cstring>

#include "amanda/support/diagnostics.h"
#include "frameworks/nd4j/nd4j.h"

namespace amanda::nd4j {

namespace {

constexpr int64_t kOrderC = 99;

// nd4j's ArrayOptions flag of each element type (the `extra` word of a new array's shape info).
int64_t dtype_flags(ir::DType t) {
  switch (t) {
    case ir::DType::Bool: return 524288;
    case ir::DType::Float16: case ir::DType::BFloat16: return 4096;
    case ir::DType::Float32: return 8192;
    case ir::DType::Float64: return 16384;
    case ir::DType::Int8: case ir::DType::UInt8: return 32768;
    case ir::DType::Int16: case ir::DType::UInt16: return 65536;
    case ir::DType::Int32: case ir::DType::UInt32: return 131072;
    case ir::DType::Int64: case ir::DType::UInt64: return 262144;
    default: return 0;
  }
}

std::string swap_bytes(const uint8_t* p, size_t n, size_t width) {
  std::string out(reinterpret_cast<const char*>(p), n);
  if (width > 1)
    for (size_t i = 0; i + width <= n; i += width) std::reverse(out.begin() + static_cast<long>(i), out.begin() + static_cast<long>(i + width));
  return out;
}

}  // namespace

ir::Value array_to_value(const sd::graph::FlatArray* a, const std::shared_ptr<const Buffer>& owner, const std::string& where) {
  ir::Value::Map m;
  ir::Value::List info;
  if (a->shape())
    for (int64_t x : *a->shape()) info.emplace_back(x);
  bool big = a->byteOrder() == sd::graph::ByteOrder_BE;
  const uint8_t* data = a->buffer() ? reinterpret_cast<const uint8_t*>(a->buffer()->data()) : nullptr;
  size_t size = a->buffer() ? a->buffer()->size() : 0;
  std::optional<std::string> dname = dtype_from_sd(a->dtype());
  std::optional<ir::DType> dt = dname ? ir::dtype_from_name(*dname) : std::nullopt;
  // Decodable: a known fixed-width type, a C-order shape info whose dimensions give the byte count.
  bool decoded = false;
  if (dt && ir::dtype_size(*dt) > 0 && a->shape() && a->shape()->size() >= 1) {
    int64_t rank = a->shape()->Get(0);
    if (rank >= 0 && rank <= 64 && a->shape()->size() == static_cast<size_t>(2 * rank + 4) &&
        a->shape()->Get(static_cast<flatbuffers::uoffset_t>(2 * rank + 3)) == kOrderC) {
      std::vector<int64_t> dims;
      uint64_t count = 1;
      bool ok = true;
      for (int64_t i = 0; i < rank && ok; ++i) {
        int64_t d = a->shape()->Get(static_cast<flatbuffers::uoffset_t>(1 + i));
        if (d < 0 || (d > 0 && count > (uint64_t(1) << 48) / static_cast<uint64_t>(d))) ok = false;
        else count *= static_cast<uint64_t>(d);
        dims.push_back(d);
      }
      if (ok && count * ir::dtype_size(*dt) == size) {
        size_t w = ir::dtype_size(*dt);
        ir::Tensor t = big && w > 1 ? ir::Tensor::from_bytes(*dt, dims, swap_bytes(data, size, w))
                                    : ir::Tensor::borrow(*dt, dims, owner, data, size);
        m.push_back({"tensor", ir::Value(std::move(t))});
        decoded = true;
      }
    }
  }
  if (!decoded) {
    if (a->buffer()) m.push_back({"raw", ir::Value(ir::Tensor::borrow(ir::DType::UInt8, {static_cast<int64_t>(size)}, owner, data, size))});
    m.push_back({"dtype", ir::Value(static_cast<int64_t>(a->dtype()))});
  }
  if (a->shape()) m.push_back({"shape_info", ir::Value(std::move(info))});
  if (flatbuffers::IsFieldPresent(a, sd::graph::FlatArray::VT_BYTEORDER) || a->byteOrder() != sd::graph::ByteOrder_LE)
    m.push_back({"byte_order", ir::Value(big ? "BE" : "LE")});
  (void)where;
  return ir::Value(std::move(m));
}

flatbuffers::Offset<sd::graph::FlatArray> value_to_array(flatbuffers::FlatBufferBuilder& fbb, const ir::Value& v,
                                                         const std::string& where) {
  const ir::Tensor* t = nullptr;
  const ir::Value* raw = nullptr;
  const ir::Value* info = nullptr;
  const ir::Value* order = nullptr;
  const ir::Value* dcode = nullptr;
  if (v.is_tensor()) {
    t = &v.as_tensor();
  } else if (v.is_map()) {
    if (const ir::Value* x = v.find("tensor"); x && x->is_tensor()) t = &x->as_tensor();
    raw = v.find("raw");
    info = v.find("shape_info");
    order = v.find("byte_order");
    dcode = v.find("dtype");
  }
  if (!t && !(raw && raw->is_tensor()) && !v.is_map()) throw Error(where + ": not an array (a tensor, or a map with 'tensor' or 'raw')");
  bool big = order && order->is_string() && order->as_string() == "BE";
  std::vector<int64_t> shape;
  int8_t code = 0;
  std::string bytes;
  if (t) {
    auto c = dtype_to_sd(ir::dtype_name(t->dtype));
    if (!c || ir::dtype_size(t->dtype) == 0) throw Error(where + ": SameDiff has no array of element type " + std::string(ir::dtype_name(t->dtype)));
    code = static_cast<int8_t>(*c);
    size_t w = ir::dtype_size(t->dtype);
    bytes = big ? swap_bytes(t->data, t->size, w) : std::string(t->bytes());
    if (info && info->is_list() && !info->as_list().empty() && info->as_list()[0].is_int() &&
        info->as_list()[0].as_int() == static_cast<int64_t>(t->shape.size())) {
      bool same = info->as_list().size() == 2 * t->shape.size() + 4;
      for (size_t i = 0; same && i < t->shape.size(); ++i) same = info->as_list()[1 + i] == ir::Value(t->shape[i]);
      if (same)
        for (const auto& x : info->as_list()) shape.push_back(x.is_int() ? x.as_int() : 0);
    }
    if (shape.empty()) {  // a new array (or a tensor whose shape changed): C order, element stride 1
      shape.push_back(static_cast<int64_t>(t->shape.size()));
      for (int64_t d : t->shape) shape.push_back(d);
      std::vector<int64_t> strides(t->shape.size(), 1);
      for (size_t i = t->shape.size(); i-- > 1;) strides[i - 1] = strides[i] * t->shape[i];
      for (int64_t s : strides) shape.push_back(s);
      shape.push_back(dtype_flags(t->dtype));
      shape.push_back(1);
      shape.push_back(kOrderC);
    }
  } else {
    if (raw && raw->is_tensor()) bytes.assign(raw->as_tensor().bytes());
    code = dcode && dcode->is_int() ? static_cast<int8_t>(dcode->as_int()) : 0;
    if (info && info->is_list())
      for (const auto& x : info->as_list()) shape.push_back(x.is_int() ? x.as_int() : 0);
  }
  auto s = info || t ? fbb.CreateVector(shape) : flatbuffers::Offset<flatbuffers::Vector<int64_t>>();
  auto b = t || (raw && raw->is_tensor()) ? fbb.CreateVector(reinterpret_cast<const int8_t*>(bytes.data()), bytes.size())
                    : flatbuffers::Offset<flatbuffers::Vector<int8_t>>();
  return sd::graph::CreateFlatArray(fbb, s, b, static_cast<sd::graph::DType>(code),
                                    big ? sd::graph::ByteOrder_BE : sd::graph::ByteOrder_LE);
}

}  // namespace amanda::nd4j
