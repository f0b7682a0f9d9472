// Rewrite churn on a large graph: the mutations a pass makes again and again.
//  - insert_op_on_edge, then erase_op of the inserted op and connect of the original ends again
//    (the graph returns to its shape; the arenas grow, since ids are never reused);
//  - replace_all_uses back and forth, with the typical 1-2 uses and with a 1,000-use fan-out;
//  - replace_subgraph of a two-op pair by one fused op (in-graph replacement) and by a copy of a
//    two-op pattern graph (the Graph overload, which clones).
// Rates are operations per second; an "operation" is named by each counter.
//
// AMANDA_BENCH_CHURN_OPS caps the size of the DAG rewritten (default 1,000,000 ops).
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "bench_util.h"
#include "graph_gen.h"

namespace {

using namespace amanda;
using ir::EdgeId;
using ir::OpId;
using ir::PortId;

// Random DAGs of n ops and n edges, made once per size.
const amanda::bench::DagPlan& plan(uint32_t n) {
  static std::map<uint32_t, std::unique_ptr<amanda::bench::DagPlan>> plans;
  auto& p = plans[n];
  if (!p) p = std::make_unique<amanda::bench::DagPlan>(amanda::bench::plan_random_dag(n, n, 7));
  return *p;
}

// The graph sizes: the 1,000,000 ops and two smaller ones, which show how a cost scales.
void sizes(benchmark::internal::Benchmark* b) {
  uint32_t big = amanda::bench::env_size("AMANDA_BENCH_CHURN_OPS", 1'000'000);
  b->ArgName("ops");
  for (uint32_t n : {10'000u, 100'000u, big})
    if (n <= big) b->Arg(n);
}

// One "cycle" = insert_op_on_edge + erase_op + connect, on a random edge of the DAG.
void BM_InsertOnEdgeThenErase(benchmark::State& st) {
  const auto& p = plan(static_cast<uint32_t>(st.range(0)));
  ir::Graph g;
  amanda::bench::build_random_dag(g, p, true);
  const Symbol type = g.sym("Identity"), name = g.sym("inserted"), in = g.sym("input"), out = g.sym("output");
  amanda::bench::Rng rng(3);
  size_t ops0 = g.id_bound(), ports0 = g.port_id_bound(), edges0 = g.edge_id_bound(), bytes0 = g.memory_bytes();
  int64_t cycles = 0;
  for (auto _ : st) {
    // A random live edge: edges of the plan keep their ids, since each cycle reconnects src->dst
    // as a new edge; look up the current edge through the destination port instead.
    const auto& pe = p.edges[rng.below(static_cast<uint32_t>(p.edges.size()))];
    PortId dst = g.input(OpId(pe.dst + 2), pe.dst_input);
    EdgeId e = g.first_in_edge(dst);
    PortId src = g.edge_src(e);
    OpId op = g.insert_op_on_edge(e, type, name, in, out);
    g.erase_op(op);
    g.connect(src, dst);
    ++cycles;
  }
  st.counters["cycles/s"] = benchmark::Counter(static_cast<double>(cycles), benchmark::Counter::kIsRate);
  // Ids are never reused: each cycle leaves dead slots behind in the arenas.
  double c = static_cast<double>(std::max<int64_t>(cycles, 1));
  st.counters["op_slots/cycle"] = static_cast<double>(g.id_bound() - ops0) / c;
  st.counters["port_slots/cycle"] = static_cast<double>(g.port_id_bound() - ports0) / c;
  st.counters["edge_slots/cycle"] = static_cast<double>(g.edge_id_bound() - edges0) / c;
  // Growth of Graph::memory_bytes() per cycle, vector doubling slack included (meaningful once
  // the run has done many cycles).
  st.counters["growth_B/cycle"] = static_cast<double>(g.memory_bytes() - bytes0) / c;
}
BENCHMARK(BM_InsertOnEdgeThenErase)->Apply(sizes);

// replace_all_uses(p, spare) then back, for random ops' outputs of the DAG (1 use on average).
// Counts calls.
void BM_ReplaceAllUsesRandom(benchmark::State& st) {
  const auto& p = plan(static_cast<uint32_t>(st.range(0)));
  ir::Graph g;
  amanda::bench::build_random_dag(g, p, true);
  OpId spare_op = g.create_op(g.root(), "Spare", "spare", {}, {"out"});
  PortId spare = g.output(spare_op, 0);
  amanda::bench::Rng rng(5);
  int64_t calls = 0;
  for (auto _ : st) {
    PortId out = g.output(OpId(rng.below(p.ops) + 2), 0);
    g.replace_all_uses(out, spare);
    g.replace_all_uses(spare, out);
    calls += 2;
  }
  st.counters["calls/s"] = benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReplaceAllUsesRandom)->Apply(sizes);

// A producer with 1,000 consumers: each call moves 1,000 edges. Counts edges moved.
void BM_ReplaceAllUsesFanout(benchmark::State& st) {
  const int fanout = static_cast<int>(st.range(0));
  ir::Graph g;
  OpId a = g.create_op(g.root(), "Src", "a", {}, {"out"});
  OpId b = g.create_op(g.root(), "Src", "b", {}, {"out"});
  Symbol t = g.sym("Relu"), x = g.sym("x");
  for (int i = 0; i < fanout; ++i) {
    OpId c = g.create_op(g.root(), t, g.sym("c" + std::to_string(i)));
    g.connect(g.output(a, 0), g.add_input(c, x));
  }
  PortId pa = g.output(a, 0), pb = g.output(b, 0);
  int64_t calls = 0;
  for (auto _ : st) {
    g.replace_all_uses(pa, pb);
    g.replace_all_uses(pb, pa);
    calls += 2;
  }
  st.counters["calls/s"] = benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
  st.counters["edges_moved/s"] = benchmark::Counter(static_cast<double>(calls * fanout), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReplaceAllUsesFanout)->Arg(1000);

// A chain of `pairs` (Conv -> Relu) pairs, each Conv fed by the previous Relu; a fresh graph per
// iteration (built off the clock), then every pair is replaced by one fused op (timed).
struct PairChain {
  ir::Graph g;
  std::vector<std::pair<OpId, OpId>> pairs;
  explicit PairChain(uint32_t n) {
    g.reserve(2 * n + n + 1, 4 * n + 2 * n + 2, 2 * n + 2 * n + 1);
    Symbol conv = g.sym("Conv"), relu = g.sym("Relu"), x = g.sym("x"), y = g.sym("y");
    OpId src = g.create_op(g.root(), "Input", "input", {}, {"y"});
    PortId prev = g.output(src, 0);
    for (uint32_t i = 0; i < n; ++i) {
      std::string s = std::to_string(i);
      OpId c = g.create_op(g.root(), conv, g.sym("conv" + s));
      PortId ci = g.add_input(c, x);
      PortId co = g.add_output(c, y);
      OpId r = g.create_op(g.root(), relu, g.sym("relu" + s));
      PortId ri = g.add_input(r, x);
      PortId ro = g.add_output(r, y);
      g.connect(prev, ci);
      g.connect(co, ri);
      prev = ro;
      pairs.push_back({c, r});
    }
  }
};

void BM_ReplaceSubgraphWithOp(benchmark::State& st) {
  const uint32_t n = static_cast<uint32_t>(st.range(0));
  int64_t replaced = 0;
  for (auto _ : st) {
    st.PauseTiming();
    auto chain = std::make_unique<PairChain>(n);
    ir::Graph& g = chain->g;
    Symbol fused = g.sym("ConvRelu"), x = g.sym("x"), y = g.sym("y");
    st.ResumeTiming();
    for (auto [c, r] : chain->pairs) {
      OpId f = g.create_op(g.root(), fused, 0);
      PortId fi = g.add_input(f, x), fo = g.add_output(f, y);
      std::pair<PortId, PortId> in_map[] = {{g.input(c, 0), fi}};
      std::pair<PortId, PortId> out_map[] = {{g.output(r, 0), fo}};
      OpId ops[] = {c, r};
      g.replace_subgraph(ops, f, in_map, out_map);
    }
    replaced += n;
    st.PauseTiming();
    chain.reset();
    st.ResumeTiming();
  }
  st.counters["replacements/s"] = benchmark::Counter(static_cast<double>(replaced), benchmark::Counter::kIsRate);
}
// Pairs: 1,000 and 10,000 (2,000 and 20,000 ops): enough to show how the cost per replacement
// grows with the graph. (100,000 pairs takes minutes while erase_op scans the scope; see
// docs/performance.md.)
BENCHMARK(BM_ReplaceSubgraphWithOp)->ArgName("pairs")->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond);

// The same pairs replaced by a copy of a two-op pattern graph (Conv2D -> BiasAdd with attrs).
void BM_ReplaceSubgraphWithGraph(benchmark::State& st) {
  const uint32_t n = static_cast<uint32_t>(st.range(0));
  ir::Graph pattern;
  OpId root = pattern.root();
  PortId pin = pattern.add_input(root, pattern.sym("x"));
  PortId pout = pattern.add_output(root, pattern.sym("y"));
  OpId conv = pattern.create_op(root, "Conv2D", "conv", {"input"}, {"output"});
  pattern.set_attr(conv, pattern.sym("padding"), ir::Value("SAME"));
  pattern.set_attr(conv, pattern.sym("strides"), ir::Value(ir::Value::List{1, 1, 1, 1}));
  OpId bias = pattern.create_op(root, "BiasAdd", "bias", {"value"}, {"output"});
  pattern.connect(pin, pattern.input(conv, 0));
  pattern.connect(pattern.output(conv, 0), pattern.input(bias, 0));
  pattern.connect(pattern.output(bias, 0), pout);
  int64_t replaced = 0;
  for (auto _ : st) {
    st.PauseTiming();
    auto chain = std::make_unique<PairChain>(n);
    ir::Graph& g = chain->g;
    st.ResumeTiming();
    for (auto [c, r] : chain->pairs) {
      std::pair<PortId, size_t> in_map[] = {{g.input(c, 0), 0}};
      std::pair<PortId, size_t> out_map[] = {{g.output(r, 0), 0}};
      OpId ops[] = {c, r};
      g.replace_subgraph(ops, pattern, in_map, out_map);
    }
    replaced += n;
    st.PauseTiming();
    chain.reset();
    st.ResumeTiming();
  }
  st.counters["replacements/s"] = benchmark::Counter(static_cast<double>(replaced), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReplaceSubgraphWithGraph)->ArgName("pairs")->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
