// The subgraph matcher and the passes on big generated graphs (docs/performance.md):
//   BM_MatchAll/N: every op of an N-op ONNX-like chain tried against a three-op pattern with DAG
//   sharing (Add(x, Mul(x, const)) after a Relu, single use) — linear: time per op stays flat as
//   N grows to 1M (benchmark's BigO fit says so, `_BigO`).
//   BM_Pipeline/N: the default pass list of `amanda optimize` on the same graph.
#include <benchmark/benchmark.h>

#include <cstring>

#include "amanda/ir/graph.h"
#include "amanda/ir/value.h"
#include "amanda/passes/matcher.h"
#include "amanda/passes/registry.h"

namespace {

using namespace amanda;

// x -> [Relu -> Mul(., c) -> Add(relu, mul) -> Identity] * (n / 4) -> y, with c a Constant.
std::unique_ptr<ir::Graph> chain(size_t n) {
  auto g = std::make_unique<ir::Graph>();
  g->set_graph_namespace(g->root(), g->sym("amanda/onnx/17"));
  g->reserve(n + 2, 3 * n, 3 * n);
  ir::OpId root = g->root();
  ir::PortId v = g->add_input(root, g->sym("x"));
  ir::OpId c = g->create_op(root, "Constant", "c", {}, {"output"});
  float one = 1.5f;
  std::string bytes(4, '\0');
  std::memcpy(bytes.data(), &one, 4);
  g->set_attr(c, g->sym("value"), ir::Value(ir::Tensor::from_bytes(ir::DType::Float32, {}, bytes)));
  ir::PortId cv = g->output(c, 0);
  g->set_port_role(cv, ir::PortRole::Constant);
  Symbol relu = g->sym("Relu"), mul = g->sym("Mul"), add = g->sym("Add"), id = g->sym("Identity");
  Symbol a = g->sym("A"), b = g->sym("B"), y = g->sym("Y");
  for (size_t i = 0; i + 4 <= n; i += 4) {
    ir::OpId r = g->create_op(root, relu, 0);
    g->connect(v, g->add_input(r, a));
    ir::PortId rv = g->add_output(r, y);
    ir::OpId m = g->create_op(root, mul, 0);
    g->connect(rv, g->add_input(m, a));
    g->connect(cv, g->add_input(m, b));
    ir::PortId mv = g->add_output(m, y);
    ir::OpId s = g->create_op(root, add, 0);
    g->connect(rv, g->add_input(s, a));
    g->connect(mv, g->add_input(s, b));
    ir::PortId sv = g->add_output(s, y);
    ir::OpId d = g->create_op(root, id, 0);
    g->connect(sv, g->add_input(d, a));
    v = g->add_output(d, y);
  }
  g->connect(v, g->add_output(root, g->sym("y")));
  return g;
}

void BM_MatchAll(benchmark::State& state) {
  auto g = chain(static_cast<size_t>(state.range(0)));
  passes::Pat x = passes::op("Relu").max_uses(2);
  passes::Pat pat = passes::op("Add").in(x).in(passes::op("Mul").in(x).in(passes::constant()).uses(1));
  size_t found = 0;
  for (auto _ : state) {
    found = passes::match_all(*g, g->root(), pat).size();
    benchmark::DoNotOptimize(found);
  }
  if (found != static_cast<size_t>(state.range(0)) / 4) state.SkipWithError("wrong match count");
  state.SetComplexityN(state.range(0));
  state.counters["ops"] = static_cast<double>(g->op_count());
  state.counters["matches"] = static_cast<double>(found);
}
BENCHMARK(BM_MatchAll)->RangeMultiplier(4)->Range(1 << 14, 1 << 20)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond);

void BM_Pipeline(benchmark::State& state) {
  const auto& reg = passes::PassRegistry::builtin();
  for (auto _ : state) {
    state.PauseTiming();
    auto g = chain(static_cast<size_t>(state.range(0)));
    state.ResumeTiming();
    auto r = passes::run_pipeline(*g, reg.default_passes());
    benchmark::DoNotOptimize(r.ops_after);
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_Pipeline)->RangeMultiplier(4)->Range(1 << 14, 1 << 18)->Complexity(benchmark::oN)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
