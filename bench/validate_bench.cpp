// Schema validation of a 1,000,000-op graph against a small namespace schema (the issue's
// "validation of a 1,000,000-op graph in under 0.5 s"). The graph and the registry are built
// before the clock starts; only schema::validate is timed. The namespace is loaded once, outside
// the timed region, as the tool's registry would have it after the first op.
//
//   ./validate_bench --benchmark_filter=Validate
//
// The figure is recorded in docs/performance-schema.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include "amanda/ir/graph.h"
#include "amanda/schema/registry.h"
#include "amanda/schema/validate.h"
#include "amanda/text/tree.h"

namespace {

using namespace amanda;
using ir::OpId;
using ir::PortId;

// Five op types in the seed's TensorFlow style: a `T` one_of, defaults, constants on port
// attributes, named ports.
constexpr const char* kSchema = R"(
namespace:
  name: amanda/bench/1
  type_system: python
  op_schemas:
    - type: Placeholder
      attrs:
        name: str
        dtype: tensorflow.DType
        shape: tensorflow.TensorShape
      output_ports:
        - attrs:
            name: {type: str, default: output}
            type_attr: {type: str, constant: dtype}
    - type: MatMul
      attrs:
        name: str
        T:
          one_of:
            - {type: tensorflow.DType, constant: half}
            - {type: tensorflow.DType, constant: float}
            - {type: tensorflow.DType, constant: double}
        transpose_a: {type: bool, default: false}
        transpose_b: {type: bool, default: false}
      input_ports:
        - attrs:
            name: {type: str, default: a}
            type_attr: {type: str, constant: T}
        - attrs:
            name: {type: str, default: b}
            type_attr: {type: str, constant: T}
      output_ports:
        - attrs:
            name: {type: str, default: product}
            type_attr: {type: str, constant: T}
    - type: Add
      attrs:
        T: tensorflow.DType
      input_ports:
        - attrs: {name: {type: str, constant: x}}
        - attrs: {name: {type: str, constant: y}}
      output_ports:
        - attrs: {name: {type: str, constant: z}}
    - type: Relu
      attrs:
        T: tensorflow.DType
      input_ports:
        - attrs: {name: {type: str, default: features}}
      output_ports:
        - attrs: {name: {type: str, default: activations}}
    - type: Conv2D
      attrs:
        T: tensorflow.DType
        strides: List[int]
        padding:
          one_of:
            - {type: str, constant: SAME}
            - {type: str, constant: VALID}
        data_format: {type: str, default: NHWC}
        dilations: {type: "List[int]", default: [1, 1, 1, 1]}
      input_ports:
        - attrs: {name: {type: str, constant: input}}
        - attrs: {name: {type: str, constant: filter}}
      output_ports:
        - attrs: {name: {type: str, constant: output}}
)";

struct Fixture {
  ir::Graph g;
  std::unique_ptr<schema::Registry> reg = std::make_unique<schema::Registry>();
  size_t ops = 0;
};

