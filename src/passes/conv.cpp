// Conv fusions: BatchNormalization (inference) into the Conv before it, a per-channel constant
// Add into its bias and a per-channel constant Mul into its weights (onnxruntime's ConvBNFusion,
// ConvAddFusion, ConvMulFusion), and a constant zero Pad into the pads of the Conv or pool after
// it. Weights are recomputed in double and written in the weights' element type.
#include <cmath>

#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

bool inference_bn(const ir::Graph& g, ir::OpId op) {
  if (attr_int(g, op, "training_mode", 0) != 0) return false;
  if (onnx_opset(g) < 7 && attr_int(g, op, "is_test", 0) == 0) return false;
  auto outs = data_outputs(g, op);
  for (size_t i = 1; i < outs.size(); ++i)
    if ((g.first_out_edge(outs[i]) != ir::EdgeId())) return false;  // running statistics read: training
  return true;
}

bool plain_conv(const ir::Graph& g, ir::OpId op) {
  return data_outputs(g, op).size() == 1;
}

// The conv's weights and bias (zeros when absent), and the output channel count.
struct ConvParams {
  ir::PortId w;
  std::vector<double> wv, bv;
  std::vector<int64_t> wshape;
  ir::DType dtype;
  int64_t cout = 0;
};

std::optional<ConvParams> conv_params(const ir::Graph& g, ir::OpId conv) {
  ConvParams p;
  p.w = input_value(g, conv, 1);
  const ir::Tensor* wt = p.w ? const_tensor(g, p.w) : nullptr;
  auto wv = p.w ? doubles(g, p.w) : std::nullopt;
  if (!wt || !wv || wt->shape.size() < 3) return std::nullopt;
  p.wv = std::move(*wv);
  p.wshape = wt->shape;
  p.dtype = wt->dtype;
  p.cout = wt->shape[0];
  ir::PortId b = input_value(g, conv, 2);
  if (b) {
    auto bv = doubles(g, b);
    if (!bv || static_cast<int64_t>(bv->size()) != p.cout) return std::nullopt;
    p.bv = std::move(*bv);
  } else {
    p.bv.assign(static_cast<size_t>(p.cout), 0.0);
  }
  return p;
}

void write_params(ir::Rewriter& rw, ir::OpId conv, const ConvParams& p, const std::string& hint) {
  auto wt = from_doubles(p.wv, p.wshape, p.dtype);
  auto bt = from_doubles(p.bv, {p.cout}, p.dtype);
  if (!wt || !bt) throw Error("unsupported weight type");
  set_input(rw, conv, 1, make_constant(rw, conv, *wt, hint + "/W"), "W");
  set_input(rw, conv, 2, make_constant(rw, conv, *bt, hint + "/B"), "B");
}

// A constant that broadcasts per output channel against [N, C, spatial...] (rank r): its values
// per channel, or nullopt.
std::optional<std::vector<double>> per_channel(const ir::Graph& g, ir::PortId c, int64_t cout, int64_t out_rank) {
  const ir::Tensor* t = const_tensor(g, c);
  auto v = doubles(g, c);
  if (!t || !v || static_cast<int64_t>(t->shape.size()) > out_rank || out_rank < 2) return std::nullopt;
  std::vector<int64_t> s(static_cast<size_t>(out_rank) - t->shape.size(), 1);
  s.insert(s.end(), t->shape.begin(), t->shape.end());
  for (size_t i = 0; i < s.size(); ++i)
    if (i != 1 && s[i] != 1) return std::nullopt;
  if (s[1] == cout) return v;
  if (s[1] == 1) return std::vector<double>(static_cast<size_t>(cout), (*v)[0]);
  return std::nullopt;
}

int64_t out_rank(const ir::Graph& g, ir::OpId conv, const ConvParams& p) {
  int64_t r = rank_of(g, data_outputs(g, conv)[0]);
  return r >= 0 ? r : static_cast<int64_t>(p.wshape.size());
}

