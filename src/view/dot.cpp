// The scene as Graphviz DOT: ops as boxes, graph ports as ellipses, each nested graph a cluster
// inside the scope of the op that holds it, with a dotted edge from the op to it.
#include <fmt/format.h>

#include "amanda/view/scene.h"
#include "scene_build.h"

namespace amanda::view {

namespace {

std::string quoted(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (c == '\n') {
      r += "\\n";
      continue;
    }
    r += c;
  }
  return r + '"';
}

const char* fill_for(Mark m) {
  switch (m) {
    case Mark::Added: return "#c6efc6";
    case Mark::Modified: return "#fff0a8";
    case Mark::Retyped: return "#ffd1a1";
    case Mark::Same: break;
  }
  return "#e8eef6";
}

class DotWriter {
 public:
  DotWriter(const Scene& s, const SceneOptions& o) : s_(s), o_(o) {}

  std::string run() {
    out_ += "digraph amanda {\n";
    out_ += fmt::format("  graph [rankdir=TB, compound=true, fontname=\"Helvetica\", fontsize=11, nodesep=0.25, ranksep=0.3, label={}, labelloc=t];\n",
                        quoted(o_.title));
    out_ += "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#e8eef6\", color=\"#5b6b82\", fontname=\"Helvetica\", fontsize=10, height=0.3, margin=\"0.08,0.03\"];\n";
    out_ += "  edge [color=\"#7d889a\", arrowsize=0.6];\n";
    for (size_t i = 0; i < s_.scopes.size(); ++i)
      if (s_.scopes[i].owner < 0) {
        if (i == 0) scope(0, "  ");
        else cluster(static_cast<uint32_t>(i), "  ");
      }
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  void cluster(uint32_t si, const std::string& ind) {
    const SceneScope& sc = s_.scopes[si];
    std::string title = sc.owner >= 0 ? s_.nodes[sc.owner].sublabel + " " + s_.nodes[sc.owner].label + ": " + sc.title : sc.title;
    out_ += fmt::format("{}subgraph cluster_{} {{\n{}  label={}; style=\"rounded,dashed\"; color=\"#9aa5b5\"; fontsize=10;\n", ind, si, ind,
                        quoted(title));
    scope(si, ind + "  ");
    if (!sc.node_count) out_ += fmt::format("{}  e{} [label=\"(empty)\", shape=plaintext];\n", ind, si);
    out_ += ind + "}\n";
  }

  void scope(uint32_t si, const std::string& ind) {
    const SceneScope& sc = s_.scopes[si];
    for (uint32_t i = sc.first_node; i < sc.first_node + sc.node_count; ++i) {
      const SceneNode& n = s_.nodes[i];
      if (n.kind == NodeKind::Op) {
        std::string label = n.sublabel.empty() ? n.label : n.label + "\n" + n.sublabel;
        Mark m = o_.diff ? o_.diff->of(n.op) : Mark::Same;
        out_ += fmt::format("{}n{} [label={}{}];\n", ind, i, quoted(label),
                            m == Mark::Same ? "" : fmt::format(", fillcolor=\"{}\"", fill_for(m)));
      } else {
        out_ += fmt::format("{}n{} [label={}, shape=ellipse, fillcolor=\"{}\"];\n", ind, i, quoted(n.label),
                            n.kind == NodeKind::Input ? "#dcefdc" : "#f3e1e1");
      }
    }
    for (uint32_t k = sc.first_edge; k < sc.first_edge + sc.edge_count; ++k) {
      const SceneEdge& e = s_.edges[k];
      out_ += fmt::format("{}n{} -> n{}{};\n", ind, e.src, e.dst, e.control ? " [style=dashed]" : "");
    }
    for (uint32_t i = sc.first_node; i < sc.first_node + sc.node_count; ++i)
      for (uint32_t b : s_.nodes[i].bodies) {
        cluster(b, ind);
        const SceneScope& body = s_.scopes[b];
        if (body.node_count)
          out_ += fmt::format("{}n{} -> n{} [style=dotted, lhead=cluster_{}, arrowhead=none];\n", ind, i, body.first_node, b);
        else
          out_ += fmt::format("{}n{} -> e{} [style=dotted, lhead=cluster_{}, arrowhead=none];\n", ind, i, b, b);
      }
  }

  const Scene& s_;
  const SceneOptions& o_;
  std::string out_;
};

}  // namespace

std::string scene_dot(const ir::Graph& g, const SceneOptions& o) {
  Scene s = build_scene(g, false);
  return DotWriter(s, o).run();
}

}  // namespace amanda::view
