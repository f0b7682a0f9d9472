// text::Document -> TensorFlow GraphDef (the inverse of import.cpp; docs/tensorflow.md).
#include <charconv>

#include <absl/container/flat_hash_map.h>
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>

#include "amanda/frontends/tensorflow/graphdef.h"
#include "amanda/frontends/tensorflow/namespaces.h"
#include "amanda/support/base64.h"
#include "amanda/support/diagnostics.h"
#include "signatures.h"
#include "values.h"

namespace amanda::tf_frontend {

using namespace detail;
using ir::OpId;
using ir::PortId;
using ir::Value;
namespace tf = tensorflow;

namespace {

// A root node's tensor attribute whose bytes the exporter leaves out of the message, to be
// written straight from the IR into the output (export_graph_bytes).
struct Deferred {
  tf::NodeDef* node;
  std::string key;
  const ir::Tensor* tensor;
};
constexpr size_t kDeferBytes = 1024;

class Exporter {
 public:
  std::vector<Deferred>* deferred = nullptr;

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
    for (OpId op = g_.first_child(scope); op; op = g_.next_sibling(op)) node(op, scope, function, *nodes.Add());
  }

  void node(OpId op, OpId scope, bool function, tf::NodeDef& n) {
    n.set_name(std::string(g_.name_str(op)));
    // The op's '@' annotations, found in one pass (a lookup per annotation and per tensor
    // attribute scanned the list again and again).
    const Value *at_op = nullptr, *at_device = nullptr, *at_debug = nullptr, *kinds = nullptr;
    std::vector<std::pair<std::string_view, const Value*>> metas;
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
      bool defer = deferred && !function && kind == AttrKind::Tensor && v.is_tensor() && v.as_tensor().dtype != ir::DType::String &&
                   v.as_tensor().size >= kDeferBytes && TensorMeta::from_value(meta).storage == "content";
      if (defer) deferred->push_back({&n, std::string(key), &v.as_tensor()});
      if (!attr_to_proto(v, kind, meta, a, defer))
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

namespace {

namespace WFL = google::protobuf::internal;

size_t varint_size(uint64_t v) { return google::protobuf::io::CodedOutputStream::VarintSize64(v); }

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// The deterministic serialisation of `g` whose deferred tensors' tensor_content was left out, with
// those bytes written in from the IR: what serialize(g) would give had they been in it, without
// copying each tensor into its TensorProto first. The layout relied on (protobuf writes fields in
// number order, map entries sorted by key, each as key then value):
//   GraphDef  = (node: 0x0a len NodeDef)* library version versions
//   NodeDef   = name op input* device (attr: 0x2a len (0x0a len key) (0x12 len AttrValue))* debug_info
//   AttrValue = tensor: 0x42 len TensorProto;  TensorProto = dtype shape version (0x22 len bytes)
// A node with debug info or unknown fields (they follow the attributes) gets its bytes back in
// the message instead.
std::string serialize_spliced(tf::GraphDef& g, const std::vector<Deferred>& deferred) {
  absl::flat_hash_map<const tf::NodeDef*, std::vector<const Deferred*>> by_node;
  for (const auto& d : deferred) by_node[d.node].push_back(&d);
  struct Entry {
    std::string head;                  // the entry up to the content (or whole)
    const ir::Tensor* tensor = nullptr;
  };
  struct Node {
    std::string head;  // the whole node when not spliced
    std::vector<Entry> entries;
    uint64_t size = 0;
  };
  std::vector<Node> nodes(static_cast<size_t>(g.node_size()));
  uint64_t total = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    tf::NodeDef& n = *g.mutable_node(i);
    Node& out = nodes[static_cast<size_t>(i)];
    auto it = by_node.find(&n);
    if (it != by_node.end() && (n.has_experimental_debug_info() || !n.GetReflection()->GetUnknownFields(n).empty())) {
      for (const Deferred* d : it->second)
        n.mutable_attr()->at(d->key).mutable_tensor()->mutable_tensor_content()->assign(
            reinterpret_cast<const char*>(d->tensor->data), d->tensor->size);
      it = by_node.end();
    }
    if (it == by_node.end()) {
      out.head = serialize(n);
      out.size = out.head.size();
    } else {
      tf::NodeDef h;
      h.set_name(n.name());
      h.set_op(n.op());
      *h.mutable_input() = n.input();
      h.set_device(n.device());
      out.head = serialize(h);
      out.size = out.head.size();
      std::vector<const std::string*> keys;
      for (const auto& kv : n.attr()) keys.push_back(&kv.first);
      std::sort(keys.begin(), keys.end(), [](auto* a, auto* b) { return *a < *b; });
      for (const std::string* key : keys) {
        const tf::AttrValue& av = n.attr().at(*key);
        const ir::Tensor* t = nullptr;
        for (const Deferred* d : it->second)
          if (d->key == *key) t = d->tensor;
        Entry e;
        std::string body = serialize(av);
        uint64_t av_len = body.size(), tp_len = 0;
        if (t) {
          body = serialize(av.tensor());  // (the tensor is the AttrValue's only field)
          tp_len = body.size() + 1 + varint_size(t->size) + t->size;
          av_len = 1 + varint_size(tp_len) + tp_len;
        }
        uint64_t entry_len = 1 + varint_size(key->size()) + key->size() + 1 + varint_size(av_len) + av_len;
        e.head += '\x2a';
        put_varint(e.head, entry_len);
        e.head += '\x0a';
        put_varint(e.head, key->size());
        e.head += *key;
        e.head += '\x12';
        put_varint(e.head, av_len);
        if (t) {
          e.head += '\x42';
          put_varint(e.head, tp_len);
          e.head += body;
          e.head += '\x22';
          put_varint(e.head, t->size);
          e.tensor = t;
        } else {
          e.head += body;
        }
        out.size += e.head.size() + (t ? t->size : 0);
        out.entries.push_back(std::move(e));
      }
    }
    total += 1 + varint_size(out.size) + out.size;
  }
  g.mutable_node()->Clear();
  std::string tail = serialize(g);
  total += tail.size();
  if (total > static_cast<uint64_t>(INT32_MAX)) throw Error("the GraphDef is over 2 GiB, which protobuf cannot read");
  std::string out;
  out.reserve(total);  // (appended, not resized: no pass of zeros over it first)
  for (const Node& n : nodes) {
    out += '\x0a';
    put_varint(out, n.size);
    out += n.head;
    for (const Entry& e : n.entries) {
      out += e.head;
      if (e.tensor) out.append(reinterpret_cast<const char*>(e.tensor->data), e.tensor->size);
    }
  }
  out += tail;
  return out;
}

}  // namespace

std::string export_graph_bytes(const text::Document& doc) {
  // On an arena: the messages in blocks, freed at once (freeing them one by one was 15% of the
  // export). Messages are built in place in it (one moved in from the heap would be copied).
  google::protobuf::ArenaOptions ao;
  ao.start_block_size = 16 * 1024;
  ao.max_block_size = 64 * 1024;  // (below malloc's mmap threshold: blocks of a MB were mapped and faulted in every time)
  google::protobuf::Arena arena(ao);
  tf::GraphDef& g = *google::protobuf::Arena::CreateMessage<tf::GraphDef>(&arena);
  std::vector<Deferred> deferred;
  Exporter e(doc);
  e.deferred = &deferred;
  e.run(g);
  if (deferred.empty()) return serialize(g);
  return serialize_spliced(g, deferred);
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
