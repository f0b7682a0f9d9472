#include "wire_net.h"

#include <cstring>

#include "amanda/support/diagnostics.h"

#include "../tensorflow/wire.h"  // the protobuf wire reader the TensorFlow framework wrote

namespace amanda::caffe2_frontend::detail {

namespace wire = tf_frontend::detail::wire;
using ir::Value;

namespace {

bool len(wire::Reader& r, uint32_t t, std::string_view& out) { return t == wire::kLen && r.bytes(out); }

bool varint(wire::Reader& r, uint32_t t, uint64_t& v) { return t == wire::kVarint && r.varint(v); }

// A DeviceOption's fields, as device_option_value makes them.
bool device(std::string_view b, Value& out) {
  wire::Reader r(b);
  std::optional<int64_t> type, id, seed, numa;
  std::optional<std::string_view> node;
  Value::List extra;
  while (!r.done()) {
    uint32_t f, t;
    uint64_t v;
    std::string_view s;
    if (!r.tag(f, t)) return false;
    switch (f) {
      case 1: if (!varint(r, t, v)) return false; type = static_cast<int32_t>(v); break;
      case 2: if (!varint(r, t, v)) return false; id = static_cast<int32_t>(v); break;
      case 3: if (!varint(r, t, v)) return false; seed = static_cast<uint32_t>(v); break;
      case 4: if (!len(r, t, s)) return false; node = s; break;
      case 5: if (!varint(r, t, v)) return false; numa = static_cast<int32_t>(v); break;
      case 6: if (!len(r, t, s)) return false; extra.push_back(Value(s)); break;
      default: return false;
    }
  }
  Value::Map m;
  if (type) m.push_back({"device_type", Value(*type)});
  if (id) m.push_back({"device_id", Value(*id)});
  if (seed) m.push_back({"random_seed", Value(*seed)});
  if (node) m.push_back({"node_name", Value(*node)});
  if (numa) m.push_back({"numa_node_id", Value(*numa)});
  if (!extra.empty()) m.push_back({"extra_info", Value(std::move(extra))});
  out = Value(std::move(m));
  return true;
}

// One Argument with exactly one value field (or none): what argument_value reads.
bool argument(std::string_view b, WireArgument& a) {
  wire::Reader r(b);
  bool has_name = false;
  int set = 0;  // value fields seen (a repeated field counts once)
  bool floats = false, ints = false, strings = false;
  Value::List list;
  auto room = [&list] {
    if (list.capacity() == 0) list.reserve(4);  // (kernels, strides, pads: 2 or 4 values; not 1, 2, 4 allocations)
  };
  while (!r.done()) {
    uint32_t f, t;
    uint64_t v;
    std::string_view s;
    if (!r.tag(f, t)) return false;
    switch (f) {
      case 1: if (!len(r, t, s)) return false; a.name_ = s; has_name = true; break;
      case 2: {
        uint32_t bits;
        if (t != wire::kFixed32 || !r.fixed32(bits)) return false;
        float x;
        std::memcpy(&x, &bits, 4);
        a.value_ = Value(static_cast<double>(x));
        ++set;
        break;
      }
      case 3: if (!varint(r, t, v)) return false; a.value_ = Value(static_cast<int64_t>(v)); ++set; break;
      case 4: if (!len(r, t, s)) return false; a.value_ = Value(s); ++set; break;
      case 5: {
        if (ints || strings) return false;
        if (!floats) ++set;
        floats = true;
        room();
        if (t == wire::kFixed32) {
          uint32_t bits;
          if (!r.fixed32(bits)) return false;
          float x;
          std::memcpy(&x, &bits, 4);
          list.push_back(Value(static_cast<double>(x)));
        } else if (len(r, t, s) && s.size() % 4 == 0) {
          for (size_t k = 0; k < s.size(); k += 4) {
            float x;
            std::memcpy(&x, s.data() + k, 4);
            list.push_back(Value(static_cast<double>(x)));
          }
        } else {
          return false;
        }
        break;
      }
      case 6: {
        if (floats || strings) return false;
        if (!ints) ++set;
        ints = true;
        room();
        if (t == wire::kVarint) {
          if (!r.varint(v)) return false;
          list.push_back(Value(static_cast<int64_t>(v)));
        } else if (len(r, t, s)) {
          wire::Reader q(s);
          while (!q.done()) {
            if (!q.varint(v)) return false;
            list.push_back(Value(static_cast<int64_t>(v)));
          }
        } else {
          return false;
        }
        break;
      }
      case 7:
        if (floats || ints || !len(r, t, s)) return false;
        if (!strings) ++set;
        strings = true;
        room();
        list.push_back(Value(s));
        break;
      default: return false;  // a net, a tensor, a field this schema lacks: protobuf's
    }
  }
  if (set > 1 || !has_name || a.name_.empty() || a.name_.front() == '@') return false;
  if (floats || ints || strings || set == 0) a.value_ = Value(std::move(list));  // (a name alone: an empty list)
  return true;
}

bool arguments_readable(const WireArgument* args, size_t n) {
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < i; ++j)
      if (args[i].name_ == args[j].name_) return false;  // a name twice: kept as bytes
  return true;
}

// Adds blob `s` to the run (begin b, count n) of `pool`; false when the run is not contiguous.
bool add_to_run(std::vector<std::string_view>& pool, uint32_t& b, uint32_t& n, std::string_view s) {
  if (n == 0) b = static_cast<uint32_t>(pool.size());
  else if (b + n != pool.size()) return false;
  if (pool.size() >= UINT32_MAX) return false;
  pool.push_back(s);
  ++n;
  return true;
}

bool op(std::string_view b, WireOp& o, WireNet& net) {
  wire::Reader r(b);
  o.net = &net;
  std::vector<std::string_view>& pool = net.blobs_;
  while (!r.done()) {
    uint32_t f, t;
    uint64_t v;
    std::string_view s;
    if (!r.tag(f, t)) return false;
    switch (f) {
      case 1: if (!len(r, t, s) || !add_to_run(pool, o.in_b, o.in_n, s)) return false; break;
      case 2: if (!len(r, t, s) || !add_to_run(pool, o.out_b, o.out_n, s)) return false; break;
      case 3: if (!len(r, t, s)) return false; o.name_ = s; o.has |= WireOp::kName; break;
      case 4: if (!len(r, t, s)) return false; o.type_ = s; o.has |= WireOp::kType; break;
      case 5: {
        if (!len(r, t, s)) return false;
        // (an op's arguments are read together, so they are one run of the pool)
        if (o.arg_n == 0) o.arg_b = static_cast<uint32_t>(net.args_.size());
        if (net.args_.size() >= UINT32_MAX) return false;
        ++o.arg_n;
        if (!argument(s, net.args_.emplace_back())) return false;
        break;
      }
      case 6: {
        Value d;
        if (!len(r, t, s) || !device(s, d)) return false;
        o.device_.bytes = s;
        o.has |= WireOp::kDevice;
        break;
      }
      case 7: if (!len(r, t, s)) return false; o.engine_ = s; o.has |= WireOp::kEngine; break;
      case 8: if (!len(r, t, s)) return false; o.ctrl.push_back(s); break;
      case 9: if (!varint(r, t, v)) return false; o.grad_ = v != 0; o.has |= WireOp::kGrad; break;
      case 10: if (!len(r, t, s)) return false; o.debug_ = s; o.has |= WireOp::kDebug; break;
      case 11: if (!len(r, t, s)) return false; o.domain_ = s; o.has |= WireOp::kDomain; break;
      case 12: if (!varint(r, t, v)) return false; o.version_ = static_cast<int64_t>(v); o.has |= WireOp::kVersion; break;
      default: return false;
    }
  }
  return arguments_readable(net.args_.data() + o.arg_b, o.arg_n);
}

}  // namespace