// A chain of blocks Placeholder -> MatMul -> Add -> Relu -> Conv2D -> ... ; every op carries the
// attributes its schema asks for and every input port is fed by an earlier op.
std::unique_ptr<Fixture> build(size_t n_ops) {
  auto f = std::make_unique<Fixture>();
  f->reg->add(schema::parse_namespace(text::parse_tree(kSchema, text::Format::Yaml, "bench.yaml"), f->reg->type_systems()));
  ir::Graph& g = f->g;
  g.reserve(n_ops + 2, n_ops * 3, n_ops * 2);
  OpId root = g.root();
  g.set_graph_namespace(root, g.sym("amanda/bench/1"));
  const Symbol T = g.sym("T"), dtype = g.sym("dtype"), shape = g.sym("shape"), ta = g.sym("transpose_a"),
               tb = g.sym("transpose_b"), type_attr = g.sym("type_attr"), strides = g.sym("strides"),
               padding = g.sym("padding"), data_format = g.sym("data_format");
  const Symbol s_place = g.sym("Placeholder"), s_mm = g.sym("MatMul"), s_add = g.sym("Add"), s_relu = g.sym("Relu"),
               s_conv = g.sym("Conv2D");
  const Symbol p_output = g.sym("output"), p_a = g.sym("a"), p_b = g.sym("b"), p_product = g.sym("product"),
               p_x = g.sym("x"), p_y = g.sym("y"), p_z = g.sym("z"), p_features = g.sym("features"),
               p_act = g.sym("activations"), p_input = g.sym("input"), p_filter = g.sym("filter");
  const ir::Value f32("float32"), fl("float"), no(false), ts(ir::Value::List{1, 1, 1, 1}), same("SAME"), nhwc("NHWC");
  const ir::Value sh(ir::Value::List{1, 784});
  PortId last, place;
  for (size_t i = 0; i < n_ops; ++i) {
    Symbol name = g.sym("op" + std::to_string(i));
    switch (i % 5) {
      case 0: {
        OpId op = g.create_op(root, s_place, name);
        g.set_attr(op, dtype, f32);
        g.set_attr(op, shape, sh);
        PortId o = g.add_output(op, p_output);
        g.set_attr(o, type_attr, ir::Value("dtype"));
        place = o;
        if (!last) last = o;
        break;
      }
      case 1: {
        OpId op = g.create_op(root, s_mm, name);
        g.set_attr(op, T, fl);
        g.set_attr(op, ta, no);
        g.set_attr(op, tb, no);
        PortId a = g.add_input(op, p_a), b = g.add_input(op, p_b), o = g.add_output(op, p_product);
        for (PortId p : {a, b, o}) g.set_attr(p, type_attr, ir::Value("T"));
        g.connect(last, a);
        g.connect(place, b);
        last = o;
        break;
      }
      case 2: {
        OpId op = g.create_op(root, s_add, name);
        g.set_attr(op, T, f32);
        PortId x = g.add_input(op, p_x), y = g.add_input(op, p_y);
        g.connect(last, x);
        g.connect(place, y);
        last = g.add_output(op, p_z);
        break;
      }
      case 3: {
        OpId op = g.create_op(root, s_relu, name);
        g.set_attr(op, T, f32);
        g.connect(last, g.add_input(op, p_features));
        last = g.add_output(op, p_act);
        break;
      }
      case 4: {
        OpId op = g.create_op(root, s_conv, name);
        g.set_attr(op, T, f32);
        g.set_attr(op, strides, ts);
        g.set_attr(op, padding, same);
        g.set_attr(op, data_format, nhwc);
        g.connect(last, g.add_input(op, p_input));
        g.connect(place, g.add_input(op, p_filter));
        last = g.add_output(op, p_output);
        break;
      }
    }
  }
  f->ops = n_ops;
  f->reg->find("amanda/bench/1");
  return f;
}

void BM_Validate(benchmark::State& state) {
  static std::unique_ptr<Fixture> f;
  size_t n = static_cast<size_t>(state.range(0));
  if (!f || f->ops != n) f = build(n);
  for (auto _ : state) {
    Diagnostics diags;
    schema::ValidationResult r = schema::validate(f->g, *f->reg, diags);
    if (!r.ok() || r.ops_checked != n) {
      state.SkipWithError(("validation found problems: " + diags.str().substr(0, 500)).c_str());
      break;
    }
    benchmark::DoNotOptimize(r);
  }
  state.counters["ops"] = static_cast<double>(n);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Validate)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The same graph with one op in a hundred broken (a wrong-typed attribute): the cost of
// reporting. Diagnostics past max_problems_per_type are only counted.
void BM_ValidateWithProblems(benchmark::State& state) {
  size_t n = static_cast<size_t>(state.range(0));
  auto f = build(n);
  Symbol T = f->g.sym("T");
  size_t broken = 0;
  f->g.for_each_op([&](OpId op) {
    if (op.value % 100 == 0 && f->g.attr(op, T)) {
      f->g.set_attr(op, T, ir::Value(int64_t{3}));
      ++broken;
    }
  });
  for (auto _ : state) {
    Diagnostics diags;
    schema::ValidationResult r = schema::validate(f->g, *f->reg, diags);
    if (r.problems < broken) {
      state.SkipWithError("expected problems were not found");
      break;
    }
    benchmark::DoNotOptimize(r);
  }
  state.counters["broken_ops"] = static_cast<double>(broken);
}
BENCHMARK(BM_ValidateWithProblems)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Normalising (--fill-defaults) the whole graph: MatMul and Conv2D ops get their defaults.
void BM_ValidateFillDefaults(benchmark::State& state) {
  size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    auto f = build(n);
    Symbol ta = f->g.sym("transpose_a");
    f->g.for_each_op([&](OpId op) { f->g.erase_attr(op, ta); });
    schema::ValidateOptions opt;
    opt.fill_defaults = true;
    state.ResumeTiming();
    Diagnostics diags;
    schema::ValidationResult r = schema::validate(f->g, *f->reg, diags, opt);
    benchmark::DoNotOptimize(r);
    state.PauseTiming();
    f.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_ValidateFillDefaults)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
