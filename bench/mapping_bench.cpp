// The mapping engine (src/mapping/engine.cpp) on synthetic namespaces and a generated table: the
// issue's "a 1,000,000-op graph through a 500-rule table in under 2 s", time against graph size
// (linear?) and against the number of rules (flat?), and compiling tables.
//
// Two namespaces are generated as YAML text and parsed into a registry: amanda/mbench_src/1 with
// op types S<i>, P<i>, Q<i> and amanda/mbench_dst/1 with D<i> and Constant. Rule i of the table
// depends only on i (so the first 50 rules of a 5000-rule table are those of the 50-rule table),
// its kind on i % 10:
//   0-4  single-op S<i> -> D<i>, with attribute functions: arithmetic, value_map, permute, if() with
//        a renamed op, and a plain rename carrying every attribute
//   5-6  S<i> -> D<i> with the attribute `axes` turned into a constant input (a new Constant op)
//   7    a 2-op subgraph P<i> -> Q<i> fused into one D<i> (pattern edge, implicit boundary)
//   8    S<i> -> D<i> only `when: "k % 2 == 0"` (priority 1) ...
//   9    ... and the fallback rule for the same type S<i-1> (odd k)
// The graph cycles over the rules, one op per rule (two for kind 7): a chain through every op's
// input `x`, plus fan-out: every 4th kind-0..4 op also reads the output of an earlier kind-0..4
// op (three of them back) on `y`, so those outputs have two consumers and the topological pass
// has more than a chain to order. Graph and
// table are built outside the clock; each iteration times CompiledTable::apply on a fresh graph
// (manual timing, wall clock). A run that does not convert every op fails (SkipWithError).
//
//   build/bench/mapping_bench                                   # all
//   build/bench/mapping_bench --benchmark_filter=BM_Apply1M     # the 1,000,000-op / 500-rule figure
//   AMANDA_BENCH_MAP_ITERS=5 build/bench/mapping_bench          # iterations of the 1M-op cases (default 3)
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "amanda/ir/graph.h"
#include "amanda/mapping/engine.h"
#include "amanda/schema/registry.h"
#include "amanda/text/tree.h"
#include "bench_util.h"

namespace {

using namespace amanda;
using ir::OpId;
using ir::PortId;
using ir::Value;

constexpr const char* kSrcNs = "amanda/mbench_src/1";
constexpr const char* kDstNs = "amanda/mbench_dst/1";

enum class Kind { Fn, AxesToInput, Pair, When, Fallback };

Kind kind_of(size_t i) {
  size_t k = i % 10;
  if (k <= 4) return Kind::Fn;
  if (k <= 6) return Kind::AxesToInput;
  if (k == 7) return Kind::Pair;
  if (k == 8) return Kind::When;
  return Kind::Fallback;
}

// ---------------------------------------------------------------- namespaces

constexpr const char* kSrcOp = R"(    - type: {}
      attrs:
        k: int
        mode: {{type: str, default: SAME_UPPER}}
        perm: {{type: "List[int]", default: [0, 1, 2, 3]}}
        axes: {{type: "List[int]", default: [0]}}
      input_ports:
        - attrs: {{name: {{type: str, constant: x}}}}
        - attrs: {{name: {{type: str, constant: y}}}}
      output_ports:
        - attrs: {{name: {{type: str, constant: out}}}}
)";

constexpr const char* kDstOp = R"(    - type: {}
      attrs:
        k: int
        mode: {{type: str, default: SAME}}
        perm: {{type: "List[int]", default: [0, 1, 2, 3]}}
      input_ports:
        - attrs: {{name: {{type: str, constant: x}}}}
        - attrs: {{name: {{type: str, constant: y}}}}
        - attrs: {{name: {{type: str, constant: axes}}}}
      output_ports:
        - attrs: {{name: {{type: str, constant: out}}}}
)";

