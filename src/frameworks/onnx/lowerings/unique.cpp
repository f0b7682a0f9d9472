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

// Unique (new in 11) below 11: slices along `axis` (or the elements, without one) compared pairwise.
// R = the input as [d, m] (the axis first); E[i][j]: slices i and j equal in every element
// (ReduceMin of Equal); a slice is the first of its kind when no earlier one equals it; NonZero of
// those gives the unique ones in order of first occurrence. Sorted: slice i < slice j when at the
// first position where they differ (no difference before it: a MatMul of the differences with a
// strictly upper 0/1 matrix) i's element is smaller; the rank of a unique slice is the count of
// unique slices below it, and the order is the inverse of the ranks (Equal with 0..u-1, ArgMax).
// Y gathers the input along the axis; inverse_indices and counts compare every element's first
// occurrence with the order. 0..k-1 of a length known at run time: NonZero of ConstantOfShape(k, 1).
// Sizes of d^2 m: for modest inputs; exact for any values but NaN (Equal never holds for NaN).
std::string lower_unique(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                         const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  if (ins.empty() || !types[0].has_tensor_type()) return "the input's type";
  const ir::Value* av = ir::get_attr(g, op, "axis");
  const ir::Value* sv = ir::get_attr(g, op, "sorted");
  bool sorted = !sv || !sv->is_int() || sv->as_int() != 0;
  bool has_axis = av && av->is_int();
  int rank = types[0].tensor_type().has_shape() ? types[0].tensor_type().shape().dim_size() : -1;
  int64_t axis = 0;
  if (has_axis) {
    if (rank < 1) return "the input's rank (an axis is given)";
    axis = av->as_int() < 0 ? av->as_int() + rank : av->as_int();
    if (axis < 0 || axis >= rank) return "an axis within the input's rank";
  }
  BodyBuilder b{body, kExpansionNames};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto reduce = [&](const std::string& type, const std::string& x, int64_t a) {
    std::string o = b.op(type, {x});
    BodyBuilder::ints(last(), "axes", {a});
    BodyBuilder::one_int(last(), "keepdims", 0);
    return o;
  };
  auto argmax = [&](const std::string& x, int64_t a) {
    std::string o = b.op("ArgMax", {x});
    BodyBuilder::one_int(last(), "axis", a);
    BodyBuilder::one_int(last(), "keepdims", 0);
    return o;
  };
  // 0..k-1 for a 1-D int64 shape-like [k]
  auto iota = [&](const std::string& len1d) {
    std::string ones = b.op("ConstantOfShape", {len1d});
    auto* a = last().add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(1);
    return b.reshape(b.op("NonZero", {ones}), {-1});
  };
  std::string x = kIn + "0";
  std::string r;
  if (!has_axis) {
    r = b.reshape(x, {-1, 1});
  } else {
    std::vector<int64_t> perm{axis};
    for (int k = 0; k < rank; ++k)
      if (k != axis) perm.push_back(k);
    r = b.reshape(b.transpose(x, perm), {0, -1});
  }
  std::string a3 = b.unsqueeze(r, 1), b3 = b.unsqueeze(r, 0);  // [d, 1, m], [1, d, m]
  std::string eq = b.op("Equal", {a3, b3});       // [d, d, m]
  std::string eqf = b.cast(eq, onnx::TensorProto::FLOAT);
  std::string same = reduce("ReduceMin", eqf, 2);  // [d, d]: 1 where slices i and j are equal
  std::string shape_r = b.op("Shape", {r});
  std::string dlen = b.op("Slice", {shape_r, b.constant_i64({0}), b.constant_i64({1})});
  std::string mlen = b.op("Slice", {shape_r, b.constant_i64({1}), b.constant_i64({2})});
  std::string id = iota(dlen);  // [d]
  std::string idf = b.cast(id, onnx::TensorProto::FLOAT);  // (Less takes floats only before 9)
  std::string earlier = b.op("Less", {b.unsqueeze(idf, 1), b.unsqueeze(idf, 0)});  // [i, j]: i < j
  std::string prior = reduce("ReduceMax", b.op("Mul", {same, b.cast(earlier, onnx::TensorProto::FLOAT)}), 0);  // [d]
  std::string half_f = b.constant(b.fresh("half"), onnx::TensorProto::FLOAT, {}, {0.5});
  std::string first = b.op("Less", {prior, half_f});           // [d] bool
  std::string uidx = b.reshape(b.op("NonZero", {first}), {-1});  // [u]
  std::string order = uidx;
  if (sorted) {
    // x_i[k] < x_j[k]; integers compared as float64 (Less takes floats only before 9; exact up to 2^53)
    int elem = types[0].tensor_type().elem_type();
    bool is_float = elem == onnx::TensorProto::FLOAT || elem == onnx::TensorProto::DOUBLE || elem == onnx::TensorProto::FLOAT16;
    std::string lt = is_float ? b.op("Less", {a3, b3})
                              : b.op("Less", {b.cast(a3, onnx::TensorProto::DOUBLE), b.cast(b3, onnx::TensorProto::DOUBLE)});  // [d, d, m]
    std::string ne = b.cast(b.op("Not", {eq}), onnx::TensorProto::FLOAT);
    std::string mi = iota(mlen);  // [m]
    std::string mif = b.cast(mi, onnx::TensorProto::FLOAT);
    std::string upper = b.cast(b.op("Less", {b.unsqueeze(mif, 1), b.unsqueeze(mif, 0)}), onnx::TensorProto::FLOAT);  // [k', k]: k' < k
    std::string before = b.op("MatMul", {ne, upper});  // [d, d, m]: differences before k
    std::string clean = b.op("Less", {before, half_f});
    std::string decisive = b.op("And", {lt, clean});
    std::string less = reduce("ReduceMax", b.cast(decisive, onnx::TensorProto::FLOAT), 2);  // [i, j]: slice i < slice j
    std::string firstf = b.unsqueeze(b.cast(first, onnx::TensorProto::FLOAT), 0);                  // [1, d]
    std::string rank_all = b.reshape(b.op("MatMul", {firstf, less}), {-1});               // [d]
    std::string ranks = b.op("Gather", {rank_all, uidx});                                 // [u]
    BodyBuilder::one_int(last(), "axis", 0);
    std::string ui = iota(b.op("Shape", {uidx}));
    std::string pos = b.op("Equal", {b.unsqueeze(b.cast(ui, onnx::TensorProto::FLOAT), 1), b.unsqueeze(ranks, 0)});  // [q, k]
    std::string k = argmax(b.cast(pos, onnx::TensorProto::FLOAT), 1);
    order = b.op("Gather", {uidx, k});
    BodyBuilder::one_int(last(), "axis", 0);
  }
  if (has_axis) {
    b.op("Gather", {x, order}, kOut + "0");
    BodyBuilder::one_int(last(), "axis", axis);
  } else {
    b.op("Gather", {b.reshape(x, {-1}), order}, kOut + "0");
    BodyBuilder::one_int(last(), "axis", 0);
  }
  b.op("Identity", {order}, kOut + "1");
  std::string rep = argmax(same, 0);  // [d]: the first slice equal to each
  std::string hit = b.cast(b.op("Equal", {b.unsqueeze(order, 1), b.unsqueeze(rep, 0)}), onnx::TensorProto::FLOAT);  // [u, d]
  b.op("Identity", {argmax(hit, 0)}, kOut + "2");
  std::string cnt = reduce("ReduceSum", hit, 1);
  b.op("Cast", {cnt}, kOut + "3");
  BodyBuilder::one_int(last(), "to", onnx::TensorProto::INT64);
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