// Conv without a bias + Add of a computed per-channel value ([C, 1, 1] or [1, C, 1, 1]): the value,
// squeezed to [C], becomes the bias (onnxoptimizer's fuse_add_bias_into_conv).
bool bias_from_value(ir::Rewriter& rw, ir::OpId add, ir::OpId conv, ir::PortId v) {
  ir::Graph& g = rw.graph();
  if (input_value(g, conv, 2)) return false;
  ir::PortId w = input_value(g, conv, 1);
  auto ws = w ? static_shape(g, w) : std::nullopt;
  auto vs = static_shape(g, v);
  int64_t r = rank_of(g, data_outputs(g, conv)[0]);
  if (!ws || ws->empty() || !vs || r < 2 || static_cast<int64_t>(vs->size()) > r) return false;
  int64_t c = (*ws)[0];
  int64_t numel = 1;
  for (int64_t d : *vs) numel *= d;
  if (numel == 1 && c != 1) {
    // One value for every channel ([], [1], [1, 1, 1, 1]): Reshape to [1] (unless it is [1]),
    // Tile to [C] (onnxoptimizer's rule for a scalar bias).
    rw.set_insertion_point_before(add);
    ir::PortId one = v;
    std::string base(g.name_str(conv));
    if (*vs != std::vector<int64_t>{1}) {
      ir::OpId rs = rw.create_op(g.sym("Reshape"), g.sym(base + "/bias_reshape"));
      rw.connect(v, rw.add_input(rs, "data"));
      rw.connect(make_constant(rw, rs, int64_tensor({1}), base + "/bias_shape"), rw.add_input(rs, "shape"));
      one = rw.add_output(rs, "reshaped");
      name_value(rw, one, g.name_str(rs));
      rw.set_port_type(one, g.types().tensor(elem_type(g, v), {ir::Dim::known(1)}));
    }
    ir::OpId tile = rw.create_op(g.sym("Tile"), g.sym(base + "/bias_tile"));
    rw.connect(one, rw.add_input(tile, "input"));
    rw.connect(make_constant(rw, tile, int64_tensor({c}), base + "/bias_repeats"), rw.add_input(tile, "repeats"));
    ir::PortId bias = rw.add_output(tile, "output");
    name_value(rw, bias, g.name_str(tile));
    rw.set_port_type(bias, g.types().tensor(elem_type(g, v), {ir::Dim::known(c)}));
    set_input(rw, conv, 2, bias, "B");
    rw.move_before(conv, add);  // after what makes its bias now
    if (!replace_value(rw, data_outputs(g, add)[0], data_outputs(g, conv)[0])) return false;
    rw.erase_op(add);
    return true;
  }
  size_t off = static_cast<size_t>(r) - vs->size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < vs->size(); ++i) {
    size_t at = off + i;
    if (at == 1) {
      if ((*vs)[i] != c) return false;
    } else if ((*vs)[i] != 1) {
      return false;
    } else {
      axes.push_back(static_cast<int64_t>(i));
    }
  }
  if (off > 1) return false;  // the channel axis is not in the value
  ir::PortId bias = v;
  if (!axes.empty()) {
    rw.set_insertion_point_before(add);
    ir::OpId sq = rw.create_op(g.sym("Squeeze"), g.sym(std::string(g.name_str(conv)) + "/bias"));
    rw.connect(v, rw.add_input(sq, "data"));
    if (onnx_opset(g) >= 13) rw.connect(make_constant(rw, sq, int64_tensor(axes), std::string(g.name_str(sq)) + "/axes"), rw.add_input(sq, "axes"));
    else rw.set_attr(sq, "axes", [&] {
      ir::Value::List l;
      for (int64_t a : axes) l.emplace_back(a);
      return ir::Value(std::move(l));
    }());
    bias = rw.add_output(sq, "squeezed");
    name_value(rw, bias, g.name_str(sq));
    rw.set_port_type(bias, g.types().tensor(elem_type(g, v), {ir::Dim::known(c)}));
  }
  set_input(rw, conv, 2, bias, "B");
  rw.move_before(conv, add);  // after what makes its bias now
  if (!replace_value(rw, data_outputs(g, add)[0], data_outputs(g, conv)[0])) return false;
  rw.erase_op(add);
  return true;
}