std::string src_namespace(size_t rules) {
  std::string s = fmt::format("namespace:\n  name: {}\n  type_system: python\n  op_schemas:\n", kSrcNs);
  s += "    - type: Constant\n      attrs: {value: object}\n      output_ports:\n        - attrs: {name: {type: str, constant: output}}\n";
  for (size_t i = 0; i < rules; ++i) {
    switch (kind_of(i)) {
      case Kind::Fallback: break;  // the type of rule i-1
      case Kind::Pair:
        s += fmt::format(kSrcOp, fmt::format("P{}", i));
        s += fmt::format(kSrcOp, fmt::format("Q{}", i));
        break;
      default: s += fmt::format(kSrcOp, fmt::format("S{}", i));
    }
  }
  return s;
}

std::string dst_namespace(size_t rules) {
  std::string s = fmt::format("namespace:\n  name: {}\n  type_system: python\n  op_schemas:\n", kDstNs);
  s += "    - type: Constant\n      attrs: {value: object}\n      output_ports:\n        - attrs: {name: {type: str, constant: output}}\n";
  for (size_t i = 0; i < rules; ++i)
    if (kind_of(i) != Kind::Fallback) s += fmt::format(kDstOp, fmt::format("D{}", i));
  return s;
}

// ---------------------------------------------------------------- the table

std::string rule_yaml(size_t i) {
  switch (kind_of(i)) {
    case Kind::Fn:
      switch (i % 10) {
        case 0:
          return fmt::format(R"(    - rule_name: r{0}_arith
      src: {{type: S{0}, attrs: {{k: "{{k}}"}}}}
      dst: {{type: D{0}, attrs: {{k: "{{k * 2 + 1}}"}}}}
)",
                             i);
        case 1:
          return fmt::format(R"(    - rule_name: r{0}_value_map
      src: {{type: S{0}, attrs: {{mode: "{{mode}}"}}}}
      dst: {{type: D{0}, attrs: {{mode: "{{value_map(mode, 'SAME_UPPER', 'SAME', 'SAME_LOWER', 'SAME', 'VALID', 'VALID')}}"}}}}
)",
                             i);
        case 2:
          return fmt::format(R"(    - rule_name: r{0}_permute
      src: {{type: S{0}, attrs: {{perm: "{{perm}}"}}}}
      dst: {{type: D{0}, attrs: {{perm: "{{permute(perm, [0, 2, 3, 1])}}"}}}}
)",
                             i);
        case 3:
          return fmt::format(R"(    - rule_name: r{0}_rename_if
      src: {{type: S{0}, name: {{ref: n}}, attrs: {{k: "{{k}}"}}}}
      dst: {{type: D{0}, name: "{{n}}_d", attrs: {{k: "{{if(k > 3, k - 3, k)}}"}}}}
)",
                             i);
        default:
          return fmt::format(R"(    - rule_name: r{0}_rename
      type: {{src: S{0}, dst: D{0}}}
)",
                             i);
      }
    case Kind::AxesToInput:
      return fmt::format(R"(    - rule_name: r{0}_axes_to_input
      src: {{type: S{0}, attrs: {{axes: "{{axes}}"}}}}
      dst:
        type: D{0}
        input_ports: [x, {{name: axes, const: "{{tensor(axes, 'int64')}}"}}]
)",
                         i);
    case Kind::Pair:
      return fmt::format(R"(    - rule_name: r{0}_pair
      src:
        ops:
          - {{type: P{0}, id: p, attrs: {{k: "{{ka}}"}}}}
          - {{type: Q{0}, id: q, attrs: {{k: "{{kb}}"}}}}
        edges:
          - output_port: {{op: p, port: out}}
            input_ports: {{op: q, port: x}}
      dst: {{type: D{0}, attrs: {{k: "{{ka + kb}}"}}}}
)",
                         i);
    case Kind::When:
      return fmt::format(R"(    - rule_name: r{0}_when_even
      when: "k % 2 == 0"
      priority: 1
      src: {{type: S{0}, attrs: {{k: "{{k}}"}}}}
      dst: {{type: D{0}, attrs: {{k: "{{k / 2}}"}}}}
)",
                         i);
    case Kind::Fallback:
      return fmt::format(R"(    - rule_name: r{0}_fallback
      src: {{type: S{1}, attrs: {{k: "{{k}}"}}}}
      dst: {{type: D{1}, attrs: {{k: "{{k - 1}}"}}}}
)",
                         i, i - 1);
  }
  return {};
}

