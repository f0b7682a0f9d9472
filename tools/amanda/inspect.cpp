#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "commands.h"

namespace amanda::tool {

std::string inspect_report(const text::Document& doc, const Diagnostics& problems) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + '\n'; };
  line(fmt::format("document: {}", text::kind_name(doc.kind)));
  if (doc.kind == text::Document::Kind::Edge) {
    const auto& e = doc.edge;
    line(fmt::format("edge: {}:{} -> {}:{}", e.src_op, e.src_port, e.dst_op, e.dst_port));
  } else {
    const ir::Graph& g = doc.graph;
    // Namespaces of every graph node, and the nested graphs.
    std::map<std::string, size_t> namespaces;
    std::vector<std::string> nested;
    std::map<std::string, size_t> by_type;
    size_t ports = 0, control_edges = 0;
    for (uint32_t i = 1; i < g.id_bound(); ++i) {
      ir::OpId op(i);
      if (!g.valid(op)) continue;
      ports += g.inputs(op).size() + g.outputs(op).size();
      if (g.is_graph(op)) {
        if (g.graph_namespace(op)) ++namespaces[std::string(g.str(g.graph_namespace(op)))];
        if (op != g.root()) nested.push_back(g.path(op) + " (graph attribute of " + g.path(g.parent(op)) + ")");
      } else {
        std::string t(g.type_str(op));
        ++by_type[t.empty() ? "(no type)" : t];
        if (op != g.root() && g.has_body(op)) nested.push_back(g.path(op) + " (op with a body of " + std::to_string(g.child_count(op)) + " ops)");
      }
    }
    for (uint32_t i = 1; i < g.edge_id_bound(); ++i)
      if (g.valid(ir::EdgeId(i)) && g.is_control(ir::EdgeId(i))) ++control_edges;
    if (g.name(g.root())) line(fmt::format("name: {}", g.name_str(g.root())));
    if (namespaces.empty()) line("namespaces: (none)");
    for (const auto& [ns, n] : namespaces) line(fmt::format("namespace: {} ({} graph{})", ns, n, n == 1 ? "" : "s"));
    line(fmt::format("ops: {}", g.op_count()));
    line(fmt::format("edges: {} ({} data, {} control)", g.edge_count(), g.edge_count() - control_edges, control_edges));
    line(fmt::format("ports: {}", ports));
    if (g.root_kind() == ir::Graph::RootKind::Graph)
      line(fmt::format("graph ports: {} in, {} out", g.inputs(g.root()).size(), g.outputs(g.root()).size()));
    // Value types (ir/types.h): the graph's own ports, and how many ports carry a type.
    size_t typed = 0;
    for (uint32_t i = 1; i < g.port_id_bound(); ++i)
      if (g.valid(ir::PortId(i)) && g.port_type(ir::PortId(i))) ++typed;
    line(fmt::format("typed ports: {} of {} ({} distinct types)", typed, ports, g.types().size()));
    if (g.root_kind() == ir::Graph::RootKind::Graph)
      for (ir::PortDir d : {ir::PortDir::In, ir::PortDir::Out}) {
        size_t shown = 0, n = 0;
        for (ir::PortId p : g.ports(g.root(), d)) {
          if (g.is_control(p)) continue;
          if (++n > 20) continue;
          ++shown;
          std::string role = g.port_role(p) == ir::PortRole::None ? "" : fmt::format(" ({})", ir::role_name(g.port_role(p)));
          line(fmt::format("  {} {}: {}{}", d == ir::PortDir::In ? "input" : "output", g.port_name_str(p),
                           ir::format_type(g, g.port_type(p)), role));
        }
        if (n > shown) line(fmt::format("  ... and {} more {}s", n - shown, d == ir::PortDir::In ? "input" : "output"));
      }
    std::vector<std::pair<std::string, size_t>> types(by_type.begin(), by_type.end());
    std::stable_sort(types.begin(), types.end(), [](auto& a, auto& b) { return a.second > b.second; });
    line(fmt::format("op types: {}", types.size()));
    for (const auto& [t, n] : types) line(fmt::format("  {:>8}  {}", n, t));
    line(fmt::format("nested graphs: {}", nested.size()));
    for (size_t i = 0; i < nested.size() && i < 50; ++i) line("  " + nested[i]);
    if (nested.size() > 50) line(fmt::format("  ... and {} more", nested.size() - 50));
  }
  size_t errors = problems.error_count();
  line(fmt::format("problems: {}", errors));
  for (const auto& d : problems.items())
    if (d.severity == Severity::Error) line("  " + d.str());
  return out;
}

}  // namespace amanda::tool
