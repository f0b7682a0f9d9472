// AttrValue <-> IR value straight from and to the wire format (values.h, wire.h): the common
// kinds only; every other case goes through the protobuf messages of values.cpp, which stay the
// reference (tests/tensorflow/graphdef_test.cpp compares both paths).
#include <cstdint>
#include <cstring>

#include "values.h"
#include "wire.h"

namespace amanda::tf_frontend::detail {

namespace tf = tensorflow;
using namespace wire;

namespace {

// A TensorShapeProto of plain dims (a size, no name) and maybe unknown_rank, fields in order.
bool shape_from_wire(std::string_view b, bool& unknown_rank, std::vector<int64_t>& dims) {
  Reader r(b);
  uint32_t last = 0, f, t;
  unknown_rank = false;
  while (!r.done()) {
    if (!r.tag(f, t)) return false;
    if (f == 2 && t == kLen && last <= 2) {
      last = 2;
      std::string_view dim;
      if (!r.bytes(dim)) return false;
      Reader d(dim);
      int64_t size = 0;
      if (!d.done()) {
        uint64_t v;
        if (!d.tag(f, t) || f != 1 || t != kVarint || !d.varint(v) || !d.done()) return false;
        size = static_cast<int64_t>(v);
      }
      dims.push_back(size);
    } else if (f == 3 && t == kVarint && last < 3) {
      last = 3;
      uint64_t v;
      if (!r.varint(v)) return false;
      unknown_rank = v != 0;
    } else {
      return false;
    }
  }
  return true;
}

// The IR value of a shape (shape_value's spelling); false when it has none.
bool shape_value_wire(std::string_view b, ir::Value& out) {
  bool unknown = false;
  std::vector<int64_t> dims;
  if (!shape_from_wire(b, unknown, dims)) return false;
  if (unknown) {
    if (!dims.empty()) return false;
    out = ir::Value();
    return true;
  }
  ir::Value::List l;
  l.reserve(dims.size());
  for (int64_t d : dims) {
    if (d < -1) return false;
    l.push_back(d == -1 ? ir::Value() : ir::Value(d));
  }
  out = ir::Value(std::move(l));
  return true;
}

// A TensorProto of dtype, tensor_shape, version_number and tensor_content only (the form the
// exporter writes for tensor_content storage), holding exactly the bytes its shape needs.
bool tensor_from_wire(std::string_view b, AttrOut& out) {
  Reader r(b);
  uint32_t last = 0, f, t;
  int32_t dtype = 0, version = 0;
  std::string_view shape_bytes, content;
  bool has_shape = false;
  while (!r.done()) {
    if (!r.tag(f, t) || f <= last) return false;
    last = f;
    uint64_t v;
    if (f == 1 && t == kVarint) {
      if (!r.varint(v)) return false;
      dtype = static_cast<int32_t>(v);
    } else if (f == 2 && t == kLen) {
      if (!r.bytes(shape_bytes)) return false;
      has_shape = true;
    } else if (f == 3 && t == kVarint) {
      if (!r.varint(v)) return false;
      version = static_cast<int32_t>(v);
    } else if (f == 4 && t == kLen) {
      if (!r.bytes(content)) return false;
    } else {
      return false;
    }
  }
  if (!has_shape) return false;  // (written back with an empty shape: not exact)
  bool unknown = false;
  std::vector<int64_t> dims;
  if (!shape_from_wire(shape_bytes, unknown, dims) || unknown) return false;
  for (int64_t d : dims)
    if (d < 0) return false;
  ir::DType d = ir_dtype(static_cast<tf::DataType>(dtype));
  if (d == ir::DType::Undefined || d == ir::DType::String) return false;
  ir::Tensor probe;
  probe.dtype = d;
  probe.shape = dims;
  std::optional<uint64_t> count = probe.element_count();
  if (!count || *count > (uint64_t(1) << 40) || content.size() != *count * ir::dtype_size(d)) return false;
  TensorMeta meta;
  if (tf_dtype(d) != dtype) meta.tf_dtype = std::string(*dtype_name(dtype));
  meta.version_number = version;
  out.value = ir::Value(ir::Tensor::from_bytes(d, std::move(dims), std::string(content)));
  out.tensor_meta = meta.to_value();
  return true;
}

bool list_from_wire(std::string_view b, WireAttr& w) {
  Reader r(b);
  uint32_t kind = 0, f, t;
  ir::Value::List items;
  int64_t types = 0;
  while (!r.done()) {
    if (!r.tag(f, t) || t != kLen || (kind && f != kind)) return false;
    kind = f;
    std::string_view p;
    if (!r.bytes(p)) return false;
    Reader q(p);
    uint64_t v;
    switch (f) {
      case 2: items.push_back(ir::Value(std::string(p))); break;
      case 3:
        while (!q.done()) {
          if (!q.varint(v)) return false;
          items.push_back(ir::Value(static_cast<int64_t>(v)));
        }
        break;
      case 4:
        if (p.size() % 4) return false;
        for (size_t i = 0; i < p.size(); i += 4) {
          float x;
          std::memcpy(&x, p.data() + i, 4);
          // A signalling NaN turns quiet on its way through double (the message path converts it
          // and finds it inexact): no exact readable form. Tested on the bits, because a compiler
          // may fold float -> double -> float away (clang did, once to_float32 was inlinable in
          // the unity build).
          uint32_t bits;
          std::memcpy(&bits, &x, 4);
          if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x003fffffu) && !(bits & 0x00400000u)) return false;
          items.push_back(ir::Value(static_cast<double>(x)));
        }
        break;
      case 5:
        while (!q.done()) {
          if (!q.varint(v)) return false;
          items.push_back(ir::Value(v != 0));
        }
        break;
      case 6:
        while (!q.done()) {
          if (!q.varint(v)) return false;
          auto n = dtype_name(static_cast<int32_t>(v));
          if (!n) return false;
          items.push_back(ir::Value(*n));
          ++types;
        }
        break;
      case 7: {
        ir::Value s;
        if (!shape_value_wire(p, s)) return false;
        items.push_back(std::move(s));
        break;
      }
      default: return false;
    }
  }
  static constexpr AttrKind kinds[] = {AttrKind::ListI, AttrKind::ListI, AttrKind::ListS, AttrKind::ListI,
                                       AttrKind::ListF, AttrKind::ListB, AttrKind::ListType, AttrKind::ListShape};
  w.kind = items.empty() ? AttrKind::ListI : kinds[kind];
  w.ntypes = types;
  w.out.value = ir::Value(std::move(items));
  return true;
}

