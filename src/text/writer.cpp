// Document -> text, through an Emitter, so YAML and JSON share one walk.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "amanda/support/base64.h"
#include "amanda/support/file.h"
#include "amanda/text/document.h"
#include "emitter.h"

namespace amanda::text {

using ir::EdgeId;
using ir::OpId;
using ir::PortDir;
using ir::PortId;
using ir::Value;

namespace {

constexpr uint32_t kMaxDepth = 512;
constexpr size_t kMaxListedElements = 64;

// Receives tensor bytes that go to the side file; returns their offset.
class SideSink {
 public:
  SideSink(std::string path, std::string name) : path_(std::move(path)), name_(std::move(name)) {}
  uint64_t add(const ir::Tensor& t) {
    if (!file_) file_.emplace(path_);
    static const char zeros[64] = {};
    if (uint64_t pad = (64 - file_->size() % 64) % 64) file_->write(zeros, pad);
    uint64_t off = file_->size();
    file_->write_paged(t.owner.get(), t.data, t.size);  // a mapped tensor does not stay resident
    return off;
  }
  const std::string& name() const { return name_; }
  bool used() const { return file_.has_value(); }
  AtomicFile* file() { return file_ ? &*file_ : nullptr; }

 private:
  std::string path_, name_;
  std::optional<AtomicFile> file_;
};

class Writer {
 public:
  Writer(const Document& doc, Emitter& em, const WriteOptions& opt, SideSink* side)
      : doc_(doc), g_(doc.graph), em_(em), opt_(opt), side_(side) {}

  void run() {
    em_.begin_map();
    em_.key(kind_name(doc_.kind));
    if (doc_.kind == Document::Kind::Edge) {
      const EdgeFragment& e = doc_.edge;
      em_.begin_map();
      endpoint("output_port", e.src_op, e.src_port);
      endpoint("input_port", e.dst_op, e.dst_port);
      if (!e.attrs.empty()) {
        em_.key("attrs");
        em_.begin_map();
        for (const auto& [k, v] : e.attrs) {
          em_.key(k);
          value(v);
        }
        em_.end_map();
      }
      em_.end_map();
    } else {
      bucket_edges();
      node(g_.root(), doc_.kind == Document::Kind::Graph || g_.is_graph(g_.root()));
    }
    em_.end_map();
  }

 private:
  void endpoint(std::string_view key, std::string_view op, std::string_view port) {
    em_.key(key);
    em_.begin_map(true);
    em_.key("op");
    em_.str(op);
    em_.key("port");
    em_.str(port);
    em_.end_map();
  }

  // Edges grouped by the body that holds them, in id order (a counting sort, O(E)).
  void bucket_edges() {
    start_.assign(g_.id_bound() + 1, 0);
    for (uint32_t i = 1; i < g_.edge_id_bound(); ++i)
      if (g_.valid(EdgeId(i))) ++start_[g_.edge_scope(EdgeId(i)).value + 1];
    for (size_t i = 1; i < start_.size(); ++i) start_[i] += start_[i - 1];
    edges_.resize(start_.back());
    std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
    for (uint32_t i = 1; i < g_.edge_id_bound(); ++i)
      if (g_.valid(EdgeId(i))) edges_[fill[g_.edge_scope(EdgeId(i)).value]++] = EdgeId(i);
  }

  // A generated name ("_k") is left out only when the reader will give the op that same name
  // again: the reader names an anonymous op by its position, skipping names already taken. After
  // edits through the API (an op erased, another inserted) positions move, so check, per body,
  // which generated names the reader would not reproduce, and write those.
  bool must_name(OpId op) {
    OpId scope = g_.parent(op);
    auto it = named_.find(scope.value);
    if (it == named_.end()) it = named_.emplace(scope.value, generated_to_write(scope)).first;
    return it->second.contains(op.value);
  }

  absl::flat_hash_set<uint32_t> generated_to_write(OpId scope) {
    std::vector<OpId> kids = g_.children(scope);
    absl::flat_hash_set<uint32_t> write;
    for (bool changed = true; changed;) {
      changed = false;
      absl::flat_hash_set<std::string_view> taken;
      for (OpId c : kids)
        if (g_.name(c) && (!g_.name_generated(c) || write.contains(c.value))) taken.insert(g_.name_str(c));
      for (size_t i = 0; i < kids.size(); ++i) {
        OpId c = kids[i];
        if (!g_.name_generated(c) || write.contains(c.value)) continue;
        // The reader's rule (reader.cpp, parse_ops): "_<position>", bumped past taken names.
        size_t k = i;
        std::string cand;
        for (;; ++k) {
          cand = "_" + std::to_string(k);
          if (!taken.contains(cand)) break;
        }
        if (cand != g_.name_str(c)) {
          write.insert(c.value);
          changed = true;
          break;  // the taken set changed: simulate again
        }
        taken.insert(g_.name_str(c));
      }
    }
    return write;
  }

