// ONNX ModelProto -> text::Document. See docs/onnx.md for the mapping.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <google/protobuf/arena.h>
#include <onnx/defs/schema.h>

#include "schema_index.h"
#include "amanda/support/gate.h"
#include "amanda/frameworks/onnx/model.h"
#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/support/progress.h"
#include "proto_util.h"
#include "wire.h"

namespace amanda::onnx_frontend {

using namespace detail;
using ir::OpId;
using ir::PortId;
using ir::Value;

namespace {

struct Scope {
  OpId node;             // the graph node (root or attribute graph)
  Scope* parent = nullptr;
  OpId owner;            // the op holding this attribute graph
  absl::flat_hash_map<std::string, PortId> values;
};

class Importer {
 public:
  Importer(const onnx::ModelProto& m, const ImportOptions& o) : m_(m), opt_(o), doc_(text::Document::Kind::Graph), g_(doc_.graph) {
    // Keys set on most ports: interned once, not hashed again per port.
    s_value_ = g_.sym("@value");
    s_graph_input_ = g_.sym("graph_input");
    s_initializer_ = g_.sym("initializer");
    s_at_initializer_ = g_.sym("@initializer");
    ctx_.base_dir = o.base_dir;
    ctx_.file_name = o.file_name;
    ctx_.files = std::make_shared<ModelFiles>(o.base_dir, o.file_name + ": error: external data location");
  }
  // The tensors parse_model_borrowing left without their raw_data borrow it (see wire.h) from `input`.
  void borrow_from(std::shared_ptr<const Buffer> input, bool is_file, const RawSpans* raw) {
    ctx_.input = std::move(input);
    ctx_.input_is_file = is_file;
    raw_ = raw;
  }

  text::Document run() {
    OpId root = g_.root();
    int default_version = -1;
    Value::List opsets;
    Value::Map imports;
    for (const auto& os : m_.opset_import()) {
      Value::Map e;
      if (os.has_domain()) e.push_back({"domain", Value(os.domain())});
      if (os.has_version()) e.push_back({"version", Value(static_cast<int64_t>(os.version()))});
      opsets.push_back(Value(std::move(e)));
      std::string d = os.domain() == "ai.onnx" ? "" : os.domain();
      int version = opset_version(os.version(), "opset_import of domain '" + os.domain() + "'");
      if (!versions_.contains(d)) versions_[d] = version;
      if (d.empty()) {
        if (default_version < 0) default_version = version;
      } else if (!imports_seen_.contains(d)) {
        imports_seen_[d] = 1;
        imports.push_back({d, Value(onnx_namespace(d, version))});
      }
    }
    if (default_version >= 0) g_.set_graph_namespace(root, g_.sym(onnx_namespace("", default_version)));
    auto set = [&](std::string_view k, Value v) { g_.set_attr(root, g_.sym(k), std::move(v)); };
    if (m_.has_ir_version()) set("ir_version", Value(static_cast<int64_t>(m_.ir_version())));
    set("opset_import", Value(std::move(opsets)));
    if (!imports.empty()) set("imports", Value(std::move(imports)));
    if (m_.has_producer_name()) set("producer_name", Value(m_.producer_name()));
    if (m_.has_producer_version()) set("producer_version", Value(m_.producer_version()));
    if (m_.has_domain()) set("domain", Value(m_.domain()));
    if (m_.has_model_version()) set("model_version", Value(static_cast<int64_t>(m_.model_version())));
    if (m_.has_doc_string()) set("doc_string", Value(m_.doc_string()));
    if (m_.metadata_props_size()) {
      Value::List l;
      for (const auto& p : m_.metadata_props()) l.push_back(Value(Value::Map{{"key", Value(p.key())}, {"value", Value(p.value())}}));
      set("metadata_props", Value(std::move(l)));
    }
    if (m_.functions_size()) {
      Value::List l;
      for (const auto& f : m_.functions()) l.push_back(import_function(f));
      set("functions", Value(std::move(l)));
    }
    // Rare parts kept whole (base64 of their protos).
    if (m_.training_info_size()) {
      Value::List l;
      for (const auto& t : m_.training_info()) l.push_back(Value(base64_encode(t.SerializeAsString())));
      set("@training_info", Value(std::move(l)));
    }
    if (m_.has_graph()) {
      Scope s;
      s.node = root;
      import_graph(m_.graph(), s, true);
    } else {
      set("@no_graph", Value(true));
    }
    // Ports get their interned types from the value infos just written as attributes.
    ir::derive_port_types(g_);
    // Where the readable attributes were not enough (a sequence's element shape, say), the value
    // info kept whole has the full type.
    if (Symbol vik = g_.symbols().find("@value_info"); vik != SymbolTable::kNone)
      for (uint32_t i = 1; i < g_.port_id_bound(); ++i)
        if (const Value* v = g_.valid(PortId(i)) ? g_.attr(PortId(i), vik) : nullptr; v && v->is_string())
          if (auto bytes = base64_decode(v->as_string())) {
            onnx::ValueInfoProto vi;
            if (vi.ParseFromString(*bytes) && vi.has_type()) g_.set_port_type(PortId(i), type_from_proto(g_, vi.type()));
          }
    return std::move(doc_);
  }

