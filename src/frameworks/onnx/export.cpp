// text::Document -> ONNX ModelProto: the inverse of import.cpp. See docs/onnx.md.
#include <sys/mman.h>

#include <algorithm>
#include <filesystem>

#include <absl/container/flat_hash_map.h>
#include <google/protobuf/arena.h>

#include "amanda/support/gate.h"
#include "amanda/frameworks/onnx/model.h"
#include "amanda/support/file.h"
#include "amanda/support/progress.h"
#include "proto_util.h"
#include "wire.h"

namespace amanda::onnx_frontend {

using namespace detail;
using ir::OpId;
using ir::PortId;
using ir::Value;

namespace detail {

void attr_to_proto(const std::string& name, const Value& v, const Value::Map& meta, onnx::AttributeProto& out,
                   const std::function<void(OpId, onnx::GraphProto&)>& graph) {
  using A = onnx::AttributeProto;
  if (const Value* p = map_find(&meta, "proto"); p && p->is_string()) {
    auto bytes = base64_decode(p->as_string());
    if (!bytes || !out.ParseFromString(*bytes)) throw Error("attribute '" + name + "': its 'proto' annotation is not an AttributeProto in base64");
    return;
  }
  if (const Value* sh = map_find(&meta, "shell"); sh && sh->is_string() && graph) {
    // A graph attribute with other fields set too: those come from the shell.
    auto bytes = base64_decode(sh->as_string());
    if (!bytes || !out.ParseFromString(*bytes)) throw Error("attribute '" + name + "': its 'shell' annotation is not an AttributeProto in base64");
    if (v.is_graph()) graph(v.as_graph(), *out.mutable_g());
    if (v.is_list())
      for (const auto& x : v.as_list())
        if (x.is_graph()) graph(x.as_graph(), *out.add_graphs());
    return;
  }
  out.set_name(name);
  const Value* tmeta = map_find(&meta, "type");
  A::AttributeType type = A::UNDEFINED;
  if (tmeta && tmeta->is_int()) type = static_cast<A::AttributeType>(tmeta->as_int());
  else type = v.is_list() && v.as_list().empty() ? A::INTS : inferred_attr_type(v);  // an empty list: INTS
  if (!tmeta || !tmeta->is_null()) out.set_type(type);
  auto num = [](const Value& x) { return x.is_int() ? static_cast<double>(x.as_int()) : x.is_float() ? x.as_float() : 0.0; };
  auto str = [](const Value& x) -> std::string { return x.is_string() ? x.as_string() : std::string(); };
  auto need_graph = [&](const Value& x) {
    if (!x.is_graph()) throw Error("attribute '" + name + "': expected a graph");
    if (!graph) throw Error("attribute '" + name + "': graphs cannot be written here");
  };
  const Value::List empty;
  const Value::List& list = v.is_list() ? v.as_list() : empty;
  switch (type) {
    case A::FLOAT: out.set_f(static_cast<float>(num(v))); break;
    case A::INT: out.set_i(v.is_int() ? v.as_int() : static_cast<int64_t>(num(v))); break;
    case A::STRING: out.set_s(str(v)); break;
    case A::TENSOR: {
      const Value* tm = map_find(&meta, "tensor");
      tensor_to_proto(v, tm && tm->is_map() ? &tm->as_map() : nullptr, *out.mutable_t());
      break;
    }
    case A::GRAPH: need_graph(v); graph(v.as_graph(), *out.mutable_g()); break;
    case A::SPARSE_TENSOR: {
      const Value* info = map_find(&meta, "sparse");
      sparse_to_proto(v, info && info->is_map() ? &info->as_map() : nullptr, *out.mutable_sparse_tensor());
      break;
    }
    case A::TYPE_PROTO: parse_type_string(str(v), *out.mutable_tp()); break;
    case A::FLOATS: for (const auto& x : list) out.add_floats(static_cast<float>(num(x))); break;
    case A::INTS: for (const auto& x : list) out.add_ints(x.is_int() ? x.as_int() : static_cast<int64_t>(num(x))); break;
    case A::STRINGS: for (const auto& x : list) out.add_strings(str(x)); break;
    case A::TENSORS: {
      const Value* tms = map_find(&meta, "tensors");
      for (size_t i = 0; i < list.size(); ++i) {
        const Value* tm = tms && tms->is_list() && i < tms->as_list().size() ? &tms->as_list()[i] : nullptr;
        tensor_to_proto(list[i], tm && tm->is_map() ? &tm->as_map() : nullptr, *out.add_tensors());
      }
      break;
    }
    case A::GRAPHS:
      for (const auto& x : list) {
        need_graph(x);
        graph(x.as_graph(), *out.add_graphs());
      }
      break;
    case A::SPARSE_TENSORS:
    {
      const Value* infos = map_find(&meta, "sparse");
      for (size_t i = 0; i < list.size(); ++i) {
        const Value* info = infos && infos->is_list() && i < infos->as_list().size() ? &infos->as_list()[i] : nullptr;
        sparse_to_proto(list[i], info && info->is_map() ? &info->as_map() : nullptr, *out.add_sparse_tensors());
      }
      break;
    }
    case A::TYPE_PROTOS: for (const auto& x : list) parse_type_string(str(x), *out.add_type_protos()); break;
    default: break;
  }
  if (const Value* d = map_find(&meta, "doc_string"); d && d->is_string()) out.set_doc_string(d->as_string());
  if (const Value* r = map_find(&meta, "ref_attr_name"); r && r->is_string()) out.set_ref_attr_name(r->as_string());
}

}  // namespace detail

namespace {

// "amanda/onnx/13" -> 13
std::optional<int64_t> default_opset(std::string_view ns) {
  constexpr std::string_view prefix = "amanda/onnx/";
  if (!ns.starts_with(prefix)) return std::nullopt;
  std::string_view v = ns.substr(prefix.size());
  if (v.empty() || v.size() > 4 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return std::stoll(std::string(v));
}

class Exporter {
 public:
  explicit Exporter(const ir::Graph& g) : g_(g) {}

  // With `deferred`, the root graph's raw_data tensors are not copied into the proto: deferred[i]
  // holds initializer i's bytes (see wire.h).
  // An ONNX graph is acyclic: a graph with a data-edge cycle (read by amanda.load, which does not
  // verify) is refused, in the root and in every nested graph, never written (issue 32).
  void refuse_cycles(OpId root) const {
    std::vector<OpId> scopes{root};
    while (!scopes.empty()) {
      OpId scope = scopes.back();
      scopes.pop_back();
      ir::TopoResult t = g_.topo_order(scope);
      if (!t.ok()) {
        std::string ops;
        for (size_t i = 0; i < t.cycle.size() && i < 5; ++i) ops += (i ? " -> " : "") + g_.path(t.cycle[i]);
        throw Error("the graph has a cycle (" + ops + (t.cycle.size() > 5 ? " -> ..." : "") + "); an ONNX model cannot have one");
      }
      for (OpId op : t.order)
        for (const auto& [k, v] : g_.attrs(op))
          if (v.is_graph()) scopes.push_back(v.as_graph());
    }
  }

  void run(onnx::ModelProto& m, std::vector<const ir::Tensor*>* deferred = nullptr) {
    OpId root = g_.root();
    if (g_.root_kind() != ir::Graph::RootKind::Graph) throw Error("only a graph document can be written as an ONNX model");
    refuse_cycles(root);
    if (const Value* v = get(root, "ir_version"); v && v->is_int()) m.set_ir_version(v->as_int());
    if (const Value* v = get(root, "opset_import"); v && v->is_list()) {
      for (const auto& e : v->as_list()) {
        auto* os = m.add_opset_import();
        if (const Value* d = e.find("domain"); d && d->is_string()) os->set_domain(d->as_string());
        if (const Value* x = e.find("version"); x && x->is_int()) os->set_version(x->as_int());
      }
    }
    // The graph's namespace is the truth for the default domain's opset: a conversion
    // (amanda convert --to amanda/onnx/11) changes the namespace, not this list.
    if (auto v = default_opset(g_.str(g_.graph_namespace(root)))) {
      // The importer took the namespace from the first default-domain entry: when it still says
      // that version, the list is left exactly as it came (odd lists included).
      const onnx::OperatorSetIdProto* first = nullptr;
      for (const auto& os : m.opset_import())
        if (!first && (os.domain().empty() || os.domain() == "ai.onnx")) first = &os;
      bool found = first != nullptr;
      if (first && first->version() != *v)
        for (auto& os : *m.mutable_opset_import())
          if (os.domain().empty() || os.domain() == "ai.onnx") os.set_version(*v);
      if (!found) {
        auto* os = m.add_opset_import();
        os->set_version(*v);
      }
    }
    // A graph that did not come from an ONNX file (no ir_version, no opset_import: a conversion
    // from another framework) gets the IR version that goes with its opset.
    if (!get(root, "ir_version") && !get(root, "opset_import"))
      if (auto v = default_opset(g_.str(g_.graph_namespace(root)))) {
        int ir = *v <= 8 ? 3 : *v == 9 ? 4 : *v == 10 ? 5 : *v == 11 ? 6 : *v <= 14 ? 7 : 8;
        m.set_ir_version(ir);
      }
    if (const Value* v = get(root, "producer_name"); v && v->is_string()) m.set_producer_name(v->as_string());
    if (const Value* v = get(root, "producer_version"); v && v->is_string()) m.set_producer_version(v->as_string());
    if (const Value* v = get(root, "domain"); v && v->is_string()) m.set_domain(v->as_string());
    if (const Value* v = get(root, "model_version"); v && v->is_int()) m.set_model_version(v->as_int());
    if (const Value* v = get(root, "doc_string"); v && v->is_string()) m.set_doc_string(v->as_string());
    if (const Value* v = get(root, "metadata_props"); v && v->is_list()) {
      for (const auto& e : v->as_list()) {
        auto* p = m.add_metadata_props();
        if (const Value* k = e.find("key"); k && k->is_string()) p->set_key(k->as_string());
        if (const Value* x = e.find("value"); x && x->is_string()) p->set_value(x->as_string());
      }
    }
    if (const Value* v = get(root, "functions"); v && v->is_list())
      for (const auto& e : v->as_list()) export_function(e, *m.add_functions());
    if (const Value* v = get(root, "@training_info"); v && v->is_list())
      for (const auto& e : v->as_list()) parse_b64(e, *m.add_training_info(), "@training_info");
    if (!get(root, "@no_graph")) export_graph(root, *m.mutable_graph(), true, deferred);
  }

  // An attribute graph (or any graph node) as a GraphProto, as the exporter writes it.
  void graph_proto(OpId gn, onnx::GraphProto& gp) { export_graph(gn, gp, false); }

  void export_function(const Value& e, onnx::FunctionProto& f) {
    if (e.is_string()) return parse_b64(e, f, "functions");
    if (!e.is_map()) throw Error("functions: an entry is neither a map nor a base64 FunctionProto");
    auto str = [&](const char* k) { const Value* v = e.find(k); return v && v->is_string() ? v : nullptr; };
    if (const Value* v = str("name")) f.set_name(v->as_string());
    if (const Value* v = str("domain")) f.set_domain(v->as_string());
    if (const Value* v = str("doc_string")) f.set_doc_string(v->as_string());
    auto strings = [&](const char* k, auto* out) {
      if (const Value* v = e.find(k); v && v->is_list())
        for (const auto& x : v->as_list()) *out->Add() = x.is_string() ? x.as_string() : std::string();
    };
    strings("input", f.mutable_input());
    strings("output", f.mutable_output());
    strings("attribute", f.mutable_attribute());
    if (const Value* v = e.find("opset_import"); v && v->is_list())
      for (const auto& o : v->as_list()) {
        auto* os = f.add_opset_import();
        if (const Value* d = o.find("domain"); d && d->is_string()) os->set_domain(d->as_string());
        if (const Value* x = o.find("version"); x && x->is_int()) os->set_version(x->as_int());
      }
    const Value* body = e.find("body");
    if (!body || !body->is_graph()) throw Error("functions: an entry has no body graph");
    onnx::GraphProto gp;
    export_graph(body->as_graph(), gp, false);
    *f.mutable_node() = std::move(*gp.mutable_node());
  }

 private:
  const ir::Graph& g_;

  const Value* get(OpId o, std::string_view k) const {
    Symbol s = g_.symbols().find(k);
    return s == SymbolTable::kNone ? nullptr : g_.attr(o, s);
  }
  const Value* get(PortId p, std::string_view k) const {
    Symbol s = g_.symbols().find(k);
    return s == SymbolTable::kNone ? nullptr : g_.attr(p, s);
  }
  // String-literal keys are looked up once per exporter, by the literal's address (the graph is
  // const here, so a key it lacks stays missing), instead of hashing the string for every port.
  mutable absl::flat_hash_map<const char*, Symbol> literal_keys_;
  mutable absl::flat_hash_map<Symbol, Symbol> attr_meta_keys_;  // NAME -> @attr.NAME
  template <size_t N>
  Symbol key(const char (&k)[N]) const {
    auto [it, fresh] = literal_keys_.try_emplace(k, SymbolTable::kNone);
    if (fresh) it->second = g_.symbols().find(std::string_view(k, N - 1));
    return it->second;
  }
  template <size_t N>
  const Value* get(OpId o, const char (&k)[N]) const {
    Symbol s = key(k);
    return s == SymbolTable::kNone ? nullptr : g_.attr(o, s);
  }
  template <size_t N>
  const Value* get(PortId p, const char (&k)[N]) const {
    Symbol s = key(k);
    return s == SymbolTable::kNone ? nullptr : g_.attr(p, s);
  }
  const Value* attr_meta(OpId op, Symbol k) const {
    auto [it, fresh] = attr_meta_keys_.try_emplace(k, SymbolTable::kNone);
    if (fresh) it->second = g_.symbols().find("@attr." + std::string(g_.str(k)));
    return it->second == SymbolTable::kNone ? nullptr : g_.attr(op, it->second);
  }

  template <class Msg>
  static void parse_b64(const Value& v, Msg& out, const char* what) {
    auto bytes = v.is_string() ? base64_decode(v.as_string()) : std::nullopt;
    if (!bytes || !out.ParseFromString(*bytes)) throw Error(std::string(what) + ": an entry is not a protobuf in base64");
  }

  std::string value_name(PortId p) const {
    // A capture port of the body's owner: the name of the value that feeds it (a rewrite may have
    // given the capture another producer than the value it was read by name from).
    if (g_.port_dir(p) == ir::PortDir::In && g_.port_name_str(p).starts_with(kCapturePrefix))
      if (PortId src = g_.producer(p)) return value_name(src);
    if (const Value* v = get(p, "@value"); v && v->is_string()) return v->as_string();
    // An output port made by a rewrite (no ONNX value name yet): the name of the graph output it
    // feeds, if it feeds one (ONNX names a graph output by the value itself), else its op's.
    OpId op = g_.port_op(p);
    if (!g_.is_graph(op) && g_.port_dir(p) == ir::PortDir::Out) {
      for (PortId c : g_.consumers(p))
        if (g_.is_graph(g_.port_op(c)) && g_.port_dir(c) == ir::PortDir::Out && g_.port_op(c) == g_.parent(op))
          return std::string(g_.port_name_str(c));
      return std::string(g_.name_str(op)) + ":" + std::string(g_.port_name_str(p));
    }
    return std::string(g_.port_name_str(p));
  }

  void value_info(PortId p, const std::string& prefix, onnx::ValueInfoProto& vi) const {
    attrs_to_value_info([&](const std::string& k) { return get(p, k); }, prefix, value_name(p), vi);
  }

  static const Value::Map* as_map(const Value* v) { return v && v->is_map() ? &v->as_map() : nullptr; }

  void export_graph(OpId gn, onnx::GraphProto& gp, bool is_root, std::vector<const ir::Tensor*>* deferred = nullptr) {
    if (!get(gn, "@no_name")) gp.set_name(g_.name_generated(gn) ? std::string() : std::string(g_.name_str(gn)));
    if (const Value* d = get(gn, is_root ? "graph_doc_string" : "doc_string"); d && d->is_string()) gp.set_doc_string(d->as_string());
    // Initializers are built in place (the proto may live on an arena: moving a message in from
    // the heap would copy it), in port order, then permuted to @initializer_order.
    std::vector<std::string> init_names;
    std::vector<const ir::Tensor*> init_raw;  // deferred raw_data
    for (PortId p : g_.inputs(gn)) {
      if (g_.is_control(p)) continue;
      const Value* gi = get(p, "graph_input");
      if (!gi || !gi->is_bool() || gi->as_bool()) value_info(p, "", *gp.add_input());
      if (const Value* t = get(p, "initializer")) {
        onnx::TensorProto& tp = *gp.add_initializer();
        const Value::Map* meta = as_map(get(p, "@initializer"));
        const ir::Tensor* raw = nullptr;
        tensor_to_proto(*t, meta, tp, deferred ? &raw : nullptr);
        init_raw.push_back(raw);
        init_names.push_back(value_name(p));
        if (!map_find(meta, "proto") && !map_find(meta, "no_name")) tp.set_name(init_names.back());
      }
      if (const Value* s = get(p, "sparse_initializer"); s && s->is_map()) {
        auto* sp = gp.add_sparse_initializer();
        const Value::Map& m = s->as_map();
        if (const Value* d = map_find(&m, "dims"); d && d->is_list())
          for (const auto& x : d->as_list()) sp->add_dims(x.is_int() ? x.as_int() : 0);
        if (const Value* v = map_find(&m, "values")) tensor_to_proto(*v, as_map(map_find(&m, "@values")), *sp->mutable_values());
        if (const Value* v = map_find(&m, "indices")) tensor_to_proto(*v, as_map(map_find(&m, "@indices")), *sp->mutable_indices());
      }
    }
    size_t n_init = init_names.size();
    std::vector<size_t> order_ix;  // final position -> port-order index
    if (const Value* order = get(gn, "@initializer_order"); order && order->is_list()) {
      // Each name takes the first unused initializer of that name; the rest follow in port order.
      absl::flat_hash_map<std::string_view, std::vector<size_t>> by_name;
      for (size_t i = n_init; i-- > 0;) by_name[init_names[i]].push_back(i);
      std::vector<bool> used(n_init);
      for (const auto& n : order->as_list()) {
        if (!n.is_string()) continue;
        auto it = by_name.find(n.as_string());
        if (it == by_name.end() || it->second.empty()) continue;
        size_t i = it->second.back();
        it->second.pop_back();
        used[i] = true;
        order_ix.push_back(i);
      }
      for (size_t i = 0; i < n_init; ++i)
        if (!used[i]) order_ix.push_back(i);
      // Permute in place with swaps: at[j] = port-order index of the tensor now at j.
      std::vector<size_t> at(n_init), pos(n_init);
      for (size_t i = 0; i < n_init; ++i) at[i] = pos[i] = i;
      auto& inits = *gp.mutable_initializer();
      for (size_t j = 0; j < n_init; ++j) {
        size_t o = order_ix[j], q = pos[o];
        if (q == j) continue;
        inits.SwapElements(static_cast<int>(j), static_cast<int>(q));
        pos[at[j]] = q;
        at[q] = at[j];
        at[j] = o;
        pos[o] = j;
      }
    }
    if (deferred)
      for (size_t j = 0; j < n_init; ++j) deferred->push_back(init_raw[order_ix.empty() ? j : order_ix[j]]);
    std::vector<PortId> vi_ports;
    for (OpId op = g_.first_child(gn); op; op = g_.next_sibling(op)) {
      if (constant_as_initializer(op, gp)) continue;
      export_node(op, *gp.add_node());
      for (PortId p : g_.outputs(op))
        if (get(p, "@type") || get(p, "@value_info") || get(p, "@doc_string")) vi_ports.push_back(p);
    }
    for (PortId p : g_.outputs(gn)) {
      if (g_.is_control(p)) continue;
      // ONNX names a graph output by the value itself: an output whose name is not its producer's
      // (one value returned twice, a graph input returned as an output of another name) reads it
      // through an Identity, or the model would name a value nothing produces.
      if (PortId src = g_.producer(p)) {
        std::string out = value_name(p), in = value_name(src);
        if (out != in) {
          onnx::NodeProto& id = *gp.add_node();
          id.set_op_type("Identity");
          id.add_input(in);
          id.add_output(out);
        }
      }
      value_info(p, "", *gp.add_output());
    }
    if (const Value* l = get(gn, "@value_info"); l && l->is_list()) {
      for (const auto& e : l->as_list()) parse_b64(e, *gp.add_value_info(), "@value_info");
    } else {
      if (const Value* order = get(gn, "@value_info_order"); order && order->is_list()) {
        std::vector<PortId> sorted;
        for (const auto& n : order->as_list())
          for (PortId p : vi_ports)
            if (n.is_string() && value_name(p) == n.as_string() && std::find(sorted.begin(), sorted.end(), p) == sorted.end()) {
              sorted.push_back(p);
              break;
            }
        for (PortId p : vi_ports)
          if (std::find(sorted.begin(), sorted.end(), p) == sorted.end()) sorted.push_back(p);
        vi_ports = std::move(sorted);
      }
      for (PortId p : vi_ports) value_info(p, "@", *gp.add_value_info());
    }
    if (const Value* q = get(gn, "quantization_annotation"); q && q->is_list()) {
      for (const auto& e : q->as_list()) {
        auto* qa = gp.add_quantization_annotation();
        if (const Value* t = e.find("tensor_name"); t && t->is_string()) qa->set_tensor_name(t->as_string());
        if (const Value* ps = e.find("quant_parameter_tensor_names"); ps && ps->is_list())
          for (const auto& kv : ps->as_list()) {
            auto* x = qa->add_quant_parameter_tensor_names();
            if (const Value* k = kv.find("key"); k && k->is_string()) x->set_key(k->as_string());
            if (const Value* v = kv.find("value"); v && v->is_string()) x->set_value(v->as_string());
          }
      }
    }
  }

  // Opsets 1..8 define Constant for float16, float and double only: a constant of another element
  // type (the int64 shape or indices a conversion made, an opset-9 model's int64 Constant) is
  // written as an initializer, which every opset takes (and as a graph input too below IR version
  // 4, where every initializer must be one).
  bool constant_as_initializer(OpId op, onnx::GraphProto& gp) {
    if (g_.type_str(op) != "Constant") return false;
    auto opset = default_opset(g_.str(g_.graph_namespace(g_.root())));
    if (!opset || *opset >= 9) return false;
    // A model read from a file at this very opset is written as it came (a lossless round trip,
    // whatever its Constants hold); only a graph whose opset a conversion changed, or one that
    // came from elsewhere, gets its non-float Constants as initializers.
    if (const Value* imports = get(g_.root(), "opset_import"); imports && imports->is_list())
      for (const auto& e : imports->as_list()) {
        const Value* d = e.find("domain");
        bool default_domain = !d || (d->is_string() && (d->as_string().empty() || d->as_string() == "ai.onnx"));
        if (!default_domain) continue;
        const Value* x = e.find("version");  // absent: protobuf's default, 0
        if ((x && x->is_int() ? x->as_int() : 0) == *opset) return false;
        break;  // the first default-domain entry is the one the importer read
      }
    const Value* v = get(op, "value");
    if (!v || !v->is_tensor()) return false;
    ir::DType dt = v->as_tensor().dtype;
    if (dt == ir::DType::Float16 || dt == ir::DType::Float32 || dt == ir::DType::Float64) return false;
    PortId out;
    for (PortId p : g_.outputs(op)) {
      if (g_.is_control(p)) return false;  // control edges: kept as a node
      out = p;
    }
    for (PortId p : g_.inputs(op))
      if (g_.is_control(p)) return false;
    if (!out) return false;
    onnx::TensorProto& tp = *gp.add_initializer();
    const Value::Map* meta = as_map(attr_meta(op, key("value")));
    const Value* tm = meta ? map_find(meta, "tensor") : nullptr;
    tensor_to_proto(*v, tm && tm->is_map() ? &tm->as_map() : nullptr, tp);
    tp.set_name(value_name(out));
    const Value* ir = get(g_.root(), "ir_version");
    if (ir && ir->is_int() && ir->as_int() < 4) {
      auto* vi = gp.add_input();
      vi->set_name(tp.name());
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(tp.data_type());
      auto* sh = tt->mutable_shape();
      for (int64_t d : tp.dims()) sh->add_dim()->set_dim_value(d);
    }
    return true;
  }

  void export_node(OpId op, onnx::NodeProto& n) {
    for (PortId p : g_.inputs(op)) {
      if (g_.is_control(p) || g_.port_name_str(p).starts_with(kCapturePrefix)) continue;
      PortId src = g_.producer(p);
      if (src) n.add_input(value_name(src));
      else if (const Value* v = get(p, "@value"); v && v->is_string()) n.add_input(v->as_string());
      else n.add_input("");
    }
    for (PortId p : g_.outputs(op)) {
      if (g_.is_control(p)) continue;
      n.add_output(value_name(p));
    }
    if (const Value* v = get(op, "@name"); v && v->is_string()) n.set_name(v->as_string());
    else if (!g_.name_generated(op) && !get(op, "@no_name")) n.set_name(std::string(g_.name_str(op)));
    std::string_view type = g_.type_str(op);
    size_t sep = type.rfind("::");
    if (const Value* raw = get(op, "@op_type"); raw && raw->is_string()) {
      const std::string& t = raw->as_string();
      n.set_op_type(t);
      if (type.size() > t.size() + 2 && type.ends_with("::" + t)) n.set_domain(std::string(type.substr(0, type.size() - t.size() - 2)));
    } else if (sep != std::string_view::npos) {
      n.set_domain(std::string(type.substr(0, sep)));
      n.set_op_type(std::string(type.substr(sep + 2)));
    } else {
      n.set_op_type(std::string(type));
    }
    if (const Value* v = get(op, "@domain"); v && v->is_string()) n.set_domain(v->as_string());
    if (const Value* v = get(op, "@doc_string"); v && v->is_string()) n.set_doc_string(v->as_string());
    // Built in place (see export_graph); an extra attribute is appended, then moved to its index.
    for (const auto& [k, v] : g_.attrs(op)) {
      std::string_view key = g_.str(k);
      if (is_annotation(key)) continue;
      const Value::Map* meta = as_map(attr_meta(op, k));
      static const Value::Map none;
      attr_to_proto(std::string(key), v, meta ? *meta : none, *n.add_attribute(),
                    [this](OpId g, onnx::GraphProto& gp) { export_graph(g, gp, false); });
    }
    if (const Value* x = get(op, "@extra_attributes"); x && x->is_list()) {
      for (const auto& e : x->as_list()) {
        const Value* idx = e.find("index");
        const Value* pr = e.find("proto");
        if (!pr) throw Error("@extra_attributes: an entry has no proto");
        int size = n.attribute_size();
        parse_b64(*pr, *n.add_attribute(), "@extra_attributes");
        size_t i = idx && idx->is_int() ? static_cast<size_t>(std::max<int64_t>(0, idx->as_int())) : static_cast<size_t>(size);
        for (int j = size; j > static_cast<int>(std::min(i, static_cast<size_t>(size))); --j) n.mutable_attribute()->SwapElements(j, j - 1);
      }
    }
  }
};

}  // namespace

namespace detail {
void export_function(const ir::Graph& g, const Value& entry, onnx::FunctionProto& out) { Exporter(g).export_function(entry, out); }
void export_graph_proto(const ir::Graph& g, OpId gn, onnx::GraphProto& out) { Exporter(g).graph_proto(gn, out); }
}  // namespace detail

void export_model(const text::Document& doc, onnx::ModelProto& model) {
  if (doc.kind != text::Document::Kind::Graph) throw Error("only a graph document can be written as an ONNX model");
  Exporter(doc.graph).run(model);
}

namespace {

// The ModelProto the exporter builds only to serialise it: on an arena, its hundreds of
// thousands of small allocations are bumps and its destruction is one free per block.
class ExportArena {
 public:
  ExportArena() : arena_(options()) {}
  onnx::ModelProto& model() { return *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena_); }

