// The scene before it is written out: scopes, nodes and edges, each scope laid out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/view/diff.h"

namespace amanda::view {

enum class NodeKind : uint8_t { Op, Input, Output };

struct SceneNode {
  NodeKind kind;
  ir::OpId op;      // Op
  ir::PortId port;  // Input / Output: the port it stands for
  uint32_t scope;
  std::string label, sublabel;
  float x = 0, y = 0, w = 0, h = 0;
  std::vector<uint32_t> bodies;  // scopes drawn inside this op when it is expanded
};

struct SceneEdge {
  uint32_t src, dst;  // node indices
  bool control;
  std::vector<float> points;
  bool reversed = false;  // closes a cycle: leaves the source's top, reaches the destination's bottom
};

struct SceneScope {
  int64_t owner = -1;  // node index of the op whose body this is; -1 for top-level graphs
  std::string title;
  uint32_t first_node = 0, node_count = 0, first_edge = 0, edge_count = 0;
  float w = 0, h = 0;
};

struct Scene {
  std::vector<SceneScope> scopes;
  std::vector<SceneNode> nodes;
  std::vector<SceneEdge> edges;
  size_t ops = 0;
  double layout_seconds = 0;
};

// Builds every scope's nodes and edges and lays each out; layout=false leaves coordinates at 0
// (the DOT writer lets Graphviz place them).
Scene build_scene(const ir::Graph& g, bool layout = true);

}  // namespace amanda::view
