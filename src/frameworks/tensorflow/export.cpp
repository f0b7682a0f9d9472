// text::Document -> TensorFlow GraphDef (the inverse of import.cpp; docs/tensorflow.md).
#include <charconv>

#include <absl/container/flat_hash_map.h>
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>

#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/namespaces.h"
#include "amanda/support/base64.h"
#include "amanda/support/diagnostics.h"
#include "signatures.h"
#include "values.h"
#include "wire.h"

namespace amanda::tf_frontend {

using namespace detail;
using ir::OpId;
using ir::PortId;
using ir::Value;
namespace tf = tensorflow;

namespace {

// The root's NodeDefs as bytes, written straight from the IR (export_graph_bytes): the small
// bytes of all nodes in one buffer, and where each large tensor's bytes go in it (they are copied
// once, into the output).
struct WireNodes {
  struct Splice {
    size_t pos;  // in `small`
    const ir::Tensor* tensor;
  };
  struct Node {
    size_t begin, end;            // in `small`
    uint32_t sp_begin, sp_end;    // in `splices`
    uint64_t size;                // the NodeDef's length
  };
  std::string small;
  std::vector<Splice> splices;
  std::vector<Node> nodes;
};
constexpr size_t kSpliceBytes = 1024;

class Exporter {
 public:
  WireNodes* wire = nullptr;  // set: the root's nodes are written here as bytes, not into the message

  explicit Exporter(const text::Document& doc) : g_(doc.graph) {
    if (doc.kind != text::Document::Kind::Graph) throw Error("only a graph document can be written as a GraphDef");
    std::string_view ns = g_.type_str(g_.root());
    if (!ns.empty() && !ns.starts_with("amanda/tensorflow/"))
      throw Error("the graph is in namespace " + std::string(ns) + ", not amanda/tensorflow: convert it first (amanda convert)");
  }

  void run(tf::GraphDef& out) {
    OpId root = g_.root();
    if (!g_.inputs(root).empty() || !g_.outputs(root).empty())
      throw Error("a GraphDef has no graph inputs or outputs (placeholders are ops); this graph has ports");
    if (const Value* v = attr(root, "versions")) {
      if (!v->is_map()) throw Error("graph attribute 'versions' is not a map");
      auto* vd = out.mutable_versions();
      if (const Value* p = v->find("producer"); p && p->is_int()) vd->set_producer(static_cast<int32_t>(p->as_int()));
      if (const Value* p = v->find("min_consumer"); p && p->is_int()) vd->set_min_consumer(static_cast<int32_t>(p->as_int()));
      if (const Value* p = v->find("bad_consumers"); p && p->is_list())
        for (const auto& b : p->as_list())
          if (b.is_int()) vd->add_bad_consumers(static_cast<int32_t>(b.as_int()));
    }
    if (const Value* v = attr(root, "version"); v && v->is_int()) out.set_version(static_cast<int32_t>(v->as_int()));
    if (const Value* v = attr(root, "library")) library(*v, *out.mutable_library());
    body(root, false, *out.mutable_node());
    unknown_fields(root, out);
  }

 private:
  const ir::Graph& g_;
  Signatures sigs_;
  std::vector<std::pair<std::string_view, const Value*>> metas_;

  const Value* attr(OpId op, std::string_view key) const {
    for (const auto& [k, v] : g_.attrs(op))
      if (g_.str(k) == key) return &v;
    return nullptr;
  }
  const Value* attr(PortId p, std::string_view key) const {
    for (const auto& [k, v] : g_.attrs(p))
      if (g_.str(k) == key) return &v;
    return nullptr;
  }

  template <class M>
  void unknown_fields(OpId op, M& m) {
    const Value* v = attr(op, "@unknown_fields");
    if (!v || !v->is_string()) return;
    auto bytes = base64_decode(v->as_string());
    if (!bytes || !m.GetReflection()->MutableUnknownFields(&m)->ParseFromString(*bytes))
      throw Error(g_.path(op) + ": '@unknown_fields' is not base64 of protobuf fields");
  }

