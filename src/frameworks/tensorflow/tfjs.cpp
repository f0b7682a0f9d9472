// TF.js graph models: model.json + .bin shards <-> the graph abstraction (tfjs.h,
// docs/tensorflow.md). The topology is protobuf's JSON form of a GraphDef (parsed with protobuf's
// own JSON reader into the project's graph.proto, then imported like a .pb); the weights manifest
// says which Const node each run of shard bytes belongs to, and how it is stored (float32, int32,
// bool, string, or quantised to uint8/uint16 with min and scale, or to float16). Dequantisation
// is TF.js's own (tfjs-core io_utils.js decodeWeights): float32(q * scale + min), in doubles.
#include "amanda/frameworks/tensorflow/tfjs.h"

#include <cmath>
#include <limits>
#include <cstring>
#include <filesystem>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver_util.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/float16.h"
#include "amanda_tf_graph.pb.h"
#include "tfjs_json.h"
#include "values.h"

namespace amanda::tf_frontend {

using namespace detail;
using ir::OpId;
using ir::Value;
namespace tf = tensorflow;
namespace fs = std::filesystem;

namespace {

// ------------------------------------------------------------------ JSON <-> ir::Value

// (Nesting is limited: model.json is untrusted, and this recursion must not exhaust the stack.)
Value from_json(const rapidjson::Value& j, int depth = 0) {
  if (depth > 200) throw Error("values nest more than 200 deep");
  if (j.IsNull()) return Value();
  if (j.IsBool()) return Value(j.GetBool());
  if (j.IsInt64()) return Value(j.GetInt64());
  if (j.IsNumber()) return Value(j.GetDouble());
  if (j.IsString()) return Value(std::string(j.GetString(), j.GetStringLength()));
  if (j.IsArray()) {
    Value::List l;
    l.reserve(j.Size());
    for (const auto& x : j.GetArray()) l.push_back(from_json(x, depth + 1));
    return Value(std::move(l));
  }
  Value::Map m;
  for (const auto& kv : j.GetObject())
    m.push_back({std::string(kv.name.GetString(), kv.name.GetStringLength()), from_json(kv.value, depth + 1)});
  return Value(std::move(m));
}

void to_json(const Value& v, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  using K = Value::Kind;
  switch (v.kind()) {
    case K::Null: w.Null(); return;
    case K::Bool: w.Bool(v.as_bool()); return;
    case K::Int: w.Int64(v.as_int()); return;
    case K::Float:
      if (!std::isfinite(v.as_float())) throw Error("model.json: a number that JSON cannot hold (" + std::to_string(v.as_float()) + ")");
      w.Double(v.as_float());
      return;
    case K::String: w.String(v.as_string().data(), static_cast<rapidjson::SizeType>(v.as_string().size())); return;
    case K::List:
      w.StartArray();
      for (const auto& x : v.as_list()) to_json(x, w);
      w.EndArray();
      return;
    case K::Map:
      w.StartObject();
      for (const auto& e : v.as_map()) {
        w.Key(e.key.data(), static_cast<rapidjson::SizeType>(e.key.size()));
        to_json(e.value, w);
      }
      w.EndObject();
      return;
    default: throw Error("model.json: a " + std::string(ir::kind_name(v.kind())) + " value cannot be written as JSON");
  }
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// A double as float32, overflowing to infinity (a plain cast of an out-of-range double is undefined).
float to_float(double v) {
  if (v > 3.4028234663852886e38) return std::numeric_limits<float>::infinity();
  if (v < -3.4028234663852886e38) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

// ------------------------------------------------------------------ the manifest

struct Quantization {
  std::string dtype;           // uint8, uint16, float16; empty: none
  double scale = 1, min = 0;
  std::string original_dtype;  // float32 (default) or int32
};

struct WeightSpec {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;
  Quantization q;
};

size_t value_size(std::string_view dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "bool" || dtype == "uint8") return 1;
  if (dtype == "uint16" || dtype == "float16") return 2;
  if (dtype == "complex64") return 8;
  return 0;
}

ir::DType ir_type(std::string_view dtype) {
  if (dtype == "float32") return ir::DType::Float32;
  if (dtype == "int32") return ir::DType::Int32;
  if (dtype == "bool") return ir::DType::Bool;
  if (dtype == "string") return ir::DType::String;
  if (dtype == "complex64") return ir::DType::Complex64;
  return ir::DType::Undefined;
}

std::string_view tfjs_dtype(ir::DType d) {
  switch (d) {
    case ir::DType::Float32: return "float32";
    case ir::DType::Int32: return "int32";
    case ir::DType::Bool: return "bool";
    case ir::DType::String: return "string";
    case ir::DType::Complex64: return "complex64";
    default: return {};
  }
}

// Relative, inside the model's folder: no absolute path, no '..', no empty part.
bool safe_path(std::string_view p) {
  if (p.empty() || p[0] == '/' || p.find('\\') != std::string_view::npos || p.find('\0') != std::string_view::npos) return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t e = p.find('/', start);
    std::string_view part = p.substr(start, e == std::string_view::npos ? std::string_view::npos : e - start);
    if (part.empty() || part == "..") return false;
    if (e == std::string_view::npos) break;
    start = e + 1;
  }
  return true;
}

class TfjsImporter {
 public:
  TfjsImporter(std::string_view json, const ShardLoader& shards, std::string file) : json_(json), shards_(shards), file_(std::move(file)) {}