 private:
  static google::protobuf::ArenaOptions options() {
    google::protobuf::ArenaOptions o;
    o.start_block_size = 64 << 10;
    o.max_block_size = 4 << 20;
    return o;
  }
  google::protobuf::Arena arena_;
};

void export_deferred(const text::Document& doc, onnx::ModelProto& m, std::vector<const ir::Tensor*>& deferred) {
  if (doc.kind != text::Document::Kind::Graph) throw Error("only a graph document can be written as an ONNX model");
  Exporter(doc.graph).run(m, &deferred);
}

class StringSink final : public Sink {
 public:
  explicit StringSink(std::string& s) : s_(s) {}
  void write(const void* p, size_t n) override { s_.append(static_cast<const char*>(p), n); }
  void reserve(uint64_t n) override {
    s_.reserve(n);
    // A big output is a fresh mapping from malloc: ask for huge pages, so that filling it costs
    // one page fault per 2 MiB instead of one per 4 KiB (most of the time of writing a 50 MB
    // model otherwise). Only whole huge pages inside the buffer; a no-op where THP is off.
    constexpr uintptr_t kHuge = uintptr_t(2) << 20;
    if (n >= 4 * kHuge) {
      uintptr_t b = (reinterpret_cast<uintptr_t>(s_.data()) + kHuge - 1) & ~(kHuge - 1);
      uintptr_t e = (reinterpret_cast<uintptr_t>(s_.data()) + n) & ~(kHuge - 1);
      if (b < e) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
    }
  }

