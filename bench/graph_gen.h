// Graph generators shared by the benchmarks and by make_big_graph. Header-only.
//
// Two shapes:
//  - a random DAG (plan_random_dag + build_random_dag): the issue's "1,000,000 ops with
//    1,000,000 edges" — ops "op0".."opN-1", a type from a small set, 1-2 input ports and one
//    output port; each input has at most one producer, always an earlier op.
//  - a TensorFlow-like graph (build_tf_graph): conv blocks with the attributes and named,
//    attributed ports a real TensorFlow import carries, for the text (YAML/JSON) benchmarks.
//
// Both are deterministic for a given seed on every platform: the generator is our own
// (SplitMix64), not <random>'s distributions, whose output differs between standard libraries.
#pragma once

#include <charconv>
#include <cstring>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/text/document.h"

namespace amanda::bench {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32).
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(((next() >> 32) * uint64_t(n)) >> 32); }

 private:
  uint64_t s_;
};

// ---------------------------------------------------------------- random DAG

inline constexpr std::string_view kDagTypes[] = {"Add", "Mul", "Relu", "Conv", "MatMul", "Concat", "Sigmoid", "Tanh"};

// What to build, decided before the clock starts so that only API calls are timed.
struct DagPlan {
  uint32_t ops = 0;
  std::vector<uint8_t> type;      // index into kDagTypes
  std::vector<uint8_t> inputs;    // 1 or 2 input ports per op
  struct Edge {
    uint32_t src;        // producing op (its only output port)
    uint32_t dst;        // consuming op, > src
    uint32_t dst_input;  // which input port of dst
  };
  std::vector<Edge> edges;  // sorted by (dst, dst_input); each input appears at most once
  size_t ports() const {
    size_t n = ops;
    for (uint8_t k : inputs) n += k;
    return n;
  }
};

// Picks exactly `edges` of the inputs of ops 1..n-1 (selection sampling, Knuth's algorithm S)
// and gives each a producer drawn uniformly from the earlier ops. Throws if there are fewer
// inputs than edges.
inline DagPlan plan_random_dag(uint32_t ops, uint32_t edges, uint64_t seed = 1) {
  DagPlan p;
  p.ops = ops;
  Rng rng(seed);
  p.type.resize(ops);
  p.inputs.resize(ops);
  uint64_t eligible = 0;
  for (uint32_t i = 0; i < ops; ++i) {
    uint64_t r = rng.next();
    p.type[i] = static_cast<uint8_t>(r % std::size(kDagTypes));
    p.inputs[i] = static_cast<uint8_t>(1 + ((r >> 8) & 1));
    if (i > 0) eligible += p.inputs[i];
  }
  if (edges > eligible) throw std::invalid_argument("plan_random_dag: more edges than inputs of non-first ops");
  p.edges.reserve(edges);
  uint64_t need = edges;
  for (uint32_t i = 1; i < ops && need; ++i)
    for (uint32_t k = 0; k < p.inputs[i]; ++k, --eligible)
      if ((rng.next() % eligible) < need) {
        p.edges.push_back({rng.below(i), i, k});
        --need;
      }
  return p;
}

inline constexpr std::string_view kDagInputNames[] = {"x", "y"};

// Builds the plan through the public API: create_op, add_input/add_output, connect. Op i gets
// id OpId(i + 2) (1 is the root), so no side table of ids is needed (and none is counted when
// measuring memory).
inline void build_random_dag(ir::Graph& g, const DagPlan& p, bool reserve) {
  if (reserve) g.reserve(p.ops, p.ports(), p.edges.size());
  Symbol types[std::size(kDagTypes)];
  for (size_t i = 0; i < std::size(kDagTypes); ++i) types[i] = g.sym(kDagTypes[i]);
  Symbol in_names[2] = {g.sym(kDagInputNames[0]), g.sym(kDagInputNames[1])};
  Symbol out_name = g.sym("out");
  char buf[16] = {'o', 'p'};
  const ir::OpId root = g.root();
  for (uint32_t i = 0; i < p.ops; ++i) {
    char* end = std::to_chars(buf + 2, buf + sizeof buf, i).ptr;
    ir::OpId op = g.create_op(root, types[p.type[i]], g.sym(std::string_view(buf, end - buf)));
    for (uint32_t k = 0; k < p.inputs[i]; ++k) g.add_input(op, in_names[k]);
    g.add_output(op, out_name);
  }
  for (const DagPlan::Edge& e : p.edges)
    g.connect(g.output(ir::OpId(e.src + 2), 0), g.input(ir::OpId(e.dst + 2), e.dst_input));
}

