// The graph boundary of a TensorFlow graph for ONNX (see the header).
#include "onnx_boundary.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "amanda/support/diagnostics.h"

namespace amanda::tf_frontend {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

// ONNX's spelling of an element type in a value info (`type: tensor(float)`).
std::string onnx_type_string(ir::DType t) {
  switch (t) {
    case ir::DType::Float32: return "tensor(float)";
    case ir::DType::Float64: return "tensor(double)";
    default: return fmt::format("tensor({})", ir::dtype_name(t));
  }
}

// The rank an op's input must have (TF's NHWC image ops: 4, MatMul: 2), 0 when it takes any.
size_t rank_fixed_by_consumers(const ir::Graph& g, OpId placeholder) {
  static const std::pair<std::string_view, size_t> kRank[] = {
      {"Conv2D", 4}, {"DepthwiseConv2dNative", 4}, {"tfjs::_FusedConv2D", 4}, {"tfjs::FusedDepthwiseConv2dNative", 4},
      {"tfjs::DepthwiseConv2d", 4}, {"MaxPool", 4}, {"AvgPool", 4}, {"FusedBatchNorm", 4}, {"FusedBatchNormV3", 4},
      {"ResizeBilinear", 4}, {"ResizeNearestNeighbor", 4}, {"DepthToSpace", 4}, {"SpaceToDepth", 4}, {"LRN", 4},
      {"MatMul", 2}, {"tfjs::_FusedMatMul", 2}};
  if (g.outputs(placeholder).empty()) return 0;
  for (PortId c : g.consumers(g.output(placeholder, 0))) {
    OpId user = g.port_op(c);
    if (g.port_index(c) != 0) continue;  // (the data input: the filter's rank is the filter's)
    for (auto [type, rank] : kRank)
      if (g.type_str(user) == type) return rank;
  }
  return 0;
}

// "node", "node:k" -> (node, k)
std::pair<std::string, size_t> split_tensor_name(const std::string& s) {
  size_t c = s.rfind(':');
  if (c != std::string::npos && c + 1 < s.size() &&
      std::all_of(s.begin() + static_cast<long>(c) + 1, s.end(), [](char x) { return x >= '0' && x <= '9'; }))
    return {s.substr(0, c), static_cast<size_t>(std::stoul(s.substr(c + 1)))};
  return {s, 0};
}

// The TF.js signature's outputs, in the file's order: the tensor name, and the signature's
// `dtype` and `tensorShape` as ONNX value-info attributes (type, shape) when it gives them.
struct SignatureOutput {
  std::string name;
  Value type, shape;
  std::optional<ir::DType> dtype;
  std::vector<ir::Dim> dims;
};
std::vector<SignatureOutput> signature_outputs(const ir::Graph& g) {
  std::vector<SignatureOutput> out;
  const Value* tfjs = g.attr(g.root(), g.symbols().find("tfjs"));
  if (!tfjs || !tfjs->is_map()) return out;
  const Value* sig = tfjs->find("signature");
  if (!sig || !sig->is_map()) {
    if (const Value* u = tfjs->find("userDefinedMetadata"); u && u->is_map()) sig = u->find("signature");
  }
  if (!sig || !sig->is_map()) return out;
  const Value* outs = sig->find("outputs");
  if (!outs || !outs->is_map()) return out;
  for (const auto& e : outs->as_map()) {
    const Value* n = e.value.is_map() ? e.value.find("name") : nullptr;
    SignatureOutput o;
    o.name = n && n->is_string() ? n->as_string() : e.key;
    const Value* dt = e.value.is_map() ? e.value.find("dtype") : nullptr;
    const Value* ts = e.value.is_map() ? e.value.find("tensorShape") : nullptr;
    if (dt && dt->is_string() && dt->as_string().starts_with("DT_") && ts && ts->is_map()) {
      std::string name = dt->as_string().substr(3);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (name == "float") name = "float32";
      if (name == "double") name = "float64";
      auto dtype = ir::dtype_from_name(name);
      const Value* dims = ts->find("dim");
      Value::List shape;
      bool ok = dtype.has_value() && !ts->find("unknownRank");
      if (dims && dims->is_list())
        for (const Value& d : dims->as_list()) {
          const Value* size = d.is_map() ? d.find("size") : nullptr;
          int64_t v = -1;
          if (size && size->is_string()) v = std::strtoll(size->as_string().c_str(), nullptr, 10);
          else if (size && size->is_int()) v = size->as_int();
          shape.push_back(v >= 0 ? Value(v) : Value());
          o.dims.push_back(v >= 0 ? ir::Dim::known(v) : ir::Dim::unknown());
        }
      else if (dims)
        ok = false;
      if (ok) {
        o.type = Value(onnx_type_string(*dtype));
        o.dtype = dtype;
        o.shape = Value(std::move(shape));
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

bool is_data(const ir::Graph& g, PortId p) { return !g.is_control(p); }

}  // namespace

void make_onnx_boundary(ir::Graph& g, const std::vector<std::string>& wanted) {
  OpId root = g.root();
  if (!g.type_str(root).starts_with("amanda/tensorflow/")) return;
  if (!g.outputs(root).empty() || !g.inputs(root).empty()) return;  // done already
  // TF2 functional If/While -> onnx::If / onnx::Loop, their library functions copied into the
  // bodies (a call of a function by any other op is refused by name); the library then goes.
  size_t functional = lower_tf2_control_flow(g);
  std::vector<OpId> ops = g.children(root);
  std::vector<SignatureOutput> sig = wanted.empty() ? signature_outputs(g) : std::vector<SignatureOutput>{};
  std::vector<std::string> outputs = wanted;
  for (const SignatureOutput& o : sig) outputs.push_back(o.name);
  if (outputs.empty()) {
    // A plain GraphDef: every data output of an op that nobody reads.
    for (OpId op : ops) {
      std::string_view type = g.type_str(op);
      if (type == "Const" || type == "Placeholder" || type == "NoOp") continue;
      // (an op read only through control edges, as a TF1 loop's pivot, is read too)
      bool read = false;
      for (PortId p : g.outputs(op))
        if (g.first_out_edge(p)) read = true;
      if (PortId c = g.find_control(op, ir::PortDir::Out); c && g.first_out_edge(c)) read = true;
      if (read) continue;
      size_t k = 0;
      for (PortId p : g.outputs(op))
        if (is_data(g, p)) outputs.push_back(fmt::format("{}:{}", g.name_str(op), k++));
    }
    if (outputs.empty()) throw Error("the graph has no op whose output nobody reads: no graph output (give --outputs)");
  }
  // Resolve the outputs before anything changes (a Placeholder can be an output too).
  std::vector<std::pair<std::string, PortId>> out_ports;
  for (const std::string& name : outputs) {
    auto [node, k] = split_tensor_name(name);
    OpId op = g.find_op(root, node);
    if (!op) throw Error(fmt::format("output '{}': the graph has no node '{}'", name, node));
    std::vector<PortId> data;
    for (PortId p : g.outputs(op))
      if (is_data(g, p)) data.push_back(p);
    if (k >= data.size())
      throw Error(fmt::format("output '{}': node '{}' ({}) has {} outputs", name, node, g.type_str(op), data.size()));
    out_ports.push_back({fmt::format("{}:{}", node, k), data[k]});
  }
  // Placeholders -> root inputs.
  for (OpId op : ops) {
    if (g.type_str(op) != "Placeholder") continue;
    std::string node(g.name_str(op));
    const Value* dt = g.attr(op, g.sym("dtype"));
    auto dtype = dt && dt->is_string() ? ir::dtype_from_name(dt->as_string()) : std::nullopt;
    if (!dtype) throw Error(fmt::format("Placeholder '{}': its dtype is not one ONNX has", node));
    const Value* sh = g.attr(op, g.sym("shape"));
    Value fixed;  // a rank-less placeholder's rank when a consumer fixes it: unknown dims
    if (!sh || !sh->is_list())
      if (size_t r = rank_fixed_by_consumers(g, op)) {
        fixed = Value(Value::List(r, Value(int64_t(-1))));
        sh = &fixed;
      }
    if (!sh || !sh->is_list()) {
      // No rank (`shape` absent or unknown_rank, as TF.js's loader accepts): an ONNX graph input of
      // unknown rank, a tensor type without a shape (ONNX allows it; onnxruntime takes any rank).
      std::string name = node + ":0";
      PortId in = g.add_port(root, ir::PortDir::In, g.sym(name));
      g.set_port_type(in, g.types().unranked(*dtype));
      g.set_attr(in, g.sym("type"), Value(onnx_type_string(*dtype)));
      PortId out = g.outputs(op).empty() ? PortId() : g.output(op, 0);
      for (auto& [n, p] : out_ports)
        if (p == out) p = in;
      if (out) g.replace_all_uses(out, in);
      continue;
    }
    std::vector<ir::Dim> dims;
    Value::List shape_attr;
    for (size_t i = 0; i < sh->as_list().size(); ++i) {
      const Value& d = sh->as_list()[i];
      if (d.is_int() && d.as_int() >= 0) {
        dims.push_back(ir::Dim::known(d.as_int()));
        shape_attr.push_back(Value(d.as_int()));
      } else {
        std::string param = fmt::format("{}_dim{}", node, i);
        std::replace_if(param.begin(), param.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)) && c != '_'; }, '_');
        dims.push_back(ir::Dim::symbol(g.sym(param)));
        shape_attr.push_back(Value(param));
      }
    }
    std::string name = node + ":0";
    PortId in = g.add_port(root, ir::PortDir::In, g.sym(name));
    g.set_port_type(in, g.types().tensor(*dtype, std::span<const ir::Dim>(dims)));
    g.set_attr(in, g.sym("type"), Value(onnx_type_string(*dtype)));
    g.set_attr(in, g.sym("shape"), Value(std::move(shape_attr)));
    PortId out = g.outputs(op).empty() ? PortId() : g.output(op, 0);
    for (auto& [n, p] : out_ports)
      if (p == out) p = in;
    if (out) g.replace_all_uses(out, in);
  }
  for (size_t i = 0; i < out_ports.size(); ++i) {
    auto& [name, src] = out_ports[i];
    PortId port = g.add_port(root, ir::PortDir::Out, g.sym(name));
    g.connect(src, port);
    // The signature's type, declared on the ONNX graph output (ONNX's inference merges it with what
    // it infers: a value computed from a loop's result or a run-time Slice has no inferable rank in
    // onnx 1.12, and onnx.checker wants a shape on every graph output).
    if (i < sig.size() && !sig[i].type.is_null()) {
      g.set_attr(port, g.sym("type"), sig[i].type);
      g.set_attr(port, g.sym("shape"), sig[i].shape);
      g.set_port_type(port, g.types().tensor(*sig[i].dtype, std::span<const ir::Dim>(sig[i].dims)));
    }
  }
  // The rank TF's rules give an output the signature does not type, for the ONNX output when
  // onnx 1.12's inference cannot give it (a run-time Slice; conversions/tensorflow_onnx/output_ranks.cpp).
  for (PortId port : g.outputs(root)) {
    if (g.is_control(port) || g.attr(port, g.sym("shape"))) continue;
    if (PortId src = g.producer(port); src)
      if (int r = tf_output_rank(g, src); r >= 0) g.set_attr(port, g.sym("@tf_rank"), Value(int64_t(r)));
  }
  // Control edges and NoOps mean nothing in ONNX.
  for (OpId op : ops) {
    if (!g.valid(op)) continue;
    for (PortId p : {g.find_control(op, ir::PortDir::In), g.find_control(op, ir::PortDir::Out)}) {
      if (!p) continue;
      for (ir::EdgeId e : g.in_edges(p)) g.disconnect(e);
      for (ir::EdgeId e : g.out_edges(p)) g.disconnect(e);
    }
  }
  for (OpId op : ops)
    // (TensorArrayCloseV3 frees an array, which is a value in ONNX: it computes nothing)
    if (g.valid(op) && (g.type_str(op) == "Placeholder" || g.type_str(op) == "NoOp" || g.type_str(op) == "TensorArrayCloseV3"))
      g.erase_op(op);
  // ONNX requires a graph name; a GraphDef has none.
  if (g.name_generated(root) || g.name_str(root).empty()) {
    g.set_name(root, g.sym("tensorflow_graph"));
    g.set_name_generated(root, false);
  }
  for (const char* k : {"tfjs", "versions", "library", "imports", "version", "@tfjs_shard_bytes"})
    if (Symbol s = g.symbols().find(k); s != SymbolTable::kNone) g.erase_attr(root, s);
  // TF1 while loops -> onnx::Loop ops (an op of an imported namespace: the table keeps it and
  // converts its body).
  bool loops = lower_tf1_loops(g);
  if (lower_tf1_conds(g) || loops || functional) {
    Value::Map imports;
    imports.push_back({"onnx", Value(std::string("amanda/onnx/13"))});
    g.set_attr(root, g.sym("imports"), Value(std::move(imports)));
  }
  select_to_select_v2(g);
}


namespace {
// Loops and Ifs made by lower_tf1_loops/conds: the type ONNX knows, and each body output the value name of its
// producer (an Identity of its own).
void finish_loops(ir::Graph& g) {
  std::vector<OpId> loops = g.ops_of_type("onnx::Loop");
  for (OpId op : g.ops_of_type("onnx::If")) loops.push_back(op);
  if (loops.empty()) return;
  for (OpId op : loops) {
    std::string type(g.type_str(op).substr(6));  // (a copy: interning may move the symbol table)
    g.set_type(op, g.sym(type));
    for (OpId body : g.attr_graphs(op))
      for (PortId p : g.outputs(body)) {
        if (g.is_control(p)) continue;
        PortId src = g.producer(p);
        if (!src)
          throw Error(fmt::format("loop '{}': body output '{}' has no producer after the tables", g.name_str(op), g.port_name_str(p)));
        if (g.is_graph(g.port_op(src))) continue;
        g.set_attr(src, g.sym("@value"), Value(std::string(g.port_name_str(p))));
      }
  }
  if (Symbol s = g.symbols().find("imports"); s != SymbolTable::kNone) g.erase_attr(g.root(), s);
}
}  // namespace

bool type_loop_bodies(ir::Graph& g) {
  bool changed = false;
  auto ranked = [&](PortId p) -> const ir::TypeData* {
    if (!p || !g.port_type(p)) return nullptr;
    const ir::TypeData& td = g.port_type_data(p);
    return td.kind == ir::TypeKind::Tensor && td.ranked && td.elem != ir::DType::Undefined ? &td : nullptr;
  };
  auto set_rank = [&](PortId p, ir::DType elem, size_t rank) {
    std::vector<ir::Dim> dims(rank, ir::Dim::unknown());
    g.set_port_type(p, g.types().tensor(elem, std::span<const ir::Dim>(dims)));
    if (g.is_graph(g.port_op(p))) {
      g.set_attr(p, g.sym("type"), Value(onnx_type_string(elem)));
      g.set_attr(p, g.sym("shape"), Value(Value::List(rank, Value())));
    }
    changed = true;
  };
  for (OpId op : g.ops_of_type("Loop")) {
    const Value* b = g.attr(op, g.sym("body"));
    if (!b || !b->is_graph() || (!g.attr(op, g.sym("@tf1_frame")) && !g.attr(op, g.sym("@tf2_while")))) continue;
    OpId body = b->as_graph();
    auto ins = g.inputs(op);
    auto bins = g.inputs(body);
    size_t carried = 0;
    for (PortId p : ins)
      if (g.port_name_str(p).starts_with("v_initial.")) ++carried;
    // Loop inputs: M, cond, v_initial.k, then captures; body inputs: iteration, cond, v.k.
    for (size_t k = 2; k < 2 + carried && k < bins.size() && k < ins.size(); ++k)
      if (const ir::TypeData* td = ranked(g.producer(ins[k])); td && !ranked(bins[k])) set_rank(bins[k], td->elem, td->dims.size());
    // Loop outputs: the carried values (body outputs 1..), then the scans (one axis more).
    std::vector<PortId> outs, bouts;
    for (PortId p : g.outputs(op))
      if (!g.is_control(p)) outs.push_back(p);
    for (PortId p : g.outputs(body))
      if (!g.is_control(p)) bouts.push_back(p);
    for (size_t k = 0; k < outs.size() && k + 1 < bouts.size(); ++k) {
      const ir::TypeData* td = ranked(g.producer(bouts[k + 1]));
      if (!td) td = ranked(bouts[k + 1]);
      if (td && !ranked(outs[k])) set_rank(outs[k], td->elem, td->dims.size() + (k < carried ? 0 : 1));
    }
  }
  return changed;
}

void name_onnx_outputs(ir::Graph& g) {
  finish_loops(g);
  for (PortId p : g.outputs(g.root())) {
    if (g.is_control(p)) continue;
    PortId src = g.producer(p);
    if (!src)
      throw Error(fmt::format("graph output '{}': the rule that converted its op does not make that output (fetch another "
                              "tensor with --outputs)",
                              g.port_name_str(p)));
    if (g.is_graph(g.port_op(src))) continue;
    g.set_attr(src, g.sym("@value"), Value(std::string(g.port_name_str(p))));
  }
}

}  // namespace amanda::tf_frontend
