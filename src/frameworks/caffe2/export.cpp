// text::Document -> Caffe2 NetDef (docs/caffe2.md, "How a NetDef is written").
#include <google/protobuf/arena.h>
#include <google/protobuf/text_format.h>

#include <absl/container/flat_hash_map.h>

#include "amanda/support/base64.h"
#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"
#include "../tensorflow/wire.h"  // the protobuf wire writer the TensorFlow framework wrote
#include "fills.h"
#include "netdef.h"
#include "values.h"

namespace amanda::caffe2_frontend {

using namespace detail;
using ir::OpId;
using ir::PortId;
using ir::Value;
namespace c2 = amanda_caffe2;
namespace wire = tf_frontend::detail::wire;

namespace {

class Exporter {
 public:
  explicit Exporter(const ir::Graph& g) : g_(g) {
    // Symbols the graph never interned are 0, which no attribute key is.
    auto f = [&](std::string_view k) { return g_.symbols().find(k); };
    s_ = {f("@name"), f("@no_name"), f("@args"), f("@device_option"), f("@engine"), f("@control_input"),
          f("@is_gradient_op"), f("@debug_info"), f("@domain"), f("@op_version"), f("@unknown_fields"), f("@blob"), f("@value"),
          f("@implicit"), f("initializer")};
    // The wire writer's scratch, sized once (an op and its arguments fit in these).
    op_buf_.reserve(512);
    args_buf_.reserve(256);
    arg_buf_.reserve(128);
  }

  // The net of graph node `gn`; its initializers go to `init` (null: an initializer is an error).
  void net(OpId gn, c2::NetDef& n, std::vector<std::pair<PortId, std::string>>* inits) {
    DepthGuard depth("a NetDef nested in an argument");
    if (const Value* v = attr(gn, "net_name")) n.set_name(str(*v, gn, "net_name"));
    else if (std::string nm = graph_name(gn); !nm.empty()) n.set_name(nm);
    if (const Value* v = attr(gn, "net_type")) n.set_type(str(*v, gn, "net_type"));
    if (const Value* v = attr(gn, "num_workers")) n.set_num_workers(static_cast<int32_t>(integer(*v, gn, "num_workers")));
    if (const Value* v = attr(gn, "device_option")) device_option_from(*v, *n.mutable_device_option(), g_.path(gn));
    if (const Value* v = attr(gn, "arg")) {
      if (!v->is_map()) fail(gn, "'arg' is not a map");
      for (const auto& [k, x] : v->as_map()) {
        c2::Argument* a = n.add_arg();
        a->set_name(k);
        argument_from(x, *a, nested(), [&] { return g_.path(gn); });
      }
    }
    if (const Value* v = attr(gn, "@arg")) raw_args(*v, gn, *n.mutable_arg());
    if (const Value* v = attr(gn, "partition_info")) {
      if (!v->is_list()) fail(gn, "'partition_info' is not a list");
      for (const auto& p : v->as_list()) partition_info_from(p, *n.add_partition_info(), g_.path(gn));
    }
    for (PortId p : g_.inputs(gn)) {
      if (g_.is_control(p) || attr(p, "@implicit")) continue;
      n.add_external_input(blob_of_graph_port(p));
      if (attr(p, "initializer")) {
        if (!inits) fail(gn, "input '" + blob_of_graph_port(p) + "' has an initializer, which only a root net can have");
        inits->emplace_back(p, blob_of_graph_port(p));
      }
    }
    for (OpId op = g_.first_child(gn); op; op = g_.next_sibling(op)) this->op(op, *n.add_op());
    for (PortId p : g_.outputs(gn)) {
      if (g_.is_control(p)) continue;
      PortId src = g_.producer(p);
      n.add_external_output(src ? blob(src) : blob_of_graph_port(p));
    }
    if (const Value* v = attr(gn, "@unknown_fields")) merge_unknown(*v, n, gn);
  }

 private:
  const ir::Graph& g_;
  struct {
    Symbol name, no_name, args, device, engine, control, grad, debug, domain, version, unknown, blob, value, implicit, initializer;
  } s_;
  template <class E>
  const Value* attr(E e, Symbol s) const { return s ? g_.attr(e, s) : nullptr; }
  absl::flat_hash_map<uint32_t, std::string> generated_;  // port -> a blob name made up for it
  std::string op_buf_, args_buf_, arg_buf_;                // the wire writer's scratch