  void node(OpId n, bool is_graph) {
    em_.begin_map();
    if (!is_graph && g_.type(n)) {
      em_.key("type");
      em_.str(g_.type_str(n));
    }
    if (g_.name(n) && (!g_.name_generated(n) || must_name(n))) {
      em_.key("name");
      em_.str(g_.name_str(n));
    }
    if (is_graph && g_.graph_namespace(n)) {
      em_.key("namespace");
      em_.str(g_.str(g_.graph_namespace(n)));
    }
    attrs(g_.attrs(n));
    ports(n, PortDir::In);
    ports(n, PortDir::Out);
    bool body = written_body(n, is_graph);
    if (body) {
      em_.key("ops");
      em_.begin_seq();
      for (OpId c = g_.first_child(n); c; c = g_.next_sibling(c)) node(c, false);
      em_.end_seq();
    }
    uint32_t b = start_[n.value], e = start_[n.value + 1];
    if (body) {
      em_.key("edges");
      em_.begin_seq();
      for (uint32_t i = b; i < e; ++i) edge(edges_[i]);
      em_.end_seq();
    }
    em_.end_map();
  }

  // Whether a node gets `ops:` and `edges:` keys (empty ones included).
  bool written_body(OpId n, bool) const {
    return g_.has_body(n) || start_[n.value] != start_[n.value + 1];
  }

  void ports(OpId n, PortDir dir) {
    auto ps = g_.ports(n, dir);
    if (ps.empty()) return;
    em_.key(dir == PortDir::In ? "input_ports" : "output_ports");
    em_.begin_seq();
    for (PortId p : ps) {
      em_.begin_map();
      if (!g_.port_name_generated(p)) {
        em_.key("name");
        em_.str(g_.port_name_str(p));
      }
      attrs(g_.attrs(p));
      em_.end_map();
    }
    em_.end_seq();
  }

  void edge(EdgeId e) {
    em_.begin_map();
    PortId s = g_.edge_src(e), d = g_.edge_dst(e);
    endpoint("output_port", g_.name_str(g_.port_op(s)), g_.port_name_str(s));
    endpoint("input_port", g_.name_str(g_.port_op(d)), g_.port_name_str(d));
    attrs(g_.attrs(e));
    em_.end_map();
  }

  void attrs(const ir::AttrList& l) {
    if (l.empty()) return;
    em_.key("attrs");
    em_.begin_map();
    for (const auto& [k, v] : l) {
      em_.key(g_.str(k));
      value(v);
    }
    em_.end_map();
  }

  static bool is_scalar(const Value& v) {
    auto k = v.kind();
    return k == Value::Kind::Null || k == Value::Kind::Bool || k == Value::Kind::Int || k == Value::Kind::Float ||
           k == Value::Kind::String;
  }

  void value(const Value& v) {
    switch (v.kind()) {
      case Value::Kind::Null: em_.null(); break;
      case Value::Kind::Bool: em_.boolean(v.as_bool()); break;
      case Value::Kind::Int: em_.integer(v.as_int()); break;
      case Value::Kind::Float: em_.real(v.as_float()); break;
      case Value::Kind::String: em_.str(v.as_string()); break;
      case Value::Kind::List: {
        const auto& l = v.as_list();
        bool flow = true;
        for (const auto& x : l)
          if (!is_scalar(x)) {
            flow = false;
            break;
          }
        em_.begin_seq(flow);
        for (const auto& x : l) value(x);
        em_.end_seq();
        break;
      }
      case Value::Kind::Map: {
        em_.begin_map();
        for (const auto& e : v.as_map()) {
          em_.key(e.key);
          value(e.value);
        }
        em_.end_map();
        break;
      }
      case Value::Kind::Tensor: tensor(v.as_tensor()); break;
      case Value::Kind::Graph: {
        OpId gn = v.as_graph();
        if (!g_.valid(gn)) throw Error("a graph attribute refers to an erased graph");
        em_.begin_map(false, "!graph");
        // The graph's own keys, without re-opening a map.
        graph_body(gn);
        em_.end_map();
        break;
      }
    }
  }

  // Writes the keys of a graph node into the map that is already open.
  void graph_body(OpId n) {
    if (g_.name(n)) {
      em_.key("name");
      em_.str(g_.name_str(n));
    }
    if (g_.graph_namespace(n)) {
      em_.key("namespace");
      em_.str(g_.str(g_.graph_namespace(n)));
    }
    attrs(g_.attrs(n));
    ports(n, PortDir::In);
    ports(n, PortDir::Out);
    em_.key("ops");
    em_.begin_seq();
    for (OpId c = g_.first_child(n); c; c = g_.next_sibling(c)) node(c, false);
    em_.end_seq();
    uint32_t b = start_[n.value], e = start_[n.value + 1];
    em_.key("edges");
    em_.begin_seq();
    for (uint32_t i = b; i < e; ++i) edge(edges_[i]);
    em_.end_seq();
  }

