// TensorFlow GraphDef -> text::Document. See docs/tensorflow.md for the mapping.
#include <algorithm>
#include <charconv>
#include <span>

#include <absl/container/flat_hash_map.h>
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
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

// Output ports made up front for a list argument; longer lists get theirs when referenced (a
// fuzzed N of 10^9 must not make 10^9 ports).
constexpr int64_t kEagerListLimit = 4096;

bool parse_index(std::string_view s, uint32_t& out) {
  if (s.empty() || s.size() > 9) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

class Importer {
 public:
  // owned: the GraphDef is the importer's to change (tensor bytes are moved out of it).
  // root_nodes: the root's NodeDefs as wire bytes (gd_ then has no nodes), read by the fast path;
  // arena: where messages parsed from such bytes go.
  Importer(const tf::GraphDef& g, const ImportOptions& o, bool owned = false, google::protobuf::Arena* arena = nullptr,
           const std::vector<std::string_view>* root_nodes = nullptr)
      : gd_(g), opt_(o), g_(doc_.graph), owned_(owned), arena_(arena), root_nodes_(root_nodes) {
    s_ref_ = g_.sym("@ref");
  }

  text::Document run() {
    OpId root = g_.root();
    g_.set_graph_namespace(root, g_.sym(kTensorflowNamespace));
    if (gd_.has_versions()) g_.set_attr(root, g_.sym("versions"), versions(gd_.versions()));
    if (gd_.version()) g_.set_attr(root, g_.sym("version"), Value(static_cast<int64_t>(gd_.version())));
    keep_unknown_fields(gd_, root);
    if (gd_.has_library()) {
      for (const auto& f : gd_.library().function()) sigs_.add_function(f.signature());
      library(gd_.library());
    }
    absl::flat_hash_map<std::string, OpId> names;
    Nodes nodes;
    if (root_nodes_) {
      nodes.refs.reserve(root_nodes_->size());
      for (std::string_view b : *root_nodes_)
        if (!nodes.add_wire(b)) nodes.add_message(parse_node(b), true);
      // The IR's arrays sized once (growing them copied them again and again): a port per input
      // and about one output per node, an edge per input.
      size_t n = nodes.refs.size(), in = nodes.inputs.size();
      g_.reserve(n, in + n + n / 4, in);
    } else {
      for (const auto& n : gd_.node()) nodes.add_message(n, owned_);
    }
    body(root, nodes, nullptr, "", names);
    if (uses_tfjs_)
      g_.set_attr(root, g_.sym("imports"), Value(Value::Map{{std::string(kTfjsPrefix), Value(kTfjsNamespace)}}));
    return std::move(doc_);
  }

 private:
  const tf::GraphDef& gd_;
  const ImportOptions& opt_;
  text::Document doc_{text::Document::Kind::Graph};
  ir::Graph& g_;
  bool owned_ = false;
  google::protobuf::Arena* arena_ = nullptr;
  const std::vector<std::string_view>* root_nodes_ = nullptr;
  Signatures sigs_;
  bool uses_tfjs_ = false;
  Symbol s_ref_;

  [[noreturn]] void fail(const std::string& where, const std::string& msg) const {
    throw Error(opt_.file_name + ": error: " + where + ": " + msg);
  }

  static Value versions(const tf::VersionDef& v) {
    Value::Map m;
    m.push_back({"producer", Value(static_cast<int64_t>(v.producer()))});
    if (v.min_consumer()) m.push_back({"min_consumer", Value(static_cast<int64_t>(v.min_consumer()))});
    if (v.bad_consumers_size()) {
      Value::List l;
      for (int b : v.bad_consumers()) l.push_back(Value(static_cast<int64_t>(b)));
      m.push_back({"bad_consumers", Value(std::move(l))});
    }
    return Value(std::move(m));
  }

  // Fields this version of the schema does not know (a newer TensorFlow's), kept as bytes.
  template <class M>
  void keep_unknown_fields(const M& m, OpId op) {
    const auto& u = m.GetReflection()->GetUnknownFields(m);
    if (u.empty()) return;
    std::string bytes;
    u.SerializeToString(&bytes);
    g_.set_attr(op, g_.sym("@unknown_fields"), Value(base64_encode(bytes)));
  }

  void library(const tf::FunctionDefLibrary& lib) {
    OpId root = g_.root();
    Value::Map m;
    Value::List fns;
    for (const auto& f : lib.function()) fns.push_back(Value::graph(function(f)));
    if (!fns.empty()) m.push_back({"function", Value(std::move(fns))});
    if (lib.gradient_size()) {
      Value::List l;
      for (const auto& gr : lib.gradient())
        l.push_back(Value(Value::Map{{"function_name", Value(gr.function_name())}, {"gradient_func", Value(gr.gradient_func())}}));
      m.push_back({"gradient", Value(std::move(l))});
    }
    if (lib.registered_gradients_size()) {
      Value::List l;
      for (const auto& gr : lib.registered_gradients())
        l.push_back(Value(Value::Map{{"gradient_func", Value(gr.gradient_func())}, {"registered_op_type", Value(gr.registered_op_type())}}));
      m.push_back({"registered_gradients", Value(std::move(l))});
    }
    g_.set_attr(root, g_.sym("library"), Value(std::move(m)));
  }

  // A FunctionDef: an attribute graph of the root whose ports are the signature's arguments.
  OpId function(const tf::FunctionDef& f) {
    const std::string& name = f.signature().name();
    std::string where = "function '" + name + "'";
    OpId fg = g_.create_attr_graph(g_.root(), g_.sym(name));
    absl::flat_hash_map<std::string, PortId> args;
    for (const auto& a : f.signature().input_arg()) {
      if (args.contains(a.name())) fail(where, "input argument '" + a.name() + "' given twice");
      args[a.name()] = g_.add_input(fg, g_.sym(a.name()));
    }
    for (const auto& a : f.signature().output_arg()) {
      if (g_.find_output(fg, g_.sym(a.name()))) fail(where, "output argument '" + a.name() + "' given twice");
      g_.add_output(fg, g_.sym(a.name()));
    }
    // Everything but the body and its outputs, whole: signature, attr, arg_attr, resource ids.
    tf::FunctionDef shell = f;
    shell.clear_node_def();
    shell.clear_ret();
    shell.clear_control_ret();
    g_.set_attr(fg, g_.sym("@function_def"), Value(base64_encode(serialize(shell))));
    if (f.control_ret_size()) {
      std::vector<std::pair<std::string, std::string>> cr(f.control_ret().begin(), f.control_ret().end());
      std::sort(cr.begin(), cr.end());
      Value::Map m;
      for (auto& [k, v] : cr) m.push_back({k, Value(v)});
      g_.set_attr(fg, g_.sym("control_ret"), Value(std::move(m)));
    }
    absl::flat_hash_map<std::string, OpId> names;
    Nodes nodes;
    for (const auto& n : f.node_def()) nodes.add_message(n, owned_);
    body(fg, nodes, &args, where + ", ", names);
    names_ = &names;
    // ret: output argument -> the tensor that feeds it.
    std::vector<std::pair<std::string, std::string>> ret(f.ret().begin(), f.ret().end());
    std::sort(ret.begin(), ret.end());
    for (const auto& entry : ret) {
      const std::string& out = entry.first;  // (a lambda may not capture a structured binding before C++20's clang 16)
      const std::string& ref = entry.second;
      PortId dst = g_.find_output(fg, g_.sym(out));
      if (!dst) fail(where, "ret names '" + out + "', which is not an output argument");
      PortId src = resolve(fg, ref, true, &args, [&] { return where + "ret '" + out + "'"; });
      g_.connect(src, dst);
    }
    names_ = nullptr;
    return fg;
  }

  // A node to read: its fields as views of the wire bytes (the root's, read by the fast path) or
  // of a parsed NodeDef (a function body's, or a node the fast path left to protobuf).
  struct AttrRef {
    std::string_view key;
    std::string_view bytes;              // the AttrValue's wire bytes, when msg is null
    const tf::AttrValue* msg = nullptr;  // the parsed AttrValue
    bool movable = false;                // msg's tensor bytes may be moved out
    int64_t ival = -1, ntypes = -1;      // what list_length reads (set by attrs())
  };
  struct NodeRef {
    std::string_view name, op, device;
    uint32_t in_begin = 0, in_end = 0, at_begin = 0, at_end = 0;
    const tf::NodeDef* msg = nullptr;  // its debug info and unknown fields (null: read from bytes, it has neither)
  };
  struct Nodes {
    std::vector<NodeRef> refs;
    std::vector<std::string_view> inputs;
    std::vector<AttrRef> attrs;

    // Attributes in key order (the map's order in the file is not kept by protobuf).
    void sort_attrs(uint32_t begin) {
      std::sort(attrs.begin() + begin, attrs.end(), [](const AttrRef& a, const AttrRef& b) { return a.key < b.key; });
    }

    void add_message(const tf::NodeDef& n, bool movable) {
      NodeRef r{n.name(), n.op(), n.device()};
      r.msg = &n;
      r.in_begin = static_cast<uint32_t>(inputs.size());
      for (const auto& in : n.input()) inputs.push_back(in);
      r.in_end = static_cast<uint32_t>(inputs.size());
      r.at_begin = static_cast<uint32_t>(attrs.size());
      for (const auto& kv : n.attr()) attrs.push_back({kv.first, {}, &kv.second, movable});
      sort_attrs(r.at_begin);
      r.at_end = static_cast<uint32_t>(attrs.size());
      refs.push_back(r);
    }

    // A NodeDef of name, op, input, device and attr fields in field order, ASCII strings, map
    // entries of a key and a value, no key twice; false (and nothing added) for anything else.
    bool add_wire(std::string_view b) {
      NodeRef n;
      n.in_begin = static_cast<uint32_t>(inputs.size());
      n.at_begin = static_cast<uint32_t>(attrs.size());
      auto undo = [&] {
        inputs.resize(n.in_begin);
        attrs.resize(n.at_begin);
        return false;
      };
      wire::Reader r(b);
      uint32_t last = 0, f, t;
      while (!r.done()) {
        if (!r.tag(f, t) || t != wire::kLen || f > 5 || f < last || (f == last && f != 3 && f != 5)) return undo();
        last = f;
        std::string_view v;
        if (!r.bytes(v)) return undo();
        switch (f) {
          case 1: n.name = v; break;
          case 2: n.op = v; break;
          case 3: inputs.push_back(v); break;
          case 4: n.device = v; break;
          default: {
            wire::Reader e(v);
            std::string_view key, val;
            uint32_t f1, t1, f2, t2;
            if (!e.tag(f1, t1) || f1 != 1 || t1 != wire::kLen || !e.bytes(key) || !e.tag(f2, t2) || f2 != 2 ||
                t2 != wire::kLen || !e.bytes(val) || !e.done() || !wire::ascii(key))
              return undo();
            attrs.push_back({key, val});
            continue;
          }
        }
        if (!wire::ascii(v)) return undo();
      }
      n.in_end = static_cast<uint32_t>(inputs.size());
      n.at_end = static_cast<uint32_t>(attrs.size());
      sort_attrs(n.at_begin);
      for (uint32_t i = n.at_begin + 1; i < n.at_end; ++i)
        if (attrs[i].key == attrs[i - 1].key) return undo();
      refs.push_back(n);
      return true;
    }
  };

  // Parses bytes the fast path left to protobuf, as part of the GraphDef (`depth`: how deep in it
  // the message sits, for protobuf's recursion limit).
  template <class M>
  const M& parse_part(std::string_view b, int depth) {
    M* m = google::protobuf::Arena::CreateMessage<M>(arena_);
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(b.data()), static_cast<int>(b.size()));
    in.SetRecursionLimit(100 - depth);
    if (!m->MergePartialFromCodedStream(&in) || !in.ConsumedEntireMessage())
      throw ParseError(SourceLoc{opt_.file_name, 0, 0}, "not a TensorFlow GraphDef (a truncated or corrupt protobuf)");
    return *m;
  }
  const tf::NodeDef& parse_node(std::string_view b) { return parse_part<tf::NodeDef>(b, 1); }

  static int64_t list_length(const ArgSpec& a, std::span<const AttrRef> attrs) {
    const std::string& key = !a.number_attr.empty() ? a.number_attr : a.type_list_attr;
    if (key.empty()) return -1;
    for (const auto& r : attrs)
      if (r.key == key) {
        int64_t n = !a.number_attr.empty() ? r.ival : r.ntypes;
        return n >= 0 ? n : -1;
      }
    return -1;
  }

  struct Pending {
    OpId op;
    const NodeRef* node;
    const OpSignature* sig;
  };
  absl::flat_hash_map<std::string, OpId>* names_ = nullptr;

  void body(OpId scope, Nodes& nodes, const absl::flat_hash_map<std::string, PortId>* args, const std::string& where_prefix,
            absl::flat_hash_map<std::string, OpId>& names) {
    names.reserve(nodes.refs.size());
    names_ = &names;
    std::vector<Pending> pending;
    pending.reserve(nodes.refs.size());
    int index = 0;
    // (Message prefixes are built in one reused buffer: a string per node and attribute was a tenth
    // of the import's time.)
    std::string where, type;
    for (const NodeRef& n : nodes.refs) {
      where.assign(where_prefix);
      if (n.name.empty()) where += "node #" + std::to_string(index);
      else where.append("node '").append(n.name).append("'");
      ++index;
      if (n.name.empty()) fail(where, "a node without a name");
      if (names.contains(absl::string_view(n.name.data(), n.name.size()))) fail(where, "a second node of that name");
      if (n.op.empty()) fail(where, "a node without an op");
      const OpSignature* sig = sigs_.find(n.op);
      Symbol type_sym;
      if (sig && sig->tfjs) {
        type.assign(kTfjsPrefix).append("::").append(n.op);
        type_sym = g_.sym(type);
        uses_tfjs_ = true;
      } else {
        type_sym = g_.sym(n.op);
      }
      OpId op = g_.create_op(scope, type_sym, g_.sym(n.name), false);
      names.emplace(std::string(n.name), op);
      if (n.op.find("::") != std::string_view::npos) g_.set_attr(op, g_.sym("@op"), Value(std::string(n.op)));
      std::span<AttrRef> attrs_of(nodes.attrs.data() + n.at_begin, n.at_end - n.at_begin);
      attrs(op, attrs_of, sig, where);
      if (!n.device.empty()) g_.set_attr(op, g_.sym("@device"), Value(std::string(n.device)));
      if (n.msg && n.msg->has_experimental_debug_info()) {
        Value::Map m;
        Value::List a, b;
        for (const auto& s : n.msg->experimental_debug_info().original_node_names()) a.push_back(Value(s));
        for (const auto& s : n.msg->experimental_debug_info().original_func_names()) b.push_back(Value(s));
        m.push_back({"original_node_names", Value(std::move(a))});
        m.push_back({"original_func_names", Value(std::move(b))});
        g_.set_attr(op, g_.sym("@debug_info"), Value(std::move(m)));
      }
      if (n.msg) keep_unknown_fields(*n.msg, op);
      if (sig) {
        for (const auto& a : sig->outputs) {
          if (!a.list) {
            g_.add_output(op, g_.sym(a.name));
            continue;
          }
          int64_t len = list_length(a, attrs_of);
          if (len < 0 || len > kEagerListLimit) break;  // the rest: when referenced
          for (int64_t i = 0; i < len; ++i) g_.add_output(op, g_.sym(a.name + "." + std::to_string(i)));
        }
      }
      pending.push_back({op, &n, sig});
    }
    for (const auto& p : pending) {
      where.assign(where_prefix).append("node '").append(p.node->name).append("'");
      std::span<const std::string_view> ins(nodes.inputs.data() + p.node->in_begin, p.node->in_end - p.node->in_begin);
      std::span<const AttrRef> attrs_of(nodes.attrs.data() + p.node->at_begin, p.node->at_end - p.node->at_begin);
      inputs(scope, p.op, ins, attrs_of, p.sig, args, where);
    }
  }

  // One attribute's IR value, kind and tensor metadata, set on the op.
  void put_attr(OpId op, std::string_view key, AttrKind actual, AttrOut&& out, const OpSignature* sig, Value::Map& kinds) {
    if (implied_kind(out.value, Signatures::attr_hint(sig, key)) != actual)
      kinds.push_back({std::string(key), Value(kind_name(actual))});
    // TensorFlow's internal attributes ('_class', '_grappler_...') are not part of any op's
    // registration and TensorFlow does not check them: annotations here ('@_class').
    if (key[0] == '_') {
      std::string k = "@";
      k.append(key);
      g_.set_attr(op, g_.sym(k), std::move(out.value));
    } else {
      g_.set_attr(op, g_.sym(key), std::move(out.value));
    }
    if (!out.tensor_meta.is_null()) {
      std::string k = "@tensor.";
      k.append(key);
      g_.set_attr(op, g_.sym(k), std::move(out.tensor_meta));
    }
  }

  // Node attributes, in key order.
  void attrs(OpId op, std::span<AttrRef> items, const OpSignature* sig, const std::string& where) {
    if (items.empty()) return;
    Value::Map kinds;
    std::string awhere;
    for (AttrRef& r : items) {
      std::string_view key = r.key;
      if (key.empty() || key[0] == '@') {
        awhere.assign(where).append(", attribute '").append(key).append("'");
        fail(awhere, "an attribute name Amanda cannot hold");
      }
      if (!r.msg) {
        // Straight from the bytes when they are a plain field of a common kind.
        WireAttr w;
        if (attr_from_wire(r.bytes, w)) {
          r.ival = w.ival;
          r.ntypes = w.ntypes;
          put_attr(op, key, w.kind, std::move(w.out), sig, kinds);
          continue;
        }
        r.msg = &parse_part<tf::AttrValue>(r.bytes, 3);
        r.movable = true;
      }
      const tf::AttrValue& v = *r.msg;
      if (v.value_case() == tf::AttrValue::kI) r.ival = v.i();
      if (v.value_case() == tf::AttrValue::kList) r.ntypes = v.list().type_size();
      awhere.assign(where).append(", attribute '").append(key).append("'");
      AttrKind actual = kind_of(v);
      // A tensor's bytes move to the IR (no copy); the rest of the proto is compared below.
      tf::AttrValue* mv = r.movable ? const_cast<tf::AttrValue*>(r.msg) : nullptr;
      std::string content;
      bool moved = false;
      if (actual == AttrKind::Tensor && !v.tensor().tensor_content().empty() && mv) {
        content = std::move(*mv->mutable_tensor()->mutable_tensor_content());
        mv->mutable_tensor()->clear_tensor_content();
        moved = true;
      }
      std::optional<AttrOut> out;
      try {
        out = attr_from_proto(v, awhere, moved ? &content : nullptr);
      } catch (const ParseError&) {
        throw;
      } catch (const Error& e) {
        throw Error(opt_.file_name + ": error: " + e.what());  // (values.cpp names the node and attribute, not the file)
      }
      bool exact = out.has_value();
      // Scalars convert exactly by construction; the other kinds are rebuilt and compared.
      bool scalar = actual == AttrKind::S || actual == AttrKind::I || actual == AttrKind::F || actual == AttrKind::B ||
                    actual == AttrKind::Type;
      // So do lists of one kind of ints, strings or bools (kind_of saw one kind; the values are
      // copied as they are): no serialising twice to compare.
      bool plain_list = (actual == AttrKind::ListI || actual == AttrKind::ListS || actual == AttrKind::ListB) &&
                        v.list().GetReflection()->GetUnknownFields(v.list()).field_count() == 0;
      if (out && (!(scalar || plain_list) || v.GetReflection()->GetUnknownFields(v).field_count())) {
        tf::AttrValue back;
        exact = attr_to_proto(out->value, actual, out->tensor_meta.is_null() ? nullptr : &out->tensor_meta, back, moved) &&
                serialize(back) == serialize(v);
      }
      if (!exact) {
        // No exact readable form (a named dim, a resource tensor, ...): the bytes, whole.
        if (moved)
          *mv->mutable_tensor()->mutable_tensor_content() =
              out && out->value.is_tensor() ? std::string(out->value.as_tensor().bytes()) : content;
        g_.set_attr(op, g_.sym("@attr." + std::string(key)), Value(base64_encode(serialize(v))));
        continue;
      }
      put_attr(op, key, actual, std::move(*out), sig, kinds);
    }
    if (!kinds.empty()) g_.set_attr(op, g_.sym("@attr_kinds"), Value(std::move(kinds)));
  }

  // Names the op's data inputs by its signature's arguments and connects every input.
  void inputs(OpId scope, OpId op, std::span<const std::string_view> ins, std::span<const AttrRef> attrs_of,
              const OpSignature* sig, const absl::flat_hash_map<std::string, PortId>* args, const std::string& where) {
    bool function = args != nullptr;
    int data = 0;
    bool seen_control = false;
    for (std::string_view in : ins) {
      if (!in.empty() && in[0] == '^') {
        seen_control = true;
        continue;
      }
      if (seen_control) fail(where, "data input '" + std::string(in) + "' after a control input");
      ++data;
    }
    std::vector<std::string> port_names = input_names(attrs_of, sig, data);
    int k = 0;
    for (std::string_view in : ins) {
      if (!in.empty() && in[0] == '^') {
        std::string_view name = in.substr(1);
        auto it = names_->find(absl::string_view(name.data(), name.size()));
        if (it == names_->end()) fail(where, "control input '" + std::string(in) + "' names no node");
        g_.connect(g_.control_out(it->second), g_.control_in(op));
        continue;
      }
      PortId dst = g_.add_input(op, g_.sym(port_names[k++]));
      PortId src = resolve(scope, in, function, args, [&] { return where + ", input '" + std::string(in) + "'"; });
      g_.connect(src, dst);
      if (!is_canonical_ref(in, src, scope, function)) g_.set_attr(dst, s_ref_, Value(std::string(in)));
    }
  }

  std::vector<std::string> input_names(std::span<const AttrRef> attrs_of, const OpSignature* sig, int count) {
    std::vector<std::string> out;
    out.reserve(count);
    if (sig) {
      int singles_left = 0;
      for (const auto& a : sig->inputs) singles_left += !a.list;
      for (const auto& a : sig->inputs) {
        if (static_cast<int>(out.size()) >= count) break;
        if (!a.list) {
          out.push_back(a.name);
          --singles_left;
          continue;
        }
        int64_t len = list_length(a, attrs_of);
        int64_t room = count - static_cast<int64_t>(out.size()) - singles_left;
        if (len < 0 || len > room) len = std::max<int64_t>(room, 0);
        for (int64_t i = 0; i < len; ++i) out.push_back(a.name + "." + std::to_string(i));
      }
    }
    while (static_cast<int>(out.size()) < count) out.push_back("input." + std::to_string(out.size()));
    return out;
  }

  // Whether `in` is the spelling the exporter gives a reference to `src` (ref_of below), without
  // building that string for the common GraphDef case.
  bool is_canonical_ref(std::string_view in, PortId src, OpId scope, bool function) {
    OpId p = g_.port_op(src);
    if (!function && p != scope) {
      std::string_view name = g_.name_str(p);
      if (!in.starts_with(name)) return false;
      uint32_t k = g_.port_index(src);
      std::string_view rest = in.substr(name.size());
      if (k == 0) return rest.empty();
      char buf[16];
      auto r = std::to_chars(buf, buf + sizeof buf, k);
      return rest.size() == 1 + static_cast<size_t>(r.ptr - buf) && rest[0] == ':' && rest.substr(1) == std::string_view(buf, r.ptr - buf);
    }
    return ref_of(src, scope, function) == in;
  }

  // The spelling the exporter gives a reference to `src` (export.cpp's ref_of does the same).
  std::string ref_of(PortId src, OpId scope, bool function) {
    OpId p = g_.port_op(src);
    if (p == scope) return std::string(g_.port_name_str(src));
    std::string name(g_.name_str(p));
    if (!function) {
      uint32_t k = g_.port_index(src);
      return k == 0 ? name : name + ":" + std::to_string(k);
    }
    std::string_view port = g_.port_name_str(src);
    size_t dot = port.rfind('.');
    uint32_t idx = 0;
    if (dot != std::string_view::npos && parse_index(port.substr(dot + 1), idx))
      return name + ":" + std::string(port.substr(0, dot)) + ":" + std::to_string(idx);
    return name + ":" + std::string(port) + ":0";
  }

  // "node" / "node:k" (GraphDef), "arg" / "node:out:k" (function body) -> the output port.
  // `where_fn()` gives the message prefix, built only for a message.
  template <class WhereFn>
  PortId resolve(OpId scope, std::string_view ref, bool function, const absl::flat_hash_map<std::string, PortId>* args,
                 const WhereFn& where_fn) {
    if (ref.empty()) fail(where_fn(), "an empty input");
    size_t c1 = ref.find(':');
    std::string_view node = ref.substr(0, c1);
    if (function && c1 == std::string_view::npos) {
      auto a = args->find(std::string(node));
      if (a == args->end()) fail(where_fn(), "names no input argument of the function");
      return a->second;
    }
    auto it = names_->find(absl::string_view(node.data(), node.size()));
    if (it == names_->end()) fail(where_fn(), "names no node");
    OpId op = it->second;
    if (!function) {
      uint32_t k = 0;
      if (c1 != std::string_view::npos && !parse_index(ref.substr(c1 + 1), k)) fail(where_fn(), "a bad output index");
      return output_at(op, k, where_fn);
    }
    std::string_view rest = ref.substr(c1 + 1);
    size_t c2 = rest.find(':');
    std::string_view arg = rest.substr(0, c2);
    uint32_t k = 0;
    if (c2 != std::string_view::npos && !parse_index(rest.substr(c2 + 1), k)) fail(where_fn(), "a bad output index");
    if (arg.empty()) fail(where_fn(), "an empty output name");
    std::string listed = std::string(arg) + "." + std::to_string(k);
    if (PortId p = g_.find_output(op, g_.sym(listed))) return p;
    if (k == 0)
      if (PortId p = g_.find_output(op, g_.sym(arg))) return p;
    const OpSignature* sig = sigs_.find(g_.str(g_.type(op)).substr(g_.str(g_.type(op)).starts_with("tfjs::") ? 6 : 0));
    bool declared = false;
    if (sig)
      for (const auto& a : sig->outputs) declared |= a.name == arg && a.list;
    if (sig && !declared) fail(where_fn(), "names no output of op " + std::string(g_.type_str(op)));
    if (k > kEagerListLimit * 16) fail(where_fn(), "an output index too large");
    return g_.add_output(op, g_.sym(listed));  // a list output longer than its attribute said, or an unknown op's
  }

  template <class WhereFn>
  PortId output_at(OpId op, uint32_t k, const WhereFn& where_fn) {
    auto outs = g_.outputs(op);
    if (k < outs.size()) return outs[k];
    if (k > kEagerListLimit * 16) fail(where_fn(), "an output index too large");
    PortId p;
    for (size_t i = outs.size(); i <= k; ++i) p = g_.add_output(op, g_.sym("output." + std::to_string(i)));
    return p;
  }
};