  [[noreturn]] void fail(OpId op, const std::string& msg) const { throw Error(g_.path(op) + ": " + msg); }
  [[noreturn]] void fail(PortId p, const std::string& msg) const { throw Error(g_.path(p) + ": " + msg); }

  template <class E>
  const Value* attr(E e, std::string_view k) const {
    Symbol s = g_.symbols().find(k);
    return s ? g_.attr(e, s) : nullptr;
  }
  const std::string& str(const Value& v, OpId op, std::string_view k) const {
    if (!v.is_string()) fail(op, "'" + std::string(k) + "' is not a string");
    return v.as_string();
  }
  int64_t integer(const Value& v, OpId op, std::string_view k) const {
    if (!v.is_int()) fail(op, "'" + std::string(k) + "' is not an integer");
    return v.as_int();
  }

  GraphToNet nested() {
    return [this](const Value& v, c2::NetDef& n) { net(v.as_graph(), n, nullptr); };
  }

  template <class M>
  void merge_unknown(const Value& v, M& m, OpId op) {
    std::optional<std::string> bytes = v.is_string() ? base64_decode(v.as_string()) : std::nullopt;
    if (!bytes || !m.MergeFromString(*bytes)) fail(op, "'@unknown_fields' is not base64 of protobuf fields");
  }

  void raw_args(const Value& v, OpId op, google::protobuf::RepeatedPtrField<c2::Argument>& out) {
    if (!v.is_list()) fail(op, "kept arguments are not a list");
    for (const auto& x : v.as_list()) parse_kept(x, *out.Add(), g_.path(op));
  }

  // A graph that did not come from a NetDef (an ONNX model's) gives the net its own name.
  std::string graph_name(OpId gn) const {
    if (gn != g_.root() || g_.name_generated(gn) || g_.name_str(gn).empty() || g_.name_str(gn)[0] == '_') return "";
    return std::string(g_.name_str(gn));
  }

  std::string blob_of_graph_port(PortId p) const {
    if (const Value* b = attr(p, s_.blob); b && b->is_string()) return b->as_string();
    return std::string(g_.port_name_str(p));
  }

  // The same as a view, for the wire writer, which copies it at once (a made-up name's view is good
  // until the next one is made): no string per port.
  std::string_view blob_view(PortId p) {
    if (g_.is_graph(g_.port_op(p))) {
      if (const Value* b = attr(p, s_.blob); b && b->is_string()) return b->as_string();
      return g_.port_name_str(p);
    }
    if (const Value* b = s_.blob ? g_.attr(p, s_.blob) : nullptr; b && b->is_string()) return b->as_string();
    if (const Value* b = s_.value ? g_.attr(p, s_.value) : nullptr; b && b->is_string()) return b->as_string();
    blob(p);
    return generated_.find(p.value)->second;
  }

  // The blob an output port (of an op or, for a graph input, of the graph) writes.
  std::string blob(PortId p) {
    if (g_.is_graph(g_.port_op(p))) return blob_of_graph_port(p);
    if (const Value* b = s_.blob ? g_.attr(p, s_.blob) : nullptr; b && b->is_string()) return b->as_string();
    if (const Value* b = s_.value ? g_.attr(p, s_.value) : nullptr; b && b->is_string()) return b->as_string();
    auto it = generated_.find(p.value);
    if (it != generated_.end()) return it->second;
    // An output no file named (an op a mapping table made): the op's name and the port's.
    std::string name = std::string(g_.name_str(g_.port_op(p))) + ":" + std::string(g_.port_name_str(p));
    return generated_[p.value] = name;
  }