void put_shape(std::string& out, const ir::Value& v) {
  if (v.is_null()) {
    out += '\x18';
    out += '\x01';
    return;
  }
  for (const auto& d : v.as_list()) {
    int64_t size = d.is_null() ? -1 : d.as_int();
    out += '\x12';
    if (size == 0) {
      out += '\0';
      continue;
    }
    put_varint(out, 1 + varint_size(static_cast<uint64_t>(size)));
    out += '\x08';
    put_varint(out, static_cast<uint64_t>(size));
  }
}

size_t shape_size(const ir::Value& v) {
  if (v.is_null()) return 2;
  size_t n = 0;
  for (const auto& d : v.as_list()) {
    int64_t size = d.is_null() ? -1 : d.as_int();
    n += size == 0 ? 2 : 2 + 1 + varint_size(static_cast<uint64_t>(size));
  }
  return n;
}

void put_shape_field(std::string& out, uint32_t field, const ir::Value& v) {
  put_tag(out, field, kLen);
  put_varint(out, shape_size(v));
  put_shape(out, v);
}

}  // namespace

bool attr_from_wire(std::string_view bytes, WireAttr& w) {
  Reader r(bytes);
  uint32_t f, t;
  if (!r.tag(f, t)) return false;
  uint64_t v;
  std::string_view p;
  switch (f) {
    case 2:
      if (t != kLen || !r.bytes(p)) return false;
      w.kind = AttrKind::S;
      w.out.value = ir::Value(std::string(p));
      break;
    case 3:
      if (t != kVarint || !r.varint(v)) return false;
      w.kind = AttrKind::I;
      w.ival = static_cast<int64_t>(v);
      w.out.value = ir::Value(w.ival);
      break;
    case 4: {
      uint32_t bits;
      if (t != kFixed32 || !r.fixed32(bits)) return false;
      float x;
      std::memcpy(&x, &bits, 4);
      w.kind = AttrKind::F;
      w.out.value = ir::Value(static_cast<double>(x));
      break;
    }
    case 5:
      if (t != kVarint || !r.varint(v)) return false;
      w.kind = AttrKind::B;
      w.out.value = ir::Value(v != 0);
      break;
    case 6: {
      if (t != kVarint || !r.varint(v)) return false;
      auto n = dtype_name(static_cast<int32_t>(v));
      if (!n) return false;
      w.kind = AttrKind::Type;
      w.out.value = ir::Value(*n);
      break;
    }
    case 7:
      if (t != kLen || !r.bytes(p) || !shape_value_wire(p, w.out.value)) return false;
      w.kind = AttrKind::Shape;
      break;
    case 8:
      if (t != kLen || !r.bytes(p) || !tensor_from_wire(p, w.out)) return false;
      w.kind = AttrKind::Tensor;
      break;
    case 1:
      if (t != kLen || !r.bytes(p) || !list_from_wire(p, w)) return false;
      break;
    default: return false;
  }
  return r.done();  // (a second field: a oneof set twice, unknown fields, ...: protobuf decides)
}

