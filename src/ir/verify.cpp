#include "amanda/ir/verify.h"

#include "amanda/ir/conventions.h"

#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

namespace amanda::ir {

namespace {

std::string describe_scope(const Graph& g, OpId s) {
  if (s == g.root()) return g.root_kind() == Graph::RootKind::Graph ? "the top-level graph" : "the top-level op";
  return (g.is_graph(s) ? "graph " : "op ") + g.path(s);
}

// The op among `scope`'s children that holds `op` (op itself, or the body op it is nested in);
// null when op is not inside scope.
OpId child_of(const Graph& g, OpId op, OpId scope) {
  while (op && g.valid(op) && g.parent(op) != scope) {
    if (op == g.root()) return OpId();
    op = g.parent(op);
  }
  return op && g.valid(op) ? op : OpId();
}

// TensorFlow 1's while loops are dataflow cycles closed by NextIteration, which feeds the loop's
// Merge for the next iteration (docs/tensorflow.md keeps them as they are): the edges out of it
// are the one kind of back edge a graph may have.
bool is_loop_back_edge(const Graph& g, OpId op) {
  std::string_view t = g.type_str(op);
  return t == "NextIteration" || t == "RefNextIteration" || conventions().is_loop_back_op(t);  // (other frameworks' register theirs)
}

// Data and control edges must not form a cycle, within a scope or through a nested graph (an
// edge from inside a body counts as an edge of the op that owns the body). One pass over the
// edges and one topological sort of all ops: linear, whatever the number of scopes.
void check_cycles(const Graph& g, Diagnostics& diags) {
  const size_t n = g.id_bound();
  // The arcs between siblings (a -> b), in one array sorted by a (counting sort: two passes).
  std::vector<std::pair<uint32_t, uint32_t>> arcs;
  for (uint32_t i = 1; i < g.edge_id_bound(); ++i) {
    EdgeId e(i);
    if (!g.valid(e)) continue;
    PortId src = g.edge_src(e), dst = g.edge_dst(e);
    if (!g.valid(src) || !g.valid(dst)) continue;
    if (g.port_dir(src) != PortDir::Out || g.port_dir(dst) != PortDir::In) continue;  // a scope's boundary
    if (is_loop_back_edge(g, g.port_op(src))) continue;
    OpId scope = g.edge_scope(e);
    OpId a = child_of(g, g.port_op(src), scope), b = child_of(g, g.port_op(dst), scope);
    if (!a || !b || g.is_graph(a) || g.is_graph(b)) continue;
    arcs.emplace_back(a.value, b.value);
  }
  std::vector<uint32_t> first(n + 1, 0), succ(arcs.size()), indeg(n, 0);
  for (const auto& [a, b] : arcs) {
    ++first[a + 1];
    ++indeg[b];
  }
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (const auto& [a, b] : arcs) succ[fill[a]++] = b;
  }
  std::vector<uint32_t> ready;
  for (uint32_t i = 1; i < n; ++i)
    if (indeg[i] == 0) ready.push_back(i);
  size_t left = n ? n - 1 : 0;
  while (!ready.empty()) {
    uint32_t x = ready.back();
    ready.pop_back();
    --left;
    for (uint32_t k = first[x]; k < first[x + 1]; ++k)
      if (--indeg[succ[k]] == 0) ready.push_back(succ[k]);
  }
  if (left == 0) return;
  // What is left lies on a cycle or after one: walk back among those left until an op repeats.
  std::vector<uint32_t> pred(n, 0);  // one predecessor that is left, per op left
  for (const auto& [a, b] : arcs)
    if (indeg[a] && indeg[b]) pred[b] = a;
  std::vector<uint8_t> reported(n, 0);
  for (uint32_t start = 1; start < n; ++start) {
    if (!indeg[start] || reported[start]) continue;
    std::vector<uint32_t> walk;
    absl::flat_hash_set<uint32_t> on_walk;
    uint32_t cur = start;
    bool closed = false;  // the walk came back to an op on it: a new cycle
    while (cur && !reported[cur]) {
      if (!on_walk.insert(cur).second) {
        closed = true;
        break;
      }
      walk.push_back(cur);
      cur = pred[cur];
    }
    for (uint32_t w : walk) reported[w] = 1;
    if (!closed) continue;  // led into a cycle reported already
    // walk holds the cycle backwards from where cur first appears.
    std::vector<uint32_t> cycle;
    for (size_t k = walk.size(); k-- > 0;) {
      cycle.push_back(walk[k]);
      if (walk[k] == cur) break;
    }
    std::string text;
    for (size_t k = 0; k < cycle.size() && k < 8; ++k) text += g.path(OpId(cycle[k])) + " -> ";
    text += cycle.size() > 8 ? "..." : g.path(OpId(cycle[0]));
    diags.error(g.path(OpId(cycle[0])), "data edges form a cycle: " + text + " (a graph is acyclic; a loop is a Loop op with a body)");
  }
}

}  // namespace

bool verify(const Graph& g, Diagnostics& diags) {
  size_t before = diags.error_count();
  const Symbol value_key = g.symbols().find("@value");  // null when no port has a value name
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
      // The values a node defines for its body (the input side of a graph or subgraph op: graph
      // inputs, initializers) have one definition each: a port renamed on import keeps the file's
      // name in "@value", and two ports of one name there are two definitions of one value (ONNX
      // requires SSA; a second initializer of a name would shadow the first).
      if (dir == PortDir::In && ps.size() > 1 && value_key != SymbolTable::kNone && (g.is_graph(op) || op == g.root())) {
        absl::flat_hash_map<std::string_view, PortId> defined;
        for (PortId p : ps) {
          const Value* v = g.attr(p, value_key);
          std::string_view name = v && v->is_string() ? std::string_view(v->as_string()) : g.port_name_str(p);
          if (name.empty()) continue;
          auto [it, added] = defined.emplace(name, p);
          if (!added)
            diags.error(g.path(p), "value '" + std::string(name) + "' is defined twice on the input side of " + g.path(op) +
                                       " (also by " + g.path(it->second) + "); a value has one definition");
        }
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
  check_cycles(g, diags);
  return diags.error_count() == before;
}

}  // namespace amanda::ir