 private:
  const onnx::ModelProto& m_;
  const ImportOptions& opt_;
  TensorContext ctx_;
  text::Document doc_;
  ir::Graph& g_;
  absl::flat_hash_map<std::string, int> versions_, imports_seen_;
  absl::flat_hash_map<uint64_t, absl::flat_hash_set<Symbol>> graph_port_names_;  // (graph node, side) -> names
  const RawSpans* raw_ = nullptr;
  Symbol s_value_, s_graph_input_, s_initializer_, s_at_initializer_;

  // A model-local function: its header readable, its nodes an attribute graph of the root (not
  // validated: its attributes may refer to the caller's). Kept whole (base64) when the readable
  // form does not give the same proto back.
  Value import_function(const onnx::FunctionProto& f) {
    auto strings = [](const auto& r) {
      Value::List l;
      for (const auto& x : r) l.push_back(Value(x));
      return Value(std::move(l));
    };
    Value::Map e;
    if (f.has_name()) e.push_back({"name", Value(f.name())});
    if (f.has_domain()) e.push_back({"domain", Value(f.domain())});
    if (f.has_doc_string()) e.push_back({"doc_string", Value(f.doc_string())});
    e.push_back({"input", strings(f.input())});
    e.push_back({"output", strings(f.output())});
    e.push_back({"attribute", strings(f.attribute())});
    Value::List opsets;
    absl::flat_hash_map<std::string, int> versions;
    for (const auto& os : f.opset_import()) {
      Value::Map o;
      if (os.has_domain()) o.push_back({"domain", Value(os.domain())});
      if (os.has_version()) o.push_back({"version", Value(static_cast<int64_t>(os.version()))});
      opsets.push_back(Value(std::move(o)));
      versions.try_emplace(os.domain() == "ai.onnx" ? "" : os.domain(),
                           opset_version(os.version(), "function " + f.name() + ": opset_import of domain '" + os.domain() + "'"));
    }
    e.push_back({"opset_import", Value(std::move(opsets))});
    onnx::GraphProto gp;
    gp.set_name(f.name());
    for (const auto& i : f.input()) gp.add_input()->set_name(i);
    for (const auto& o : f.output()) gp.add_output()->set_name(o);
    *gp.mutable_node() = f.node();
    OpId body = g_.create_attr_graph(g_.root(), g_.sym(f.name()));
    Scope s;
    s.node = body;
    std::swap(versions, versions_);
    import_graph(gp, s, false);
    std::swap(versions, versions_);
    e.push_back({"body", Value::graph(body)});
    Value entry(std::move(e));
    onnx::FunctionProto back;
    try {
      export_function(g_, entry, back);
    } catch (const Error&) {
      back.Clear();
    }
    if (back.SerializeAsString() == f.SerializeAsString()) return entry;
    g_.erase_op(body);
    return Value(base64_encode(f.SerializeAsString()));
  }