  void op(OpId op, c2::OperatorDef& d) {
    auto ins = g_.inputs(op);
    size_t n_in = ins.size();
    while (n_in > 0 && (g_.is_control(ins[n_in - 1]) || !g_.producer(ins[n_in - 1]))) --n_in;  // omitted trailing inputs
    for (size_t i = 0; i < n_in; ++i) {
      PortId p = ins[i];
      if (g_.is_control(p)) continue;
      PortId src = g_.producer(p);
      if (!src) fail(p, "input has no edge, and a Caffe2 op cannot leave out an input before another");
      d.add_input(blob(src));
    }
    for (PortId p : g_.outputs(op))
      if (!g_.is_control(p)) d.add_output(blob(p));
    d.set_type(std::string(g_.type_str(op)));
    // One pass over the attributes: arguments in order, the annotations by their symbols.
    const Value *name = nullptr, *no_name = nullptr, *args = nullptr, *device = nullptr, *engine = nullptr, *control = nullptr,
                *grad = nullptr, *debug = nullptr, *domain = nullptr, *version = nullptr, *unknown = nullptr;
    auto where = [&] { return g_.path(op); };
    for (const auto& [k, v] : g_.attrs(op)) {
      if (k == s_.name) name = &v;
      else if (k == s_.no_name) no_name = &v;
      else if (k == s_.args) args = &v;
      else if (k == s_.device) device = &v;
      else if (k == s_.engine) engine = &v;
      else if (k == s_.control) control = &v;
      else if (k == s_.grad) grad = &v;
      else if (k == s_.debug) debug = &v;
      else if (k == s_.domain) domain = &v;
      else if (k == s_.version) version = &v;
      else if (k == s_.unknown) unknown = &v;
      else if (std::string_view key = g_.str(k); !key.starts_with("@")) {
        c2::Argument* a = d.add_arg();
        a->set_name(std::string(key));
        argument_from(v, *a, nested(), where);
      }
    }
    if (name) d.set_name(str(*name, op, "@name"));
    // (The reader gives no op a name starting with '_': those are the IR's for anonymous ops.)
    else if (!no_name && !g_.name_generated(op) && !g_.name_str(op).empty() && g_.name_str(op)[0] != '_')
      d.set_name(std::string(g_.name_str(op)));
    if (args) raw_args(*args, op, *d.mutable_arg());
    if (device) device_option_from(*device, *d.mutable_device_option(), g_.path(op));
    if (engine) d.set_engine(str(*engine, op, "@engine"));
    if (control) {
      if (!control->is_list()) fail(op, "'@control_input' is not a list");
      for (const auto& c : control->as_list()) d.add_control_input(str(c, op, "@control_input"));
    }
    if (grad) {
      if (!grad->is_bool()) fail(op, "'@is_gradient_op' is not a bool");
      d.set_is_gradient_op(grad->as_bool());
    }
    if (debug) d.set_debug_info(str(*debug, op, "@debug_info"));
    if (domain) d.set_domain(str(*domain, op, "@domain"));
    if (version) d.set_op_version(integer(*version, op, "@op_version"));
    if (unknown) merge_unknown(*unknown, d, op);
  }

  // ---- The same straight to the wire, for what has a plain form (docs/caffe2.md, "How the bytes
  // are read and written"): false on anything else (a kept argument list, unknown fields, a nested
  // net, a tensor argument, partition info), and the message path above writes the net instead.
  struct NotWire {};

  static void put_str(std::string& out, uint32_t field, std::string_view s) { wire::put_len(out, field, s); }

  // An argument as field `field` of its message (5: an op's, 6: a net's).
  bool argument_wire(std::string_view name, const Value& v, std::string& out, uint32_t field = 5) {
    std::string& a = arg_buf_;  // (reused: its capacity stays)
    a.clear();
    put_str(a, 1, name);
    switch (v.kind()) {
      case Value::Kind::Null: break;
      case Value::Kind::Bool: wire::put_tag(a, 3, wire::kVarint), wire::put_varint(a, v.as_bool() ? 1 : 0); break;
      case Value::Kind::Int: wire::put_tag(a, 3, wire::kVarint), wire::put_varint(a, static_cast<uint64_t>(v.as_int())); break;
      case Value::Kind::Float: {
        float f = static_cast<float>(v.as_float());
        wire::put_tag(a, 2, wire::kFixed32);
        a.append(reinterpret_cast<const char*>(&f), 4);
        break;
      }
      case Value::Kind::String: put_str(a, 4, v.as_string()); break;
      case Value::Kind::List: {
        const auto& l = v.as_list();
        if (l.empty()) break;
        Value::Kind k = l.front().kind();
        for (const auto& x : l)
          if (x.kind() != k) return false;
        for (const auto& x : l) {
          if (k == Value::Kind::Float) {
            float f = static_cast<float>(x.as_float());
            wire::put_tag(a, 5, wire::kFixed32);
            a.append(reinterpret_cast<const char*>(&f), 4);
          } else if (k == Value::Kind::Int) {
            wire::put_tag(a, 6, wire::kVarint);
            wire::put_varint(a, static_cast<uint64_t>(x.as_int()));
          } else if (k == Value::Kind::String) {
            put_str(a, 7, x.as_string());
          } else {
            return false;
          }
        }
        break;
      }
      default: return false;
    }
    wire::put_len(out, field, a);
    return true;
  }

