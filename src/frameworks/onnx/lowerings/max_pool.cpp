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

// MaxPool below 10 with what its opset lacks (dilations, ceil_mode: new in 10; the Indices output,
// new in 8; storage_order, new in 8): the input padded with -inf (Pad, the attribute form of
// opsets 2..10; begin pads as given, end pads grown to cover the last window: ceil_mode and
// auto_pad come out of the output's known shape), then for each kernel offset the cells o*stride +
// offset*dilation of each spatial axis (Gather of constant positions), and the maximum of these
// (Max; a padded cell is never the maximum). Indices: the flat index of the first maximum in
// window order (later offsets replace it only when strictly greater, as onnxruntime scans), row-
// or (storage_order 1, 2-D) column-major over the unpadded input. Float input, the input's and
// output's shapes known.
std::string lower_maxpool(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>&,
                          const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  int elem = elem_of(types, 0);
  if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::DOUBLE) return "a float32 or float64 input (Max before 12 takes floating point)";
  std::vector<int64_t> in;
  if (!types[0].tensor_type().has_shape()) return "the input's shape";
  for (const auto& d : types[0].tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return "the input's shape";
    in.push_back(d.dim_value());
  }
  const int64_t r = int64_t(in.size()), sp = r - 2;
  if (sp < 1) return "a spatial axis";
  std::vector<ir::PortId> outs;
  for (ir::PortId p : g.outputs(op))
    if (data_port(g, p)) outs.push_back(p);
  auto outd = outs.empty() ? std::nullopt : known_dims(g, outs[0]);
  if (!outd && outs.size() > 1 && g.first_out_edge(outs[1])) outd = known_dims(g, outs[1]);
  if (!outd || int64_t(outd->size()) != r) return "the output's shape";
  auto ints = [&](const char* n, int64_t dflt) {
    std::vector<int64_t> v(size_t(sp), dflt);
    const ir::Value* a = ir::get_attr(g, op, n);
    if (a && a->is_list() && int64_t(a->as_list().size()) >= sp)
      for (int64_t k = 0; k < sp; ++k) v[size_t(k)] = a->as_list()[size_t(k)].as_int();
    return v;
  };
  std::vector<int64_t> kern = ints("kernel_shape", 1), st = ints("strides", 1), dil = ints("dilations", 1);
  std::vector<int64_t> pads(size_t(2 * sp), 0);
  const ir::Value* pv = ir::get_attr(g, op, "pads");
  if (pv && pv->is_list() && int64_t(pv->as_list().size()) == 2 * sp)
    for (int64_t k = 0; k < 2 * sp; ++k) pads[size_t(k)] = pv->as_list()[size_t(k)].as_int();
  const ir::Value* apv = ir::get_attr(g, op, "auto_pad");
  std::string auto_pad = apv && apv->is_string() ? apv->as_string() : "NOTSET";
  int64_t storage = int_attr(g, op, "storage_order", 0);
  if (storage != 0 && sp != 2) return "storage_order 1 on a 2-D input only";
  std::vector<int64_t> pb(static_cast<size_t>(sp)), pe(static_cast<size_t>(sp));
  for (int64_t a = 0; a < sp; ++a) {
    int64_t L = in[size_t(a + 2)], O = (*outd)[size_t(a + 2)];
    int64_t need = (O - 1) * st[size_t(a)] + (kern[size_t(a)] - 1) * dil[size_t(a)] + 1 - L;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, need);
      pb[size_t(a)] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "VALID") {
      pb[size_t(a)] = 0;
    } else {
      pb[size_t(a)] = pads[size_t(a)];
    }
    pe[size_t(a)] = std::max<int64_t>(0, need - pb[size_t(a)]);
  }
  int counter = 0;
  BodyBuilder b{body, kRefusalNames, &counter};
  std::vector<int64_t> allpads(size_t(2 * r), 0);
  for (int64_t a = 0; a < sp; ++a) allpads[size_t(a + 2)] = pb[size_t(a)], allpads[size_t(r + a + 2)] = pe[size_t(a)];
  std::string x = b.op("Pad", {kIn + "0"});
  b.is("pads", allpads).f("value", -std::numeric_limits<float>::infinity());
  bool want_idx = outs.size() > 1 && g.first_out_edge(outs[1]);
  // the flat index of spatial position q (unpadded coordinates) for storage order 0 / 1
  std::vector<int64_t> sstride(size_t(sp), 1);
  if (storage == 0) {
    for (int64_t a = sp - 2; a >= 0; --a) sstride[size_t(a)] = sstride[size_t(a + 1)] * in[size_t(a + 3)];
  } else {
    sstride[0] = 1;
    sstride[1] = in[2];
  }
  int64_t plane = 1;
  for (int64_t a = 0; a < sp; ++a) plane *= in[size_t(a + 2)];
  std::vector<int64_t> kidx(size_t(sp), 0);
  std::string best, bi;
  int64_t K = 1;
  for (int64_t k : kern) K *= k;
  for (int64_t n = 0; n < K; ++n) {
    std::string v = x;
    for (int64_t a = 0; a < sp; ++a) {
      const size_t npos = size_t((*outd)[size_t(a + 2)]);
      std::vector<int64_t> pos(npos);
      for (size_t o = 0; o < pos.size(); ++o) pos[o] = int64_t(o) * st[size_t(a)] + kidx[size_t(a)] * dil[size_t(a)];
      v = b.op("Gather", {v, b.ci(pos)});
      b.i("axis", a + 2);
    }
    std::string idx;
    if (want_idx) {
      std::vector<int64_t> odims((*outd).begin() + 2, (*outd).end());
      int64_t cnt = 1;
      for (int64_t d : odims) cnt *= d;
      std::vector<double> vals(static_cast<size_t>(cnt));
      for (int64_t f = 0; f < cnt; ++f) {
        int64_t rem = f, flat = 0;
        for (int64_t a = sp - 1; a >= 0; --a) {
          int64_t o = rem % odims[size_t(a)];
          rem /= odims[size_t(a)];
          flat += (o * st[size_t(a)] + kidx[size_t(a)] * dil[size_t(a)] - pb[size_t(a)]) * sstride[size_t(a)];
        }
        vals[size_t(f)] = double(flat);
      }
      idx = b.c(onnx::TensorProto::INT64, odims, vals);
    }
    if (n == 0) {
      best = v;
      bi = idx;
    } else {
      if (want_idx) {
        std::string gt = b.op("Cast", {b.op("Greater", {v, best})});
        b.i("to", onnx::TensorProto::INT64);
        bi = b.op("Add", {bi, b.op("Mul", {b.op("Sub", {idx, bi}), gt})});
      }
      best = b.op("Max", {best, v});
    }
    for (int64_t a = sp - 1; a >= 0; --a) {  // next offset, last axis fastest
      if (++kidx[size_t(a)] < kern[size_t(a)]) break;
      kidx[size_t(a)] = 0;
    }
  }
  b.op("Identity", {best}, kOut + "0");
  if (want_idx) {
    std::vector<int64_t> bdims(size_t(r), 1);
    bdims[0] = in[0];
    bdims[1] = in[1];
    std::vector<double> base(size_t(in[0] * in[1]));
    for (size_t k = 0; k < base.size(); ++k) base[k] = double(int64_t(k) * plane);
    b.op("Add", {bi, b.c(onnx::TensorProto::INT64, bdims, base)}, kOut + "1");
  }
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