  text::Document run() {
    rapidjson::Document d;
    d.Parse<rapidjson::kParseFullPrecisionFlag | rapidjson::kParseIterativeFlag>(json_.data(), json_.size());
    if (d.HasParseError())
      throw ParseError(SourceLoc{file_, 0, 0}, std::string("not JSON: ") + rapidjson::GetParseError_En(d.GetParseError()) +
                                                   " at byte " + std::to_string(d.GetErrorOffset()));
    if (!d.IsObject()) fail("the top level is not an object");
    auto topo = d.FindMember("modelTopology");
    if (topo == d.MemberEnd() || !topo->value.IsObject()) fail("no 'modelTopology' object (not a TF.js graph model)");
    if (auto f = d.FindMember("format"); f != d.MemberEnd() && !(f->value.IsString() && std::string_view(f->value.GetString()) == "graph-model"))
      fail("format is not \"graph-model\" (TF.js layers models are not read)");
    // The topology: protobuf's JSON form of a GraphDef (whose nesting protobuf limits to 100;
    // checked first, as writing it back out below recurses).
    if (too_deep(topo->value, 0)) fail("modelTopology nests more than 100 deep");
    tf::GraphDef gd;
    // Straight from the tree for what TF.js's converter writes; anything else through protobuf's
    // own JSON reader (tfjs_json.cpp).
    if (!detail::graphdef_from_json(topo->value, gd)) {
      rapidjson::StringBuffer sb;
      {
        rapidjson::Writer<rapidjson::StringBuffer> w(sb);
        topo->value.Accept(w);
      }
      google::protobuf::util::JsonParseOptions po;
      auto st = google::protobuf::util::JsonStringToMessage(std::string(sb.GetString(), sb.GetSize()), &gd, po);
      if (!st.ok()) fail("modelTopology is not a GraphDef: " + std::string(st.message()));
    }
    // The weights' Const nodes hold only a dtype and a shape in the topology: taken out before the
    // import (which would fill them with zeros), checked against the manifest in attach().
    if (auto m = d.FindMember("weightsManifest"); m != d.MemberEnd() && m->value.IsArray()) {
      absl::flat_hash_set<std::string> names;
      for (const auto& group : m->value.GetArray())
        if (group.IsObject())
          if (auto ws = group.FindMember("weights"); ws != group.MemberEnd() && ws->value.IsArray())
            for (const auto& w : ws->value.GetArray())
              if (w.IsObject())
                if (auto n = w.FindMember("name"); n != w.MemberEnd() && n->value.IsString()) names.insert(n->value.GetString());
      for (auto& n : *gd.mutable_node()) {
        if (n.op() != "Const" || !names.contains(n.name())) continue;
        auto it = n.mutable_attr()->find("value");
        if (it == n.mutable_attr()->end() || it->second.value_case() != tf::AttrValue::kTensor) continue;
        const tf::TensorProto& t = it->second.tensor();
        tf::TensorProto rest = t;  // (no bytes to copy: that is the point)
        rest.clear_dtype();
        rest.clear_tensor_shape();
        if (rest.ByteSizeLong() != 0 || !rest.GetReflection()->GetUnknownFields(rest).empty())
          continue;  // it holds more than a dtype and a shape: imported as it is
        std::vector<int64_t> shape;
        bool ok = !t.tensor_shape().unknown_rank();
        for (const auto& dim : t.tensor_shape().dim()) {
          ok &= dim.size() >= 0 && dim.name().empty();
          shape.push_back(dim.size());
        }
        if (!ok) continue;
        declared_[n.name()] = {detail::ir_dtype(t.dtype()), std::move(shape)};
        n.mutable_attr()->erase(it);
      }
    }
    ImportOptions io;
    io.file_name = file_;
    doc_.emplace(import_graph(gd, io));
    ir::Graph& g = doc_->graph;
    // Everything else of model.json, in file order; the topology is a marker (it is the graph).
    Value::Map meta;
    for (const auto& kv : d.GetObject()) {
      std::string key(kv.name.GetString(), kv.name.GetStringLength());
      try {
        meta.push_back({key, key == "modelTopology" ? Value() : from_json(kv.value)});
      } catch (const Error& e) {
        fail("'" + key + "': " + e.what());
      }
    }
    g.set_attr(g.root(), g.sym("tfjs"), Value(std::move(meta)));
    if (auto m = d.FindMember("weightsManifest"); m != d.MemberEnd()) weights(m->value);
    return std::move(*doc_);
  }