  static bool device_wire(const Value& v, uint32_t field, std::string& out) {
    if (!v.is_map()) return false;
    const Value *type = nullptr, *id = nullptr, *seed = nullptr, *node = nullptr, *numa = nullptr, *extra = nullptr;
    for (const auto& [k, x] : v.as_map()) {
      if (k == "device_type" && x.is_int()) type = &x;
      else if (k == "device_id" && x.is_int()) id = &x;
      else if (k == "random_seed" && x.is_int()) seed = &x;
      else if (k == "node_name" && x.is_string()) node = &x;
      else if (k == "numa_node_id" && x.is_int()) numa = &x;
      else if (k == "extra_info" && x.is_list()) extra = &x;
      else return false;
    }
    std::string d;
    // int32 fields are sign-extended to 64 bits on the wire, as protobuf writes them.
    auto i32 = [&](uint32_t f, const Value* x) {
      if (x) wire::put_tag(d, f, wire::kVarint), wire::put_varint(d, static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(x->as_int()))));
    };
    i32(1, type);
    i32(2, id);
    if (seed) wire::put_tag(d, 3, wire::kVarint), wire::put_varint(d, static_cast<uint32_t>(seed->as_int()));
    if (node) put_str(d, 4, node->as_string());
    i32(5, numa);
    if (extra)
      for (const auto& e : extra->as_list()) {
        if (!e.is_string()) return false;
        put_str(d, 6, e.as_string());
      }
    wire::put_len(out, field, d);
    return true;
  }

  bool op_wire(OpId op, std::string& out) {
    std::string& d = op_buf_;  // (reused, as args_buf_: their capacity stays)
    d.clear();
    auto ins = g_.inputs(op);
    size_t n_in = ins.size();
    while (n_in > 0 && (g_.is_control(ins[n_in - 1]) || !g_.producer(ins[n_in - 1]))) --n_in;
    for (size_t i = 0; i < n_in; ++i) {
      if (g_.is_control(ins[i])) continue;
      PortId src = g_.producer(ins[i]);
      if (!src) return false;  // the message path says what is wrong
      put_str(d, 1, blob_view(src));
    }
    for (PortId p : g_.outputs(op))
      if (!g_.is_control(p)) put_str(d, 2, blob_view(p));
    const Value *name = nullptr, *no_name = nullptr, *device = nullptr, *engine = nullptr, *control = nullptr, *grad = nullptr,
                *debug = nullptr, *domain = nullptr, *version = nullptr;
    std::string& args = args_buf_;
    args.clear();
    for (const auto& [k, v] : g_.attrs(op)) {
      if (k == s_.name) name = &v;
      else if (k == s_.no_name) no_name = &v;
      else if (k == s_.device) device = &v;
      else if (k == s_.engine) engine = &v;
      else if (k == s_.control) control = &v;
      else if (k == s_.grad) grad = &v;
      else if (k == s_.debug) debug = &v;
      else if (k == s_.domain) domain = &v;
      else if (k == s_.version) version = &v;
      else if (k == s_.args || k == s_.unknown) return false;
      else if (std::string_view key = g_.str(k); !key.starts_with("@")) {
        if (!argument_wire(key, v, args)) return false;
      }
    }
    if (name) {
      if (!name->is_string()) return false;
      put_str(d, 3, name->as_string());
    } else if (!no_name && !g_.name_generated(op) && !g_.name_str(op).empty() && g_.name_str(op)[0] != '_') {
      put_str(d, 3, g_.name_str(op));
    }
    put_str(d, 4, g_.type_str(op));
    d += args;
    if (device && !device_wire(*device, 6, d)) return false;
    if (engine) {
      if (!engine->is_string()) return false;
      put_str(d, 7, engine->as_string());
    }
    if (control) {
      if (!control->is_list()) return false;
      for (const auto& c : control->as_list()) {
        if (!c.is_string()) return false;
        put_str(d, 8, c.as_string());
      }
    }
    if (grad) {
      if (!grad->is_bool()) return false;
      wire::put_tag(d, 9, wire::kVarint), wire::put_varint(d, grad->as_bool() ? 1 : 0);
    }
    if (debug) {
      if (!debug->is_string()) return false;
      put_str(d, 10, debug->as_string());
    }
    if (domain) {
      if (!domain->is_string()) return false;
      put_str(d, 11, domain->as_string());
    }
    if (version) {
      if (!version->is_int()) return false;
      wire::put_tag(d, 12, wire::kVarint), wire::put_varint(d, static_cast<uint64_t>(version->as_int()));
    }
    wire::put_len(out, 2, d);
    return true;
  }

