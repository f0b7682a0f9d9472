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

// Resize with coordinate_transformation_mode tf_crop_and_resize (roi may be given at run time)
// and mode linear, below 11: along each axis, the output's position j reads the input at
// c = start*(in-1) + j*(end-start)*(in-1)/(out-1) (out 1: (start+end)/2*(in-1)), start and end
// from roi, in onnxruntime's order of operations (float32); positions with c outside [0, in-1]
// read a slice of extrapolation_value appended to the axis (Tile of it: exact); else the two
// neighbours floor(c) and floor(c)+1 (clamped), weighted 1-w and w (w = c - floor(c)). The input's
// and output's shapes known (any rank), float32.
std::string lower_resize_crop(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                              const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  auto str_attr = [&](const char* n, const std::string& d) {
    const ir::Value* v = ir::get_attr(g, op, n);
    return v && v->is_string() ? v->as_string() : d;
  };
  if (str_attr("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize") return "coordinate_transformation_mode tf_crop_and_resize (the other modes are the table's)";
  if (str_attr("mode", "nearest") != "linear") return "mode linear (tf_crop_and_resize's nearest and cubic are not lowered)";
  if (elem_of(types, 0) != onnx::TensorProto::FLOAT) return "a float32 input";
  if (!present(g, ins, 1)) return "roi";
  std::vector<int64_t> in;
  if (!types[0].tensor_type().has_shape()) return "the input's shape";
  for (const auto& d : types[0].tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return "the input's shape";
    in.push_back(d.dim_value());
  }
  ir::PortId out_port;
  for (ir::PortId p : g.outputs(op))
    if (data_port(g, p)) {
      out_port = p;
      break;
    }
  auto outd = out_port ? known_dims(g, out_port) : std::nullopt;
  if (!outd || outd->size() != in.size()) return "the output's shape";
  const ir::Value* ev = ir::get_attr(g, op, "extrapolation_value");
  double ext = ev && ev->is_float() ? ev->as_float() : (ev && ev->is_int() ? double(ev->as_int()) : 0.0);
  const int F = onnx::TensorProto::FLOAT, I = onnx::TensorProto::INT64;
  const int64_t r = int64_t(in.size());
  int counter = 0;
  BodyBuilder b{body, kRefusalNames, &counter};
  auto f = [&](double v) { return b.c(F, {}, {v}); };
  std::string roi = b.cast(kIn + "1", F);
  std::string ext1 = b.c(F, std::vector<int64_t>(size_t(r), 1), {ext});
  std::string cur = kIn + "0";
  std::vector<int64_t> shape = in;
  for (int64_t a = 0; a < r; ++a) {
    int64_t L = in[size_t(a)], O = (*outd)[size_t(a)];
    std::vector<int64_t> reps = shape;
    reps[size_t(a)] = 1;
    std::string src = b.op("Concat", {cur, b.op("Tile", {ext1, b.ci(reps)})});
    b.i("axis", a);
    std::string st = b.op("Gather", {roi, b.si(a)});
    b.i("axis", 0);
    std::string en = b.op("Gather", {roi, b.si(a + r)});
    b.i("axis", 0);
    std::string c;
    if (O > 1) {
      std::vector<double> j(static_cast<size_t>(O));
      for (int64_t k = 0; k < O; ++k) j[size_t(k)] = double(k);
      std::string t = b.op("Mul", {b.c(F, {O}, j), b.op("Sub", {en, st})});
      t = b.op("Div", {b.op("Mul", {t, f(double(L - 1))}), f(double(O - 1))});
      c = b.op("Add", {b.op("Mul", {st, f(double(L - 1))}), t});
    } else {
      std::string m = b.op("Mul", {b.op("Mul", {f(0.5), b.op("Add", {st, en})}), f(double(L - 1))});
      c = b.op("Reshape", {m, b.ci({1})});
    }
    std::string inside = b.cast(b.op("And", {b.op("Not", {b.op("Less", {c, f(0.0)})}), b.op("Not", {b.op("Greater", {c, f(double(L - 1))})})}), F);
    std::string outside = b.op("Sub", {f(1.0), inside});
    std::string fl = b.op("Floor", {c});
    std::string w = b.op("Mul", {b.op("Sub", {c, fl}), inside});
    // clamp, then (outside) the appended slice at index L: i*inside + L*outside
    std::string lo = b.op("Clip", {fl, f(0.0), f(double(L - 1))});
    std::string hi = b.op("Clip", {b.op("Add", {fl, f(1.0)}), f(0.0), f(double(L - 1))});
    auto pick = [&](const std::string& i) { return b.cast(b.op("Add", {b.op("Mul", {i, inside}), b.op("Mul", {outside, f(double(L))})}), I); };
    std::string g1 = b.op("Gather", {src, pick(lo)});
    b.i("axis", a);
    std::string g2 = b.op("Gather", {src, pick(hi)});
    b.i("axis", a);
    std::vector<int64_t> wshape(size_t(r - a), 1);
    wshape[0] = O;
    std::string wr = b.op("Reshape", {w, b.ci(wshape)});
    std::string vr = b.op("Reshape", {b.op("Sub", {f(1.0), w}), b.ci(wshape)});
    cur = b.op("Add", {b.op("Mul", {g1, vr}), b.op("Mul", {g2, wr})});
    shape[size_t(a)] = O;
  }
  b.op("Identity", {cur}, kOut + "0");
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
