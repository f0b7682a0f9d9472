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

// NonZero (new in 9) below 9: no op before it makes a tensor whose length is a count of values,
// but Loop (opset 1: a trip count at run time) can grow one: over the flattened input, an If per
// element appends its index (Concat) to a loop-carried int64 vector when the element is not zero
// (a floating-point x counts as non-zero when x > 0, x < 0 or NaN: not (x > 0 or x < 1); integers
// compare as float64, exact in sign). The flat indices become coordinates with integer Div and
// x - (x / d) * d (Mod is new in 10), one row per axis (strides from the input's known shape).
// One iteration per element: slow on big tensors, exact.
std::string lower_nonzero(const ir::Graph&, ir::OpId, const std::vector<ir::PortId>& ins,
                          const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  if (ins.empty() || !types[0].has_tensor_type() || !types[0].tensor_type().has_shape()) return "the input's shape";
  int elem = types[0].tensor_type().elem_type();
  std::vector<int64_t> dims;  // -1: known at run time only (Shape)
  for (const auto& d : types[0].tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  if (dims.empty()) return "an input of rank 1 or more";
  BodyBuilder b{body, kExpansionNames};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto scalar_const = [&](const std::string& name, int type, double v) { return b.constant(name, type, {}, {v}); };
  std::string x = kIn + "0";
  std::string flat = b.reshape(x, {-1});
  std::string mask;
  if (elem == onnx::TensorProto::BOOL) {
    mask = flat;
  } else {
    std::string f = flat;
    int ct = elem;
    if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::DOUBLE) {
      f = b.op("Cast", {flat});
      BodyBuilder::one_int(last(), "to", onnx::TensorProto::DOUBLE);
      ct = onnx::TensorProto::DOUBLE;
    }
    std::string zero = scalar_const(b.fresh("zero"), ct, 0.0), one = scalar_const(b.fresh("one"), ct, 1.0);
    std::string gt = b.op("Greater", {f, zero}), lt = b.op("Less", {f, zero}), lt1 = b.op("Less", {f, one});
    std::string nonzero = b.op("Or", {gt, lt});
    std::string num = b.op("Or", {gt, lt1});
    std::string nan = b.op("Not", {num});
    mask = b.op("Or", {nonzero, nan});
  }
  std::string found = nonzero_loop(b, mask, b.op("Size", {x}));
  // Flat indices -> one row of coordinates per axis.
  std::vector<std::string> rows;
  // Each axis' size and stride as a 0-D int64: a constant where the shape says it, else from Shape.
  std::string shape;
  auto dim = [&](size_t k) {
    if (dims[k] >= 0) return b.constant_i64({dims[k]}, false);
    if (shape.empty()) shape = b.op("Shape", {x});
    std::string d = b.op("Gather", {shape, b.constant_i64({int64_t(k)}, false)});
    BodyBuilder::one_int(last(), "axis", 0);
    return d;
  };
  std::vector<std::string> strides(dims.size());
  std::string stride;
  int64_t known_stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    strides[k] = stride.empty() ? b.constant_i64({known_stride}, false) : stride;
    if (k == 0) break;
    if (stride.empty() && dims[k] >= 0) {
      known_stride *= dims[k];
    } else {
      if (stride.empty()) stride = b.constant_i64({known_stride}, false);
      stride = b.op("Mul", {stride, dim(k)});
    }
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    std::string q = dims.size() == 1 ? found : b.op("Div", {found, strides[k]});
    if (k > 0) {
      std::string d = dim(k);
      std::string qd = b.op("Div", {q, d});
      std::string back = b.op("Mul", {qd, d});
      q = b.op("Sub", {q, back});
    }
    std::string u = b.op("Unsqueeze", {q});
    BodyBuilder::ints(last(), "axes", {0});
    rows.push_back(u);
  }
  std::string out = rows.size() == 1 ? rows[0] : b.op("Concat", rows);
  if (rows.size() > 1) BodyBuilder::one_int(last(), "axis", 0);
  b.op("Identity", {out}, kOut + "0");
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
