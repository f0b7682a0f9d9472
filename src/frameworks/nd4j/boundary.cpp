// What a conversion into nd4j needs that no table can say: SameDiff has no constant op, its
// constants are variables (CONSTANT), which the IR holds as graph inputs with an initializer, as
// ONNX does. So constant ops of the root graph become such inputs before the tables run.
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
    g.set_port_type(in, g.port_type(out));
    g.replace_all_uses(out, in);
    g.erase_op(op);
    ++n;
  }
  return n;
}

}  // namespace amanda::nd4j