  // ---- refusals of models no reader could use (each names the graph, node or tensor)
  [[noreturn]] void fail(const std::string& what) const { throw Error(opt_.file_name + ": error: " + what); }
  // An opset version as the namespace name holds it: never cut to 32 bits (2^32 + 13 is not 13).
  int opset_version(int64_t v, const std::string& where) const {
    if (v < 0 || v > std::numeric_limits<int32_t>::max())
      fail(where + ": version " + std::to_string(v) + " is outside 0.." + std::to_string(std::numeric_limits<int32_t>::max()));
    return static_cast<int>(v);
  }
  std::string where(const Scope& s) const {
    std::string w = "graph '" + std::string(g_.name_str(s.node)) + "'";
    if (s.owner) w += " (a body of node '" + std::string(g_.name_str(s.owner)) + "')";
    return w;
  }
  // The node as the file names it: 'name' (Type), or #index (Type) when it has no name.
  static std::string node_where(const onnx::GraphProto& gp, int index) {
    const onnx::NodeProto& n = gp.node(index);
    return "node " + (n.name().empty() ? "#" + std::to_string(index) : "'" + n.name() + "'") + " (" + n.op_type() + ")";
  }
  std::string attr_where_;  // the node whose attributes are being read, for messages
  // tensor_from_proto, then: the data must hold exactly the elements the dims say.
  Value tensor(const onnx::TensorProto& t, Value::Map& meta, const std::string& what) {
    Value v = tensor_from_proto(t, ctx_, meta, raw_ ? raw_->find(t) : nullptr);
    if (!dtype_of(t.data_type()) || !v.is_tensor()) return v;  // unknown element type: kept whole
    const ir::Tensor& x = v.as_tensor();
    auto count = x.element_count();
    if (!count) fail(what + ": dims " + dims_str(x.shape) + " are negative or overflow");
    if (x.dtype == ir::DType::String) {
      if (x.strings.size() != *count)
        fail(what + ": " + std::to_string(x.strings.size()) + " strings for dims " + dims_str(x.shape) + " (" +
             std::to_string(*count) + " elements)");
    } else if (auto want = x.expected_bytes(); !want || *want != x.size) {
      fail(what + ": " + std::to_string(x.size) + " bytes of data for dims " + dims_str(x.shape) + " (" +
           std::to_string(*count) + " elements of " + elem_name(t.data_type()) + " need " +
           (want ? std::to_string(*want) : std::string("too many")) + ")");
    }
    return v;
  }
  static std::string dims_str(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
  }
  Value sparse(const onnx::SparseTensorProto& st, Value::Map& info, const std::string& what) {
    Value::Map vm, im;
    tensor(st.values(), vm, what + " values");
    tensor(st.indices(), im, what + " indices");
    return sparse_from_proto(st, ctx_, info);
  }

  void set_attr(PortId p, std::string_view k, Value v) { g_.set_attr(p, g_.sym(k), std::move(v)); }
  void set_attr(OpId o, std::string_view k, Value v) { g_.set_attr(o, g_.sym(k), std::move(v)); }

  // A port named `name` (or a unique variant of it, keeping the name in @value).
  PortId add_graph_port(OpId node, ir::PortDir dir, const std::string& name) {
    // "" and "^..." (the control ports' spelling) cannot name a port.
    bool renamed = name.empty() || name[0] == '^';
    std::string base = renamed ? "_" + name : name, pname = base;
    // A graph may have tens of thousands of inputs (initializers): keep each side's names in a
    // set rather than scanning the ports for every new one.
    auto& taken = graph_port_names_[(uint64_t(node.value) << 1) | (dir == ir::PortDir::Out ? 1 : 0)];
    if (taken.empty())
      for (PortId q : g_.ports(node, dir)) taken.insert(g_.port_name(q));
    for (int k = 1; taken.contains(g_.sym(pname)); ++k) {
      pname = base + "." + std::to_string(k);
      renamed = true;
    }
    Symbol psym = g_.sym(pname);
    taken.insert(psym);
    PortId p = g_.add_port(node, dir, psym);
    if (renamed) g_.set_attr(p, s_value_, Value(name));
    return p;
  }

  void put_attrs(PortId p, Value::Map& m) {
    for (auto& e : m) set_attr(p, e.key, std::move(e.value));
  }

  PortId resolve(Scope& s, const std::string& name) {
    if (auto it = s.values.find(name); it != s.values.end()) return it->second;
    if (!s.parent) return PortId();
    PortId outer = resolve(*s.parent, name);
    if (!outer) return PortId();
    std::string pname = std::string(kCapturePrefix) + name;
    PortId cap = g_.find_input(s.owner, g_.sym(pname));
    if (!cap) {
      cap = g_.add_input(s.owner, g_.sym(pname));
      g_.set_port_role(cap, ir::PortRole::Capture);
      set_attr(cap, "@value", Value(name));
      g_.connect(outer, cap);
    }
    s.values[name] = cap;
    return cap;
  }

  static std::vector<std::string> port_names(const std::vector<onnx::OpSchema::FormalParameter>* formals, int n,
                                              const char* generic) {
    std::vector<std::string> names;
    if (formals) {
      int i = 0;
      for (const auto& f : *formals) {
        if (f.GetOption() == onnx::OpSchema::Variadic) {
          for (int k = 0; i < n; ++i, ++k) names.push_back(f.GetName() + "." + std::to_string(k));
          break;
        }
        if (i < n) {
          names.push_back(f.GetName());
          ++i;
        }
      }
      if (static_cast<int>(names.size()) == n) return names;
      names.clear();
    }
    for (int k = 0; k < n; ++k) names.push_back(std::string(generic) + "." + std::to_string(k));
    return names;
  }