// ---------------------------------------------------------------- TensorFlow-like graph

// A stream of ResNet-style blocks: each conv layer is weights (VariableV2) + Conv2D + bias
// (VariableV2) + BiasAdd + FusedBatchNorm + Relu; a block ends with a residual Add, and every
// few blocks a MaxPool or a Reshape fed by a small Const tensor. Ops carry TensorFlow's
// attributes (T, strides, padding, data_format, use_cudnn_on_gpu, dilations, ...), ports are
// named and carry type_attr as in the seed's TensorFlow example, and every input has a producer.
class TfGraphGen {
 public:
  TfGraphGen(ir::Graph& g, uint64_t seed) : g_(g), rng_(seed) {
    type_attr_ = g.sym("type_attr");
  }

  void run(size_t target_ops) {
    g_.set_graph_namespace(g_.root(), g_.sym("amanda/tensorflow/1.13.1"));
    g_.set_attr(g_.root(), g_.sym("versions"), ir::Value(ir::Value::Map{{"producer", ir::Value(27)}}));
    ir::PortId x = placeholder();
    for (uint32_t b = 0; count_ < target_ops; ++b) x = block(b, x, target_ops);
  }

 private:
  using PortId = ir::PortId;
  using OpId = ir::OpId;
  using Value = ir::Value;

  static Value ints(std::initializer_list<int64_t> v) {
    Value::List l;
    for (int64_t x : v) l.emplace_back(x);
    return Value(std::move(l));
  }

  OpId op(std::string_view type, const std::string& name) {
    ++count_;
    return g_.create_op(g_.root(), g_.sym(type), g_.sym(name));
  }
  PortId port(OpId o, ir::PortDir dir, std::string_view name, std::string_view type_attr = "T") {
    PortId p = g_.add_port(o, dir, g_.sym(name));
    g_.set_attr(p, type_attr_, Value(type_attr));
    return p;
  }
  void attr(OpId o, std::string_view k, Value v) { g_.set_attr(o, g_.sym(k), std::move(v)); }

  PortId placeholder() {
    OpId o = op("Placeholder", "input");
    attr(o, "dtype", Value("float32"));
    attr(o, "shape", ints({-1, 224, 224, 3}));
    return port(o, ir::PortDir::Out, "output", "dtype");
  }

  PortId variable(const std::string& name, Value shape) {
    OpId o = op("VariableV2", name);
    attr(o, "shape", std::move(shape));
    attr(o, "dtype", Value("float32"));
    attr(o, "container", Value(""));
    attr(o, "shared_name", Value(""));
    PortId p = port(o, ir::PortDir::Out, "ref", "dtype");
    g_.set_attr(p, g_.sym("is_ref"), Value(true));
    return p;
  }

  PortId conv_layer(const std::string& scope, PortId x, int64_t cin, int64_t cout, int64_t k, int64_t stride) {
    PortId w = variable(scope + "/weights", ints({k, k, cin, cout}));
    OpId conv = op("Conv2D", scope + "/Conv2D");
    attr(conv, "T", Value("float32"));
    attr(conv, "strides", ints({1, stride, stride, 1}));
    attr(conv, "padding", Value(rng_.below(4) ? "SAME" : "VALID"));
    attr(conv, "data_format", Value("NHWC"));
    attr(conv, "use_cudnn_on_gpu", Value(true));
    attr(conv, "dilations", ints({1, 1, 1, 1}));
    attr(conv, "explicit_paddings", Value(Value::List{}));
    g_.connect(x, port(conv, ir::PortDir::In, "input"));
    g_.connect(w, port(conv, ir::PortDir::In, "filter"));
    PortId y = port(conv, ir::PortDir::Out, "output");

    PortId b = variable(scope + "/biases", ints({cout}));
    OpId add = op("BiasAdd", scope + "/BiasAdd");
    attr(add, "T", Value("float32"));
    attr(add, "data_format", Value("NHWC"));
    g_.connect(y, port(add, ir::PortDir::In, "value"));
    g_.connect(b, port(add, ir::PortDir::In, "bias"));
    y = port(add, ir::PortDir::Out, "output");

    OpId bn = op("FusedBatchNorm", scope + "/BatchNorm/FusedBatchNorm");
    attr(bn, "T", Value("float32"));
    attr(bn, "epsilon", Value(0.001));
    attr(bn, "data_format", Value("NHWC"));
    attr(bn, "is_training", Value(false));
    g_.connect(y, port(bn, ir::PortDir::In, "x"));
    for (const char* n : {"scale", "offset", "mean", "variance"})
      g_.connect(variable(scope + "/BatchNorm/" + n, ints({cout})), port(bn, ir::PortDir::In, n));
    y = port(bn, ir::PortDir::Out, "y");
    for (const char* n : {"batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"})
      port(bn, ir::PortDir::Out, n);

    OpId relu = op("Relu", scope + "/Relu");
    attr(relu, "T", Value("float32"));
    g_.connect(y, port(relu, ir::PortDir::In, "features"));
    return port(relu, ir::PortDir::Out, "activations");
  }