 private:
  std::string_view json_;
  const ShardLoader& shards_;
  size_t shard_count_ = 0;
  std::string file_;
  std::optional<text::Document> doc_;
  // Const nodes whose empty `value` was taken out of the topology: the dtype and shape it declared.
  absl::flat_hash_map<std::string, std::pair<ir::DType, std::vector<int64_t>>> declared_;

  [[noreturn]] void fail(const std::string& msg) const { throw Error(file_ + ": error: " + msg); }

  static bool too_deep(const rapidjson::Value& v, int depth) {
    if (depth > 100) return true;
    if (v.IsArray())
      for (const auto& x : v.GetArray())
        if (too_deep(x, depth + 1)) return true;
    if (v.IsObject())
      for (const auto& kv : v.GetObject())
        if (too_deep(kv.value, depth + 1)) return true;
    return false;
  }

  Quantization quantization(const rapidjson::Value& q, const std::string& where) {
    Quantization out;
    if (!q.IsObject()) fail(where + ": quantization is not an object");
    auto str = [&](const char* k) -> std::string {
      auto it = q.FindMember(k);
      if (it == q.MemberEnd()) return {};
      if (!it->value.IsString()) fail(where + ": quantization." + k + " is not a string");
      return it->value.GetString();
    };
    auto num = [&](const char* k, double def) {
      auto it = q.FindMember(k);
      if (it == q.MemberEnd()) return def;
      if (!it->value.IsNumber()) fail(where + ": quantization." + k + " is not a number");
      return it->value.GetDouble();
    };
    out.dtype = str("dtype");
    out.original_dtype = str("original_dtype");
    if (out.original_dtype.empty()) out.original_dtype = "float32";
    if (out.dtype == "uint8" || out.dtype == "uint16") {
      if (!q.HasMember("scale") || !q.HasMember("min")) fail(where + ": " + out.dtype + " quantization without min and scale");
      out.scale = num("scale", 1);
      out.min = num("min", 0);
      if (out.original_dtype != "float32" && out.original_dtype != "int32")
        fail(where + ": quantised weights of original dtype '" + out.original_dtype + "'");
    } else if (out.dtype == "float16") {
      if (out.original_dtype != "float32") fail(where + ": float16 quantisation of '" + out.original_dtype + "'");
    } else {
      fail(where + ": unknown quantization dtype '" + out.dtype + "' (uint8, uint16, float16)");
    }
    return out;
  }

  WeightSpec spec(const rapidjson::Value& w, const std::string& where) {
    if (!w.IsObject()) fail(where + ": not an object");
    WeightSpec s;
    auto name = w.FindMember("name");
    if (name == w.MemberEnd() || !name->value.IsString()) fail(where + ": no name");
    s.name = name->value.GetString();
    auto shape = w.FindMember("shape");
    if (shape == w.MemberEnd() || !shape->value.IsArray()) fail(where + " '" + s.name + "': no shape");
    for (const auto& d : shape->value.GetArray()) {
      if (!d.IsInt64() || d.GetInt64() < 0) fail(where + " '" + s.name + "': a dimension that is not a size");
      s.shape.push_back(d.GetInt64());
    }
    auto dt = w.FindMember("dtype");
    if (dt == w.MemberEnd() || !dt->value.IsString()) fail(where + " '" + s.name + "': no dtype");
    s.dtype = dt->value.GetString();
    if (ir_type(s.dtype) == ir::DType::Undefined) fail(where + " '" + s.name + "': unknown dtype '" + s.dtype + "'");
    if (auto q = w.FindMember("quantization"); q != w.MemberEnd()) {
      s.q = quantization(q->value, where + " '" + s.name + "'");
      if (s.q.original_dtype != s.dtype) fail(where + " '" + s.name + "': quantization.original_dtype is not its dtype");
    }
    return s;
  }

