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

namespace {

// The int64 values of a constant input (int32 or int64), or nullopt.
std::optional<std::vector<int64_t>> const_ints(const ir::Graph& g, const std::vector<ir::PortId>& ins, size_t k) {
  if (!present(g, ins, k)) return std::nullopt;
  const ir::Value* v = ir::constant_tensor(g, g.producer(ins[k]));
  if (!v || !v->is_tensor()) return std::nullopt;
  const ir::Tensor& t = v->as_tensor();
  std::vector<int64_t> out;
  if (t.dtype == ir::DType::Int64) {
    out.resize(t.size / 8);
    if (!out.empty()) std::memcpy(out.data(), t.data, out.size() * 8);
  } else if (t.dtype == ir::DType::Int32) {
    std::vector<int32_t> w(t.size / 4);
    if (!w.empty()) std::memcpy(w.data(), t.data, w.size() * 4);
    out.assign(w.begin(), w.end());
  } else {
    return std::nullopt;
  }
  return out;
}

// One axis of a Slice with bounds at run time, in ops every opset from 7 has, on float64 scalars
// s, e, st (exact below 2^53; a bound beyond the axis, INT64_MAX included, clamps either way):
// start and end counted from the end when negative, clamped as ONNX's Slice does ([0, d] for a
// positive step; [0, d-1] and [-1, d-1] for a negative one), n = max(0, ceil((end - start) / step))
// positions start + i*step made by a Loop of n iterations (no op before Range, 11, makes a length
// known at run time only), then Gather on the axis.
std::string slice_axis_by_loop(BodyBuilder& b, const std::string& x, int64_t axis, const std::string& s, const std::string& e,
                               const std::string& st) {
  const int D = onnx::TensorProto::DOUBLE, I = onnx::TensorProto::INT64;
  auto cast = [&](const std::string& v, int to) {
    std::string r = b.op("Cast", {v});
    b.i("to", to);
    return r;
  };
  std::string d = b.op("Gather", {b.op("Shape", {x}), b.si(axis)});
  b.i("axis", 0);
  d = cast(d, D);
  auto wrap = [&](const std::string& v) {  // v + d * (v < 0)
    std::string neg = cast(b.op("Less", {v, b.c(D, {}, {0.0})}), D);
    return b.op("Add", {v, b.op("Mul", {neg, d})});
  };
  std::string pos = cast(b.op("Greater", {st, b.c(D, {}, {0.0})}), D);  // 1: a positive step
  std::string negf = b.op("Sub", {b.c(D, {}, {1.0}), pos});
  std::string hi = b.op("Sub", {d, negf});  // d, or d - 1
  std::string lo_e = b.op("Neg", {negf});   // 0, or -1
  // Max and Min as selections (onnxruntime has no float64 Max/Min at opset 7): p*c + q*(1-c), c
  // 0 or 1, exact for finite values.
  auto sel = [&](const std::string& c, const std::string& p, const std::string& q) {
    std::string cf = cast(c, D);
    std::string nc = b.op("Sub", {b.c(D, {}, {1.0}), cf});
    return b.op("Add", {b.op("Mul", {p, cf}), b.op("Mul", {q, nc})});
  };
  auto max2 = [&](const std::string& p, const std::string& q) { return sel(b.op("Less", {p, q}), q, p); };
  auto min2 = [&](const std::string& p, const std::string& q) { return sel(b.op("Less", {q, p}), q, p); };
  std::string s1 = min2(max2(wrap(s), b.c(D, {}, {0.0})), hi);
  std::string e1 = min2(max2(wrap(e), lo_e), hi);
  std::string n = max2(b.op("Ceil", {b.op("Div", {b.op("Sub", {e1, s1}), st})}), b.c(D, {}, {0.0}));
  std::string si = cast(s1, I), sti = cast(st, I), ni = cast(n, I);
  std::string idx = b.loop(ni, {}, {}, {I}, [&](BodyBuilder& lb, const std::string& it, const std::vector<std::string>&) {
    return std::vector<std::string>{lb.op("Add", {si, lb.op("Mul", {it, sti})})};
  })[0];
  std::string y = b.op("Gather", {x, idx});
  b.i("axis", axis);
  return y;
}

}  // namespace