  PortId block(uint32_t b, PortId x, size_t target) {
    std::string scope = "block" + std::to_string(b);
    static constexpr int64_t kWidths[] = {32, 64, 128, 256};
    int64_t c = kWidths[rng_.below(4)];
    PortId in = x;
    int layers = 2 + static_cast<int>(rng_.below(3));
    for (int l = 0; l < layers && count_ < target; ++l, ++conv_index_)
      x = conv_layer(scope + "/conv_" + std::to_string(conv_index_), x, c, c, rng_.below(2) ? 3 : 1, 1);
    OpId add = op("Add", scope + "/add");
    attr(add, "T", Value("float32"));
    g_.connect(in, port(add, ir::PortDir::In, "x"));
    g_.connect(x, port(add, ir::PortDir::In, "y"));
    x = port(add, ir::PortDir::Out, "z");
    if (b % 4 == 3) {
      OpId pool = op("MaxPool", scope + "/MaxPool");
      attr(pool, "T", Value("float32"));
      attr(pool, "ksize", ints({1, 2, 2, 1}));
      attr(pool, "strides", ints({1, 2, 2, 1}));
      attr(pool, "padding", Value("VALID"));
      attr(pool, "data_format", Value("NHWC"));
      g_.connect(x, port(pool, ir::PortDir::In, "input"));
      x = port(pool, ir::PortDir::Out, "output");
    } else if (b % 4 == 1) {
      OpId shape = op("Const", scope + "/Reshape/shape");
      attr(shape, "dtype", Value("int32"));
      std::string bytes(16, '\0');
      int32_t dims[4] = {-1, 7, 7, static_cast<int32_t>(c)};
      std::memcpy(bytes.data(), dims, sizeof dims);
      attr(shape, "value", Value(ir::Tensor::from_bytes(ir::DType::Int32, {4}, std::move(bytes))));
      PortId s = port(shape, ir::PortDir::Out, "output", "dtype");
      OpId reshape = op("Reshape", scope + "/Reshape");
      attr(reshape, "T", Value("float32"));
      attr(reshape, "Tshape", Value("int32"));
      g_.connect(x, port(reshape, ir::PortDir::In, "tensor"));
      g_.connect(s, port(reshape, ir::PortDir::In, "shape", "Tshape"));
      x = port(reshape, ir::PortDir::Out, "output");
    }
    return x;
  }

  ir::Graph& g_;
  Rng rng_;
  Symbol type_attr_ = 0;
  size_t count_ = 0;
  uint32_t conv_index_ = 0;
};

// A graph document of at least `ops` ops (at most 3 more: a block's tail is not cut).
inline text::Document make_tf_document(size_t ops, uint64_t seed = 1) {
  text::Document doc(text::Document::Kind::Graph);
  TfGraphGen(doc.graph, seed).run(ops);
  return doc;
}

inline text::Document make_dag_document(uint32_t ops, uint32_t edges, uint64_t seed = 1) {
  text::Document doc(text::Document::Kind::Graph);
  build_random_dag(doc.graph, plan_random_dag(ops, edges, seed), true);
  return doc;
}

}  // namespace amanda::bench