  void weights(const rapidjson::Value& manifest) {
    if (!manifest.IsArray()) fail("weightsManifest is not a list");
    ir::Graph& g = doc_->graph;
    Value::List shard_sizes;
    for (rapidjson::SizeType gi = 0; gi < manifest.Size(); ++gi) {
      const auto& group = manifest[gi];
      std::string gwhere = "weightsManifest[" + std::to_string(gi) + "]";
      if (!group.IsObject()) fail(gwhere + ": not an object");
      auto paths = group.FindMember("paths");
      auto ws = group.FindMember("weights");
      if (paths == group.MemberEnd() || !paths->value.IsArray()) fail(gwhere + ": no paths");
      if (ws == group.MemberEnd() || !ws->value.IsArray()) fail(gwhere + ": no weights");
      // The group's bytes: its shards, in order (a weight may straddle two).
      std::vector<std::shared_ptr<const Buffer>> bufs;
      Value::List sizes;
      uint64_t total = 0;
      shard_count_ += paths->value.Size();
      if (shard_count_ > ReadGate::kMaxFiles)
        fail(gwhere + ": the manifest names more than " + std::to_string(ReadGate::kMaxFiles) + " shards");
      for (const auto& p : paths->value.GetArray()) {
        if (!p.IsString()) fail(gwhere + ": a path that is not a string");
        std::string path = p.GetString();
        if (!safe_path(path)) fail(gwhere + ": shard path '" + path + "' leaves the model's folder (absolute, '..' or empty)");
        bufs.push_back(shards_(path));
        if (!bufs.back()) fail(gwhere + ": shard '" + path + "' cannot be read");
        total += bufs.back()->size();
        sizes.push_back(Value(static_cast<int64_t>(bufs.back()->size())));
      }
      shard_sizes.push_back(Value(std::move(sizes)));
      uint64_t offset = 0;
      for (rapidjson::SizeType wi = 0; wi < ws->value.Size(); ++wi) {
        std::string where = gwhere + ".weights[" + std::to_string(wi) + "]";
        WeightSpec s = spec(ws->value[wi], where);
        where += " '" + s.name + "'";
        ir::Tensor probe;
        probe.dtype = ir::DType::Float32;
        probe.shape = s.shape;
        auto count = probe.element_count();
        if (!count || *count > (uint64_t(1) << 40)) fail(where + ": shape " + shape_text(s.shape) + " is too large");
        uint64_t bytes;
        if (s.dtype == "string") {
          bytes = string_bytes(bufs, offset, total, *count, where);
        } else {
          size_t vs = value_size(s.q.dtype.empty() ? s.dtype : s.q.dtype);
          bytes = *count * vs;
        }
        if (offset + bytes > total)
          fail(where + ": shape " + shape_text(s.shape) + " of " + (s.q.dtype.empty() ? s.dtype : s.q.dtype) + " needs bytes [" +
               std::to_string(offset) + ", " + std::to_string(offset + bytes) + "), past the end of the group's shards (" +
               std::to_string(total) + " bytes)");
        attach(g, s, bufs, offset, bytes, *count, where);
        offset += bytes;
      }
      if (offset != total)
        fail(gwhere + ": the shards hold " + std::to_string(total) + " bytes, the manifest's weights " + std::to_string(offset) +
             " (a weight's byte length disagrees with its shape)");
    }
    g.set_attr(g.root(), g.sym("@tfjs_shard_bytes"), Value(std::move(shard_sizes)));
  }

  // [offset, offset + n) of the group's concatenated shards: borrowed when inside one shard.
  static std::pair<std::shared_ptr<const Buffer>, const uint8_t*> span(const std::vector<std::shared_ptr<const Buffer>>& bufs,
                                                                        uint64_t offset, uint64_t n) {
    uint64_t base = 0;
    for (const auto& b : bufs) {
      if (offset >= base && offset + n <= base + b->size()) return {b, b->data() + (offset - base)};
      base += b->size();
    }
    std::string copy;
    copy.reserve(n);
    base = 0;
    for (const auto& b : bufs) {
      uint64_t lo = std::max(offset, base), hi = std::min(offset + n, base + b->size());
      if (lo < hi) copy.append(reinterpret_cast<const char*>(b->data() + (lo - base)), hi - lo);
      base += b->size();
    }
    auto owned = make_buffer(std::move(copy));
    return {owned, owned->data()};
  }

  uint64_t string_bytes(const std::vector<std::shared_ptr<const Buffer>>& bufs, uint64_t offset, uint64_t total, uint64_t count,
                        const std::string& where) {
    uint64_t pos = offset;
    for (uint64_t i = 0; i < count; ++i) {
      if (pos + 4 > total) fail(where + ": string " + std::to_string(i) + "'s length is past the end of the shards");
      auto [b, p] = span(bufs, pos, 4);
      uint32_t len;
      std::memcpy(&len, p, 4);
      pos += 4 + uint64_t(len);
      if (pos > total) fail(where + ": string " + std::to_string(i) + " is past the end of the shards");
    }
    return pos - offset;
  }

