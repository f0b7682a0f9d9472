// Ranks ONNX's inference (onnx 1.12) leaves out after a TF -> ONNX conversion: a Slice or Pad whose
// bounds are computed at run time (TF's StridedSlice with run-time begin/end, Conv2DBackpropInput
// with run-time input_sizes) gets no output type at all, though its rank is its input's. onnx.checker
// wants a shape on every graph output: a graph output without a rank takes the one these rules give
// (ops whose output has an input's rank, elementwise broadcasting, a Reshape to a shape of known
// length), or the one TF's rank rules gave its tensor before the tables (`@tf_rank`, set by the
// boundary), its dimensions unknown. Nothing is guessed: an op outside the rules leaves the output as it is.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "amanda/frameworks/onnx/infer.h"
#include "amanda/ir/graph.h"
#include "output_ranks.h"

namespace amanda::conversions {

namespace {

const std::set<std::string_view> kSameAsFirst = {
    "Slice", "Pad", "Transpose", "Identity", "Cast", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal",
    "Floor", "Ceil", "Round", "Sign", "Erf", "Atan", "Sin", "Cos", "Tan", "Asin", "Acos", "Not", "IsNaN", "IsInf", "Softmax",
    "LogSoftmax", "Clip", "LeakyRelu", "Elu", "Selu", "Softplus", "Compress", "ConvTranspose", "Conv", "MaxPool", "AveragePool",
    "Resize", "CumSum", "Dropout", "ReverseSequence", "LRN", "BatchNormalization", "InstanceNormalization", "DepthToSpace",
    "SpaceToDepth", "Expand", "Tile", "ScatterND", "ScatterElements", "HardSigmoid"};
const std::set<std::string_view> kBroadcast = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Less", "Greater",
                                               "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where", "Mod", "PRelu", "Sum",
                                               "Mean"};

}  // namespace

void rank_unranked_outputs(ir::Graph& g) {
  std::map<uint32_t, int> memo;
  std::function<int(ir::PortId, int)> rank = [&](ir::PortId p, int depth) -> int {
    if (!p || depth > 256) return -1;
    if (g.port_type(p)) {
      const ir::TypeData& td = g.port_type_data(p);
      if (td.kind == ir::TypeKind::Tensor && td.ranked) return static_cast<int>(td.dims.size());
    }
    if (auto it = memo.find(p.value); it != memo.end()) return it->second;
    memo[p.value] = -1;  // (a cycle ends)
    ir::OpId op = g.port_op(p);
    if (g.is_graph(op)) return -1;
    std::string_view type = g.type_str(op);
    std::vector<ir::PortId> ins;
    for (ir::PortId in : g.inputs(op))
      if (!g.is_control(in)) ins.push_back(g.producer(in));
    int r = -1;
    if (kSameAsFirst.contains(type) && !ins.empty()) {
      r = rank(ins[0], depth + 1);
    } else if (kBroadcast.contains(type)) {
      for (ir::PortId in : ins) {
        int k = rank(in, depth + 1);
        if (k < 0) {
          r = -1;
          break;
        }
        r = std::max(r, k);
      }
    } else if (type == "Reshape" && ins.size() >= 2 && ins[1] && g.port_type(ins[1])) {
      const ir::TypeData& td = g.port_type_data(ins[1]);
      if (td.ranked && td.dims.size() == 1 && td.dims[0].is_known()) r = static_cast<int>(td.dims[0].value());
    }
    memo[p.value] = r;
    return r;
  };
  bool changed = false;
  const Symbol tf_rank = g.sym("@tf_rank");
  for (ir::PortId out : g.outputs(g.root())) {
    const ir::Value* tf = g.attr(out, tf_rank);
    const int tf_r = tf && tf->is_int() ? static_cast<int>(tf->as_int()) : -1;
    if (tf) g.erase_attr(out, tf_rank);  // (the boundary's note, not an ONNX attribute)
    if (g.is_control(out) || g.attr(out, g.sym("shape"))) continue;
    ir::PortId src = g.producer(out);
    if (!src || !g.port_type(src)) continue;
    const ir::TypeData& td = g.port_type_data(src);
    if (td.kind != ir::TypeKind::Tensor || td.ranked || td.elem == ir::DType::Undefined) continue;
    int r = rank(src, 0);
    if (r < 0) r = tf_r;
    if (r < 0) continue;
    std::vector<ir::Dim> dims(static_cast<size_t>(r), ir::Dim::unknown());
    ir::DType elem = td.elem;
    // Declared on the graph output, as a signature's type is (inference merges it).
    g.set_port_type(out, g.types().tensor(elem, std::span<const ir::Dim>(dims)));
    g.set_attr(out, g.sym("type"), ir::Value(elem == ir::DType::Float32   ? std::string("tensor(float)")
                                             : elem == ir::DType::Float64 ? std::string("tensor(double)")
                                                                          : "tensor(" + std::string(ir::dtype_name(elem)) + ")"));
    g.set_attr(out, g.sym("shape"), ir::Value(ir::Value::List(static_cast<size_t>(r), ir::Value())));
    changed = true;
  }
  if (changed) {
    onnx_frontend::InferOptions o;
    o.write_attrs = true;
    try {
      onnx_frontend::infer_types(g, o);
    } catch (const std::exception&) {
    }
  }
}

}  // namespace amanda::conversions