 private:
  std::string& s_;
};

// Buffers small writes; tensor bytes go straight from their memory, without staying resident.
class FileSink final : public Sink {
 public:
  explicit FileSink(AtomicFile& f) : f_(f) {}
  void write(const void* p, size_t n) override {
    if (buf_.size() + n > kBuf) flush();
    if (n >= kBuf) f_.write(p, n);
    else buf_.append(static_cast<const char*>(p), n);
  }
  void write_tensor(const ir::Tensor& t) override {
    // A small tensor joins the buffer: one write call for it and the fields around it (each call
    // into the file system has its fixed cost); a big one is written from where it is.
    if (t.size < kSmallTensor) return write(t.data, t.size);
    flush();
    f_.write_paged(t.owner.get(), t.data, t.size);
  }
  void flush() {
    if (!buf_.empty()) f_.write(buf_);
    buf_.clear();
  }

 private:
  static constexpr size_t kBuf = 1 << 20, kSmallTensor = 64 << 10;
  AtomicFile& f_;
  std::string buf_;
};

struct SideFile {
  AtomicFile& file;  // staged by the write gate
  std::string location;
  SideFile(AtomicFile& f, std::string loc) : file(f), location(std::move(loc)) {}
  uint64_t align() {
    uint64_t off = (file.size() + 4095) / 4096 * 4096;
    if (off > file.size()) file.write(std::string(off - file.size(), '\0'));
    return off;
  }
};

void mark_external(onnx::TensorProto& t, const std::string& location, uint64_t off, uint64_t len) {
  t.clear_raw_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<std::string, std::string>{"location", location}, {"offset", std::to_string(off)},
                      {"length", std::to_string(len)}}) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
}