  void attach(ir::Graph& g, const WeightSpec& s, const std::vector<std::shared_ptr<const Buffer>>& bufs, uint64_t offset,
              uint64_t bytes, uint64_t count, const std::string& where) {
    OpId op = g.find_op(g.root(), s.name);
    if (!op) fail(where + ": names no node of the topology");
    if (g.type_str(op) != "Const") fail(where + ": names node '" + s.name + "' of type " + std::string(g.type_str(op)) + ", not a Const");
    Symbol value_key = g.sym("value");
    auto dec = declared_.find(s.name);
    if (dec == declared_.end()) fail(where + ": its Const node has no 'value' of just a dtype and a shape, or a second weight names it");
    auto [declared_dtype, declared_shape] = std::move(dec->second);
    declared_.erase(dec);
    ir::DType dt = ir_type(s.dtype);
    // TF.js decodes a weight's bytes with the manifest's dtype whatever its Const node declares
    // (tfjs-core io_utils decodeWeights): so does this reader when only the dtypes disagree; the
    // node's dtype is kept (@tfjs_topology_dtype) so that the topology is written back unchanged,
    // and TensorFlowFramework::read warns.
    const bool dtype_only = declared_dtype != dt && declared_shape == s.shape && dt != ir::DType::Undefined &&
                            declared_dtype != ir::DType::Undefined && (s.dtype == "string") == (declared_dtype == ir::DType::String);
    if ((declared_dtype != dt && !dtype_only) || declared_shape != s.shape)
      fail(where + ": the manifest says " + s.dtype + " " + shape_text(s.shape) + ", its Const node " +
           std::string(ir::dtype_name(declared_dtype)) + " " + shape_text(declared_shape));
    auto [buf, data] = span(bufs, offset, bytes);
    ir::Tensor t;
    std::optional<ir::Tensor> raw;  // the quantised bytes, kept when requantising would not give them back
    if (s.dtype == "string") {
      t.dtype = ir::DType::String;
      t.shape = s.shape;
      uint64_t pos = 0;
      for (uint64_t i = 0; i < count; ++i) {
        uint32_t len;
        std::memcpy(&len, data + pos, 4);
        t.strings.emplace_back(reinterpret_cast<const char*>(data + pos + 4), len);
        pos += 4 + len;
      }
    } else if (s.q.dtype.empty()) {
      t = ir::Tensor::borrow(dt, s.shape, buf, data, bytes);
    } else {
      std::string out(count * 4, '\0');
      bool exact = true;
      const bool f16 = s.q.dtype == "float16", u8 = s.q.dtype == "uint8", to_int = s.dtype == "int32";
      const double qmax = u8 ? 255 : 65535;
      // One quantised value (a float16's bits, or q) -> its 4 bytes; true when quantising them
      // again gives q back.
      auto decode = [&](uint32_t q, char* dst) {
        if (f16) {
          float f = half_to_float(static_cast<uint16_t>(q));
          std::memcpy(dst, &f, 4);
          return float_to_half(f) == q;
        }
        double v = double(q) * s.q.scale + s.q.min;
        if (to_int) {
          double r = std::round(v);  // (clamped: a cast of an out-of-range double is undefined)
          int32_t x = r >= 2147483647.0 ? INT32_MAX : r <= -2147483648.0 ? INT32_MIN : static_cast<int32_t>(r);
          std::memcpy(dst, &x, 4);
          return requantize(double(x), s.q.min, s.q.scale, qmax) == q;
        }
        float f = to_float(v);
        std::memcpy(dst, &f, 4);
        return requantize(double(f), s.q.min, s.q.scale, qmax) == q;
      };
      const uint8_t* bytes_in = data;  // (a lambda may not capture a structured binding before clang 16)
      auto q_at = [&](uint64_t i) { return u8 ? uint32_t(bytes_in[i]) : uint32_t(bytes_in[2 * i] | (bytes_in[2 * i + 1] << 8)); };
      const uint64_t range = u8 ? 256 : 65536;
      if (count >= range) {
        // Every element is one of `range` values: each decoded once (a division and a rounding
        // per element was most of reading a quantised model).
        std::vector<uint32_t> value(range);
        std::vector<uint8_t> ok(range);
        for (uint32_t q = 0; q < range; ++q) ok[q] = decode(q, reinterpret_cast<char*>(&value[q]));
        for (uint64_t i = 0; i < count; ++i) {
          uint32_t q = q_at(i);
          std::memcpy(out.data() + 4 * i, &value[q], 4);
          exact &= ok[q] != 0;
        }
      } else {
        for (uint64_t i = 0; i < count; ++i) exact &= decode(q_at(i), out.data() + 4 * i);
      }
      t = ir::Tensor::from_bytes(dt, s.shape, std::move(out));
      if (!exact)
        raw = ir::Tensor::from_bytes(s.q.dtype == "uint8" ? ir::DType::UInt8 : s.q.dtype == "uint16" ? ir::DType::UInt16 : ir::DType::Float16,
                                     s.shape, std::string(reinterpret_cast<const char*>(data), bytes));
    }
    g.set_attr(op, value_key, Value(std::move(t)));
    g.set_attr(op, g.sym("@tensor.value"), Value(Value::Map{{"storage", Value("weights")}}));
    if (dtype_only) g.set_attr(op, g.sym("@tfjs_topology_dtype"), Value(std::string(ir::dtype_name(declared_dtype))));
    if (raw) g.set_attr(op, g.sym("@quantized"), Value(std::move(*raw)));
  }