bool attr_to_wire(const ir::Value& v, AttrKind kind, const ir::Value* tensor_meta, std::string& out,
                  const ir::Tensor** splice, size_t splice_min) {
  if (splice) *splice = nullptr;
  if (!fits_kind(v, kind)) return false;
  switch (kind) {
    case AttrKind::S: put_len(out, 2, v.as_string()); return true;
    case AttrKind::I:
      out += '\x18';
      put_varint(out, static_cast<uint64_t>(v.as_int()));
      return true;
    case AttrKind::F: {
      float x = to_float32(v.as_float());
      out += '\x25';
      out.append(reinterpret_cast<const char*>(&x), 4);
      return true;
    }
    case AttrKind::B:
      out += '\x28';
      out += v.as_bool() ? '\x01' : '\0';
      return true;
    case AttrKind::Type:
      out += '\x30';
      put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(*dtype_from_name(v.as_string()))));
      return true;
    case AttrKind::Shape: put_shape_field(out, 7, v); return true;
    case AttrKind::Tensor: {
      const ir::Tensor& t = v.as_tensor();
      TensorMeta meta = TensorMeta::from_value(tensor_meta);
      if (t.dtype == ir::DType::String || meta.storage != "content") break;
      int64_t dt = tf_dtype(t.dtype);
      if (!meta.tf_dtype.empty())
        if (auto d = dtype_from_name(meta.tf_dtype)) dt = *d;
      size_t shape_len = 0;
      for (int64_t d : t.shape) shape_len += d == 0 ? 2 : 2 + 1 + varint_size(static_cast<uint64_t>(d));
      size_t head = (dt ? 1 + varint_size(static_cast<uint64_t>(dt)) : 0) + 1 + varint_size(shape_len) + shape_len +
                    (meta.version_number ? 1 + varint_size(static_cast<uint64_t>(static_cast<int64_t>(meta.version_number))) : 0);
      size_t tp_len = head + (t.size ? 1 + varint_size(t.size) + t.size : 0);
      out += '\x42';
      put_varint(out, tp_len);
      if (dt) {
        out += '\x08';
        put_varint(out, static_cast<uint64_t>(dt));
      }
      out += '\x12';
      put_varint(out, shape_len);
      for (int64_t d : t.shape) {
        out += '\x12';
        if (d == 0) {
          out += '\0';
          continue;
        }
        put_varint(out, 1 + varint_size(static_cast<uint64_t>(d)));
        out += '\x08';
        put_varint(out, static_cast<uint64_t>(d));
      }
      if (meta.version_number) {
        out += '\x18';
        put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(meta.version_number)));
      }
      if (t.size) {
        out += '\x22';
        put_varint(out, t.size);
        if (splice && t.size >= splice_min) *splice = &t;
        else out.append(reinterpret_cast<const char*>(t.data), t.size);
      }
      return true;
    }
    case AttrKind::ListS: case AttrKind::ListI: case AttrKind::ListF: case AttrKind::ListB: case AttrKind::ListType:
    case AttrKind::ListShape: {
      const auto& items = v.as_list();
      size_t len = 0, packed = 0;
      switch (kind) {
        case AttrKind::ListS:
          for (const auto& x : items) len += len_size(2, x.as_string().size());
          break;
        case AttrKind::ListShape:
          for (const auto& x : items) len += len_size(7, shape_size(x));
          break;
        default:
          for (const auto& x : items) {
            if (kind == AttrKind::ListI) packed += varint_size(static_cast<uint64_t>(x.as_int()));
            else if (kind == AttrKind::ListF) packed += 4;
            else if (kind == AttrKind::ListB) packed += 1;
            else packed += varint_size(static_cast<uint64_t>(static_cast<int64_t>(*dtype_from_name(x.as_string()))));
          }
          len = items.empty() ? 0 : 1 + varint_size(packed) + packed;
      }
      out += '\x0a';
      put_varint(out, len);
      if (items.empty()) return true;
      switch (kind) {
        case AttrKind::ListS:
          for (const auto& x : items) put_len(out, 2, x.as_string());
          return true;
        case AttrKind::ListShape:
          for (const auto& x : items) put_shape_field(out, 7, x);
          return true;
        case AttrKind::ListI:
          out += '\x1a';
          put_varint(out, packed);
          for (const auto& x : items) put_varint(out, static_cast<uint64_t>(x.as_int()));
          return true;
        case AttrKind::ListF:
          out += '\x22';
          put_varint(out, packed);
          for (const auto& x : items) {
            float f = to_float32(x.as_float());
            out.append(reinterpret_cast<const char*>(&f), 4);
          }
          return true;
        case AttrKind::ListB:
          out += '\x2a';
          put_varint(out, packed);
          for (const auto& x : items) out += x.as_bool() ? '\x01' : '\0';
          return true;
        default:
          out += '\x32';
          put_varint(out, packed);
          for (const auto& x : items) put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(*dtype_from_name(x.as_string()))));
          return true;
      }
    }
    default: break;
  }
  // The rest (typed tensors, functions, lists of tensors, ...): through protobuf's message.
  tf::AttrValue a;
  if (!attr_to_proto(v, kind, tensor_meta, a)) return false;
  out += serialize(a);
  return true;
}

}  // namespace amanda::tf_frontend::detail