bool fuse_bn(const Match& m, ir::Rewriter& rw, const Pat& conv_p) {
  ir::Graph& g = rw.graph();
  ir::OpId bn = m.root, conv = m.op(g, conv_p);
  if (!inference_bn(g, bn) || !plain_conv(g, conv)) return false;
  auto p = conv_params(g, conv);
  if (!p) return false;
  auto scale = doubles(g, input_value(g, bn, 1)), bias = doubles(g, input_value(g, bn, 2)), mean = doubles(g, input_value(g, bn, 3)),
       var = doubles(g, input_value(g, bn, 4));
  size_t c = static_cast<size_t>(p->cout);
  if (!scale || !bias || !mean || !var || scale->size() != c || bias->size() != c || mean->size() != c || var->size() != c) return false;
  double eps = attr_float(g, bn, "epsilon").value_or(1e-5);
  size_t per = p->wv.size() / c;
  for (size_t k = 0; k < c; ++k) {
    double f = (*scale)[k] / std::sqrt((*var)[k] + eps);
    for (size_t i = 0; i < per; ++i) p->wv[k * per + i] *= f;
    p->bv[k] = (p->bv[k] - (*mean)[k]) * f + (*bias)[k];
  }
  write_params(rw, conv, *p, std::string(g.name_str(conv)));
  if (!replace_value(rw, data_outputs(g, bn)[0], data_outputs(g, conv)[0])) return false;
  rw.erase_op(bn);
  return true;
}

bool fuse_add_or_mul(const Match& m, ir::Rewriter& rw, const Pat& conv_p, bool mul) {
  ir::Graph& g = rw.graph();
  ir::OpId op = m.root, conv = m.op(g, conv_p);
  if (!plain_conv(g, conv)) return false;
  ir::PortId cv = data_outputs(g, conv)[0];
  ir::PortId other = input_value(g, op, 0) == cv ? input_value(g, op, 1) : input_value(g, op, 0);
  if (!other) return false;
  if (!const_tensor(g, other)) return !mul && bias_from_value(rw, op, conv, other);
  auto p = conv_params(g, conv);
  if (!p) return false;
  auto v = per_channel(g, other, p->cout, out_rank(g, conv, *p));
  if (!v) return false;
  size_t c = static_cast<size_t>(p->cout), per = p->wv.size() / c;
  for (size_t k = 0; k < c; ++k) {
    if (mul) {
      for (size_t i = 0; i < per; ++i) p->wv[k * per + i] *= (*v)[k];
      p->bv[k] *= (*v)[k];
    } else {
      p->bv[k] += (*v)[k];
    }
  }
  write_params(rw, conv, *p, std::string(g.name_str(conv)));
  if (!replace_value(rw, data_outputs(g, op)[0], cv)) return false;
  rw.erase_op(op);
  return true;
}

// Pad (constant mode, zero value, nothing on N and C, no negative pads) into Conv/AveragePool/MaxPool.
bool fuse_pad(const Match& m, ir::Rewriter& rw, const Pat& pad_p) {
  ir::Graph& g = rw.graph();
  ir::OpId op = m.root, pad = m.op(g, pad_p);
  std::string_view type = g.type_str(op);
  if (attr_string(g, pad, "mode").value_or("constant") != "constant") return false;
  auto pads = attr_ints(g, pad, "pads");
  double value = attr_float(g, pad, "value").value_or(0.0);
  if (!pads) {
    ir::PortId pp = input_value(g, pad, 1);
    pads = pp ? constant_ints(g, pp) : std::nullopt;
    ir::PortId vp = input_value(g, pad, 2);
    if (vp) {
      auto v = constant_scalar(g, vp);
      if (!v) return false;
      value = *v;
    }
    if (input_value(g, pad, 3)) return false;  // axes (opset 18)
  }
  if (!pads || pads->size() % 2 || pads->size() < 6) return false;
  if (value != 0.0) return false;
  size_t r = pads->size() / 2;
  if ((*pads)[0] || (*pads)[1] || (*pads)[r] || (*pads)[r + 1]) return false;
  for (int64_t x : *pads)
    if (x < 0) return false;
  if (attr_string(g, op, "auto_pad").value_or("NOTSET") != "NOTSET") return false;
  if (attr_string(g, op, "auto_pad")) rw.erase_attr(op, "auto_pad");  // NOTSET: the default, and pads now say it
  if (type == "MaxPool") {
    // a zero pad is not MaxPool's -inf pad unless the input is non-negative: only after Relu
    ir::PortId x = input_value(g, pad, 0);
    if (!x || g.type_str(g.port_op(x)) != "Relu") return false;
    if (data_outputs(g, op).size() > 1) return false;
  }
  if (type == "AveragePool" && attr_int(g, op, "count_include_pad", 0) == 0) {
    // the padded zeros count as elements after the fusion only with count_include_pad
    auto existing = attr_ints(g, op, "pads");
    bool none = !existing;
    if (existing)
      for (int64_t x : *existing) none = none && x == 0;
    if (!none) return false;
    rw.set_attr(op, "count_include_pad", ir::Value(int64_t(1)));
  }
  size_t sp = r - 2;
  std::vector<int64_t> merged = attr_ints(g, op, "pads").value_or(std::vector<int64_t>(2 * sp, 0));
  if (merged.size() != 2 * sp) return false;
  for (size_t i = 0; i < sp; ++i) {
    merged[i] += (*pads)[2 + i];
    merged[sp + i] += (*pads)[r + 2 + i];
  }
  ir::Value::List l;
  for (int64_t x : merged) l.emplace_back(x);
  rw.set_attr(op, "pads", ir::Value(std::move(l)));
  set_input(rw, op, 0, input_value(g, pad, 0), "X");
  if ((g.first_out_edge(data_outputs(g, pad)[0]) == ir::EdgeId())) rw.erase_op(pad);
  return true;
}