 public:
  // The inverse of TF.js's dequantisation: round((x - min) / scale), clamped to [0, max].
  static uint32_t requantize(double x, double min, double scale, double max) {
    double v = std::nearbyint((x - min) / scale);
    if (!(v >= 0)) v = 0;
    if (v > max) v = max;
    return static_cast<uint32_t>(v);
  }
};

// ------------------------------------------------------------------ export

class TfjsExporter {
 public:
  explicit TfjsExporter(const text::Document& doc) : doc_(doc), g_(doc.graph) {}

  TfjsFiles run() {
    tf::GraphDef gd;
    export_graph(doc_, gd);
    const Value* meta = attr(g_.root(), "tfjs");
    const Value* manifest = meta && meta->is_map() ? meta->find("weightsManifest") : nullptr;
    Value built;
    // A model read from a model.json without a manifest keeps its Const values in the topology;
    // a graph from elsewhere gets one.
    // (A converted graph's metadata has no `modelTopology` place: it was not read from a model.json.)
    bool no_manifest = !manifest && meta && meta->is_map() && meta->find("modelTopology");
    if (!manifest && !no_manifest) {
      built = default_manifest(gd);
      manifest = &built;
    }
    if (no_manifest) manifest = &built;  // (an empty list: no weights, no shards, no key written)
    else if (!manifest->is_list()) throw Error("tfjs.weightsManifest is not a list");
    if (no_manifest) built = Value(Value::List{});
    absl::flat_hash_map<std::string, tf::NodeDef*> nodes;
    for (auto& n : *gd.mutable_node()) nodes[n.name()] = &n;
    const Value* sizes = attr(g_.root(), "@tfjs_shard_bytes");
    TfjsFiles files;
    // The manifest written is a copy whose shard paths the writer generates (groupG-shardIofN.bin,
    // as TF.js's converter names them): a name read from an input never becomes a file name
    // (".ssh/authorized_keys" as a shard path wrote that file beside the output).
    Value written = *manifest;
    size_t total_shards = 0;
    for (size_t gi = 0; gi < manifest->as_list().size(); ++gi) {
      const Value& group = manifest->as_list()[gi];
      const Value* paths = group.find("paths");
      const Value* ws = group.find("weights");
      if (!group.is_map() || !paths || !paths->is_list() || !ws || !ws->is_list())
        throw Error("tfjs.weightsManifest[" + std::to_string(gi) + "]: no paths or weights");
      std::string bytes;
      for (const auto& w : ws->as_list()) append_weight(w, bytes, nodes);
      // Shards: the sizes the model was read with when they still add up (a few, none empty),
      // else 4 MB pieces as TF.js's converter makes.
      constexpr uint64_t kPiece = uint64_t(4) << 20;
      constexpr size_t kMaxShardsKept = 1000;
      std::vector<uint64_t> cut;
      if (sizes && sizes->is_list() && gi < sizes->as_list().size() && sizes->as_list()[gi].is_list() &&
          sizes->as_list()[gi].as_list().size() <= kMaxShardsKept) {
        uint64_t sum = 0;
        bool ok = true;
        for (const auto& s : sizes->as_list()[gi].as_list()) {
          uint64_t c = s.is_int() && s.as_int() > 0 ? static_cast<uint64_t>(s.as_int()) : 0;
          if (c == 0 || c > bytes.size()) ok = false;
          cut.push_back(c), sum += c;
        }
        if (!ok || sum != bytes.size() || cut.size() != paths->as_list().size()) cut.clear();
      }
      if (cut.empty()) {
        uint64_t left = bytes.size();
        do {
          cut.push_back(std::min(left, kPiece));
          left -= cut.back();
        } while (left);
      }
      total_shards += cut.size();
      if (total_shards > WriteGate::kMaxFiles)
        throw Error("tfjs.weightsManifest: more than " + std::to_string(WriteGate::kMaxFiles) + " shards");
      Value::List names;
      uint64_t off = 0;
      for (size_t i = 0; i < cut.size(); ++i) {
        std::string name = "group" + std::to_string(gi + 1) + "-shard" + std::to_string(i + 1) + "of" + std::to_string(cut.size()) + ".bin";
        files.shards.emplace_back(name, bytes.substr(off, cut[i]));
        names.push_back(Value(std::move(name)));
        off += cut[i];
      }
      for (auto& e : written.as_list()[gi].as_map())
        if (e.key == "paths") e.value = Value(std::move(names));
    }
    manifest = &written;
    // The topology without the weights' bytes (they are in the shards).
    // Through the deterministic bytes (map keys sorted), so that equal graphs give equal JSON.
    static std::unique_ptr<google::protobuf::util::TypeResolver> resolver(google::protobuf::util::NewTypeResolverForDescriptorPool(
        "type.googleapis.com", google::protobuf::DescriptorPool::generated_pool()));
    std::string topo;
    google::protobuf::util::JsonPrintOptions po;
    auto st = google::protobuf::util::BinaryToJsonString(resolver.get(), "type.googleapis.com/tensorflow.GraphDef", serialize(gd),
                                                         &topo, po);
    if (!st.ok()) throw Error("cannot write the topology as JSON: " + std::string(st.message()));
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    w.StartObject();
    bool wrote_topology = false, wrote_manifest = false;
    auto topology = [&] {
      w.Key("modelTopology");
      w.RawValue(topo.data(), topo.size(), rapidjson::kObjectType);
      wrote_topology = true;
    };
    auto weights = [&] {
      w.Key("weightsManifest");
      to_json(*manifest, w);
      wrote_manifest = true;
    };
    if (meta && meta->is_map()) {
      for (const auto& e : meta->as_map()) {
        if (e.key == "modelTopology") topology();
        else if (e.key == "weightsManifest") weights();
        else {
          w.Key(e.key.data(), static_cast<rapidjson::SizeType>(e.key.size()));
          to_json(e.value, w);
        }
      }
    } else {
      w.Key("format");
      w.String("graph-model");
      w.Key("generatedBy");
      w.String("amanda");
      w.Key("convertedBy");
      w.String("amanda");
    }
    if (!wrote_topology) topology();
    if (!wrote_manifest && !no_manifest) weights();
    w.EndObject();
    files.model_json.assign(sb.GetString(), sb.GetSize());
    return files;
  }

