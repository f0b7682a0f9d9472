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

// ReduceSum (13 takes axes as an input) with axes at run time, below 13 (axes an attribute): for
// each axis a of the input (rank known), from the last to the first, If(a is among the axes: one
// of them equals a or a - rank) then ReduceSum over [a] (a constant: the table makes it the
// attribute) else Identity. Reducing the last axes first keeps the numbers of the others. Empty axes:
// every axis, or none with noop_with_empty_axes (a count of the axes equal to 0 joins the test).
// keepdims 0: the reduced input (keepdims 1) reshaped to the kept axes' lengths.
std::string lower_reducesum_axes(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                                 const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  int r = known_rank(types, 0);
  if (r < 0) return "the rank of the input (one If per axis)";
  int elem = elem_of(types, 0);
  if (!elem) return "the input's element type";
  int64_t keep = int_attr(g, op, "keepdims", 1), noop = int_attr(g, op, "noop_with_empty_axes", 0);
  int counter = 0;
  BodyBuilder b{body, kRefusalNames, &counter};
  std::string x = kIn + "0";
  if (!present(g, ins, 1)) {  // no axes: every axis, or none
    if (noop) b.op("Identity", {x}, kOut + "0");
    else b.op("ReduceSum", {x}, kOut + "0"), b.i("keepdims", keep);
    return {};
  }
  std::string axes = b.op("Concat", {kIn + "1", b.ci({r})});  // r matches no axis: never empty
  b.i("axis", 0);
  std::string empty;
  if (!noop) {
    std::string n = b.op("Size", {kIn + "1"});
    empty = b.op("Cast", {b.op("Equal", {n, b.si(0)})});
    b.i("to", onnx::TensorProto::INT64);
  }
  // Each branch's output goes through Reshape(v, Shape(v) * one), one a 1 computed from the axes:
  // its lengths unknown to shape inference (onnxruntime's propagates Shape), which before opset 11
  // refuses to merge two branches of different known lengths.
  std::string one;
  {
    std::string ai = b.op("Cast", {b.op("ReduceMax", {b.op("Cast", {axes})})});
    b.i("to", onnx::TensorProto::INT64);
    body.mutable_node(body.node_size() - 2)->clear_attribute();
    BodyBuilder::one_int(*body.mutable_node(body.node_size() - 2), "keepdims", 0);
    BodyBuilder::one_int(*body.mutable_node(body.node_size() - 3), "to", onnx::TensorProto::INT64);
    one = b.op("Add", {b.op("Mul", {ai, b.si(0)}), b.si(1)});
  }
  auto opaque = [&](BodyBuilder& t, const std::string& v) { return t.op("Reshape", {v, t.op("Mul", {t.op("Shape", {v}), one})}); };
  std::string cur = x;
  std::vector<std::string> conds(static_cast<size_t>(r));
  for (int a = r - 1; a >= 0; --a) {
    std::string e = b.op("Or", {b.op("Equal", {axes, b.ci({a})}), b.op("Equal", {axes, b.ci({a - r})})});
    std::string ei = b.op("Cast", {e});  // ReduceMax takes no bools
    b.i("to", onnx::TensorProto::INT64);
    std::string m = b.op("ReduceMax", {ei});
    b.i("keepdims", 0);
    if (!empty.empty()) m = b.op("Add", {m, empty});
    std::string cond = b.op("Cast", {m});
    b.i("to", onnx::TensorProto::BOOL);
    conds[size_t(a)] = cond;
    std::string in = cur;
    cur = b.if_(cond, {elem},
                [&](BodyBuilder& t) {
                  std::string y = t.op("ReduceSum", {in, t.ci({a})});
                  t.i("keepdims", 1);
                  return std::vector<std::string>{opaque(t, y)};
                },
                [&](BodyBuilder& e2) { return std::vector<std::string>{opaque(e2, in)}; })[0];
  }
  if (!keep) {
    // The reduced axes dropped: the input's lengths of the kept axes (an If per axis gives its
    // length or nothing), concatenated, are the output's shape. (Reshape before 14 reads a 0 as
    // "copy the input's length there": a kept axis of length 0 after a reduced one would take
    // another length; an empty tensor's shape may then be wrong.)
    std::string sh = b.op("Shape", {x});
    std::vector<std::string> pieces;
    for (int a = 0; a < r; ++a) {
      pieces.push_back(b.if_(conds[size_t(a)], {onnx::TensorProto::INT64},
                             [&](BodyBuilder& t) { return std::vector<std::string>{opaque(t, t.c(onnx::TensorProto::INT64, {0}, {}))}; },
                             [&](BodyBuilder& e2) {
                               std::string p = e2.op("Slice", {sh, e2.ci({a}), e2.ci({a + 1}), e2.ci({0})});
                               return std::vector<std::string>{opaque(e2, p)};
                             })[0]);
    }
    std::string target = pieces.size() == 1 ? pieces[0] : b.op("Concat", pieces);
    if (pieces.size() > 1) b.i("axis", 0);
    cur = b.op("Reshape", {cur, target});
  }
  b.op("Identity", {cur}, kOut + "0");
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
