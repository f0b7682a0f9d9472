// Small helpers shared by the ir tests: look ports up by name, and turn ids into names or paths
// so that assertions compare readable strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/support/diagnostics.h"

namespace amanda::ir::test {

inline PortId in(Graph& g, OpId op, std::string_view name) { return g.find_input(op, g.sym(name)); }
inline PortId out(Graph& g, OpId op, std::string_view name) { return g.find_output(op, g.sym(name)); }

inline std::vector<std::string> names(const Graph& g, const std::vector<OpId>& ops) {
  std::vector<std::string> r;
  for (OpId op : ops) r.emplace_back(g.name_str(op));
  return r;
}

inline std::vector<std::string> paths(const Graph& g, const std::vector<PortId>& ports) {
  std::vector<std::string> r;
  for (PortId p : ports) r.push_back(g.path(p));
  return r;
}

inline std::vector<std::string> edge_paths(const Graph& g, const std::vector<EdgeId>& edges) {
  std::vector<std::string> r;
  for (EdgeId e : edges) r.push_back(g.path(e));
  return r;
}

// Every live edge of the graph as "src path -> dst path", in edge id order.
inline std::vector<std::string> all_edges(const Graph& g) {
  std::vector<std::string> r;
  for (uint32_t i = 1; i < g.edge_id_bound(); ++i)
    if (g.valid(EdgeId(i))) r.push_back(g.path(g.edge_src(EdgeId(i))) + " -> " + g.path(g.edge_dst(EdgeId(i))));
  return r;
}

inline std::vector<std::string> wheres(const Diagnostics& d) {
  std::vector<std::string> r;
  for (const auto& x : d.items()) r.push_back(x.where);
  return r;
}

}  // namespace amanda::ir::test
