// TF's Select picks whole rows when its condition is a vector and its values have a higher rank;
// the TF -> ONNX rule needs the ranks to know which (tables/tensorflow/tf_2.2_onnx_13.yaml,
// select / select_rows), and a TensorFlow graph carries no types. This finds the ranks where a
// few ops' rank rules settle them (Consts, graph inputs, elementwise ops, Shape, ConcatV2,
// StridedSlice's masks, non-maximum suppression, ...) and makes a Select whose condition has the
// rank of its values a SelectV2, which is the same op then (see onnx_boundary.h).
#include <map>
#include <set>

#include "onnx_boundary.h"

namespace amanda::tf_frontend {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

class Ranks {
 public:
  explicit Ranks(const ir::Graph& g) : g_(g) {}

  // -1: not known.
  int rank(PortId out, int depth = 0) {
    if (!out) return -1;
    if (auto it = memo_.find(out.value); it != memo_.end()) return it->second;
    int r = depth > 400 ? -1 : compute(out, depth + 1);
    memo_[out.value] = r;
    return r;
  }

 private:
  const ir::Graph& g_;
  std::map<uint32_t, int> memo_;

  PortId in(OpId op, size_t i) const {
    size_t k = 0;
    for (PortId p : g_.inputs(op)) {
      if (g_.is_control(p)) continue;
      if (k++ == i) return g_.producer(p);
    }
    return PortId();
  }
  size_t data_inputs(OpId op) const {
    size_t n = 0;
    for (PortId p : g_.inputs(op))
      if (!g_.is_control(p)) ++n;
    return n;
  }
  const Value* attr(OpId op, const char* k) const {
    Symbol s = g_.symbols().find(k);
    return s == SymbolTable::kNone ? nullptr : g_.attr(op, s);
  }
  int64_t int_attr(OpId op, const char* k) const {
    const Value* v = attr(op, k);
    return v && v->is_int() ? v->as_int() : 0;
  }
  // The element count of a Const (a shape or axes list), or -1.
  int const_count(PortId out) const {
    if (!out || g_.type_str(g_.port_op(out)) != "Const") return -1;
    const Value* v = attr(g_.port_op(out), "value");
    if (!v || !v->is_tensor()) return -1;
    auto n = v->as_tensor().element_count();
    return n ? static_cast<int>(*n) : -1;
  }