 private:
  const text::Document& doc_;
  const ir::Graph& g_;

  const Value* attr(OpId op, std::string_view key) const {
    for (const auto& [k, v] : g_.attrs(op))
      if (g_.str(k) == key) return &v;
    return nullptr;
  }

  // No manifest (a graph from a .pb or another framework): every Const of a dtype TF.js stores goes
  // to one shard, model.weights.bin... named group1-shard1of1.bin as TF.js's converter does.
  Value default_manifest(const tf::GraphDef& gd) {
    Value::List ws;
    for (OpId op = g_.first_child(g_.root()); op; op = g_.next_sibling(op)) {
      if (g_.type_str(op) != "Const") continue;
      const Value* v = attr(op, "value");
      if (!v || !v->is_tensor() || tfjs_dtype(v->as_tensor().dtype).empty()) continue;
      Value::List shape;
      for (int64_t d : v->as_tensor().shape) shape.push_back(Value(d));
      ws.push_back(Value(Value::Map{{"name", Value(g_.name_str(op))}, {"shape", Value(std::move(shape))},
                                    {"dtype", Value(tfjs_dtype(v->as_tensor().dtype))}}));
    }
    return Value(Value::List{Value(Value::Map{{"paths", Value(Value::List{Value("group1-shard1of1.bin")})}, {"weights", Value(std::move(ws))}})});
  }

