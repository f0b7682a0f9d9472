// The layered layout of view/layout.h. Vertices are the graph's nodes followed by the dummies of
// long edges; "segments" join vertices of adjacent layers.
#include "amanda/view/layout.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>

namespace amanda::view {

namespace {

// Compressed adjacency: the neighbours of v are adj[off[v] .. off[v + 1]).
struct Adjacency {
  std::vector<uint32_t> off, adj;
  std::span<const uint32_t> of(uint32_t v) const { return {adj.data() + off[v], adj.data() + off[v + 1]}; }
};

Adjacency adjacency(size_t n, const std::vector<std::pair<uint32_t, uint32_t>>& pairs, bool forward) {
  Adjacency a;
  a.off.assign(n + 1, 0);
  for (const auto& [s, d] : pairs) ++a.off[(forward ? s : d) + 1];
  for (size_t i = 0; i < n; ++i) a.off[i + 1] += a.off[i];
  a.adj.resize(pairs.size());
  std::vector<uint32_t> fill(a.off.begin(), a.off.end() - 1);
  for (const auto& [s, d] : pairs) a.adj[fill[forward ? s : d]++] = forward ? d : s;
  return a;
}

// Edges that close a cycle (DFS back edges, roots taken sources first) are laid out reversed.
std::vector<uint8_t> back_edges(uint32_t n, const LayoutGraph& g) {
  size_t m = g.edges.size();
  std::vector<uint32_t> off(n + 1, 0), adj(m), indeg(n, 0);
  for (const auto& [s, d] : g.edges) ++off[s + 1], ++indeg[d];
  for (uint32_t i = 0; i < n; ++i) off[i + 1] += off[i];
  std::vector<uint32_t> fill(off.begin(), off.end() - 1);
  for (uint32_t e = 0; e < m; ++e) adj[fill[g.edges[e].first]++] = e;
  std::vector<uint8_t> rev(m, 0), state(n, 0);
  std::vector<std::pair<uint32_t, uint32_t>> stack;
  auto dfs = [&](uint32_t r) {
    state[r] = 1;
    stack.push_back({r, off[r]});
    while (!stack.empty()) {
      auto [v, i] = stack.back();
      if (i == off[v + 1]) {
        state[v] = 2;
        stack.pop_back();
        continue;
      }
      stack.back().second = i + 1;
      uint32_t e = adj[i], w = g.edges[e].second;
      if (state[w] == 1) rev[e] = 1;  // a self loop too; it is never drawn
      else if (state[w] == 0) {
        state[w] = 1;
        stack.push_back({w, off[w]});
      }
    }
  };
  for (uint32_t v = 0; v < n; ++v)
    if (!indeg[v] && !state[v]) dfs(v);
  for (uint32_t v = 0; v < n; ++v)
    if (!state[v]) dfs(v);
  return rev;
}

// The least-squares placement of centres near `want` (weights `wt`) keeping centre i + 1 at least
// gap[i] right of centre i: isotonic regression (pool adjacent violators) on want - offset.
void place(std::vector<double>& want, const std::vector<double>& wt, const std::vector<double>& gap) {
  size_t k = want.size();
  if (!k) return;
  std::vector<double> offs(k, 0);
  for (size_t i = 1; i < k; ++i) offs[i] = offs[i - 1] + gap[i - 1];
  struct Block {
    double sum, weight;
    size_t count;
  };
  std::vector<Block> blocks;
  blocks.reserve(k);
  for (size_t i = 0; i < k; ++i) {
    blocks.push_back({(want[i] - offs[i]) * wt[i], wt[i], 1});
    while (blocks.size() > 1) {
      Block& b = blocks.back();
      Block& a = blocks[blocks.size() - 2];
      if (a.sum / a.weight <= b.sum / b.weight) break;
      a.sum += b.sum, a.weight += b.weight, a.count += b.count;
      blocks.pop_back();
    }
  }
  size_t i = 0;
  for (const Block& b : blocks)
    for (size_t j = 0; j < b.count; ++j, ++i) want[i] = b.sum / b.weight + offs[i];
}

constexpr double kCentrePull = 0.15;

}  // namespace

Layout layered_layout(const LayoutGraph& g, const LayoutOptions& o) {
  const uint32_t n = static_cast<uint32_t>(g.width.size());
  const size_t m = g.edges.size();
  Layout out;
  out.x.assign(n, 0);
  out.y.assign(n, 0);
  out.layer.assign(n, 0);
  out.points.resize(m);
  out.reversed.assign(m, 0);
  if (!n) return out;

  // 1. Orient every edge downwards.
  std::vector<uint8_t> rev = back_edges(n, g);
  std::vector<std::pair<uint32_t, uint32_t>> oriented;  // non-loop edges, oriented
  std::vector<uint32_t> oriented_of(m, UINT32_MAX);
  oriented.reserve(m);
  for (uint32_t e = 0; e < m; ++e) {
    auto [s, d] = g.edges[e];
    if (s == d) continue;
    oriented_of[e] = static_cast<uint32_t>(oriented.size());
    oriented.push_back(rev[e] ? std::pair{d, s} : std::pair{s, d});
  }
  Adjacency succ = adjacency(n, oriented, true), pred = adjacency(n, oriented, false);

  // 2. Layers: longest path from the sources (Kahn's order); then each source moves down to just
  // above its highest consumer, so a constant or a weight sits next to the op that reads it.
  std::vector<uint32_t> layer(n, 0), indeg(n), topo;
  topo.reserve(n);
  for (uint32_t v = 0; v < n; ++v) {
    indeg[v] = static_cast<uint32_t>(pred.of(v).size());
    if (!indeg[v]) topo.push_back(v);
  }
  for (size_t i = 0; i < topo.size(); ++i)
    for (uint32_t w : succ.of(topo[i])) {
      layer[w] = std::max(layer[w], layer[topo[i]] + 1);
      if (--indeg[w] == 0) topo.push_back(w);
    }
  for (size_t i = topo.size(); i-- > 0;) {
    uint32_t v = topo[i];
    if (!pred.of(v).empty() || succ.of(v).empty()) continue;
    uint32_t lo = UINT32_MAX;
    for (uint32_t w : succ.of(v)) lo = std::min(lo, layer[w]);
    layer[v] = lo - 1;
  }
  uint32_t layers = 0;
  for (uint32_t v = 0; v < n; ++v) layers = std::max(layers, layer[v] + 1);

  // 3. Dummy vertices on long edges, within a budget: the longest edges of a huge graph are drawn
  // straight rather than letting dummies outnumber the ops many times over.
  std::vector<uint64_t> by_span;
  for (const auto& [a, b] : oriented) {
    uint32_t span = layer[b] - layer[a];
    if (span >= by_span.size()) by_span.resize(span + 1, 0);
    ++by_span[span];
  }
  const uint64_t budget = std::max<uint64_t>(200'000, 4ull * n);
  uint32_t max_span = 1;
  for (uint64_t used = 0; max_span + 1 < by_span.size(); ++max_span) {
    uint64_t more = by_span[max_span + 1] * max_span;
    if (used + more > budget) break;
    used += more;
  }
  std::vector<uint32_t> vlayer(layer);
  std::vector<double> vwidth(g.width.begin(), g.width.end());
  std::vector<uint32_t> chain(oriented.size(), UINT32_MAX);  // first dummy of an oriented edge
  std::vector<std::pair<uint32_t, uint32_t>> segs;
  segs.reserve(oriented.size() * 2);
  for (size_t i = 0; i < oriented.size(); ++i) {
    auto [a, b] = oriented[i];
    uint32_t span = layer[b] - layer[a];
    if (span > max_span) continue;
    uint32_t prev = a;
    if (span > 1) chain[i] = static_cast<uint32_t>(vlayer.size());
    for (uint32_t l = layer[a] + 1; l < layer[b]; ++l) {
      uint32_t d = static_cast<uint32_t>(vlayer.size());
      vlayer.push_back(l);
      vwidth.push_back(o.dummy_width);
      segs.push_back({prev, d});
      prev = d;
    }
    segs.push_back({prev, b});
  }
  const uint32_t nv = static_cast<uint32_t>(vlayer.size());
  Adjacency down = adjacency(nv, segs, true), up = adjacency(nv, segs, false);

  // 4. Order within layers: start from the topological order (dummies after their edge's source),
  // then barycenter sweeps down and up.
  std::vector<double> key(nv, 0);
  for (size_t i = 0; i < topo.size(); ++i) key[topo[i]] = static_cast<double>(i);
  for (size_t i = 0; i < oriented.size(); ++i)
    if (chain[i] != UINT32_MAX)
      for (uint32_t d = chain[i], l = layer[oriented[i].first] + 1; l < layer[oriented[i].second]; ++l, ++d)
        key[d] = key[oriented[i].first] + 0.5;
  std::vector<std::vector<uint32_t>> rows(layers);
  for (uint32_t v = 0; v < nv; ++v) rows[vlayer[v]].push_back(v);
  std::vector<double> pos(nv, 0);
  auto sort_row = [&](std::vector<uint32_t>& row) {
    std::stable_sort(row.begin(), row.end(), [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
    for (size_t i = 0; i < row.size(); ++i) pos[row[i]] = static_cast<double>(i);
  };
  for (auto& row : rows) sort_row(row);
  int sweeps = o.sweeps >= 0 ? o.sweeps : nv > 300'000 ? 2 : nv > 30'000 ? 4 : 12;
  auto barycenter = [&](std::vector<uint32_t>& row, const Adjacency& nb) {
    for (uint32_t v : row) {
      auto ns = nb.of(v);
      if (ns.empty()) {
        key[v] = pos[v];
        continue;
      }
      double s = 0;
      for (uint32_t w : ns) s += pos[w];
      key[v] = s / static_cast<double>(ns.size());
    }
    sort_row(row);
  };
  for (int s = 0; s < sweeps; ++s) {
    for (uint32_t l = 1; l < layers; ++l) barycenter(rows[l], up);
    for (uint32_t l = layers - 1; l-- > 0;) barycenter(rows[l], down);
  }

  // 5. x: every vertex as near the mean centre of its neighbours in the layer just placed as the
  // spacing allows, alternating down and up passes.
  std::vector<double> cx(nv, 0);
  for (auto& row : rows) {
    double x = 0;
    for (uint32_t v : row) {
      cx[v] = x + vwidth[v] / 2;
      x += vwidth[v] + o.node_sep;
    }
    for (uint32_t v : row) cx[v] -= (x - o.node_sep) / 2;  // each layer centred on x = 0
  }
  std::vector<double> want, wt, gap;
  auto align = [&](const std::vector<uint32_t>& row, const Adjacency& nb) {
    want.assign(row.size(), 0);
    wt.assign(row.size(), 1);
    gap.assign(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      uint32_t v = row[i];
      auto ns = nb.of(v);
      if (ns.empty()) {
        want[i] = cx[v];
        wt[i] = 0.01;  // free vertices give way
      } else {
        double s = 0;
        for (uint32_t w : ns) s += cx[w];
        // A real node is also pulled a little towards the middle line: without it each residual
        // block shifts the main column sideways by part of a gap, and a deep network drifts into a
        // long diagonal.
        double k = static_cast<double>(ns.size()), pull = v < n ? kCentrePull : 0.0;
        want[i] = s / (k + pull);
        wt[i] = v >= n ? 2.0 : 1.0;  // keep long edges straight
      }
      if (i + 1 < row.size()) gap[i] = (vwidth[v] + vwidth[row[i + 1]]) / 2 + o.node_sep;
    }
    place(want, wt, gap);
    for (size_t i = 0; i < row.size(); ++i) cx[row[i]] = want[i];
  };
  int passes = nv > 300'000 ? 3 : 6;
  for (int p = 0; p < passes; ++p) {
    for (uint32_t l = 1; l < layers; ++l) align(rows[l], up);
    for (uint32_t l = layers - 1; l-- > 0;) align(rows[l], down);
  }
  for (uint32_t l = 1; l < layers; ++l) align(rows[l], up);

  // 6. y: each layer as tall as its tallest node.
  std::vector<double> top(layers, 0), tall(layers, 0);
  for (uint32_t v = 0; v < n; ++v) tall[layer[v]] = std::max<double>(tall[layer[v]], g.height[v]);
  for (uint32_t l = 1; l < layers; ++l) top[l] = top[l - 1] + tall[l - 1] + o.layer_sep;
  double minx = std::numeric_limits<double>::max(), maxx = std::numeric_limits<double>::lowest();
  for (uint32_t v = 0; v < nv; ++v) {
    minx = std::min(minx, cx[v] - vwidth[v] / 2);
    maxx = std::max(maxx, cx[v] + vwidth[v] / 2);
  }
  for (uint32_t v = 0; v < n; ++v) {
    out.x[v] = static_cast<float>(cx[v] - g.width[v] / 2 - minx);
    out.y[v] = static_cast<float>(top[layer[v]] + (tall[layer[v]] - g.height[v]) / 2);
    out.layer[v] = layer[v];
  }
  out.width = static_cast<float>(maxx - minx);
  out.height = static_cast<float>(top[layers - 1] + tall[layers - 1]);

  // 7. Edges: from the bottom of the source through the dummies to the top of the destination.
  for (uint32_t e = 0; e < m; ++e) {
    uint32_t i = oriented_of[e];
    if (i == UINT32_MAX) continue;
    auto [a, b] = oriented[i];
    auto& pts = out.points[e];
    auto add = [&](double x, double y) {
      pts.push_back(static_cast<float>(x - minx));
      pts.push_back(static_cast<float>(y));
    };
    add(cx[a], out.y[a] + g.height[a]);
    if (chain[i] != UINT32_MAX)
      for (uint32_t d = chain[i], l = layer[a] + 1; l < layer[b]; ++l, ++d) {
        add(cx[d], top[l]);
        add(cx[d], top[l] + tall[l]);
      }
    add(cx[b], out.y[b]);
    out.reversed[e] = rev[e];
    if (rev[e])  // drawn in the edge's own direction
      for (size_t k = 0, j = pts.size() - 2; k < j; k += 2, j -= 2) {
        std::swap(pts[k], pts[j]);
        std::swap(pts[k + 1], pts[j + 1]);
      }
  }
  return out;
}

}  // namespace amanda::view
