// What a conversion into nd4j needs that no table can say: SameDiff has no constant op, its
// constants are variables (CONSTANT), which the IR holds as graph inputs with an initializer, as
// ONNX does. So constant ops of the root graph become such inputs before the tables run. And going
// out of nd4j, a noop whose output nothing reads is dropped: libnd4j's noop only orders execution
// (TensorFlow's control-flow imports make them), and other formats need no such op.
#include "amanda/frameworks/onnx/infer.h"
#include "amanda/ir/conventions.h"
#include "frameworks/nd4j/nd4j.h"

namespace amanda::nd4j {

size_t constants_to_initializers(ir::Graph& g) {
  ir::OpId root = g.root();
  size_t n = 0;
  for (ir::OpId op : g.children(root)) {
    if (g.outputs(op).size() != 1 || !g.inputs(op).empty()) continue;
    ir::PortId out = g.output(op, 0);
    if (!ir::is_constant_output(g, out)) continue;
    const ir::Value* t = ir::constant_tensor(g, out);
    if (!t || !t->is_tensor()) continue;
    std::string name(g.name_str(op));
    if (const ir::Value* v = g.attr(out, g.sym("@value")); v && v->is_string()) name = v->as_string();
    ir::PortId in = g.add_input(root, g.sym(name));
    g.set_attr(in, g.sym("initializer"), *t);
    g.set_attr(in, g.sym("@value"), ir::Value(name));
    g.set_port_role(in, ir::PortRole::Initializer);
    // Typed from the tensor itself: inference has not run yet, and ONNX's needs the inputs' types.
    std::vector<ir::Dim> dims;
    for (int64_t d : t->as_tensor().shape) dims.push_back(ir::Dim::known(d));
    g.set_port_type(in, g.types().tensor(t->as_tensor().dtype, dims));
    g.replace_all_uses(out, in);
    g.erase_op(op);
    ++n;
  }
  return n;
}

size_t drop_unused_noops(ir::Graph& g) {
  // A FlatGraph has no name; formats that need one (ONNX's graph name) get this one.
  if (g.name(g.root()) == 0) g.set_name(g.root(), g.sym("samediff"));
  size_t n = 0;
  for (ir::OpId op : g.children(g.root())) {
    if (g.type_str(op) != "noop") continue;
    bool used = false;
    for (ir::PortId p : g.outputs(op)) used |= g.out_degree(p) > 0;
    if (used) continue;
    g.erase_op(op);
    ++n;
  }
  return n;
}

TypeMemo remember_types(const ir::Graph& g) {
  TypeMemo m;
  Symbol key = g.symbols().find("@value");
  if (key == SymbolTable::kNone) return m;
  g.for_each_op([&](ir::OpId op) {
    for (ir::PortId p : g.outputs(op))
      if (const ir::Value* v = g.attr(p, key); v && v->is_string() && g.port_type(p)) m.by_value[v->as_string()] = g.port_type(p);
  });
  return m;
}

size_t restore_types(ir::Graph& g, const TypeMemo& m) {
  size_t n = 0;
  Symbol key = g.symbols().find("@value");
  if (key == SymbolTable::kNone) return 0;
  g.for_each_op([&](ir::OpId op) {
    for (ir::PortId p : g.outputs(op)) {
      if (g.port_type(p)) continue;
      const ir::Value* v = g.attr(p, key);
      if (!v || !v->is_string()) continue;
      if (auto it = m.by_value.find(v->as_string()); it != m.by_value.end()) {
        g.set_port_type(p, it->second);
        ++n;
      }
    }
  });
  return n;
}

void finish_onnx(ir::Graph& g) {
  // The ops the tables made have no types: ONNX's inference gives every value (graph outputs
  // included) its type, which the ONNX writer declares.
  for (ir::PortId p : g.inputs(g.root()))
    if (g.port_type(p)) ir::write_type_attrs(g, p, g.port_type(p));
  onnx_frontend::InferOptions o;
  o.write_attrs = true;
  onnx_frontend::infer_types(g, o);
}

}  // namespace amanda::nd4j