// A tensor proto holding its raw_data moves it to the side file.
size_t move_to_external(onnx::TensorProto& t, SideFile& side, size_t threshold) {
  if (!t.has_raw_data() || t.raw_data().size() < threshold) return 0;
  uint64_t off = side.align(), len = t.raw_data().size();
  side.file.write(t.raw_data());
  mark_external(t, side.location, off, len);
  return 1;
}

size_t move_nodes_to_external(onnx::GraphProto& gp, SideFile& side, size_t threshold);

size_t move_graph_to_external(onnx::GraphProto& gp, SideFile& side, size_t threshold) {
  size_t moved = 0;
  for (auto& t : *gp.mutable_initializer()) moved += move_to_external(t, side, threshold);
  return moved + move_nodes_to_external(gp, side, threshold);
}

size_t move_nodes_to_external(onnx::GraphProto& gp, SideFile& side, size_t threshold) {
  size_t moved = 0;
  for (auto& n : *gp.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) moved += move_graph_to_external(*a.mutable_g(), side, threshold);
      for (auto& sg : *a.mutable_graphs()) moved += move_graph_to_external(sg, side, threshold);
    }
  return moved;
}

}  // namespace

std::string export_model_bytes(const text::Document& doc) {
  ExportArena arena;
  onnx::ModelProto& m = arena.model();
  std::vector<const ir::Tensor*> deferred;
  export_deferred(doc, m, deferred);
  std::string out;
  StringSink sink(out);
  serialize_model_spliced(m, deferred, sink, "");
  return out;
}