  void import_graph(const onnx::GraphProto& gp, Scope& s, bool is_root) {
    OpId gn = s.node;
    g_.mark_has_body(gn);
    if (is_root && gp.has_name()) g_.set_name(gn, g_.sym(gp.name()));
    if (!gp.has_name() && !is_root) set_attr(gn, "@no_name", Value(true));
    if (is_root && !gp.has_name()) set_attr(gn, "@no_name", Value(true));
    if (gp.has_doc_string()) set_attr(gn, is_root ? "graph_doc_string" : "doc_string", Value(gp.doc_string()));
    // Inputs, then initializers that are not inputs.
    for (const auto& vi : gp.input()) {
      PortId p = add_graph_port(gn, ir::PortDir::In, vi.name());
      g_.set_port_role(p, ir::PortRole::GraphInput);
      Value::Map m;
      value_info_to_attrs(vi, "", m);
      put_attrs(p, m);
      s.values.try_emplace(vi.name(), p);
    }
    std::vector<std::string> init_order;
    std::vector<PortId> init_ports;
    auto init_port = [&](const std::string& name) {
      // A second initializer of one name gets a port of its own (the import is lossless); the
      // verifier reports the two definitions of one value, so verify, fmt and convert refuse it.
      PortId p;
      if (auto it = s.values.find(name); it != s.values.end() && g_.port_op(it->second) == gn &&
                                         !g_.attr(it->second, s_graph_input_)) {
        p = it->second;
        g_.set_port_role(p, ir::PortRole::InputWithDefault);
        g_.set_attr(p, s_graph_input_, Value(true));
      } else {
        p = add_graph_port(gn, ir::PortDir::In, name);
        g_.set_port_role(p, ir::PortRole::Initializer);
        g_.set_attr(p, s_graph_input_, Value(false));
        s.values.try_emplace(name, p);
      }
      return p;
    };
    for (int ti = 0; ti < gp.initializer_size(); ++ti) {
      const auto& t = gp.initializer(ti);
      PortId p = init_port(t.name());
      Value::Map meta;
      Value v = tensor(t, meta, where(s) + ": initializer '" + t.name() + "'");
      if (!meta.empty() && meta.front().key == "name" && meta.front().value == Value(t.name())) meta.erase(meta.begin());
      else if (!map_find(&meta, "proto")) meta.insert(meta.begin(), {"no_name", Value(true)});
      // The initializer's own type, unless a graph input declares one (set below from its attributes).
      if (v.is_tensor() && !g_.port_type(p)) g_.set_port_type(p, g_.types().tensor(v.as_tensor().dtype, ir::dims_of(v.as_tensor().shape)));
      g_.set_attr(p, s_initializer_, std::move(v));
      if (!meta.empty()) g_.set_attr(p, s_at_initializer_, Value(std::move(meta)));
      init_order.push_back(t.name());
      init_ports.push_back(p);
    }
    for (const auto& st : gp.sparse_initializer()) {
      PortId p = init_port(st.values().name());
      Value::Map m, vm, im;
      Value::List dims;
      for (auto d : st.dims()) dims.push_back(Value(static_cast<int64_t>(d)));
      m.push_back({"dims", Value(std::move(dims))});
      m.push_back({"values", tensor(st.values(), vm, where(s) + ": sparse initializer '" + st.values().name() + "' values")});
      m.push_back({"indices", tensor(st.indices(), im, where(s) + ": sparse initializer '" + st.values().name() + "' indices")});
      if (!vm.empty()) m.push_back({"@values", Value(std::move(vm))});
      if (!im.empty()) m.push_back({"@indices", Value(std::move(im))});
      set_attr(p, "sparse_initializer", Value(std::move(m)));
    }
    {
      // Initializers are written in port order; keep the file's order when it differs.
      std::vector<std::string> port_order;
      absl::flat_hash_map<uint32_t, size_t> init_index;
      for (size_t i = 0; i < init_ports.size(); ++i) init_index.emplace(init_ports[i].value, i);
      for (PortId p : g_.inputs(gn))
        if (auto it = init_index.find(p.value); it != init_index.end()) port_order.push_back(init_order[it->second]);
      if (port_order != init_order) {
        Value::List l;
        for (auto& n : init_order) l.push_back(Value(n));
        set_attr(gn, "@initializer_order", Value(std::move(l)));
      }
    }
    // Pass 1: ops and their outputs, so any node may read any value of the graph.
    std::vector<OpId> ops;
    ops.reserve(gp.node_size());
    for (const auto& n : gp.node()) {
      std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
      std::string type = domain.empty() ? n.op_type() : domain + "::" + n.op_type();
      OpId op;
      std::string name = n.name();
      bool has_graphs = false;
      for (const auto& a : n.attribute()) has_graphs |= a.has_g() || a.graphs_size();
      if (name.empty() && has_graphs) {
        // Its attribute graphs may capture values through its ports, and the text form names the
        // op from inside them: a generated "_k" could be taken there too. Give it a name of its own.
        for (int k = static_cast<int>(ops.size());; ++k) {
          std::string candidate = "_" + n.op_type() + "_" + std::to_string(k);
          if (!g_.find_op(gn, g_.sym(candidate))) {
            op = g_.create_op(gn, g_.sym(type), g_.sym(candidate));
            break;
          }
        }
        set_attr(op, n.has_name() ? "@name" : "@no_name", n.has_name() ? Value(name) : Value(true));
      } else if (name.empty() || name[0] == '_' || g_.find_op(gn, g_.sym(name))) {
        op = g_.create_op(gn, g_.sym(type), Symbol(0), /*generate_name=*/false);
        if (!name.empty() || n.has_name()) set_attr(op, "@name", Value(name));
      } else {
        op = g_.create_op(gn, g_.sym(type), g_.sym(name));
      }
      if (n.has_domain() && n.domain() != domain) set_attr(op, "@domain", Value(n.domain()));
      else if (n.has_domain() && domain.empty()) set_attr(op, "@domain", Value(n.domain()));
      if (n.has_doc_string()) set_attr(op, "@doc_string", Value(n.doc_string()));
      // An op_type that itself contains "::" would read back as a domain: keep it.
      if (n.op_type().find("::") != std::string::npos) set_attr(op, "@op_type", Value(n.op_type()));
      const onnx::OpSchema* schema = nullptr;
      if (auto it = versions_.find(domain); it != versions_.end())
        schema = detail::schema(n.op_type(), it->second, domain);
      auto in_names = port_names(schema ? &schema->inputs() : nullptr, n.input_size(), "input");
      auto out_names = port_names(schema ? &schema->outputs() : nullptr, n.output_size(), "output");
      // The importer is where ONNX's spelling of a constant is known; later layers read the role.
      bool constant_op = domain.empty() && n.op_type() == "Constant";
      for (auto& pn : in_names) g_.add_input(op, g_.sym(pn));
      for (int i = 0; i < n.output_size(); ++i) {
        PortId p = g_.add_output(op, g_.sym(out_names[i]));
        if (constant_op) g_.set_port_role(p, ir::PortRole::Constant);
        g_.set_attr(p, s_value_, Value(n.output(i)));
        if (n.output(i).empty()) continue;
        if (auto it = s.values.find(n.output(i)); it != s.values.end()) {
          OpId first = g_.port_op(it->second);
          int k = static_cast<int>(std::find(ops.begin(), ops.end(), first) - ops.begin());
          fail(where(s) + ": value '" + n.output(i) + "' is produced twice: by " +
               (first == gn ? std::string("a graph input or initializer") : node_where(gp, k)) +
               " and by " + node_where(gp, static_cast<int>(ops.size())));
        }
        s.values[n.output(i)] = p;
      }
      ops.push_back(op);
    }
    // Anonymous ops are named "_k" by position, skipping taken names, exactly as the text reader
    // does, so that a document written as YAML reads back with the same names.
    for (size_t i = 0; i < ops.size(); ++i) {
      if (g_.name(ops[i]) != 0) continue;
      Symbol nm;
      for (size_t k = i; g_.find_op(gn, nm = g_.sym("_" + std::to_string(k))); ++k) {
      }
      g_.set_name(ops[i], nm);
      g_.set_name_generated(ops[i], true);
    }
    // Pass 2: edges and attributes (attribute graphs may capture any value of this graph).
    Progress progress("reading nodes", static_cast<uint64_t>(gp.node_size()));
    for (int ni = 0; ni < gp.node_size(); ++ni) {
      progress.advance();
      const auto& n = gp.node(ni);
      OpId op = ops[ni];
      for (int i = 0; i < n.input_size(); ++i) {
        const std::string& v = n.input(i);
        PortId p = g_.input(op, i);
        if (v.empty()) continue;
        if (PortId src = resolve(s, v)) g_.connect(src, p);
        else
          fail(where(s) + ": " + node_where(gp, ni) + " reads '" + v + "', which no node, graph input or initializer " +
               (s.parent ? "of this graph or an enclosing one " : "") + "produces");
      }
      for (int ai = 0; ai < n.attribute_size(); ++ai) {
        attr_where_ = where(s) + ": " + node_where(gp, ni);
        import_attr(n.attribute(ai), ai, op, s);
      }
    }
    for (const auto& vi : gp.output()) {
      PortId p = add_graph_port(gn, ir::PortDir::Out, vi.name());
      Value::Map m;
      value_info_to_attrs(vi, "", m);
      put_attrs(p, m);
      if (PortId src = resolve(s, vi.name())) g_.connect(src, p);
      else fail(where(s) + ": graph output '" + vi.name() + "' is produced by no node, graph input or initializer");
    }
    import_value_info(gp, s);
    if (gp.quantization_annotation_size()) {
      Value::List l;
      for (const auto& qa : gp.quantization_annotation()) {
        Value::List params;
        for (const auto& kv : qa.quant_parameter_tensor_names())
          params.push_back(Value(Value::Map{{"key", Value(kv.key())}, {"value", Value(kv.value())}}));
        l.push_back(Value(Value::Map{{"tensor_name", Value(qa.tensor_name())}, {"quant_parameter_tensor_names", Value(std::move(params))}}));
      }
      set_attr(gn, "quantization_annotation", Value(std::move(l)));
    }
  }