text::Document import_graph_message(const tf::GraphDef& g, const ImportOptions& options) { return Importer(g, options).run(); }

// The GraphDef's node fields as spans of `bytes`, every other field merged into `shell` (merging
// fields in file order is what parsing the whole message does); false when the bytes are not a
// well-formed sequence of fields (protobuf then reads them, and gives the error).
bool split_graphdef(std::string_view bytes, tf::GraphDef& shell, std::vector<std::string_view>& nodes) {
  wire::Reader r(bytes);
  while (!r.done()) {
    const uint8_t* begin = r.p;
    uint32_t f, t;
    if (!r.tag(f, t)) return false;
    if (f == 1 && t == wire::kLen) {
      std::string_view n;
      if (!r.bytes(n)) return false;
      nodes.push_back(n);
      continue;
    }
    if (!r.skip(t)) return false;
    google::protobuf::io::CodedInputStream in(begin, static_cast<int>(r.p - begin));
    if (!shell.MergePartialFromCodedStream(&in) || !in.ConsumedEntireMessage()) return false;
  }
  return true;
}

}  // namespace

text::Document import_graph(const tf::GraphDef& g, const ImportOptions& options) { return import_graph_message(g, options); }

text::Document import_graph_bytes(std::string_view bytes, const ImportOptions& options) {
  // Parsed messages on an arena: thousands of small messages allocated in blocks and freed at
  // once (the heap's malloc/free of every NodeDef and AttrValue was a fifth of the import's time).
  google::protobuf::ArenaOptions ao;
  ao.start_block_size = 16 * 1024;
  ao.max_block_size = 64 * 1024;  // (below malloc's mmap threshold: blocks of a MB were mapped and faulted in every time)
  google::protobuf::Arena arena(ao);
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    throw ParseError(SourceLoc{options.file_name, 0, 0}, "not a TensorFlow GraphDef (a truncated or corrupt protobuf)");
  // The fast path: the root's nodes read straight from the bytes (docs/tensorflow.md, "How the
  // bytes are read and written"); the library, versions and unknown fields by protobuf.
  {
    tf::GraphDef& shell = *google::protobuf::Arena::CreateMessage<tf::GraphDef>(&arena);
    std::vector<std::string_view> nodes;
    if (split_graphdef(bytes, shell, nodes)) return Importer(shell, options, /*owned=*/true, &arena, &nodes).run();
  }
  tf::GraphDef& g = *google::protobuf::Arena::CreateMessage<tf::GraphDef>(&arena);
  if (!g.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw ParseError(SourceLoc{options.file_name, 0, 0}, "not a TensorFlow GraphDef (a truncated or corrupt protobuf)");
  return Importer(g, options, /*owned=*/true, &arena).run();
}

text::Document import_graph_text(std::string_view text, const ImportOptions& options) {
  tf::GraphDef g;
  struct Collector : google::protobuf::io::ErrorCollector {
    std::string first;
    int line = 0, column = 0;
    void AddError(int l, int c, const std::string& m) override {
      if (first.empty()) {
        first = m;
        line = l;
        column = c;
      }
    }
  } errors;
  google::protobuf::TextFormat::Parser p;
  p.RecordErrorsTo(&errors);
  // As the binary parser's default: a message nested ~2,200 deep overflowed the stack (the text
  // parser has no limit of its own); TensorFlow's messages nest a few levels.
  p.SetRecursionLimit(100);
  if (text.size() > static_cast<size_t>(INT32_MAX) || !p.ParseFromString(std::string(text), &g))
    throw ParseError(SourceLoc{options.file_name, static_cast<uint32_t>(errors.line + 1), static_cast<uint32_t>(errors.column + 1)},
                     "not a TensorFlow GraphDef in text form: " + (errors.first.empty() ? std::string("too large") : errors.first));
  // proto3 strings (names, attribute keys, ...) are UTF-8: the binary reader refuses any other
  // bytes, but the text parser only logs them, and such a string would not survive a write and a
  // read. The binary parse of the parsed message applies the same check (found by tensorflow_fuzz).
  {
    tf::GraphDef check;
    if (!check.ParseFromString(detail::serialize(g)))
      throw ParseError(SourceLoc{options.file_name, 0, 0},
                       "not a TensorFlow GraphDef: a string (a name, an attribute key, ...) is not valid UTF-8");
  }
  return import_graph(g, options);
}

}  // namespace amanda::tf_frontend