  // The root net (its initializers go to `inits`), or false.
  bool net_wire(OpId gn, std::string& out, std::vector<std::pair<PortId, std::string>>& inits) {
    for (const char* k : {"@arg", "@unknown_fields", "partition_info"})
      if (attr(gn, k)) return false;
    const Value* name = attr(gn, "net_name");
    const Value* type = attr(gn, "net_type");
    const Value* workers = attr(gn, "num_workers");
    const Value* device = attr(gn, "device_option");
    const Value* args = attr(gn, "arg");
    if ((name && !name->is_string()) || (type && !type->is_string()) || (workers && !workers->is_int()) || (args && !args->is_map()))
      return false;
    out.reserve(g_.child_count(gn) * 96 + 256);  // (about what a real net's op takes: not a dozen regrowths)
    if (name) put_str(out, 1, name->as_string());
    else if (std::string nm = graph_name(gn); !nm.empty()) put_str(out, 1, nm);
    for (OpId op = g_.first_child(gn); op; op = g_.next_sibling(op))
      if (!op_wire(op, out)) return false;
    if (type) put_str(out, 3, type->as_string());
    if (workers)
      wire::put_tag(out, 4, wire::kVarint), wire::put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(workers->as_int()))));
    if (device && !device_wire(*device, 5, out)) return false;
    if (args)
      for (const auto& [k, v] : args->as_map())
        if (!argument_wire(k, v, out, 6)) return false;
    for (PortId p : g_.inputs(gn)) {
      if (g_.is_control(p) || attr(p, s_.implicit)) continue;
      std::string b = blob_of_graph_port(p);
      put_str(out, 7, b);
      if (attr(p, s_.initializer)) inits.emplace_back(p, std::move(b));
    }
    for (PortId p : g_.outputs(gn)) {
      if (g_.is_control(p)) continue;
      PortId src = g_.producer(p);
      put_str(out, 8, src ? blob(src) : blob_of_graph_port(p));
    }
    return true;
  }

  friend ExportedNet caffe2_frontend::export_net(const text::Document&, bool, bool);
  friend class InitWriter;

 public:
  // The init net's bytes: the kept init graph's ops, with the lifted fills back at their positions.
  // The fills are written straight to the wire (write_fill_wire: most of an init net's bytes);
  // the rest through protobuf, whose field order (name, ops, then the other fields) is kept.
  std::string init(OpId root, const std::vector<std::pair<PortId, std::string>>& inits) {
    const Value* ig = attr(root, "init_net");
    google::protobuf::Arena arena;
    c2::NetDef& rest = *google::protobuf::Arena::CreateMessage<c2::NetDef>(&arena);
    if (ig) {
      if (!ig->is_graph()) fail(root, "'init_net' is not a graph");
      net(ig->as_graph(), rest, nullptr);
    } else if (std::string nm = graph_name(root); !nm.empty()) {
      rest.set_name(nm + "_init");  // Caffe2's own naming of an init net
    } else if (const Value* v = attr(root, "net_name"); v && v->is_string()) {
      rest.set_name(v->as_string() + "_init");
    }
    struct Fill {
      int64_t pos;
      PortId port;
      const std::string* blob;
    };
    std::vector<Fill> placed, appended;
    size_t bytes = 0;
    for (const auto& [p, blob] : inits) {
      const Value& t = *attr(p, "initializer");
      if (!t.is_tensor()) fail(p, "'initializer' is not a tensor");
      bytes += t.as_tensor().size * 5 / 4 + blob.size() + 64;
      const Value* ix = attr(p, "@init_index");
      int64_t pos = ix && ix->is_int() && ix->as_int() >= 0 ? ix->as_int() : -1;
      (pos >= 0 ? placed : appended).push_back({pos, p, &blob});
    }
    std::stable_sort(placed.begin(), placed.end(), [](const Fill& a, const Fill& b) { return a.pos < b.pos; });
    auto write = [&](const Fill& fill, std::string& out) {
      const Value* f = attr(fill.port, "@fill");
      const Value* sf = attr(fill.port, "@fill_shape_first");
      write_fill_wire(attr(fill.port, "initializer")->as_tensor(), f && f->is_string() ? f->as_string() : "",
                      sf && sf->is_bool() && sf->as_bool(), *fill.blob, out);
    };
    google::protobuf::RepeatedPtrField<c2::OperatorDef> kept;
    kept.Swap(rest.mutable_op());
    std::string shell = serialize(rest);  // [name] [fields 3..9] [unknown fields]
    size_t head = 0;
    {
      wire::Reader r(shell);
      uint32_t f, t;
      if (!r.done() && r.tag(f, t) && f == 1 && r.skip(t)) head = static_cast<size_t>(r.p - reinterpret_cast<const uint8_t*>(shell.data()));
    }
    std::string out;
    out.reserve(shell.size() + bytes);
    out.append(shell, 0, head);
    int k = 0;
    size_t next = 0;
    for (int64_t pos = 0; next < placed.size() || k < kept.size(); ++pos) {
      if (next < placed.size() && (placed[next].pos <= pos || k == kept.size())) {
        write(placed[next++], out);
      } else {
        wire::put_len(out, 2, serialize(kept.Get(k++)));
      }
    }
    for (const auto& f : appended) write(f, out);
    out.append(shell, head, std::string::npos);
    return out;
  }
};