  // value_info goes on the op output port that defines the value; what fits no such port is kept
  // on the graph.
  void import_value_info(const onnx::GraphProto& gp, Scope& s) {
    if (!gp.value_info_size()) return;
    absl::flat_hash_map<std::string, int> seen;
    std::vector<PortId> targets;
    bool ok = true;
    for (const auto& vi : gp.value_info()) {
      auto it = s.values.find(vi.name());
      if (seen[vi.name()]++ || it == s.values.end() || g_.port_op(it->second) == s.node ||
          g_.port_dir(it->second) != ir::PortDir::Out) {
        ok = false;
        break;
      }
      targets.push_back(it->second);
    }
    if (!ok) {
      Value::List l;
      for (const auto& vi : gp.value_info()) l.push_back(Value(base64_encode(vi.SerializeAsString())));
      set_attr(s.node, "@value_info", Value(std::move(l)));
      return;
    }
    for (int i = 0; i < gp.value_info_size(); ++i) {
      Value::Map m;
      value_info_to_attrs(gp.value_info(i), "@", m);
      if (m.empty()) m.push_back({"@value_info", Value(base64_encode(gp.value_info(i).SerializeAsString()))});
      put_attrs(targets[i], m);
    }
    // The exporter writes value_info in op/port order; keep the file's order when it differs.
    std::vector<PortId> sorted = targets;
    std::sort(sorted.begin(), sorted.end(), [&](PortId a, PortId b) {
      OpId oa = g_.port_op(a), ob = g_.port_op(b);
      if (oa != ob) return oa.value < ob.value;  // ops were created in node order
      return g_.port_index(a) < g_.port_index(b);
    });
    if (sorted != targets) {
      Value::List l;
      for (const auto& vi : gp.value_info()) l.push_back(Value(vi.name()));
      set_attr(s.node, "@value_info_order", Value(std::move(l)));
    }
  }

