// The graph boundary of a TensorFlow graph for ONNX (see the header).
#include "amanda/frontends/tensorflow/onnx_boundary.h"

#include <algorithm>
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

// "node", "node:k" -> (node, k)
std::pair<std::string, size_t> split_tensor_name(const std::string& s) {
  size_t c = s.rfind(':');
  if (c != std::string::npos && c + 1 < s.size() &&
      std::all_of(s.begin() + static_cast<long>(c) + 1, s.end(), [](char x) { return x >= '0' && x <= '9'; }))
    return {s.substr(0, c), static_cast<size_t>(std::stoul(s.substr(c + 1)))};
  return {s, 0};
}

// The TF.js signature's output names, in the file's order.
std::vector<std::string> signature_outputs(const ir::Graph& g) {
  std::vector<std::string> out;
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
    out.push_back(n && n->is_string() ? n->as_string() : e.key);
  }
  return out;
}

bool is_data(const ir::Graph& g, PortId p) { return !g.is_control(p); }

}  // namespace

void make_onnx_boundary(ir::Graph& g, const std::vector<std::string>& wanted) {
  OpId root = g.root();
  if (!g.type_str(root).starts_with("amanda/tensorflow/")) return;
  if (!g.outputs(root).empty() || !g.inputs(root).empty()) return;  // done already
  if (const Value* lib = g.attr(root, g.symbols().find("library")); lib && lib->is_map()) {
    const Value* f = lib->find("function");
    if (f && f->is_list() && !f->as_list().empty())
      throw Error(fmt::format("the graph's function library holds {} functions: functional control flow (If, While, "
                              "PartitionedCall, ...) is not converted to ONNX",
                              f->as_list().size()));
  }
  std::vector<OpId> ops = g.children(root);
  std::vector<std::string> outputs = wanted.empty() ? signature_outputs(g) : wanted;
  if (outputs.empty()) {
    // A plain GraphDef: every data output of an op that nobody reads.
    for (OpId op : ops) {
      std::string_view type = g.type_str(op);
      if (type == "Const" || type == "Placeholder" || type == "NoOp") continue;
      bool read = false;
      for (PortId p : g.outputs(op))
        if (is_data(g, p) && g.first_out_edge(p)) read = true;
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
    if (!sh || !sh->is_list())
      throw Error(fmt::format("Placeholder '{}': its shape attribute gives no rank (an ONNX graph input needs one)", node));
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
  for (auto& [name, src] : out_ports) {
    PortId port = g.add_port(root, ir::PortDir::Out, g.sym(name));
    g.connect(src, port);
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
    if (g.valid(op) && (g.type_str(op) == "Placeholder" || g.type_str(op) == "NoOp")) g.erase_op(op);
  // ONNX requires a graph name; a GraphDef has none.
  if (g.name_generated(root) || g.name_str(root).empty()) {
    g.set_name(root, g.sym("tensorflow_graph"));
    g.set_name_generated(root, false);
  }
  for (const char* k : {"tfjs", "versions", "library", "imports", "version", "@tfjs_shard_bytes"})
    if (Symbol s = g.symbols().find(k); s != SymbolTable::kNone) g.erase_attr(root, s);
  // TF1 while loops -> onnx::Loop ops (an op of an imported namespace: the table keeps it and
  // converts its body).
  if (lower_tf1_loops(g)) {
    Value::Map imports;
    imports.push_back({"onnx", Value(std::string("amanda/onnx/13"))});
    g.set_attr(root, g.sym("imports"), Value(std::move(imports)));
  }
}

void register_conventions(ir::Conventions& c) { c.add_constant_op("Const"); }

namespace {
// Loops made by lower_tf1_loops: the type ONNX knows, and each body output the value name of its
// producer (an Identity of its own).
void finish_loops(ir::Graph& g) {
  std::vector<OpId> loops = g.ops_of_type("onnx::Loop");
  if (loops.empty()) return;
  for (OpId op : loops) {
    g.set_type(op, g.sym("Loop"));
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
