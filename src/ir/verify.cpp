#include "amanda/ir/verify.h"

#include <absl/container/flat_hash_set.h>

namespace amanda::ir {

namespace {

std::string describe_scope(const Graph& g, OpId s) {
  if (s == g.root()) return g.root_kind() == Graph::RootKind::Graph ? "the top-level graph" : "the top-level op";
  return (g.is_graph(s) ? "graph " : "op ") + g.path(s);
}

}  // namespace

bool verify(const Graph& g, Diagnostics& diags) {
  size_t before = diags.error_count();
  // Names and ports, per node (ops and graph nodes).
  for (uint32_t i = 1; i < g.id_bound(); ++i) {
    OpId op(i);
    if (!g.valid(op)) continue;
    if (!g.is_graph(op) && op != g.root()) {
      OpId first = g.find_op(g.parent(op), g.name(op));
      if (first && first != op)
        diags.error(g.path(op), "duplicate name '" + std::string(g.name_str(op)) + "' in " +
                                    describe_scope(g, g.parent(op)) + " (op ids " + std::to_string(first.value) +
                                    " and " + std::to_string(op.value) + ")");
    }
    for (PortDir dir : {PortDir::In, PortDir::Out}) {
      auto ps = g.ports(op, dir);
      if (ps.size() > 1) {
        absl::flat_hash_set<Symbol> seen;
        for (PortId p : ps)
          if (!seen.insert(g.port_name(p)).second)
            diags.error(g.path(p), "duplicate port name on the " + std::string(dir == PortDir::In ? "input" : "output") +
                                       " side of " + g.path(op));
      }
      for (PortId p : ps) {
        size_t n = 0;
        std::string producers;
        for (EdgeId e = g.first_in_edge(p); e; e = g.next_in_edge(e)) {
          ++n;
          if (n <= 4) producers += (n > 1 ? ", " : "") + g.path(g.edge_src(e));
        }
        if (n > 1)
          diags.error(g.path(p), "data port has " + std::to_string(n) + " producers (" + producers +
                                     (n > 4 ? ", ..." : "") + "); a data port takes at most one");
      }
    }
  }
  // Edges.
  for (uint32_t i = 1; i < g.edge_id_bound(); ++i) {
    EdgeId e(i);
    if (!g.valid(e)) continue;
    PortId src = g.edge_src(e), dst = g.edge_dst(e);
    if (!g.valid(src) || !g.valid(dst) || !g.valid(g.port_op(src)) || !g.valid(g.port_op(dst))) {
      diags.error("edge #" + std::to_string(i), "edge endpoint is missing (erased op or port)");
      continue;
    }
    OpId scope = g.edge_scope(e);
    OpId s_op = g.port_op(src), d_op = g.port_op(dst);
    bool dst_ok = g.port_dir(dst) == PortDir::Out ? d_op == scope : (!g.is_graph(d_op) && g.parent(d_op) == scope);
    bool src_ok;
    if (g.port_dir(src) == PortDir::Out)
      src_ok = !g.is_graph(s_op) && g.parent(s_op) == scope;
    else
      src_ok = s_op == scope || (g.is_graph(scope) && scope != g.root() && s_op == g.parent(scope));
    if (!dst_ok || !src_ok) {
      std::string why = !src_ok ? g.path(src) + " is not visible in " + describe_scope(g, scope)
                                : g.path(dst) + " is not a sink of " + describe_scope(g, scope);
      diags.error(g.path(e), "edge crosses scopes: " + why +
                                 "; an edge may leave a nested graph only through its owner's ports");
    }
    if (g.is_control(src) != g.is_control(dst))
      diags.error(g.path(e), "edge joins a control port to a data port");
  }
  return diags.error_count() == before;
}

}  // namespace amanda::ir