  int compute(PortId out, int d) {
    OpId op = g_.port_op(out);
    if (g_.is_graph(op)) {
      if (!g_.port_type(out)) return -1;
      const ir::TypeData& td = g_.port_type_data(out);
      return td.kind == ir::TypeKind::Tensor && td.ranked ? static_cast<int>(td.dims.size()) : -1;
    }
    static const std::set<std::string_view> same = {
        "Identity", "Cast", "Neg", "Abs", "Exp", "Log", "Sigmoid", "Tanh", "Relu", "Relu6", "Elu", "Selu", "LeakyRelu",
        "Sqrt", "Rsqrt", "Floor", "Ceil", "Round", "Square", "LogicalNot", "Softmax", "LogSoftmax", "ZerosLike",
        "OnesLike", "Reciprocal", "Sign", "StopGradient", "Pad", "PadV2", "MirrorPad", "Tile", "Transpose", "ReverseV2",
        "Slice", "BiasAdd", "Cumsum", "ClipByValue", "Softplus", "Sin", "Cos", "Erf", "IsNan", "TopKV2", "Snapshot"};
    static const std::set<std::string_view> broadcast = {
        "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum", "Minimum", "Pow",
        "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr",
        "SquaredDifference", "SelectV2", "BatchMatMulV2", "BatchMatMul", "Atan2", "DivNoNan", "Mod"};
    std::string_view t = g_.type_str(op);
    if (t == "Const") {
      const Value* v = attr(op, "value");
      return v && v->is_tensor() ? static_cast<int>(v->as_tensor().shape.size()) : -1;
    }
    if (same.contains(t)) return rank(in(op, 0), d);
    if (broadcast.contains(t)) {
      int r = 0;
      for (size_t i = 0; i < data_inputs(op); ++i) {
        int x = rank(in(op, i), d);
        if (x < 0) return -1;
        r = std::max(r, x);
      }
      return r;
    }
    if (t == "Select" || t == "Split") return rank(in(op, 1), d);
    if (t == "SplitV") return rank(in(op, 0), d);
    if (t == "Shape" || t == "Range") return 1;
    if (t == "Size" || t == "Rank") return 0;
    if (t == "Where") return 2;
    if (t == "MatMul") return 2;
    if (t.starts_with("NonMaxSuppressionV")) {
      size_t k = 0;
      for (PortId p : g_.outputs(op)) {
        if (g_.is_control(p)) continue;
        if (p == out) return g_.port_name_str(p) == "valid_outputs" ? 0 : 1;
        ++k;
      }
      return -1;
    }
    if (t == "ConcatV2") {
      for (size_t i = 0; i + 1 < data_inputs(op); ++i)
        if (int x = rank(in(op, i), d); x >= 0) return x;
      return -1;
    }
    if (t == "Pack") {
      int x = rank(in(op, 0), d);
      return x < 0 ? -1 : x + 1;
    }
    if (t == "Unpack") {
      int x = rank(in(op, 0), d);
      return x < 1 ? -1 : x - 1;
    }
    if (t == "ExpandDims") {
      int x = rank(in(op, 0), d);
      return x < 0 ? -1 : x + 1;
    }
    if (t == "Squeeze") {
      const Value* dims = attr(op, "squeeze_dims");
      int x = rank(in(op, 0), d);
      if (x < 0 || !dims || !dims->is_list() || dims->as_list().empty()) return -1;
      return x - static_cast<int>(dims->as_list().size());
    }
    if (t == "Reshape") return const_count(in(op, 1));
    if (t == "Fill") return const_count(in(op, 0));
    if (t == "StridedSlice") {
      // (with an ellipsis too: it stands for the axes the other entries leave)
      int x = rank(in(op, 0), d);
      if (x < 0) return -1;
      return x - __builtin_popcountll(static_cast<uint64_t>(int_attr(op, "shrink_axis_mask"))) +
             __builtin_popcountll(static_cast<uint64_t>(int_attr(op, "new_axis_mask")));
    }
    if (t == "GatherV2" && int_attr(op, "batch_dims") == 0) {
      int p = rank(in(op, 0), d), i = rank(in(op, 1), d);
      return p < 0 || i < 0 ? -1 : p - 1 + i;
    }
    if (t == "Mean" || t == "Sum" || t == "Max" || t == "Min" || t == "Prod" || t == "All" || t == "Any") {
      int x = rank(in(op, 0), d);
      if (x < 0) return -1;
      const Value* k = attr(op, "keep_dims");
      if (k && k->is_bool() && k->as_bool()) return x;
      int n = const_count(in(op, 1));
      return n < 0 ? -1 : x - n;
    }
    if (t == "ArgMax" || t == "ArgMin") {
      int x = rank(in(op, 0), d);
      return x < 1 ? -1 : x - 1;
    }
    if (t == "Conv2D" || t == "DepthwiseConv2dNative" || t == "MaxPool" || t == "AvgPool" || t == "ResizeBilinear" ||
        t == "ResizeNearestNeighbor" || t == "Conv2DBackpropInput")
      return 4;
    return -1;
  }
};

}  // namespace

int tf_output_rank(const ir::Graph& g, ir::PortId out) { return Ranks(g).rank(out); }

size_t select_to_select_v2(ir::Graph& g) {
  Ranks r(g);
  size_t n = 0;
  for (OpId op : g.ops_of_type("Select")) {
    std::vector<PortId> ins;
    for (PortId p : g.inputs(op))
      if (!g.is_control(p)) ins.push_back(g.producer(p));
    if (ins.size() != 3) continue;
    int c = r.rank(ins[0]), t = r.rank(ins[1]);
    if (c < 0 || c != t) continue;
    g.set_type(op, g.sym("SelectV2"));
    ++n;
  }
  return n;
}

}  // namespace amanda::tf_frontend
