// Building and sorting a large random DAG through the Graph API, and the memory it takes.
// Targets (from the issue): build + topological sort of 1,000,000 ops and 1,000,000 edges under
// 1 s; under 250 bytes per op, edges and names included.
//
// AMANDA_BENCH_DAG_OPS / AMANDA_BENCH_DAG_EDGES shrink the instance (for callgrind).
#include <benchmark/benchmark.h>

#include <memory>

#include "bench_util.h"
#include "graph_gen.h"

namespace {

using namespace amanda;
using amanda::bench::DagPlan;

const DagPlan& plan() {
  static const DagPlan p = amanda::bench::plan_random_dag(amanda::bench::env_size("AMANDA_BENCH_DAG_OPS", 1'000'000),
                                                          amanda::bench::env_size("AMANDA_BENCH_DAG_EDGES", 1'000'000), 42);
  return p;
}

void set_rates(benchmark::State& st, const DagPlan& p) {
  st.counters["ops"] = static_cast<double>(p.ops);
  st.counters["edges"] = static_cast<double>(p.edges.size());
  st.counters["ops/s"] = benchmark::Counter(static_cast<double>(p.ops), benchmark::Counter::kIsIterationInvariantRate);
}

// Graph construction only (the graph is destroyed off the clock). Time and CPU columns are both
// of the timed part; on a loaded machine CPU time is the better guide to an idle machine's wall
// time.
void BM_DagBuild(benchmark::State& st) {
  const DagPlan& p = plan();
  bool reserve = st.range(0);
  for (auto _ : st) {
    auto g = std::make_unique<ir::Graph>();
    amanda::bench::build_random_dag(*g, p, reserve);
    benchmark::DoNotOptimize(g->edge_count());
    st.PauseTiming();
    g.reset();
    st.ResumeTiming();
  }
  set_rates(st, p);
}
BENCHMARK(BM_DagBuild)->ArgName("reserve")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// topo_order of the root on an already built graph.
void BM_DagTopo(benchmark::State& st) {
  const DagPlan& p = plan();
  ir::Graph g;
  amanda::bench::build_random_dag(g, p, true);
  for (auto _ : st) {
    ir::TopoResult r = g.topo_order(g.root());
    if (r.order.size() != p.ops) st.SkipWithError("topo_order did not order every op");
    benchmark::DoNotOptimize(r.order.data());
  }
  set_rates(st, p);
}
BENCHMARK(BM_DagTopo)->Unit(benchmark::kMillisecond);

// The target: build and sort in one timed iteration (< 1 s for 1M ops / 1M edges).
void BM_DagBuildAndTopo(benchmark::State& st) {
  const DagPlan& p = plan();
  bool reserve = st.range(0);
  for (auto _ : st) {
    auto g = std::make_unique<ir::Graph>();
    amanda::bench::build_random_dag(*g, p, reserve);
    ir::TopoResult r = g->topo_order(g->root());
    st.PauseTiming();
    if (r.order.size() != p.ops) st.SkipWithError("topo_order did not order every op");
    g.reset();
    r = {};
    st.ResumeTiming();
  }
  set_rates(st, p);
}
BENCHMARK(BM_DagBuildAndTopo)->ArgName("reserve")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Heap bytes per op with the graph alive: malloc's count (mallinfo2 uordblks + hblkhd, i.e. small
// and mmap'd chunks) before and after building, and the graph's own Graph::memory_bytes().
// Time is not the point here; one iteration.
void BM_DagMemory(benchmark::State& st) {
  const DagPlan& p = plan();
  bool reserve = st.range(0);
  double malloc_bytes = 0, uord = 0, hblk = 0, self_bytes = 0;
  for (auto _ : st) {
    auto before = amanda::bench::HeapUse::now();
    auto g = std::make_unique<ir::Graph>();
    amanda::bench::build_random_dag(*g, p, reserve);
    auto after = amanda::bench::HeapUse::now();
    malloc_bytes = static_cast<double>(after.total()) - static_cast<double>(before.total());
    uord = static_cast<double>(after.uordblks) - static_cast<double>(before.uordblks);
    hblk = static_cast<double>(after.hblkhd) - static_cast<double>(before.hblkhd);
    self_bytes = static_cast<double>(g->memory_bytes());
    st.PauseTiming();
    g.reset();
    st.ResumeTiming();
  }
  double n = p.ops;
  st.counters["malloc_B/op"] = malloc_bytes / n;
  st.counters["uordblks_B/op"] = uord / n;
  st.counters["hblkhd_B/op"] = hblk / n;
  st.counters["memory_bytes_B/op"] = self_bytes / n;
  st.counters["ops"] = n;
}
BENCHMARK(BM_DagMemory)->ArgName("reserve")->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