  Value import_graph_value(const onnx::GraphProto& gp, OpId owner, Scope& outer) {
    OpId gn = g_.create_attr_graph(owner, g_.sym(gp.name()));
    Scope s;
    s.node = gn;
    s.parent = &outer;
    s.owner = owner;
    import_graph(gp, s, false);
    return Value::graph(gn);
  }

  // An INT(S)/STRING(S) attribute with its name, its type and only that value field set.
  static bool plain_attr(const onnx::AttributeProto& a) {
    using A = onnx::AttributeProto;
    int fields = a.has_f() + a.has_i() + a.has_s() + a.has_t() + a.has_g() + a.has_sparse_tensor() + a.has_tp() +
                 (a.floats_size() > 0) + (a.ints_size() > 0) + (a.strings_size() > 0) + (a.tensors_size() > 0) +
                 (a.graphs_size() > 0) + (a.sparse_tensors_size() > 0) + (a.type_protos_size() > 0);
    if (fields != 1 || !a.has_name() || !a.has_type() || a.has_doc_string() || a.has_ref_attr_name() ||
        !a.unknown_fields().empty())
      return false;
    switch (a.type()) {
      case A::INT: return a.has_i();
      case A::INTS: return a.ints_size() > 0;
      case A::STRING: return a.has_s();
      case A::STRINGS: return a.strings_size() > 0;
      default: return false;
    }
  }

  // name, type TENSOR and t alone, whose meta is only the tensor's: the tensor round-trips by
  // tensor_from_proto's own guarantee (its fast path, or its proto kept whole), so the attribute
  // does too and is not serialised twice to compare (a Constant node's weights: megabytes).
  static bool plain_tensor_attr(const onnx::AttributeProto& a, const Value::Map& meta) {
    using A = onnx::AttributeProto;
    if (!a.has_type() || a.type() != A::TENSOR || !a.has_t()) return false;
    for (const auto& [k, v] : meta)
      if (k != "tensor") return false;
    int fields = a.has_f() + a.has_i() + a.has_s() + a.has_g() + a.has_sparse_tensor() + a.has_tp() +
                 (a.floats_size() > 0) + (a.ints_size() > 0) + (a.strings_size() > 0) + (a.tensors_size() > 0) +
                 (a.graphs_size() > 0) + (a.sparse_tensors_size() > 0) + (a.type_protos_size() > 0);
    return fields == 0 && a.has_name() && !a.has_doc_string() && !a.has_ref_attr_name() && a.unknown_fields().empty();
  }