std::string table_yaml(size_t rules) {
  std::string s = fmt::format("table:\n  src: {}\n  dst: {}\n  rules:\n", kSrcNs, kDstNs);
  for (size_t i = 0; i < rules; ++i) s += rule_yaml(i);
  return s;
}

// Namespaces for `ns_rules` rules (a superset serves smaller tables too), a table of `rules`.
struct Setup {
  std::unique_ptr<schema::Registry> reg = std::make_unique<schema::Registry>();
  std::unique_ptr<mapping::Table> table;
  std::unique_ptr<mapping::CompiledTable> compiled;
  size_t rules = 0;
};

constexpr size_t kMaxRules = 5000;

std::unique_ptr<schema::Registry> make_registry() {
  auto reg = std::make_unique<schema::Registry>();
  reg->add(schema::parse_namespace(text::parse_tree(src_namespace(kMaxRules), text::Format::Yaml, "mbench_src.yaml"), reg->type_systems()));
  reg->add(schema::parse_namespace(text::parse_tree(dst_namespace(kMaxRules), text::Format::Yaml, "mbench_dst.yaml"), reg->type_systems()));
  return reg;
}

Setup& setup(size_t rules) {
  static std::map<size_t, std::unique_ptr<Setup>> cache;
  auto& s = cache[rules];
  if (s) return *s;
  s = std::make_unique<Setup>();
  s->reg = make_registry();
  s->rules = rules;
  s->table = mapping::parse_table(text::parse_tree(table_yaml(rules), text::Format::Yaml, "mbench_table.yaml"));
  Diagnostics d;
  mapping::check_table(*s->table, *s->reg, d);
  if (d.has_errors()) throw Error("the generated table does not check:\n" + d.str().substr(0, 2000));
  s->compiled = std::make_unique<mapping::CompiledTable>(*s->table, *s->reg);
  return *s;
}

// ---------------------------------------------------------------- the graph

struct BuiltGraph {
  ir::Graph g;
  size_t ops = 0;
};