  void append_weight(const Value& w, std::string& bytes, absl::flat_hash_map<std::string, tf::NodeDef*>& nodes) {
    const Value* name = w.find("name");
    const Value* dtype = w.find("dtype");
    if (!name || !name->is_string() || !dtype || !dtype->is_string()) throw Error("tfjs.weightsManifest: a weight without name or dtype");
    std::string where = "weight '" + name->as_string() + "'";
    OpId op = g_.find_op(g_.root(), name->as_string());
    auto it = nodes.find(name->as_string());
    if (!op || it == nodes.end()) throw Error(where + ": no Const node of that name");
    const Value* v = attr(op, "value");
    if (!v || !v->is_tensor()) throw Error(where + ": its Const has no tensor value");
    const ir::Tensor& t = v->as_tensor();
    if (tfjs_dtype(t.dtype) != dtype->as_string())
      throw Error(where + ": the manifest says " + dtype->as_string() + ", the Const holds " + std::string(ir::dtype_name(t.dtype)));
    // The topology keeps the Const's dtype and shape only.
    auto& av = (*it->second->mutable_attr())["value"];
    tf::TensorProto* tp = av.mutable_tensor();
    tf::DataType dt = tp->dtype();
    if (const Value* node_dt = attr(op, "@tfjs_topology_dtype"); node_dt && node_dt->is_string())
      if (auto d = ir::dtype_from_name(node_dt->as_string())) dt = tf_dtype(*d);  // as the file had it (the reader's leniency)
    tf::TensorShapeProto shape = tp->tensor_shape();
    tp->Clear();
    tp->set_dtype(dt);
    *tp->mutable_tensor_shape() = shape;
    if (t.dtype == ir::DType::String) {
      for (const auto& s : t.strings) {
        uint32_t len = static_cast<uint32_t>(s.size());
        bytes.append(reinterpret_cast<const char*>(&len), 4);
        bytes += s;
      }
      return;
    }
    const Value* q = w.find("quantization");
    if (!q) {
      bytes.append(reinterpret_cast<const char*>(t.data), t.size);
      return;
    }
    if (const Value* raw = attr(op, "@quantized"); raw && raw->is_tensor()) {
      bytes.append(raw->as_tensor().bytes());
      return;
    }
    Quantization qq;
    if (const Value* x = q->find("dtype"); x && x->is_string()) qq.dtype = x->as_string();
    if (const Value* x = q->find("scale"); x && (x->is_float() || x->is_int())) qq.scale = x->is_float() ? x->as_float() : double(x->as_int());
    if (const Value* x = q->find("min"); x && (x->is_float() || x->is_int())) qq.min = x->is_float() ? x->as_float() : double(x->as_int());
    size_t n = t.size / 4;
    for (size_t i = 0; i < n; ++i) {
      if (qq.dtype == "float16") {
        float f;
        std::memcpy(&f, t.data + 4 * i, 4);
        uint16_t h = float_to_half(f);
        bytes.append(reinterpret_cast<const char*>(&h), 2);
        continue;
      }
      double x;
      if (t.dtype == ir::DType::Int32) {
        int32_t k;
        std::memcpy(&k, t.data + 4 * i, 4);
        x = k;
      } else {
        float f;
        std::memcpy(&f, t.data + 4 * i, 4);
        x = f;
      }
      uint32_t v = TfjsImporter::requantize(x, qq.min, qq.scale, qq.dtype == "uint8" ? 255 : 65535);
      if (qq.dtype == "uint8") bytes += static_cast<char>(v);
      else if (qq.dtype == "uint16") bytes.append(reinterpret_cast<const char*>(&v), 2);
      else throw Error(where + ": unknown quantization dtype '" + qq.dtype + "'");
    }
  }
};

}  // namespace

text::Document import_tfjs(std::string_view model_json, const ShardLoader& shards, const std::string& file_name) {
  return TfjsImporter(model_json, shards, file_name).run();
}

text::Document read_tfjs(ReadGate& files) {
  auto json = files.map_model();
  // Shards only through the gate: relative, inside the model's folder, no symbolic link, regular
  // files, at most ReadGate::kMaxFiles of them.
  ShardLoader loader = [&](const std::string& rel) -> std::shared_ptr<const Buffer> {
    return files.map(rel, files.model_path() + ": error: weights shard");
  };
  return import_tfjs(json->view(), loader, files.model_path());
}

text::Document read_tfjs(const std::string& path) {
  ReadGate files(path);
  return read_tfjs(files);
}

TfjsFiles export_tfjs(const text::Document& doc) { return TfjsExporter(doc).run(); }

void write_tfjs(const text::Document& doc, WriteGate& out) {
  // Everything is built before the first file is staged; the caller commits.
  TfjsFiles f = export_tfjs(doc);
  out.make_parent_folders();
  for (const auto& [name, bytes] : f.shards) out.create(name).write(bytes);
  out.main().write(f.model_json);
}

void write_tfjs(const text::Document& doc, const std::string& path) {
  WriteGate out(path);
  write_tfjs(doc, out);
  out.commit();
}

bool is_tfjs_head(std::string_view head) {
  // The first key: an Amanda document starts with graph, op or edge.
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string::npos || head[i] != '{') return false;
  size_t k = head.find_first_not_of(" \t\r\n", i + 1);
  if (k == std::string::npos || head[k] != '"') return false;
  size_t e = head.find('"', k + 1);
  std::string_view first = head.substr(k + 1, e == std::string::npos ? 0 : e - k - 1);
  if (first == "graph" || first == "op" || first == "edge") return false;
  return first == "modelTopology" || first == "format" || first == "generatedBy" || first == "convertedBy" ||
         first == "signature" || first == "userDefinedMetadata" || first == "weightsManifest" || first == "modelInitializer";
}

bool is_tfjs_file(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext != ".json") return false;
  return is_tfjs_head(ReadGate(path).peek(4096));  // through the gate: a FIFO gives no bytes
}

bool is_tfjs_output_path(std::string_view path) { return fs::path(path).filename() == "model.json"; }

}  // namespace amanda::tf_frontend
