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

// Compress (new in 9) below 9: Gather at the indices of the true conditions (nonzero_loop,
// helpers.cpp), along `axis`, or of the flattened input without one. A condition shorter than the axis
// selects among its first elements, as Compress does.
std::string lower_compress(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                           const std::vector<onnx::TypeProto>&, onnx::GraphProto& body) {
  if (ins.size() < 2) return "the condition input";
  const ir::Value* axis = ir::get_attr(g, op, "axis");
  BodyBuilder b{body, kExpansionNames};
  std::string cond = b.reshape(kIn + "1", {-1});
  std::string found = nonzero_loop(b, cond, b.op("Size", {cond}));
  std::string data = kIn + "0";
  if (!axis || !axis->is_int()) data = b.reshape(data, {-1});
  b.op("Gather", {data, found}, kOut + "0");
  BodyBuilder::one_int(*body.mutable_node(body.node_size() - 1), "axis", axis && axis->is_int() ? axis->as_int() : 0);
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
