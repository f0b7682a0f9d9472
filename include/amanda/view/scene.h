// The viewer's scene: every scope of a graph (the root, each op body, each graph held in an
// attribute) laid out on its own, with the ops, the graph ports as small nodes, the edges as
// polylines, and each op's details (attributes, ports, types and shapes). Written as the JSON the
// HTML viewer reads (web/viewer/), or as Graphviz DOT for a static picture.
#pragma once

#include <string>

#include "amanda/ir/graph.h"
#include "amanda/view/diff.h"

namespace amanda::view {

struct SceneOptions {
  std::string title;          // shown in the page's header (e.g. the file name)
  const Diff* diff = nullptr;  // colours ops by what a conversion did to them
};

// The scene as JSON (for the HTML viewer).
std::string scene_json(const ir::Graph& g, const SceneOptions& o);
// One self-contained HTML page: the viewer's script and style sheet and the scene.
std::string scene_html(const ir::Graph& g, const SceneOptions& o);
// Graphviz DOT of the whole graph (nested graphs as clusters).
std::string scene_dot(const ir::Graph& g, const SceneOptions& o);

}  // namespace amanda::view
