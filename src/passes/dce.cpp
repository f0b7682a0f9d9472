// Dead code: ops whose outputs nobody reads (onnxoptimizer's eliminate_deadend), and initializers
// nobody reads (eliminate_unused_initializer). Works on any namespace: it asks nothing of an op but
// its uses.
#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

bool dead(const ir::Graph& g, ir::OpId op) {
  bool any = false;
  for (ir::PortId p : g.outputs(op)) {
    any = any || !g.is_control(p);
    if ((g.first_out_edge(p) != ir::EdgeId())) return false;
  }
  return any;  // an op with no outputs at all is kept: it is there for what it does
}

PassResult eliminate_deadend(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  ir::Rewriter rw(g);
  for (ir::OpId scope : scopes(g, o)) {
    if (!g.valid(scope)) continue;
    ir::TopoResult t = g.topo_order(scope);
    std::vector<ir::OpId> order = t.ok() ? std::move(t.order) : g.children(scope);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      ir::OpId op = *it;
      if (!g.valid(op) || !dead(g, op) || o.excluded(g, op)) continue;
      rw.erase_op(op);
      ++r.erased;
    }
  }
  return r;
}

PassResult eliminate_unused_initializer(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  ir::Rewriter rw(g);
  for (ir::OpId scope : scopes(g, o)) {
    if (!g.valid(scope)) continue;
    std::vector<ir::PortId> unused;
    for (ir::PortId p : g.inputs(scope))
      // (an input with a default value too: onnxoptimizer's rule, an input nothing reads)
      if (!g.is_control(p) && g.attr(p, g.sym("initializer")) && (g.first_out_edge(p) == ir::EdgeId())) unused.push_back(p);
    for (ir::PortId p : unused) {
      rw.erase_port(p);
      ++r.rewrites;
    }
  }
  return r;
}

}  // namespace

void register_cleanup(PassRegistry& r) {
  r.add({"eliminate_deadend", "removes ops whose outputs nobody reads (bodies included)", eliminate_deadend, false, true});
  r.add({"eliminate_unused_initializer", "removes initializers nobody reads", eliminate_unused_initializer, false, true});
}

}  // namespace amanda::passes::detail