  void tensor(const ir::Tensor& t) {
    em_.begin_map(true, "!tensor");
    em_.key("dtype");
    em_.str(ir::dtype_name(t.dtype));
    em_.key("shape");
    em_.begin_seq(true);
    for (int64_t d : t.shape) em_.integer(d);
    em_.end_seq();
    if (t.dtype == ir::DType::String) {
      em_.key("data");
      em_.begin_seq(true);
      for (const auto& s : t.strings) em_.str(s);
      em_.end_seq();
    } else if (side_ && t.size > opt_.inline_limit) {
      uint64_t off = side_->add(t);
      em_.key("file");
      em_.str(side_->name());
      em_.key("offset");
      em_.integer(static_cast<int64_t>(off));
      em_.key("length");
      em_.integer(static_cast<int64_t>(t.size));
    } else if (!listed(t)) {
      em_.key("base64");
      tmp_.clear();
      base64_encode_to(t.bytes(), tmp_);
      em_.raw_str(tmp_);
    }
    em_.end_map();
  }

  // Small tensors of common types are written as readable numbers when that is exact.
  bool listed(const ir::Tensor& t) {
    auto n = t.element_count();
    if (!n || *n > kMaxListedElements || t.size != t.expected_bytes().value_or(~0ull)) return false;
    size_t es = ir::dtype_size(t.dtype);
    auto at = [&](size_t i) { return t.data + i * es; };
    switch (t.dtype) {
      case ir::DType::Float32:
        for (size_t i = 0; i < *n; ++i) {
          float f;
          std::memcpy(&f, at(i), 4);
          if (!std::isfinite(f)) return false;
        }
        break;
      case ir::DType::Float64:
        for (size_t i = 0; i < *n; ++i) {
          double f;
          std::memcpy(&f, at(i), 8);
          if (!std::isfinite(f)) return false;
        }
        break;
      case ir::DType::Bool:
        for (size_t i = 0; i < *n; ++i)
          if (*at(i) > 1) return false;
        break;
      case ir::DType::Int8: case ir::DType::Int16: case ir::DType::Int32: case ir::DType::Int64:
      case ir::DType::UInt8: case ir::DType::UInt16: case ir::DType::UInt32:
        break;
      default: return false;  // uint64 above INT64_MAX, 16-bit floats, complex: base64
    }
    em_.key("data");
    em_.begin_seq(true);
    for (size_t i = 0; i < *n; ++i) {
      const uint8_t* p = at(i);
      switch (t.dtype) {
        case ir::DType::Float32: { float f; std::memcpy(&f, p, 4); em_.real(f); break; }
        case ir::DType::Float64: { double f; std::memcpy(&f, p, 8); em_.real(f); break; }
        case ir::DType::Bool: em_.boolean(*p != 0); break;
        case ir::DType::Int8: { int8_t x; std::memcpy(&x, p, 1); em_.integer(x); break; }
        case ir::DType::Int16: { int16_t x; std::memcpy(&x, p, 2); em_.integer(x); break; }
        case ir::DType::Int32: { int32_t x; std::memcpy(&x, p, 4); em_.integer(x); break; }
        case ir::DType::Int64: { int64_t x; std::memcpy(&x, p, 8); em_.integer(x); break; }
        case ir::DType::UInt8: em_.integer(*p); break;
        case ir::DType::UInt16: { uint16_t x; std::memcpy(&x, p, 2); em_.integer(x); break; }
        case ir::DType::UInt32: { uint32_t x; std::memcpy(&x, p, 4); em_.integer(x); break; }
        default: break;
      }
    }
    em_.end_seq();
    return true;
  }

  const Document& doc_;
  const ir::Graph& g_;
  Emitter& em_;
  const WriteOptions& opt_;
  SideSink* side_;
  std::vector<uint32_t> start_;
  absl::flat_hash_map<uint32_t, absl::flat_hash_set<uint32_t>> named_;  // scope -> generated names to write
  std::vector<EdgeId> edges_;
  std::string tmp_;
};

void emit(const Document& doc, Format format, const WriteOptions& opt, SideSink* side, std::string& out) {
  auto em = format == Format::Yaml ? make_yaml_emitter(out, kMaxDepth) : make_json_emitter(out, kMaxDepth);
  Writer w(doc, *em, opt, side);
  w.run();
}

}  // namespace

std::string to_text(const Document& doc, Format format, const WriteOptions& options) {
  std::string out;
  out.reserve(1 << 16);
  emit(doc, format, options, nullptr, out);
  return out;
}

std::string write_file(const Document& doc, const std::string& path, Format format, const WriteOptions& options) {
  std::string name = std::filesystem::path(path).filename().string() + ".data";
  std::string side_path = (std::filesystem::path(path).parent_path() / name).string();
  SideSink side(side_path, name);
  std::string out;
  out.reserve(1 << 16);
  emit(doc, format, options, &side, out);
  AtomicFile main(path);
  main.write(out);
  commit_all({side.file(), &main});  // both or neither
  return side.used() ? side_path : std::string();
}

}  // namespace amanda::text
