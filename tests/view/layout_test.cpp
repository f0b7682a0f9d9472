// The viewer's layered layout: layers go down along every edge, nodes of a layer never overlap,
// edges start and end on their nodes, cycles and long edges are handled, and the result does not
// depend on anything but the input.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "amanda/view/layout.h"

namespace amanda::view {
namespace {

LayoutGraph graph(size_t n, std::vector<std::pair<uint32_t, uint32_t>> edges, float w = 60, float h = 30) {
  LayoutGraph g;
  g.width.assign(n, w);
  g.height.assign(n, h);
  g.edges = std::move(edges);
  return g;
}

// No two nodes of one layer overlap (checked on the coordinates, not on the algorithm's order).
void expect_no_overlap(const LayoutGraph& g, const Layout& l) {
  std::map<uint32_t, std::vector<uint32_t>> rows;
  for (uint32_t v = 0; v < g.width.size(); ++v) rows[l.layer[v]].push_back(v);
  for (auto& [layer, row] : rows) {
    std::sort(row.begin(), row.end(), [&](uint32_t a, uint32_t b) { return l.x[a] < l.x[b]; });
    for (size_t i = 1; i < row.size(); ++i)
      ASSERT_LE(l.x[row[i - 1]] + g.width[row[i - 1]], l.x[row[i]] + 0.01f) << "layer " << layer;
  }
}

TEST(Layout, ChainGoesDown) {
  LayoutGraph g = graph(3, {{0, 1}, {1, 2}});
  Layout l = layered_layout(g);
  EXPECT_LT(l.y[0] + g.height[0], l.y[1]);
  EXPECT_LT(l.y[1] + g.height[1], l.y[2]);
  // A chain of equal boxes is one straight column.
  EXPECT_FLOAT_EQ(l.x[0], l.x[1]);
  EXPECT_FLOAT_EQ(l.x[1], l.x[2]);
  ASSERT_EQ(l.points[0].size(), 4u);
  EXPECT_FLOAT_EQ(l.points[0][0], l.x[0] + 30);  // leaves the bottom centre of 0
  EXPECT_FLOAT_EQ(l.points[0][1], l.y[0] + 30);
  EXPECT_FLOAT_EQ(l.points[0][2], l.x[1] + 30);  // reaches the top centre of 1
  EXPECT_FLOAT_EQ(l.points[0][3], l.y[1]);
}

TEST(Layout, DiamondSidesShareALayerWithoutOverlap) {
  LayoutGraph g = graph(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  Layout l = layered_layout(g);
  EXPECT_EQ(l.layer[1], l.layer[2]);
  EXPECT_GT(l.layer[3], l.layer[1]);
  expect_no_overlap(g, l);
  EXPECT_GE(l.width, 120.0f);
}

TEST(Layout, SourcesSitJustAboveTheirConsumer) {
  // 0 -> 1 -> 2 -> 3, and a weight 4 read only by 3: it goes to the layer above 3, not to the top.
  LayoutGraph g = graph(5, {{0, 1}, {1, 2}, {2, 3}, {4, 3}});
  Layout l = layered_layout(g);
  EXPECT_EQ(l.layer[4] + 1, l.layer[3]);
  EXPECT_EQ(l.layer[0], 0u);
}

TEST(Layout, LongEdgesBendThroughTheLayersTheyCross) {
  LayoutGraph g = graph(4, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  Layout l = layered_layout(g);
  ASSERT_EQ(l.layer[3], 3u);
  EXPECT_EQ(l.points[3].size(), 4u + 2 * 2 * 2);  // two crossed layers, a point at the top and bottom of each
  expect_no_overlap(g, l);
  // The long edge passes beside the middle nodes, not through them.
  for (size_t k = 2; k + 2 < l.points[3].size(); k += 2) {
    float x = l.points[3][k];
    for (uint32_t v : {1u, 2u}) EXPECT_TRUE(x < l.x[v] || x > l.x[v] + g.width[v]) << "point " << k / 2;
  }
}

TEST(Layout, CyclesAreLaidOutWithOneEdgeUpwards) {
  LayoutGraph g = graph(3, {{0, 1}, {1, 2}, {2, 0}, {1, 1}});
  Layout l = layered_layout(g);
  int up = 0;
  for (size_t e = 0; e < 3; ++e) up += l.reversed[e];
  EXPECT_EQ(up, 1);
  EXPECT_TRUE(l.points[3].empty());  // a self loop is not drawn
  for (size_t e = 0; e < 3; ++e) EXPECT_GE(l.points[e].size(), 4u);
  // The reversed edge still starts at its own source.
  for (size_t e = 0; e < 3; ++e)
    if (l.reversed[e]) EXPECT_FLOAT_EQ(l.points[e][0], l.x[g.edges[e].first] + 30);
}

TEST(Layout, EmptyAndEdgelessGraphs) {
  Layout empty = layered_layout(LayoutGraph{});
  EXPECT_TRUE(empty.x.empty());
  LayoutGraph g = graph(3, {});
  Layout l = layered_layout(g);
  expect_no_overlap(g, l);
  EXPECT_EQ(l.layer[0], l.layer[2]);
}

TEST(Layout, RandomDagsKeepTheInvariantsAndAreDeterministic) {
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    uint32_t n = 200 + 400 * round;
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    for (uint32_t v = 1; v < n; ++v) {
      uint32_t k = 1 + rng() % 3;
      for (uint32_t j = 0; j < k; ++j) edges.push_back({static_cast<uint32_t>(rng() % v), v});
    }
    LayoutGraph g = graph(n, edges);
    for (uint32_t v = 0; v < n; ++v) g.width[v] = 40 + float(rng() % 100);
    Layout l = layered_layout(g);
    expect_no_overlap(g, l);
    for (size_t e = 0; e < edges.size(); ++e) {
      auto [a, b] = edges[e];
      EXPECT_LT(l.layer[a], l.layer[b]);
      const auto& p = l.points[e];
      ASSERT_GE(p.size(), 4u);
      for (size_t k = 3; k < p.size(); k += 2) ASSERT_GE(p[k], p[k - 2]) << "edge " << e << " goes up";
    }
    Layout again = layered_layout(g);
    EXPECT_EQ(l.x, again.x);
    EXPECT_EQ(l.y, again.y);
  }
}

}  // namespace
}  // namespace amanda::view