  // The attribute as the file has it: with the raw_data of its borrowed tensors (see wire.h).
  onnx::AttributeProto complete(const onnx::AttributeProto& a) const { return raw_ ? complete_attribute(a, *raw_) : a; }
  std::string whole(const onnx::AttributeProto& a) const {
    return raw_ && raw_->size() ? complete(a).SerializeAsString() : a.SerializeAsString();
  }

  std::string attr_where(OpId, const onnx::AttributeProto& a) const { return attr_where_ + ": attribute '" + a.name() + "'"; }

  void import_attr(const onnx::AttributeProto& a, int index, OpId op, Scope& s) {
    using A = onnx::AttributeProto;
    if (a.name().empty() || is_annotation(a.name()) || g_.attr(op, g_.sym(a.name()))) {
      // An attribute the IR cannot hold under its own name: keep it whole, with its position.
      Value::List l;
      if (const Value* old = g_.attr(op, g_.sym("@extra_attributes"))) l = old->as_list();
      l.push_back(Value(Value::Map{{"index", Value(static_cast<int64_t>(index))}, {"proto", Value(base64_encode(whole(a)))}}));
      set_attr(op, "@extra_attributes", Value(std::move(l)));
      return;
    }
    if ((a.type() == A::GRAPH && (!a.has_g() || a.graphs_size())) || (a.type() == A::GRAPHS && a.has_g())) {
      // A graph attribute without its graph (or with the wrong field): keep it whole.
      set_attr(op, a.name(), Value());
      set_attr(op, "@attr." + a.name(), Value(Value::Map{{"proto", Value(base64_encode(whole(a)))}}));
      return;
    }
    Value v;
    Value::Map meta;
    switch (a.type()) {
      case A::FLOAT: v = Value(float32_value(a.f())); break;
      case A::INT: v = Value(static_cast<int64_t>(a.i())); break;
      case A::STRING: v = Value(a.s()); break;
      case A::TENSOR: {
        Value::Map tm;
        v = tensor(a.t(), tm, attr_where(op, a) + " tensor");
        if (!tm.empty()) meta.push_back({"tensor", Value(std::move(tm))});
        break;
      }
      case A::GRAPH: v = import_graph_value(a.g(), op, s); break;
      case A::SPARSE_TENSOR: {
        Value::Map info;
        v = sparse(a.sparse_tensor(), info, attr_where(op, a) + " sparse tensor");
        meta.push_back({"sparse", Value(std::move(info))});
        break;
      }
      case A::TYPE_PROTO: v = Value(type_string(a.tp()).value_or("")); break;
      case A::FLOATS: {
        Value::List l;
        for (float f : a.floats()) l.push_back(Value(float32_value(f)));
        v = Value(std::move(l));
        break;
      }
      case A::INTS: {
        Value::List l;
        for (auto i : a.ints()) l.push_back(Value(static_cast<int64_t>(i)));
        v = Value(std::move(l));
        break;
      }
      case A::STRINGS: {
        Value::List l;
        for (const auto& x : a.strings()) l.push_back(Value(x));
        v = Value(std::move(l));
        break;
      }
      case A::TENSORS: {
        Value::List l, ml;
        bool any = false;
        for (const auto& t : a.tensors()) {
          Value::Map tm;
          l.push_back(tensor(t, tm, attr_where(op, a) + " tensor " + std::to_string(l.size())));
          any |= !tm.empty();
          ml.push_back(Value(std::move(tm)));
        }
        v = Value(std::move(l));
        if (any) meta.push_back({"tensors", Value(std::move(ml))});
        break;
      }
      case A::GRAPHS: {
        Value::List l;
        for (const auto& gp : a.graphs()) l.push_back(import_graph_value(gp, op, s));
        v = Value(std::move(l));
        break;
      }
      case A::SPARSE_TENSORS: {
        Value::List l;
        Value::List infos;
        for (const auto& t : a.sparse_tensors()) {
          Value::Map info;
          l.push_back(sparse(t, info, attr_where(op, a) + " sparse tensor " + std::to_string(l.size())));
          infos.push_back(Value(std::move(info)));
        }
        v = Value(std::move(l));
        meta.push_back({"sparse", Value(std::move(infos))});
        break;
      }
      case A::TYPE_PROTOS: {
        Value::List l;
        for (const auto& t : a.type_protos()) l.push_back(Value(type_string(t).value_or("")));
        v = Value(std::move(l));
        break;
      }
      default: break;
    }
    if (!a.has_type() || inferred_attr_type(v) != a.type())
      meta.push_back({"type", a.has_type() ? Value(static_cast<int64_t>(a.type())) : Value()});
    if (a.has_doc_string()) meta.push_back({"doc_string", Value(a.doc_string())});
    if (a.has_ref_attr_name()) meta.push_back({"ref_attr_name", Value(a.ref_attr_name())});
    // Does the readable form say everything? (Graphs are checked by their own parts.)
    if ((meta.empty() && plain_attr(a)) || plain_tensor_attr(a, meta)) {
      // name, type and one int(s)/string(s) field: exactly what attr_to_proto writes back.
    } else if (a.type() != A::GRAPH && a.type() != A::GRAPHS) {
      onnx::AttributeProto back;
      attr_to_proto(a.name(), v, meta, back);
      if (back.SerializeAsString() != whole(a)) meta.push_back({"proto", Value(base64_encode(whole(a)))});
    } else {
      // Graph attributes: compare everything but the graphs themselves (checked by their parts);
      // when that differs (other fields set too), keep the attribute without its graphs.
      onnx::AttributeProto shell = complete(a), back;
      attr_to_proto(a.name(), v, meta, back, [](OpId, onnx::GraphProto&) {});
      for (auto* x : {&shell, &back}) {
        x->clear_g();
        x->clear_graphs();
      }
      if (back.SerializeAsString() != shell.SerializeAsString())
        meta.push_back({"shell", Value(base64_encode(shell.SerializeAsString()))});
    }
    const std::string& key = a.name();
    set_attr(op, key, std::move(v));
    if (!meta.empty()) set_attr(op, "@attr." + key, Value(std::move(meta)));
  }

};

}  // namespace

text::Document import_model(const onnx::ModelProto& model, const ImportOptions& options) {
  Importer imp(model, options);
  return imp.run();
}

namespace {
// Parses with the tensors' raw_data borrowed from `buf` (see wire.h), or with protobuf
// alone when that fast path does not apply; the error checks are the same either way. `buf` holds
// `bytes` (a file's mapping or a copy of the caller's bytes) and outlives the tensors that borrow it.
text::Document import_buffer(std::string_view bytes, const std::shared_ptr<const Buffer>& buf, bool is_file,
                             const ImportOptions& options) {
  if (bytes.empty()) throw ParseError(SourceLoc{options.file_name, 0, 0}, "empty file: not an ONNX model");
  // The parsed proto lives only during the import: an arena makes its many small allocations
  // (a 100,000-node model has about a million) one bump each and its destruction one free per block.
  google::protobuf::ArenaOptions ao;
  ao.start_block_size = 64 << 10;
  ao.max_block_size = 4 << 20;
  google::protobuf::Arena arena(ao);
  onnx::ModelProto& m = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    throw ParseError(SourceLoc{options.file_name, 0, 0}, "file over 2 GiB: protobuf cannot read it (use external data)");
  RawSpans raw;
  if (!parse_model_borrowing(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), m, raw)) {
    raw.clear();
    m.Clear();
    if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      throw ParseError(SourceLoc{options.file_name, 0, 0}, "not an ONNX model: the protobuf does not parse (truncated or another format)");
  }
  if (!m.has_graph() || !m.has_ir_version())
    throw ParseError(SourceLoc{options.file_name, 0, 0}, "not an ONNX model: no ir_version or no graph");
  Importer imp(m, options);
  imp.borrow_from(buf, is_file, &raw);
  return imp.run();
}
}  // namespace

// Bytes the caller keeps (and may free): copied once, whole, into a buffer the tensors borrow from,
// as from a file's mapping. (Copying each borrowed tensor apart cost a shared buffer per tensor:
// amanda_copy in onnx_bench, 1.19x the time of 412c659's import on 100,000 ops.)
text::Document import_model_bytes(std::string_view bytes, const ImportOptions& options) {
  auto buf = make_buffer(std::string(bytes));
  return import_buffer(buf->view(), buf, false, options);
}

text::Document import_model_buffer(std::shared_ptr<const Buffer> bytes, const ImportOptions& options) {
  return import_buffer(bytes->view(), bytes, false, options);
}

text::Document read_model(ReadGate& files) {
  auto buf = files.map_model();  // a regular file, opened without blocking
  ImportOptions o;
  o.file_name = files.model_path();
  o.base_dir = files.root();  // external data: under the gate's policy, from the model's folder
  return import_buffer(buf->view(), buf, true, o);
}

text::Document read_model(const std::string& path) {
  ReadGate files(path);
  return read_model(files);
}

bool is_onnx_path(std::string_view path) { return path.size() > 5 && path.substr(path.size() - 5) == ".onnx"; }

}  // namespace amanda::onnx_frontend