PassResult fuse_bn_into_conv(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  Pat conv = op("Conv").in(any()).in(constant()).opt(constant()).uses(1).not_scope_output();
  Pat bn = op("BatchNormalization").in(conv).in(constant()).in(constant()).in(constant()).in(constant());
  replace_everywhere(g, o, bn, [&](const Match& m, ir::Rewriter& rw) { return fuse_bn(m, rw, conv); }, r, "fuse_bn_into_conv");
  return r;
}

PassResult fuse_into_conv(ir::Graph& g, const PassOptions& o, bool mul) {
  PassResult r;
  // (weights checked in code: a computed bias into a bias-less Conv needs no constant weights)
  Pat conv = op("Conv").in(any()).in(any()).opt(any()).uses(1).not_scope_output();
  for (int side = 0; side < 2; ++side) {
    Pat root = op(mul ? "Mul" : "Add");
    if (side == 0) root.in(conv).in(any());
    else root.in(any()).in(conv);
    replace_everywhere(g, o, root, [&](const Match& m, ir::Rewriter& rw) { return fuse_add_or_mul(m, rw, conv, mul); }, r,
                       mul ? "fuse_mul_into_conv" : "fuse_add_bias_into_conv");
  }
  return r;
}

PassResult fuse_pad_into(ir::Graph& g, const PassOptions& o, std::string_view types) {
  PassResult r;
  Pat pad = op("Pad").in(any()).opt(constant()).opt(constant()).uses(1).not_scope_output();
  Pat root = op(types).in(pad);
  replace_everywhere(g, o, root, [&](const Match& m, ir::Rewriter& rw) { return fuse_pad(m, rw, pad); }, r, "fuse_pad");
  return r;
}

}  // namespace

void register_conv(PassRegistry& r) {
  r.add({"fuse_bn_into_conv", "folds an inference BatchNormalization into the weights and bias of the Conv before it", fuse_bn_into_conv,
         true, true});
  r.add({"fuse_add_bias_into_conv", "folds a per-channel constant Add into the bias of the Conv before it",
         [](ir::Graph& g, const PassOptions& o) { return fuse_into_conv(g, o, false); }, true, true});
  r.add({"fuse_mul_into_conv", "folds a per-channel constant Mul into the weights and bias of the Conv before it",
         [](ir::Graph& g, const PassOptions& o) { return fuse_into_conv(g, o, true); }, true, true});
  r.add({"fuse_pad_into_conv", "folds a constant zero Pad of the spatial axes into the Conv after it",
         [](ir::Graph& g, const PassOptions& o) { return fuse_pad_into(g, o, "Conv"); }, true, true});
  r.add({"fuse_pad_into_pool",
         "folds a constant zero Pad into the AveragePool after it (count_include_pad) or the MaxPool after a Relu",
         [](ir::Graph& g, const PassOptions& o) { return fuse_pad_into(g, o, "AveragePool|MaxPool"); }, true, true});
}

}  // namespace amanda::passes::detail
