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

// MelWeightMatrix (new in 17) below 17: onnxruntime's computation in float32 written with Range:
// the num_mel_bins + 2 points evenly spaced in mel (2595 log10(1 + hz / 700): Log / ln 10) turned
// back into hertz (700 (10^(m / 2595) - 1), Pow) and into spectrogram bins floor((dft_length + 1)
// hz / sample_rate); filter i rises from bin[i] to bin[i + 1] ((j - lower) / (center - lower), or 1
// at the center when they are equal) and falls to bin[i + 2] ((higher - j) / (higher - center),
// written last); rows 0 .. dft_length / 2 (0/1 masks over [bins, filters]).
std::string lower_melweightmatrix(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                                  const std::vector<onnx::TypeProto>&, onnx::GraphProto& body) {
  if (ins.size() < 5) return "its five inputs";
  const ir::Value* dv = ir::get_attr(g, op, "output_datatype");
  int out_type = dv && dv->is_int() ? int(dv->as_int()) : onnx::TensorProto::FLOAT;
  BodyBuilder b{body, kExpansionNames};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto f = [&](float v) { return b.constant(b.fresh("f"), onnx::TensorProto::FLOAT, {}, {v}); };
  auto i64 = [&](int64_t v) { return b.constant_i64({v}, false); };
  auto scalar = [&](int k, int to) { return b.cast(b.reshape(kIn + std::to_string(k), {}), to); };
  std::string nmb = scalar(0, onnx::TensorProto::INT64), dft = scalar(1, onnx::TensorProto::INT64);
  std::string sr = scalar(2, onnx::TensorProto::FLOAT);
  std::string lo = scalar(3, onnx::TensorProto::FLOAT), hi = scalar(4, onnx::TensorProto::FLOAT);
  auto mel = [&](const std::string& hz) {
    std::string v = b.op("Add", {f(1.0f), b.op("Div", {hz, f(700.0f)})});
    std::string l10 = b.op("Div", {b.op("Log", {v}), f(std::log(10.0f))});
    return b.op("Mul", {f(2595.0f), l10});
  };
  std::string lmel = mel(lo), hmel = mel(hi);
  std::string npts = b.op("Add", {nmb, i64(2)});
  std::string step = b.op("Div", {b.op("Sub", {hmel, lmel}), b.cast(npts, onnx::TensorProto::FLOAT)});
  std::string idx = b.cast(b.op("Range", {i64(0), npts, i64(1)}), onnx::TensorProto::FLOAT);
  std::string m = b.op("Add", {lmel, b.op("Mul", {step, idx})});
  std::string hz = b.op("Mul", {f(700.0f), b.op("Sub", {b.op("Pow", {f(10.0f), b.op("Div", {m, f(2595.0f)})}), f(1.0f)})});
  std::string dft1 = b.cast(b.op("Add", {dft, i64(1)}), onnx::TensorProto::FLOAT);
  std::string bins = b.cast(b.op("Floor", {b.op("Div", {b.op("Mul", {dft1, hz}), sr})}), onnx::TensorProto::INT64);  // [K]
  auto part = [&](int64_t from) {  // bins[from .. from + nmb) (Gather at a Range: no Slice bounds at run time before 10)
    std::string at = b.op("Range", {i64(from), b.op("Add", {nmb, i64(from)}), i64(1)});
    std::string o = b.op("Gather", {bins, at});
    BodyBuilder::one_int(last(), "axis", 0);
    return b.reshape(o, {1, -1});  // [1, nmb]
  };
  std::string lower = part(0), centre = part(1), higher = part(2);
  std::string nspec = b.op("Add", {b.op("Div", {dft, i64(2)}), i64(1)});
  std::string j = b.reshape(b.op("Range", {i64(0), nspec, i64(1)}), {-1, 1});  // [S, 1]
  // Bins compared as float (exact: small integers; Less/Greater take floats only before 9), the
  // weights blended with 0/1 masks (exact: every term is finite, the divisors not 0; Where
  // before 9 needs the output's shape).
  auto fl = [&](const std::string& x) { return b.cast(x, onnx::TensorProto::FLOAT); };
  std::string jf = fl(j), lowf = fl(lower), cenf = fl(centre), higf = fl(higher);
  std::string ltc = b.op("Sub", {cenf, lowf}), cth = b.op("Sub", {higf, cenf});
  std::string zf = f(0.0f), one = f(1.0f);
  std::string ge_l = b.op("Not", {b.op("Less", {jf, lowf})});
  std::string le_c = b.op("Not", {b.op("Greater", {jf, cenf})});
  std::string rising = fl(b.op("And", {b.op("And", {ge_l, le_c}), b.op("Greater", {ltc, zf})}));
  std::string at_c = b.op("And", {b.op("Not", {b.op("Less", {jf, cenf})}), b.op("Not", {b.op("Greater", {jf, cenf})})});
  std::string flat = b.op("Not", {b.op("Greater", {ltc, zf})});
  std::string peak = fl(b.op("And", {at_c, flat}));
  std::string half = f(0.5f);
  auto at_least_1 = [&](const std::string& d) { return b.op("Add", {d, fl(b.op("Less", {d, half}))}); };  // (no broadcasting Max before 8)
  std::string up = b.op("Div", {b.op("Sub", {jf, lowf}), at_least_1(ltc)});
  std::string ge_c = b.op("Not", {b.op("Less", {jf, cenf})});
  std::string lt_h = b.op("Less", {jf, higf});
  std::string falling = fl(b.op("And", {ge_c, lt_h}));
  std::string down = b.op("Div", {b.op("Sub", {higf, jf}), at_least_1(cth)});
  auto blend = [&](const std::string& mask, const std::string& a, const std::string& rest) {
    return b.op("Add", {b.op("Mul", {mask, a}), b.op("Mul", {b.op("Sub", {one, mask}), rest})});
  };
  std::string w = b.op("Mul", {rising, up});
  w = blend(peak, one, w);
  w = blend(falling, down, w);
  b.op("Cast", {w}, kOut + "0");
  BodyBuilder::one_int(last(), "to", out_type);
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