// `n` ops (a pair may add one more), cycling over the first `type_rules` rules.
std::unique_ptr<BuiltGraph> build_graph(size_t n, size_t type_rules) {
  auto b = std::make_unique<BuiltGraph>();
  ir::Graph& g = b->g;
  g.reserve(n + n / 5 + 2, n * 3, n * 2);
  OpId root = g.root();
  g.set_graph_namespace(root, g.sym(kSrcNs));
  const Symbol x = g.sym("x"), y = g.sym("y"), out = g.sym("out"), k = g.sym("k"), mode = g.sym("mode"), perm = g.sym("perm"),
               axes = g.sym("axes");
  std::vector<Symbol> s_types(type_rules), p_types(type_rules), q_types(type_rules);
  for (size_t i = 0; i < type_rules; ++i) {
    Kind kd = kind_of(i);
    if (kd == Kind::Pair) {
      p_types[i] = g.sym(fmt::format("P{}", i));
      q_types[i] = g.sym(fmt::format("Q{}", i));
    } else {
      s_types[i] = g.sym(fmt::format("S{}", i - (kd == Kind::Fallback ? 1 : 0)));
    }
  }
  const Value modes[3] = {Value("SAME_UPPER"), Value("SAME_LOWER"), Value("VALID")};
  const Value a_perm(Value::List{0, 1, 2, 3}), a_axes(Value::List{0, 1});
  PortId last = g.add_input(root, g.sym("input"));
  PortId tap = last;  // an earlier kind-0..4 output: the fan-out source for `y`
  size_t fn_ops = 0;
  auto make = [&](Symbol type, int64_t kv) {
    OpId op = g.create_op(root, type, g.sym(fmt::format("n{}", b->ops++)), false);
    g.set_attr(op, k, Value(kv));
    g.connect(last, g.add_input(op, x));
    return op;
  };
  for (size_t c = 0; b->ops < n; ++c) {
    size_t i = c % type_rules;
    int64_t kv = static_cast<int64_t>(c % 7);
    switch (kind_of(i)) {
      case Kind::Fn: {
        OpId op = make(s_types[i], kv);
        g.set_attr(op, mode, modes[c % 3]);
        g.set_attr(op, perm, a_perm);
        if (++fn_ops % 4 == 0) {
          g.connect(tap, g.add_input(op, y));
        }
        last = g.add_output(op, out);
        if (fn_ops % 4 == 1) tap = last;
        break;
      }
      case Kind::AxesToInput: {
        OpId op = make(s_types[i], kv);
        g.set_attr(op, axes, a_axes);
        last = g.add_output(op, out);
        break;
      }
      case Kind::Pair: {
        OpId p = make(p_types[i], kv);
        last = g.add_output(p, out);
        OpId q = make(q_types[i], kv + 1);
        last = g.add_output(q, out);
        break;
      }
      case Kind::When: last = g.add_output(make(s_types[i], 2 * kv), out); break;
      case Kind::Fallback: last = g.add_output(make(s_types[i], 2 * kv + 1), out); break;
    }
  }
  g.connect(last, g.add_output(root, g.sym("output")));
  return b;
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Every op of the source namespace converted? (Counted outside the clock.)
bool all_converted(const ir::Graph& g, size_t& dst_ops, std::string& why) {
  dst_ops = 0;
  bool ok = true;
  g.for_each_op([&](OpId op) {
    if (g.is_graph(op)) return;
    std::string_view t = g.type_str(op);
    if (t.starts_with("D") || t == "Constant") ++dst_ops;
    else if (ok) {
      ok = false;
      why = fmt::format("op {} still has type {}", g.name_str(op), t);
    }
  });
  return ok;
}

void run_apply(benchmark::State& state, size_t n, size_t rules, size_t type_rules) {
  Setup& s = setup(rules);
  size_t mapped = 0, ops = 0, dst_ops = 0;
  double total = 0, best = 1e30, cpu_total = 0;
  for (auto _ : state) {
    auto b = build_graph(n, type_rules);
    mapping::Report rep;
    mapping::ConvertOptions o;
    double c0 = thread_cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    s.compiled->apply(b->g, o, rep);
    auto t1 = std::chrono::steady_clock::now();
    cpu_total += thread_cpu_seconds() - c0;
    double secs = std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(secs);
    total += secs;
    best = std::min(best, secs);
    std::string why;
    if (!rep.ok() || rep.mapped != b->ops || rep.passed != 0) {
      state.SkipWithError(fmt::format("not a full conversion: {} of {} ops mapped\n{}", rep.mapped, b->ops, rep.text().substr(0, 1500)).c_str());
      break;
    }
    if (mapped == 0 && !all_converted(b->g, dst_ops, why)) {  // the graph itself, once
      state.SkipWithError(why.c_str());
      break;
    }
    mapped = rep.mapped;
    ops = b->ops;
    state.PauseTiming();  // (manual time: only keeps the graph's destruction out of CPU time)
    b.reset();
    state.ResumeTiming();
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["rules"] = static_cast<double>(rules);
  state.counters["mapped"] = static_cast<double>(mapped);
  state.counters["ops_after"] = static_cast<double>(dst_ops);
  // ns per source op, from the timed apply calls only (rate counters would divide by CPU time,
  // which here includes building the graph).
  if (ops && state.iterations()) {
    state.counters["ns_per_op"] = total * 1e9 / (static_cast<double>(ops) * static_cast<double>(state.iterations()));
    state.counters["best_ms"] = best * 1e3;
    // The same from the thread's CPU time: what the machine's load does not inflate.
    state.counters["cpu_ms"] = cpu_total * 1e3 / static_cast<double>(state.iterations());
    state.counters["cpu_ns_per_op"] = cpu_total * 1e9 / (static_cast<double>(ops) * static_cast<double>(state.iterations()));
  }
}

size_t big_iters() { return bench::env_size("AMANDA_BENCH_MAP_ITERS", 3); }

// The issue's figure: 1,000,000 ops, 500 rules, target < 2 s wall.
void BM_Apply1M(benchmark::State& state) { run_apply(state, 1'000'000, 500, 500); }
BENCHMARK(BM_Apply1M)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(big_iters());

// Time against graph size at 500 rules: linear means a flat ns_per_op.
void BM_ApplyOps(benchmark::State& state) { run_apply(state, static_cast<size_t>(state.range(0)), 500, 500); }
BENCHMARK(BM_ApplyOps)->UseManualTime()->Unit(benchmark::kMillisecond)->ArgName("ops")->Arg(10'000)->Arg(100'000)->MinTime(1.0);
BENCHMARK(BM_ApplyOps)->UseManualTime()->Unit(benchmark::kMillisecond)->ArgName("ops")->Arg(1'000'000)->Iterations(big_iters());

// Time against the number of rules at 100,000 ops, the graph cycling over the types of all the
// rules: flat means dispatch by type, not a scan of the rules.
void BM_ApplyRules(benchmark::State& state) {
  size_t r = static_cast<size_t>(state.range(0));
  run_apply(state, 100'000, r, r);
}
BENCHMARK(BM_ApplyRules)->UseManualTime()->Unit(benchmark::kMillisecond)->ArgName("rules")->Arg(5)->Arg(50)->Arg(500)->Arg(5000)->MinTime(1.0);

// The same graph (cycling over the first 50 rules' types) under tables of 50, 500, 5000 rules.
void BM_ApplyRulesSameGraph(benchmark::State& state) { run_apply(state, 100'000, static_cast<size_t>(state.range(0)), 50); }
BENCHMARK(BM_ApplyRulesSameGraph)->UseManualTime()->Unit(benchmark::kMillisecond)->ArgName("rules")->Arg(50)->Arg(500)->Arg(5000)->MinTime(1.0);

// One apply of $AMANDA_BENCH_MAP_OPS ops (default 10,000), 500 rules, one iteration: for a profiler
// (valgrind --tool=callgrind --toggle-collect='amanda::mapping::CompiledTable::apply*').
void BM_ApplyProfile(benchmark::State& state) { run_apply(state, bench::env_size("AMANDA_BENCH_MAP_OPS", 10'000), 500, 500); }
BENCHMARK(BM_ApplyProfile)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);

// Compiling a parsed table (CompiledTable's constructor: dispatch map, match plans, schemas).
void BM_CompileTable(benchmark::State& state) {
  Setup& s = setup(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    mapping::CompiledTable ct(*s.table, *s.reg);
    benchmark::DoNotOptimize(&ct);
  }
  state.counters["rules"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_CompileTable)->Unit(benchmark::kMicrosecond)->ArgName("rules")->Arg(50)->Arg(500)->Arg(5000);

// Reading the table's YAML text (parse_table), for comparison with compiling it.
void BM_ParseTable(benchmark::State& state) {
  std::string text = table_yaml(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    auto t = mapping::parse_table(text::parse_tree(text, text::Format::Yaml, "mbench_table.yaml"));
    benchmark::DoNotOptimize(t.get());
  }
  state.counters["rules"] = static_cast<double>(state.range(0));
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseTable)->Unit(benchmark::kMicrosecond)->ArgName("rules")->Arg(50)->Arg(500)->Arg(5000);

}  // namespace

BENCHMARK_MAIN();