  static std::string op_name(std::string_view type) {
    std::string prefix = std::string(kTfjsPrefix) + "::";
    if (type.starts_with(prefix)) type.remove_prefix(prefix.size());
    return std::string(type);
  }

  void library(const Value& v, tf::FunctionDefLibrary& lib) {
    if (!v.is_map()) throw Error("graph attribute 'library' is not a map");
    if (const Value* fns = v.find("function"); fns && fns->is_list()) {
      // Signatures first: a body may call another function of the library.
      for (const auto& f : fns->as_list()) {
        if (!f.is_graph()) throw Error("library.function holds a value that is not a graph");
        sigs_.add_function(shell(f.as_graph()).signature());
      }
      for (const auto& f : fns->as_list()) function(f.as_graph(), *lib.add_function());
    }
    if (const Value* gs = v.find("gradient"); gs && gs->is_list())
      for (const auto& gr : gs->as_list()) {
        auto* d = lib.add_gradient();
        if (const Value* x = gr.find("function_name"); x && x->is_string()) d->set_function_name(x->as_string());
        if (const Value* x = gr.find("gradient_func"); x && x->is_string()) d->set_gradient_func(x->as_string());
      }
    if (const Value* gs = v.find("registered_gradients"); gs && gs->is_list())
      for (const auto& gr : gs->as_list()) {
        auto* d = lib.add_registered_gradients();
        if (const Value* x = gr.find("gradient_func"); x && x->is_string()) d->set_gradient_func(x->as_string());
        if (const Value* x = gr.find("registered_op_type"); x && x->is_string()) d->set_registered_op_type(x->as_string());
      }
  }

  tf::FunctionDef shell(OpId fg) {
    tf::FunctionDef f;
    const Value* s = attr(fg, "@function_def");
    std::optional<std::string> bytes;
    if (s && s->is_string()) bytes = base64_decode(s->as_string());
    if (!bytes || !f.ParseFromString(*bytes)) {
      // A function built in the IR: its signature from the ports.
      f.Clear();
      f.mutable_signature()->set_name(std::string(g_.name_str(fg)));
      for (PortId p : g_.inputs(fg)) f.mutable_signature()->add_input_arg()->set_name(std::string(g_.port_name_str(p)));
      for (PortId p : g_.outputs(fg)) f.mutable_signature()->add_output_arg()->set_name(std::string(g_.port_name_str(p)));
    }
    return f;
  }

  void function(OpId fg, tf::FunctionDef& f) {
    f = shell(fg);
    body(fg, true, *f.mutable_node_def());
    for (PortId p : g_.outputs(fg)) {
      PortId src = g_.producer(p);
      if (!src) continue;
      (*f.mutable_ret())[std::string(g_.port_name_str(p))] = ref_of(src, fg, true);
    }
    if (const Value* cr = attr(fg, "control_ret"); cr && cr->is_map())
      for (const auto& e : cr->as_map())
        if (e.value.is_string()) (*f.mutable_control_ret())[e.key] = e.value.as_string();
  }

  std::string ref_of(PortId src, OpId scope, bool function) const {
    OpId p = g_.port_op(src);
    if (p == scope) return std::string(g_.port_name_str(src));
    if (g_.parent(p) != scope) throw Error(g_.path(src) + ": an edge from outside the graph that reads it");
    std::string name(g_.name_str(p));
    if (!function) {
      uint32_t k = g_.port_index(src);
      return k == 0 ? name : name + ":" + std::to_string(k);
    }
    std::string_view port = g_.port_name_str(src);
    size_t dot = port.rfind('.');
    if (dot != std::string_view::npos && dot + 1 < port.size()) {
      std::string_view digits = port.substr(dot + 1);
      uint32_t idx = 0;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), idx);
      if (r.ec == std::errc() && r.ptr == digits.data() + digits.size() && digits.size() <= 9)
        return name + ":" + std::string(port.substr(0, dot)) + ":" + std::to_string(idx);
    }
    return name + ":" + std::string(port) + ":0";
  }

