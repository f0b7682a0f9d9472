// eliminate_if_with_const_cond: an If whose condition is a constant is replaced by the ops of the
// branch it always takes, moved into the If's scope (values the branch captured are read from
// where they come from). A branch that holds bodies of its own is left as it is (the Rewriter
// makes no attribute graphs).
#include <absl/container/flat_hash_map.h>

#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

bool inline_branch(ir::Rewriter& rw, ir::OpId iff, ir::OpId branch, std::string* why) {
  ir::Graph& g = rw.graph();
  auto order = topo(g, branch);
  if (!order) return *why = "the branch has a cycle", false;
  for (ir::OpId op : *order)
    if (has_graph_attr(g, op)) return *why = "the branch holds bodies of its own", false;
  absl::flat_hash_map<uint32_t, ir::PortId> map;  // branch value -> value in the If's scope
  for (ir::PortId p : g.inputs(branch)) {
    if (g.is_control(p) || (g.first_out_edge(p) == ir::EdgeId())) continue;
    const ir::Value* init = ir::fixed_initializer(g, p);
    if (!init || !init->is_tensor()) return *why = "the branch reads inputs of its own", false;
    map[p.value] = make_constant(rw, iff, init->as_tensor(), g.port_name_str(p));  // the branch's initializer, outside
  }
  auto outer = [&](ir::PortId src) -> ir::PortId {
    if (!src) return src;
    if (auto it = map.find(src.value); it != map.end()) return it->second;
    if (is_capture(g, src) && g.port_op(src) == iff) return g.producer(src);
    return ir::PortId();
  };
  rw.set_insertion_point_before(iff);
  for (ir::OpId op : *order) {
    ir::OpId n = rw.create_op(g.type(op), g.name_generated(op) ? g.sym("") : g.name(op), true);
    rw.set_insertion_point_before(iff);
    rw.set_attr_list(n, g.attrs(op));
    for (ir::PortId p : g.inputs(op)) {
      if (g.is_control(p)) continue;
      ir::PortId q = rw.add_port(n, ir::PortDir::In, g.port_name(p));
      rw.set_attr_list(q, g.attrs(p));
      if (ir::PortId src = g.producer(p)) {
        ir::PortId s = outer(src);
        if (!s) return *why = "a value of the branch comes from elsewhere", false;
        rw.connect(s, q);
      }
    }
    for (ir::PortId p : g.outputs(op)) {
      if (g.is_control(p)) continue;
      ir::PortId q = rw.add_port(n, ir::PortDir::Out, g.port_name(p));
      rw.set_attr_list(q, g.attrs(p));
      g.set_port_role(q, g.port_role(p));
      if (g.port_type(p)) rw.set_port_type(q, g.port_type(p));
      map[p.value] = q;
    }
  }
  auto outs = data_outputs(g, iff);
  size_t k = 0;
  for (ir::PortId bo : g.outputs(branch)) {
    if (g.is_control(bo)) continue;
    if (k >= outs.size()) return *why = "the branch has more outputs than the If", false;
    ir::PortId v = outer(g.producer(bo));
    if (!v) return *why = "a branch output is not computed in the branch", false;
    if (!replace_value(rw, outs[k], v)) return *why = "an output of the If is a graph output the branch value cannot name", false;
    ++k;
  }
  rw.erase_op(iff);
  return true;
}

PassResult eliminate_if_with_const_cond(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  ir::Rewriter rw(g);
  for (ir::OpId scope : scopes(g, o)) {
    if (!g.valid(scope)) continue;
    for (ir::OpId op : g.children(scope)) {
      if (!g.valid(op) || g.type_str(op) != "If" || o.excluded(g, op)) continue;
      ir::PortId c = input_value(g, op, 0);
      auto cond = c ? constant_scalar(g, c) : std::nullopt;
      if (!cond) continue;
      Symbol key = g.symbols().find(*cond != 0 ? "then_branch" : "else_branch");
      const ir::Value* b = key == SymbolTable::kNone ? nullptr : g.attr(op, key);
      if (!b || !b->is_graph()) continue;
      std::string why;
      rw.begin();
      bool ok = false;
      try {
        ok = inline_branch(rw, op, b->as_graph(), &why);
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (ok) {
        rw.commit();
        ++r.rewrites;
        ++r.erased;
      } else {
        rw.rollback();
        ++r.refused;
        r.notes.push_back(g.path(op) + ": If kept: " + why);
      }
    }
  }
  return r;
}

}  // namespace

void register_control(PassRegistry& r) {
  r.add({"eliminate_if_with_const_cond", "an If with a constant condition -> the ops of the branch it takes",
         eliminate_if_with_const_cond, true, true});
}

}  // namespace amanda::passes::detail
