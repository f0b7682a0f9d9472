// A TF.js model's topology (protobuf's JSON form of a GraphDef) read straight from RapidJSON's tree
// into the message (tfjs_json.h). Protobuf's own JSON reader (JsonStringToMessage) was half the
// time of reading a TF.js model: it needs the topology written back to text first, and parses it
// through a generic type resolver. This reader takes the subset TF.js's converter writes (nodes
// with name, op, inputs, device and attributes of every scalar kind, shapes, tensors, lists;
// versions) and says no to anything else — a function library, debug info, a snake_case or
// unknown key, a null, a number out of its field's range, bytes that are not base64, a string
// that is not UTF-8 — so that the caller reads that topology with protobuf's reader instead,
// which keeps its exact semantics and errors. tests/tensorflow/savedmodel_test.cpp checks both
// readers give the same GraphDef on every human model and every fuzz seed.
#include "tfjs_json.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "amanda/support/base64.h"

namespace amanda::tf_frontend::detail {

namespace tf = tensorflow;
using J = rapidjson::Value;

namespace {

bool utf8(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (!len || i + len > n) return false;
    uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
    for (size_t k = 1; k < len; ++k) {
      auto d = static_cast<uint8_t>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) return false;
    i += len;
  }
  return true;
}

bool str(const J& v, std::string& out) {
  if (!v.IsString()) return false;
  std::string_view s(v.GetString(), v.GetStringLength());
  if (!utf8(s)) return false;
  out.assign(s);
  return true;
}

bool bytes(const J& v, std::string& out) {
  if (!v.IsString()) return false;
  std::string_view s(v.GetString(), v.GetStringLength());
  if (s.find_first_of("-_ \t\r\n") != std::string_view::npos) return false;  // (URL-safe or spaced: protobuf's reader)
  auto d = base64_decode(s);
  if (!d) return false;
  out = std::move(*d);
  return true;
}

bool int64(const J& v, int64_t& out) {
  if (v.IsInt64()) {
    out = v.GetInt64();
    return true;
  }
  if (!v.IsString()) return false;
  const char* b = v.GetString();
  const char* e = b + v.GetStringLength();
  auto r = std::from_chars(b, e, out);
  return r.ec == std::errc() && r.ptr == e && e > b && !(e - b > 1 && (b[0] == '0' || (b[0] == '-' && b[1] == '0')));
}

template <class T>
bool integer(const J& v, T& out) {
  int64_t x;
  if (!int64(v, x) || x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) return false;
  out = static_cast<T>(x);
  return true;
}

bool float32(const J& v, float& out) {
  if (!v.IsNumber()) return false;  // ("NaN", "Infinity": protobuf's reader)
  double d = v.GetDouble();
  if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) return false;
  out = static_cast<float>(d);
  return true;
}

bool dtype(const J& v, int& out) {
  if (v.IsString()) {
    tf::DataType t;
    if (!tf::DataType_Parse(std::string(v.GetString(), v.GetStringLength()), &t)) return false;
    out = t;
    return true;
  }
  return integer(v, out);
}

template <class F>
bool object(const J& v, F&& field) {
  if (!v.IsObject() || v.MemberCount() > 64) return false;
  // A key given twice: protobuf's reader decides what that means.
  for (auto a = v.MemberBegin(); a != v.MemberEnd(); ++a)
    for (auto b = a + 1; b != v.MemberEnd(); ++b)
      if (a->name == b->name) return false;
  for (const auto& kv : v.GetObject()) {
    std::string_view k(kv.name.GetString(), kv.name.GetStringLength());
    if (kv.value.IsNull() || !field(k, kv.value)) return false;
  }
  return true;
}

template <class F>
bool array(const J& v, F&& item) {
  if (!v.IsArray()) return false;
  for (const auto& x : v.GetArray())
    if (!item(x)) return false;
  return true;
}

bool shape(const J& v, tf::TensorShapeProto& s) {
  return object(v, [&](std::string_view k, const J& x) {
    if (k == "dim")
      return array(x, [&](const J& d) {
        auto* dim = s.add_dim();
        return object(d, [&](std::string_view dk, const J& dv) {
          int64_t n;
          if (dk != "size" || !int64(dv, n)) return false;
          dim->set_size(n);
          return true;
        });
      });
    if (k == "unknownRank" && x.IsBool()) {
      s.set_unknown_rank(x.GetBool());
      return true;
    }
    return false;
  });
}