  void body(OpId scope, bool function, google::protobuf::RepeatedPtrField<tf::NodeDef>& nodes) {
    if (wire && !function && scope == g_.root()) {
      for (OpId op = g_.first_child(scope); op; op = g_.next_sibling(op)) node_wire(op, scope);
      return;
    }
    for (OpId op = g_.first_child(scope); op; op = g_.next_sibling(op)) node(op, scope, function, *nodes.Add());
  }

  // A root node as NodeDef bytes (fields in number order, attributes sorted by key: protobuf's
  // deterministic serialisation), appended to wire->small. Nodes with debug info or unknown
  // fields, or two attributes of one key, go through the message (node()).
  struct WireAttrRef {
    std::string_view key;
    const Value* value;
    bool raw;  // '@attr.KEY': the AttrValue's bytes in base64
  };
  std::vector<WireAttrRef> wattrs_;
  std::string av_;

  void node_wire(OpId op, OpId scope) {
    WireNodes& w = *wire;
    WireNodes::Node span{w.small.size(), 0, static_cast<uint32_t>(w.splices.size()), 0, 0};
    const Value *at_op = nullptr, *at_device = nullptr, *kinds = nullptr;
    bool whole = false;
    metas_.clear();
    wattrs_.clear();
    for (const auto& [k, v] : g_.attrs(op)) {
      std::string_view key = g_.str(k);
      if (key.empty() || key[0] != '@') {
        wattrs_.push_back({key, &v, false});
        continue;
      }
      if (key.starts_with("@attr.")) wattrs_.push_back({key.substr(6), &v, true});
      else if (key.starts_with("@_")) wattrs_.push_back({key.substr(1), &v, false});
      else if (key == "@op") at_op = &v;
      else if (key == "@device") at_device = &v;
      else if (key == "@attr_kinds") kinds = &v;
      else if (key.starts_with("@tensor.")) metas_.emplace_back(key.substr(8), &v);
      else if (key == "@debug_info" || key == "@unknown_fields") whole = true;
    }
    std::stable_sort(wattrs_.begin(), wattrs_.end(), [](const WireAttrRef& a, const WireAttrRef& b) { return a.key < b.key; });
    for (size_t i = 1; i < wattrs_.size(); ++i) whole |= wattrs_[i].key == wattrs_[i - 1].key;
    if (whole) {
      tf::NodeDef n;
      node(op, scope, false, n);
      w.small += serialize(n);
      span.end = w.small.size();
      span.sp_end = span.sp_begin;
      span.size = span.end - span.begin;
      w.nodes.push_back(span);
      return;
    }
    std::string& out = w.small;
    std::string_view name = g_.name_str(op);
    std::string_view type = at_op && at_op->is_string() ? std::string_view(at_op->as_string()) : g_.type_str(op);
    if (!(at_op && at_op->is_string()) && type.starts_with(kTfjsPrefix) && type.substr(kTfjsPrefix.size()).starts_with("::"))
      type.remove_prefix(kTfjsPrefix.size() + 2);
    if (!name.empty()) wire::put_len(out, 1, name);
    if (!type.empty()) wire::put_len(out, 2, type);
    for (PortId p : g_.inputs(op)) {
      if (g_.is_control(p)) continue;
      PortId src = g_.producer(p);
      if (!src) throw Error(g_.path(p) + ": an input without an edge (a GraphDef input names the tensor it reads)");
      if (const Value* r = attr(p, "@ref"); r && r->is_string()) {
        wire::put_len(out, 3, r->as_string());
        continue;
      }
      OpId from = g_.port_op(src);
      if (from == scope) {
        wire::put_len(out, 3, g_.port_name_str(src));
        continue;
      }
      if (g_.parent(from) != scope) throw Error(g_.path(src) + ": an edge from outside the graph that reads it");
      std::string_view from_name = g_.name_str(from);
      uint32_t k = g_.port_index(src);
      char buf[16];
      size_t digits = 0;
      if (k) digits = static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, k).ptr - buf);
      out += '\x1a';
      wire::put_varint(out, from_name.size() + (k ? 1 + digits : 0));
      out += from_name;
      if (k) {
        out += ':';
        out.append(buf, digits);
      }
    }
    if (PortId c = g_.find_control(op, ir::PortDir::In))
      for (ir::EdgeId e = g_.first_in_edge(c); e; e = g_.next_in_edge(e)) {
        std::string_view from_name = g_.name_str(g_.port_op(g_.edge_src(e)));
        out += '\x1a';
        wire::put_varint(out, from_name.size() + 1);
        out += '^';
        out += from_name;
      }
    if (at_device && at_device->is_string() && !at_device->as_string().empty()) wire::put_len(out, 4, at_device->as_string());
    for (const WireAttrRef& a : wattrs_) {
      av_.clear();
      const ir::Tensor* splice = nullptr;
      if (a.raw) {
        auto bytes = base64_decode(a.value->is_string() ? a.value->as_string() : std::string());
        tf::AttrValue m;
        if (!bytes || !m.ParseFromString(*bytes))
          throw Error(g_.path(op) + ": '@attr." + std::string(a.key) + "' is not base64 of an AttrValue");
        av_ = serialize(m);
      } else {
        AttrKind kind = implied_kind(*a.value, sigs_.attr_hint(type, a.key));
        if (kinds && kinds->is_map())
          if (const Value* kn = kinds->find(a.key); kn && kn->is_string())
            if (auto kk = kind_from_name(kn->as_string())) kind = *kk;
        const Value* meta = nullptr;
        for (const auto& [mk, m] : metas_)
          if (mk == a.key) meta = m;
        if (!attr_to_wire(*a.value, kind, meta, av_, &splice, kSpliceBytes))
          throw Error(g_.path(op) + ": attribute '" + std::string(a.key) + "' is not a TensorFlow " + std::string(kind_name(kind)));
      }
      uint64_t av_len = av_.size() + (splice ? splice->size : 0);
      uint64_t entry_len = 1 + wire::varint_size(a.key.size()) + a.key.size() + 1 + wire::varint_size(av_len) + av_len;
      out += '\x2a';
      wire::put_varint(out, entry_len);
      wire::put_len(out, 1, a.key);
      out += '\x12';
      wire::put_varint(out, av_len);
      out += av_;
      if (splice) {
        w.splices.push_back({out.size(), splice});
        span.size += splice->size;
      }
    }
    span.end = out.size();
    span.sp_end = static_cast<uint32_t>(w.splices.size());
    span.size += span.end - span.begin;
    w.nodes.push_back(span);
  }

  void node(OpId op, OpId scope, bool function, tf::NodeDef& n) {
    n.set_name(std::string(g_.name_str(op)));
    // The op's '@' annotations, found in one pass (a lookup per annotation and per tensor
    // attribute scanned the list again and again).
    const Value *at_op = nullptr, *at_device = nullptr, *at_debug = nullptr, *kinds = nullptr;
    auto& metas = metas_;
    metas.clear();
    for (const auto& [k, v] : g_.attrs(op)) {
      std::string_view key = g_.str(k);
      if (key.size() < 2 || key[0] != '@') continue;
      if (key == "@op") at_op = &v;
      else if (key == "@device") at_device = &v;
      else if (key == "@debug_info") at_debug = &v;
      else if (key == "@attr_kinds") kinds = &v;
      else if (key.starts_with("@tensor.")) metas.emplace_back(key.substr(8), &v);
    }
    n.set_op(at_op && at_op->is_string() ? at_op->as_string() : op_name(g_.type_str(op)));
    for (PortId p : g_.inputs(op)) {
      if (g_.is_control(p)) continue;
      PortId src = g_.producer(p);
      if (!src) throw Error(g_.path(p) + ": an input without an edge (a GraphDef input names the tensor it reads)");
      const Value* r = attr(p, "@ref");
      n.add_input(r && r->is_string() ? r->as_string() : ref_of(src, scope, function));
    }
    if (PortId c = g_.find_control(op, ir::PortDir::In))
      for (ir::EdgeId e = g_.first_in_edge(c); e; e = g_.next_in_edge(e))
        n.add_input("^" + std::string(g_.name_str(g_.port_op(g_.edge_src(e)))));
    if (const Value* d = at_device; d && d->is_string()) n.set_device(d->as_string());
    if (const Value* d = at_debug; d && d->is_map()) {
      auto* di = n.mutable_experimental_debug_info();
      if (const Value* l = d->find("original_node_names"); l && l->is_list())
        for (const auto& s : l->as_list())
          if (s.is_string()) di->add_original_node_names(s.as_string());
      if (const Value* l = d->find("original_func_names"); l && l->is_list())
        for (const auto& s : l->as_list())
          if (s.is_string()) di->add_original_func_names(s.as_string());
    }
    auto& out = *n.mutable_attr();
    for (const auto& [k, v] : g_.attrs(op)) {
      std::string_view key = g_.str(k);
      if (key.starts_with("@attr.")) {
        auto bytes = base64_decode(v.is_string() ? v.as_string() : std::string());
        // (Built in place: a message moved into a map on an arena is copied.)
        tf::AttrValue& a = out[std::string(key.substr(6))];
        if (!bytes || !a.ParseFromString(*bytes)) throw Error(g_.path(op) + ": '" + std::string(key) + "' is not base64 of an AttrValue");
        continue;
      }
      if (key.starts_with("@_")) key.remove_prefix(1);  // an internal attribute (import.cpp)
      else if (key.starts_with("@")) continue;
      AttrKind kind = implied_kind(v, sigs_.attr_hint(n.op(), key));
      if (kinds && kinds->is_map())
        if (const Value* kn = kinds->find(key); kn && kn->is_string())
          if (auto kk = kind_from_name(kn->as_string())) kind = *kk;
      const Value* meta = nullptr;
      for (const auto& [name, m] : metas)
        if (name == key) meta = m;
      tf::AttrValue& a = out[std::string(key)];
      if (!attr_to_proto(v, kind, meta, a))
        throw Error(g_.path(op) + ": attribute '" + std::string(key) + "' is not a TensorFlow " + std::string(kind_name(kind)));
    }
    unknown_fields(op, n);
  }
};

}  // namespace