void check_model_full(const onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred, const std::string& where);
void fill_missing_types(onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred);
int legalize_types(onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred);

std::string write_model(const text::Document& doc, WriteGate& out, const ExportOptions& options) {
  const std::string& path = out.output_path();
  ExportArena arena;
  onnx::ModelProto& m = arena.model();
  std::vector<const ir::Tensor*> deferred;
  export_deferred(doc, m, deferred);
  if (options.check) {
    legalize_types(m, deferred);  // types an op refuses: computed exactly in one it takes (legal_types.cpp)
    fill_missing_types(m, deferred);
    check_model_full(m, deferred, path + ": ");
  }
  std::unique_ptr<SideFile> side;
  std::string side_name;
  if (options.external_data) {
    // The side file's name is the writer's: the output's file name + ".data", beside it.
    side_name = std::filesystem::path(path).filename().string() + ".data";
    side = std::make_unique<SideFile>(out.create(side_name), side_name);
    size_t moved = 0;
    if (m.has_graph()) {
      // Root initializers in file order (their bytes straight from the IR), then subgraphs.
      auto& inits = *m.mutable_graph()->mutable_initializer();
      Progress progress("writing external data", static_cast<uint64_t>(inits.size()));
      for (int i = 0; i < inits.size(); ++i) {
        progress.advance();
        const ir::Tensor* t = static_cast<size_t>(i) < deferred.size() ? deferred[static_cast<size_t>(i)] : nullptr;
        if (!t) {
          moved += move_to_external(inits[i], *side, options.threshold);
        } else if (t->size >= options.threshold) {
          uint64_t off = side->align();
          side->file.write_paged(t->owner.get(), t->data, t->size);
          mark_external(inits[i], side->location, off, t->size);
          deferred[static_cast<size_t>(i)] = nullptr;
          ++moved;
        }
      }
      moved += move_nodes_to_external(*m.mutable_graph(), *side, options.threshold);
    }
    if (!moved) {
      side.reset();  // nothing moved: no side file
      out.discard(side_name);
      side_name.clear();
    }
  }
  FileSink sink(out.main());
  serialize_model_spliced(m, deferred, sink, path + ": error: ");
  sink.flush();
  return side_name;
}

std::string write_model(const text::Document& doc, const std::string& path, const ExportOptions& options) {
  WriteGate out(path);
  std::string side = write_model(doc, out, options);
  out.commit();  // the model and its side file: both or neither
  if (side.empty()) return "";
  std::filesystem::path p(path);
  return p.has_parent_path() ? (p.parent_path() / side).string() : side;
}

}  // namespace amanda::onnx_frontend
