#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/conventions.h"
#include "lowering.h"

namespace amanda::onnx_frontend::lowering {

// TopK (10 takes K as an input) below 10 with K at run time: TopK with k the whole axis (its length
// known: k is an attribute there), then the first K of both outputs (Gather at 0..K-1, a Loop
// makes them). The full sort's first K are TopK's K (sorted, the same tie order).
std::string lower_topk_runtime(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                               const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  int r = known_rank(types, 0);
  if (r < 0) return "the rank of the input";
  int64_t axis = int_attr(g, op, "axis", -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return "an axis within the input's rank";
  const auto& dim = types[0].tensor_type().shape().dim(int(axis));
  if (!dim.has_dim_value()) return "the input's length along the axis (opset 9's TopK takes k as an attribute)";
  int counter = 0;
  BodyBuilder b{body, kRefusalNames, &counter};
  std::string top = b.op("TopK", {kIn + "0", b.ci({dim.dim_value()})});
  onnx::NodeProto* t = b.last;
  t->set_output(0, b.fresh("values"));
  t->add_output(b.fresh("indices"));
  BodyBuilder::one_int(*t, "axis", axis);
  // largest/sorted (TopK 11): passed on when not their defaults (the table converts or refuses them)
  for (const char* a : {"largest", "sorted"})
    if (int_attr(g, op, a, 1) != 1) BodyBuilder::one_int(*t, a, 0);
  std::string vals = t->output(0), idxs = t->output(1);
  std::string k = b.op("Reshape", {kIn + "1", b.ci({})});  // K: [1] -> a scalar trip count
  std::string ar = b.loop(k, {}, {}, {onnx::TensorProto::INT64}, [&](BodyBuilder& lb, const std::string& it, const std::vector<std::string>&) {
    return std::vector<std::string>{lb.op("Identity", {it})};
  })[0];
  b.op("Gather", {vals, ar}, kOut + "0");
  b.i("axis", axis);
  b.op("Gather", {idxs, ar}, kOut + "1");
  b.i("axis", axis);
  (void)top;
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