void export_graph(const text::Document& doc, tf::GraphDef& g) {
  g.Clear();
  Exporter(doc).run(g);
}

std::string export_graph_bytes(const text::Document& doc) {
  // The root's nodes as bytes straight from the IR (large tensors copied once, into the output);
  // the rest (library, versions, unknown fields) by protobuf, on an arena. Protobuf writes fields
  // in number order, so the nodes (field 1) come first, then the rest.
  google::protobuf::ArenaOptions ao;
  ao.start_block_size = 16 * 1024;
  ao.max_block_size = 64 * 1024;  // (below malloc's mmap threshold: blocks of a MB were mapped and faulted in every time)
  google::protobuf::Arena arena(ao);
  tf::GraphDef& g = *google::protobuf::Arena::CreateMessage<tf::GraphDef>(&arena);
  WireNodes w;
  Exporter e(doc);
  e.wire = &w;
  e.run(g);
  std::string tail = serialize(g);
  uint64_t total = tail.size();
  for (const auto& n : w.nodes) total += 1 + wire::varint_size(n.size) + n.size;
  if (total > static_cast<uint64_t>(INT32_MAX)) throw Error("the GraphDef is over 2 GiB, which protobuf cannot read");
  std::string out;
  out.reserve(total);  // (appended, not resized: no pass of zeros over it first)
  for (const auto& n : w.nodes) {
    out += '\x0a';
    wire::put_varint(out, n.size);
    size_t at = n.begin;
    for (uint32_t i = n.sp_begin; i < n.sp_end; ++i) {
      const auto& sp = w.splices[i];
      out.append(w.small, at, sp.pos - at);
      out.append(reinterpret_cast<const char*>(sp.tensor->data), sp.tensor->size);
      at = sp.pos;
    }
    out.append(w.small, at, n.end - at);
  }
  out += tail;
  return out;
}

std::string export_graph_text(const text::Document& doc) {
  tf::GraphDef g;
  export_graph(doc, g);
  std::string out;
  google::protobuf::TextFormat::Printer p;
  if (!p.PrintToString(g, &out)) throw Error("cannot print the GraphDef as text");
  return out;
}

}  // namespace amanda::tf_frontend
