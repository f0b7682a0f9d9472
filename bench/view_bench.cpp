// The viewer's costs: the layered layout of one scope (src/view/layout.cpp) and the whole page
// (scene + layout + JSON) for generated graphs of 10,000 and 100,000 ops.
//   view_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <map>

#include "amanda/view/layout.h"
#include "amanda/view/scene.h"
#include "graph_gen.h"

namespace {

using namespace amanda;

// The layout input of a generated graph's root: one node per op, one edge per data edge.
view::LayoutGraph layout_input(const ir::Graph& g) {
  view::LayoutGraph lg;
  std::vector<uint32_t> index(g.id_bound(), 0);
  uint32_t n = 0;
  for (ir::OpId c = g.first_child(g.root()); c; c = g.next_sibling(c)) index[c.value] = n++;
  lg.width.assign(n, 90);
  lg.height.assign(n, 36);
  for (uint32_t e = 1; e < g.edge_id_bound(); ++e) {
    ir::EdgeId id(e);
    if (!g.valid(id)) continue;
    ir::OpId a = g.port_op(g.edge_src(id)), b = g.port_op(g.edge_dst(id));
    if (a == g.root() || b == g.root()) continue;
    lg.edges.push_back({index[a.value], index[b.value]});
  }
  return lg;
}

const text::Document& tf(size_t ops) {
  static std::map<size_t, text::Document> docs;
  auto it = docs.find(ops);
  if (it == docs.end()) it = docs.emplace(ops, bench::make_tf_document(ops)).first;
  return it->second;
}

const text::Document& dag(uint32_t ops) {
  static std::map<uint32_t, text::Document> docs;
  auto it = docs.find(ops);
  if (it == docs.end()) it = docs.emplace(ops, bench::make_dag_document(ops, ops * 3 / 2)).first;
  return it->second;
}

void BM_LayoutTf(benchmark::State& st) {
  view::LayoutGraph lg = layout_input(tf(static_cast<size_t>(st.range(0))).graph);
  for (auto _ : st) benchmark::DoNotOptimize(view::layered_layout(lg));
  st.counters["nodes"] = static_cast<double>(lg.width.size());
}
BENCHMARK(BM_LayoutTf)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_LayoutRandomDag(benchmark::State& st) {
  view::LayoutGraph lg = layout_input(dag(static_cast<uint32_t>(st.range(0))).graph);
  for (auto _ : st) benchmark::DoNotOptimize(view::layered_layout(lg));
  st.counters["nodes"] = static_cast<double>(lg.width.size());
}
BENCHMARK(BM_LayoutRandomDag)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_PageTf(benchmark::State& st) {
  const ir::Graph& g = tf(static_cast<size_t>(st.range(0))).graph;
  size_t bytes = 0;
  for (auto _ : st) bytes = view::scene_html(g, {}).size();
  st.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_PageTf)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
