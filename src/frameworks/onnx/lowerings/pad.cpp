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

// 0, 1, ..., n-1 (n an int64 scalar at run time) as float64: a Loop's scan output (Range is new in 11).
std::string arange_by_loop(BodyBuilder& b, const std::string& n) {
  std::string r = b.loop(n, {}, {}, {onnx::TensorProto::INT64}, [&](BodyBuilder& lb, const std::string& it, const std::vector<std::string>&) {
    return std::vector<std::string>{lb.op("Identity", {it})};
  })[0];
  std::string d = b.op("Cast", {r});
  b.i("to", onnx::TensorProto::DOUBLE);
  return d;
}

}  // namespace

// Pad (11 takes pads and constant_value as inputs) below 11 with them at run time: along each axis
// a (rank known) the output's positions j = 0 .. d + begin + end - 1 (a Loop makes them) read the
// input at i = j - begin: constant mode, the input with one slice of the value appended (Tile of
// the value: exact for every value) and i where 0 <= i < d, else that slice; edge, i clamped to
// [0, d-1]; reflect, i mirrored (i mod 2(d-1), then 2(d-1) - i past the end). Gather on the axis.
// Index arithmetic in float64 scalars and vectors (exact below 2^53); negative pads crop.
std::string lower_pad_runtime(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                              const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  const int D = onnx::TensorProto::DOUBLE, I = onnx::TensorProto::INT64;
  int r = known_rank(types, 0);
  if (r < 0) return "the rank of the input";
  int elem = elem_of(types, 0);
  if (!elem) return "the input's element type";
  const ir::Value* mv = ir::get_attr(g, op, "mode");
  std::string mode = mv && mv->is_string() ? mv->as_string() : "constant";
  if (mode != "constant" && mode != "edge" && mode != "reflect") return "a mode of constant, edge or reflect";
  int counter = 0;
  BodyBuilder b{body, kRefusalNames, &counter};
  auto sel = [&](const std::string& c, const std::string& p, const std::string& q) {  // c ? p : q
    std::string cf = b.cast(c, D);
    std::string nc = b.op("Sub", {b.c(D, {}, {1.0}), cf});
    return b.op("Add", {b.op("Mul", {p, cf}), b.op("Mul", {q, nc})});
  };
  auto maxv = [&](const std::string& p, const std::string& q) { return sel(b.op("Less", {p, q}), q, p); };
  auto minv = [&](const std::string& p, const std::string& q) { return sel(b.op("Less", {q, p}), q, p); };
  auto zero = [&] { return b.c(D, {}, {0.0}); };
  std::string pads = b.cast(kIn + "1", D);
  std::string value;
  if (mode == "constant") {
    if (present(g, ins, 2)) value = b.op("Reshape", {kIn + "2", b.ci(std::vector<int64_t>(size_t(r), 1))});
    else value = b.c(elem, std::vector<int64_t>(size_t(r), 1), {0.0});
  }
  std::string cur = kIn + "0";
  for (int a = 0; a < r; ++a) {
    std::string shape = b.op("Shape", {cur});
    std::string di = b.op("Gather", {shape, b.si(a)});
    b.i("axis", 0);
    std::string d = b.cast(di, D);
    std::string pb = b.op("Gather", {pads, b.si(a)});
    b.i("axis", 0);
    std::string pe = b.op("Gather", {pads, b.si(a + r)});
    b.i("axis", 0);
    std::string len = maxv(b.op("Add", {b.op("Add", {d, pb}), pe}), zero());
    std::string j = arange_by_loop(b, b.cast(len, I));
    std::string i = b.op("Sub", {j, pb});
    std::string idx, src = cur;
    if (mode == "constant") {
      // one slice of the value appended along the axis: its index is d
      std::vector<int64_t> keep(size_t(r), 1), one_at(size_t(r), 0);
      keep[size_t(a)] = 0;
      one_at[size_t(a)] = 1;
      std::string reps = b.op("Add", {b.op("Mul", {shape, b.ci(keep)}), b.ci(one_at)});  // the shape with 1 at a
      src = b.op("Concat", {cur, b.op("Tile", {value, reps})});
      b.i("axis", a);
      std::string inside = b.op("And", {b.op("Not", {b.op("Less", {i, zero()})}), b.op("Less", {i, d})});
      idx = sel(inside, i, d);
    } else if (mode == "edge") {
      idx = minv(maxv(i, zero()), b.op("Sub", {d, b.c(D, {}, {1.0})}));
    } else {
      std::string m = maxv(b.op("Mul", {b.op("Sub", {d, b.c(D, {}, {1.0})}), b.c(D, {}, {2.0})}), b.c(D, {}, {1.0}));
      std::string k = b.op("Sub", {i, b.op("Mul", {m, b.op("Floor", {b.op("Div", {i, m})})})});
      idx = sel(b.op("Less", {k, d}), k, b.op("Sub", {m, k}));
    }
    cur = b.op("Gather", {src, b.cast(idx, I)});
    b.i("axis", a);
  }
  b.op("Identity", {cur}, kOut + "0");
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