bool tensor(const J& v, tf::TensorProto& t) {
  return object(v, [&](std::string_view k, const J& x) {
    if (k == "dtype") {
      int d;
      if (!dtype(x, d)) return false;
      t.set_dtype(static_cast<tf::DataType>(d));
      return true;
    }
    if (k == "tensorShape") return shape(x, *t.mutable_tensor_shape());
    if (k == "versionNumber") {
      int32_t n;
      if (!integer(x, n)) return false;
      t.set_version_number(n);
      return true;
    }
    if (k == "tensorContent") return bytes(x, *t.mutable_tensor_content());
    if (k == "floatVal") return array(x, [&](const J& e) {
        float f;
        if (!float32(e, f)) return false;
        t.add_float_val(f);
        return true;
      });
    if (k == "intVal") return array(x, [&](const J& e) {
        int32_t n;
        if (!integer(e, n)) return false;
        t.add_int_val(n);
        return true;
      });
    if (k == "halfVal") return array(x, [&](const J& e) {
        int32_t n;
        if (!integer(e, n)) return false;
        t.add_half_val(n);
        return true;
      });
    if (k == "int64Val") return array(x, [&](const J& e) {
        int64_t n;
        if (!int64(e, n)) return false;
        t.add_int64_val(n);
        return true;
      });
    if (k == "boolVal") return array(x, [&](const J& e) {
        if (!e.IsBool()) return false;
        t.add_bool_val(e.GetBool());
        return true;
      });
    if (k == "stringVal") return array(x, [&](const J& e) { return bytes(e, *t.add_string_val()); });
    return false;
  });
}

bool list(const J& v, tf::AttrValue::ListValue& l) {
  return object(v, [&](std::string_view k, const J& x) {
    if (k == "s") return array(x, [&](const J& e) { return bytes(e, *l.add_s()); });
    if (k == "i") return array(x, [&](const J& e) {
        int64_t n;
        if (!int64(e, n)) return false;
        l.add_i(n);
        return true;
      });
    if (k == "f") return array(x, [&](const J& e) {
        float f;
        if (!float32(e, f)) return false;
        l.add_f(f);
        return true;
      });
    if (k == "b") return array(x, [&](const J& e) {
        if (!e.IsBool()) return false;
        l.add_b(e.GetBool());
        return true;
      });
    if (k == "type") return array(x, [&](const J& e) {
        int d;
        if (!dtype(e, d)) return false;
        l.add_type(static_cast<tf::DataType>(d));
        return true;
      });
    if (k == "shape") return array(x, [&](const J& e) { return shape(e, *l.add_shape()); });
    return false;
  });
}

bool attr(const J& v, tf::AttrValue& a) {
  if (!v.IsObject() || v.MemberCount() != 1) return false;  // (a oneof: exactly one)
  const auto& kv = *v.MemberBegin();
  std::string_view k(kv.name.GetString(), kv.name.GetStringLength());
  const J& x = kv.value;
  if (k == "s") return bytes(x, *a.mutable_s());
  if (k == "i") {
    int64_t n;
    if (!int64(x, n)) return false;
    a.set_i(n);
    return true;
  }
  if (k == "f") {
    float f;
    if (!float32(x, f)) return false;
    a.set_f(f);
    return true;
  }
  if (k == "b" && x.IsBool()) {
    a.set_b(x.GetBool());
    return true;
  }
  if (k == "type") {
    int d;
    if (!dtype(x, d)) return false;
    a.set_type(static_cast<tf::DataType>(d));
    return true;
  }
  if (k == "shape") return shape(x, *a.mutable_shape());
  if (k == "tensor") return tensor(x, *a.mutable_tensor());
  if (k == "list") return list(x, *a.mutable_list());
  if (k == "placeholder") return str(x, *a.mutable_placeholder());
  return false;
}

bool node(const J& v, tf::NodeDef& n) {
  return object(v, [&](std::string_view k, const J& x) {
    if (k == "name") return str(x, *n.mutable_name());
    if (k == "op") return str(x, *n.mutable_op());
    if (k == "device") return str(x, *n.mutable_device());
    if (k == "input") return array(x, [&](const J& e) { return str(e, *n.add_input()); });
    if (k == "attr")
      return object(x, [&](std::string_view key, const J& av) {
        std::string name(key);
        if (!utf8(name) || n.attr().contains(name)) return false;
        return attr(av, (*n.mutable_attr())[name]);
      });
    return false;
  });
}

}  // namespace

bool graphdef_from_json(const rapidjson::Value& j, tf::GraphDef& g) {
  bool ok = object(j, [&](std::string_view k, const J& x) {
    if (k == "node") return array(x, [&](const J& e) { return node(e, *g.add_node()); });
    if (k == "versions")
      return g.mutable_versions(), object(x, [&](std::string_view vk, const J& vv) {
        int32_t n;
        if (vk == "producer" && integer(vv, n)) return g.mutable_versions()->set_producer(n), true;
        if (vk == "minConsumer" && integer(vv, n)) return g.mutable_versions()->set_min_consumer(n), true;
        if (vk == "badConsumers")
          return array(vv, [&](const J& e) {
            int32_t b;
            if (!integer(e, b)) return false;
            g.mutable_versions()->add_bad_consumers(b);
            return true;
          });
        return false;
      });
    if (k == "library" && x.IsObject() && x.MemberCount() == 0) {  // (TF.js writes an empty one; a real one: protobuf's reader)
      g.mutable_library();
      return true;
    }
    if (k == "version") {
      int32_t n;
      if (!integer(x, n)) return false;
      g.set_version(n);
      return true;
    }
    return false;
  });
  if (!ok) g.Clear();
  return ok;
}

}  // namespace amanda::tf_frontend::detail