std::string to_text(const google::protobuf::Message& m) {
  std::string s;
  google::protobuf::TextFormat::Printer p;
  p.SetUseShortRepeatedPrimitives(false);
  p.PrintToString(m, &s);
  return s;
}

}  // namespace

ExportedNet export_net(const text::Document& doc, bool text, bool wire) {
  if (doc.kind != text::Document::Kind::Graph) throw Error("a Caffe2 NetDef holds a graph, not an " + std::string(text::kind_name(doc.kind)));
  const ir::Graph& g = doc.graph;
  Exporter e(g);
  google::protobuf::Arena arena;  // (made on first use: the wire path needs none)
  std::vector<std::pair<PortId, std::string>> inits;
  ExportedNet out;
  if (text || !wire || !e.net_wire(g.root(), out.predict, inits)) {
    inits.clear();
    out.predict.clear();
    c2::NetDef& predict = *google::protobuf::Arena::CreateMessage<c2::NetDef>(&arena);
    e.net(g.root(), predict, &inits);
    out.predict = text ? to_text(predict) : serialize(predict);
  }
  Symbol s_init = g.symbols().find("init_net");
  if (!inits.empty() || (s_init && g.attr(g.root(), s_init))) {
    out.init = e.init(g.root(), inits);
    if (text) {
      c2::NetDef& init = *google::protobuf::Arena::CreateMessage<c2::NetDef>(&arena);
      if (!init.ParseFromString(*out.init)) throw Error("the init net written could not be read back");
      out.init = to_text(init);
    }
  }
  return out;
}

}  // namespace amanda::caffe2_frontend