// Slice (10 takes starts/ends/axes/steps as inputs) below 10, when the table's rules refuse it
// (bounds or steps at run time, several axes, axes at run time): slice_axis_by_loop on each axis.
// Constant axes (or none: 0..n-1 for n starts, n known): the k-th entries of starts/ends/steps
// (Gather) on axis k. Axes at run time: every axis a of the input (its rank known) is sliced, with
// the entries whose axis is a or a - rank picked by a 0/1 mask (sum of mask * entry), and 0, d, 1
// (the whole axis) when none is.
std::string lower_slice_runtime(const ir::Graph& g, ir::OpId, const std::vector<ir::PortId>& ins,
                                const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  const int D = onnx::TensorProto::DOUBLE;
  int r = known_rank(types, 0);
  if (r < 0) return "the rank of the input";
  int counter = 0;
  BodyBuilder b{body, kRefusalNames, &counter};
  auto cast = [&](const std::string& v, int to) {
    std::string o = b.op("Cast", {v});
    b.i("to", to);
    return o;
  };
  std::string cur = kIn + "0";
  std::string sd = cast(kIn + "1", D), ed = cast(kIn + "2", D);
  std::string std_ = present(g, ins, 4) ? cast(kIn + "4", D) : "";
  std::optional<std::vector<int64_t>> axes;
  if (present(g, ins, 3)) {
    axes = const_ints(g, ins, 3);
  } else {
    int n = known_rank(types, 1) == 1 && types[1].tensor_type().shape().dim(0).has_dim_value() ? int(types[1].tensor_type().shape().dim(0).dim_value()) : -1;
    if (n < 0) return "the number of starts (no axes given)";
    axes.emplace();
    for (int k = 0; k < n; ++k) axes->push_back(k);
  }
  if (axes) {
    auto pick = [&](const std::string& v, int64_t k) {
      std::string o = b.op("Gather", {v, b.si(k)});
      b.i("axis", 0);
      return o;
    };
    for (size_t k = 0; k < axes->size(); ++k) {
      int64_t a = (*axes)[k] < 0 ? (*axes)[k] + r : (*axes)[k];
      if (a < 0 || a >= r) return "axes within the input's rank";
      cur = slice_axis_by_loop(b, cur, a, pick(sd, int64_t(k)), pick(ed, int64_t(k)), std_.empty() ? b.c(D, {}, {1.0}) : pick(std_, int64_t(k)));
    }
  } else {
    std::string ax = kIn + "3";
    for (int a = 0; a < r; ++a) {
      std::string m = cast(b.op("Or", {b.op("Equal", {ax, b.c(elem_of(types, 3), {}, {double(a)})}), b.op("Equal", {ax, b.c(elem_of(types, 3), {}, {double(a - r)})})}), D);
      auto sum = [&](const std::string& v) {
        std::string o = b.op("ReduceSum", {v});
        b.i("keepdims", 0);
        return o;
      };
      std::string any = sum(m), none = b.op("Sub", {b.c(D, {}, {1.0}), any});
      std::string d = b.op("Gather", {b.op("Shape", {cur}), b.si(a)});
      b.i("axis", 0);
      d = cast(d, D);
      std::string s = sum(b.op("Mul", {m, sd}));
      std::string e = b.op("Add", {sum(b.op("Mul", {m, ed})), b.op("Mul", {none, d})});
      std::string st = std_.empty() ? b.c(D, {}, {1.0}) : b.op("Add", {sum(b.op("Mul", {m, std_})), none});
      cur = slice_axis_by_loop(b, cur, a, s, e, st);
    }
  }
  b.op("Identity", {cur}, kOut + "0");
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