Value device_option_value(const WireDevice& d) {
  if (d.bytes.empty()) return Value(Value::Map{});  // `device_option {}`: what most ops of real nets hold
  Value v;
  if (!device(d.bytes, v)) throw Error("internal: a device option read_net_wire took does not read");
  return v;
}

bool read_net_wire(std::string_view bytes, WireNet& n) {
  {
    // The ops counted first: the op records, blob and argument pools are sized once.
    wire::Reader c(bytes);
    size_t ops = 0;
    uint32_t f, t;
    while (!c.done() && c.tag(f, t) && c.skip(t)) ops += f == 2;
    n.ops_.reserve(ops);
    n.blobs_.reserve(ops * 3);
    n.args_.reserve(ops * 2);
  }
  wire::Reader r(bytes);
  while (!r.done()) {
    uint32_t f, t;
    uint64_t v;
    std::string_view s;
    if (!r.tag(f, t)) return false;
    switch (f) {
      case 1: if (!len(r, t, s)) return false; n.name_ = s; break;
      case 2:
        if (!len(r, t, s)) return false;
        if (!op(s, n.ops_.emplace_back(), n)) return false;
        break;
      case 3: if (!len(r, t, s)) return false; n.type_ = s; break;
      case 4: if (!varint(r, t, v)) return false; n.workers_ = static_cast<int32_t>(v); break;
      case 5: {
        Value d;
        if (!len(r, t, s) || !device(s, d)) return false;
        n.device_ = WireDevice{s};
        break;
      }
      case 6:
        if (!len(r, t, s)) return false;
        if (!argument(s, n.net_args_.emplace_back())) return false;
        break;
      case 7: if (!len(r, t, s)) return false; n.ext_in.push_back(s); break;
      case 8: if (!len(r, t, s)) return false; n.ext_out.push_back(s); break;
      default: return false;  // partition_info, or a field this schema lacks: protobuf's
    }
  }
  return arguments_readable(n.net_args_.data(), n.net_args_.size());
}

}  // namespace amanda::caffe2_frontend::detail
