// A layered ("Sugiyama") layout of one directed graph, for the viewer: cycles broken by reversing
// DFS back edges, longest-path layers (sources pulled down next to their first consumer), dummy
// vertices on long edges, barycenter ordering sweeps, and x coordinates placed by isotonic
// regression (each vertex as near the mean of its neighbours as the spacing allows). Every step is
// O(V + E) or O(V log V) per sweep, so a 100,000-op graph lays out in well under a second (see
// docs/viewer.md for why this is not dagre or ELK).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace amanda::view {

struct LayoutGraph {
  std::vector<float> width, height;                   // one per node
  std::vector<std::pair<uint32_t, uint32_t>> edges;  // (source, destination) node indices
};

struct LayoutOptions {
  float node_sep = 20;    // horizontal gap between neighbours in a layer
  float layer_sep = 36;   // vertical gap between layers
  float dummy_width = 6;  // room a long edge takes where it crosses a layer
  int sweeps = -1;        // ordering sweeps (down + up); -1: by size (fewer for big graphs)
};

struct Layout {
  std::vector<float> x, y;                  // top-left corner of each node
  std::vector<std::vector<float>> points;   // per edge: x0, y0, x1, y1, ... (empty for a self loop)
  std::vector<uint8_t> reversed;            // per edge: laid out upwards (it closes a cycle)
  std::vector<uint32_t> layer;              // layer of each node
  float width = 0, height = 0;
};

Layout layered_layout(const LayoutGraph& g, const LayoutOptions& options = {});

}  // namespace amanda::view
