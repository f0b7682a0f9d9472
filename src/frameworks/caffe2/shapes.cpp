#include "shapes.h"

#include <functional>
#include <string_view>

#include <absl/container/flat_hash_map.h>

#include "amanda/ir/types.h"
#include "amanda/support/diagnostics.h"
#include "fills.h"

namespace amanda::caffe2_frontend {

using ir::Dim;
using ir::DType;
using ir::OpId;
using ir::PortId;
using ir::TypeData;
using ir::Value;

namespace {

struct Ctx {
  ir::Graph& g;
  OpId op;
  std::vector<const TypeData*> in;  // null: untyped
  std::vector<TypeData> out;        // as many as the op's outputs; elem Undefined: untyped
  std::vector<PortId> src;          // the producers of the inputs

  // A weight a predict net reads without an init net (a graph input nothing typed) takes the type
  // its role implies, with a symbolic dimension for what only the weight itself would say (a
  // Conv's output channels): `BLOB.K` for dimension K, or the symbol `same` names.
  const TypeData* weight(size_t k, std::vector<Dim> dims) {
    if (k >= src.size() || k >= in.size()) return nullptr;
    PortId p = src[k];
    if (in[k] || !p || g.port_op(p) != g.root() || g.port_dir(p) != ir::PortDir::In || g.port_type(p) ||
        g.port_role(p) == ir::PortRole::Initializer)
      return in[k];
    std::string blob(g.port_name_str(p));
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d].is_unknown()) dims[d] = Dim::symbol(g.sym(blob + "." + std::to_string(d)));
    g.set_port_type(p, g.types().tensor(DType::Float32, dims));
    // (interning may move the table the other inputs' types point into)
    for (size_t j = 0; j < src.size() && j < in.size(); ++j) {
      ir::TypeId t = src[j] ? g.port_type(src[j]) : ir::TypeId();
      in[j] = t ? &g.types().get(t) : nullptr;
    }
    return in[k];
  }

  const Value* attr(std::string_view k) const {
    Symbol s = g.symbols().find(k);
    return s ? g.attr(op, s) : nullptr;
  }
  int64_t i(std::string_view k, int64_t d) const {
    const Value* v = attr(k);
    return v && v->is_int() ? v->as_int() : d;
  }
  std::optional<std::vector<int64_t>> ints(std::string_view k) const {
    const Value* v = attr(k);
    if (!v || !v->is_list()) return std::nullopt;
    std::vector<int64_t> r;
    for (const auto& x : v->as_list()) {
      if (!x.is_int()) return std::nullopt;
      r.push_back(x.as_int());
    }
    return r;
  }
  std::string s(std::string_view k, std::string d) const {
    const Value* v = attr(k);
    return v && v->is_string() ? v->as_string() : d;
  }
  const TypeData* ranked(size_t k) const { return k < in.size() && in[k] && in[k]->ranked ? in[k] : nullptr; }
  void set(size_t k, DType e, std::vector<Dim> dims) {
    if (k >= out.size()) return;
    out[k].elem = e;
    out[k].ranked = true;
    out[k].dims = std::move(dims);
  }
  void same(size_t k, size_t from) {
    if (const TypeData* t = ranked(from)) set(k, t->elem, t->dims);
  }
};

Dim mul(Dim a, Dim b) { return a.is_known() && b.is_known() ? Dim::known(a.value() * b.value()) : Dim::unknown(); }
Dim prod(const std::vector<Dim>& d, size_t from, size_t to) {
  Dim r = Dim::known(1);
  for (size_t k = from; k < to && k < d.size(); ++k) r = mul(r, d[k]);
  return r;
}

// Caffe2's output size for one spatial dimension (conv_pool_op_base.h, ComputeSizeAndPad).
Dim pooled(Dim in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, int64_t legacy) {
  if (!in.is_known() || s <= 0) return Dim::unknown();
  int64_t n = in.value(), dk = d * (k - 1) + 1;
  switch (legacy) {
    case 1: return Dim::known((n - dk) / s + 1);           // VALID
    case 2: return Dim::known((n + s - 1) / s);            // SAME
    case 3: {                                              // CAFFE_LEGACY_POOLING: ceil, last window starts inside
      int64_t o = (n + pb + pe - k + s - 1) / s + 1;
      if ((pb || pe) && (o - 1) * s >= n + pb) --o;
      return Dim::known(o);
    }
    default: return Dim::known((n + pb + pe - dk) / s + 1);
  }
}

void conv_like(Ctx& c, bool pool) {
  const TypeData* x = c.ranked(0);
  if (!x || x->dims.size() < 3) return;
  size_t sp = x->dims.size() - 2;
  ConvArgs a = conv_args(c.g, c.op, sp);
  size_t ch = a.nhwc ? x->dims.size() - 1 : 1, first = a.nhwc ? 1 : 2;
  Dim channels = x->dims[ch];
  if (!pool) {
    std::vector<Dim> wd{Dim::unknown()};  // [M, C / group, kernel...] (NHWC: [M, kernel..., C / group])
    Dim cg = a.group == 1 ? x->dims[ch]
             : x->dims[ch].is_known() && a.group > 0 ? Dim::known(x->dims[ch].value() / a.group)
                                                     : Dim::unknown();
    if (!a.nhwc) wd.push_back(cg);
    for (int64_t kk : a.kernel) wd.push_back(Dim::known(kk));
    if (a.nhwc) wd.push_back(cg);
    const TypeData* w = c.weight(1, wd);
    x = c.ranked(0);
    channels = w && !w->dims.empty() ? w->dims[0] : Dim::unknown();
    if (c.in.size() > 2) {
      c.weight(2, {channels});
      x = c.ranked(0);  // (interning the bias's type may move the table x points into)
    }
  }
  std::vector<Dim> out = x->dims;
  out[ch] = channels;
  for (size_t k = 0; k < sp; ++k)
    out[first + k] = a.global ? Dim::known(1)
                              : pooled(x->dims[first + k], a.kernel[k], a.stride[k], a.dilation[k], a.pads[k], a.pads[sp + k], a.legacy_pad);
  c.set(0, x->elem, std::move(out));
}

void conv_transpose(Ctx& c) {
  const TypeData* x = c.ranked(0);
  const TypeData* w = c.ranked(1);
  if (!x || x->dims.size() < 3) return;
  size_t sp = x->dims.size() - 2;
  ConvArgs a = conv_args(c.g, c.op, sp);
  std::vector<int64_t> adj = c.ints("adjs").value_or(std::vector<int64_t>(sp, c.i("adj", 0)));
  if (adj.size() != sp) adj.assign(sp, 0);
  if (c.attr("adj_h")) adj = {c.i("adj_h", 0), c.i("adj_w", 0)};
  size_t ch = a.nhwc ? x->dims.size() - 1 : 1, first = a.nhwc ? 1 : 2;
  std::vector<Dim> out = x->dims;
  out[ch] = w && w->dims.size() > 1 ? mul(a.nhwc ? w->dims.back() : w->dims[1], Dim::known(a.group)) : Dim::unknown();
  for (size_t k = 0; k < sp; ++k) {
    Dim in = x->dims[first + k];
    out[first + k] = in.is_known() ? Dim::known((in.value() - 1) * a.stride[k] - a.pads[k] - a.pads[sp + k] + a.kernel[k] + adj[k])
                                   : Dim::unknown();
  }
  c.set(0, x->elem, std::move(out));
}

std::vector<Dim> broadcast(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  std::vector<Dim> r(std::max(a.size(), b.size()));
  for (size_t k = 0; k < r.size(); ++k) {
    Dim x = k < r.size() - a.size() ? Dim::known(1) : a[k - (r.size() - a.size())];
    Dim y = k < r.size() - b.size() ? Dim::known(1) : b[k - (r.size() - b.size())];
    r[k] = x == Dim::known(1) ? y : y == Dim::known(1) ? x : x == y ? x : x.is_known() ? x : y;
  }
  return r;
}

void elementwise(Ctx& c) {
  const TypeData* a = c.ranked(0);
  const TypeData* b = c.ranked(1);
  if (c.i("broadcast", 0)) {  // the legacy broadcast: B is a slice of A's shape
    if (a) c.set(0, a->elem, a->dims);
    return;
  }
  if (a && b) c.set(0, a->elem, broadcast(a->dims, b->dims));
}

void comparison(Ctx& c) {
  elementwise(c);
  if (!c.out.empty() && c.out[0].ranked) c.out[0].elem = DType::Bool;
}

void fc(Ctx& c, bool transposed) {
  const TypeData* x = c.ranked(0);
  if (!x) return;
  int64_t axis = c.i("axis", 1), axis_w = c.i("axis_w", 1);
  if (axis < 0) axis += static_cast<int64_t>(x->dims.size());
  if (axis < 0 || axis > static_cast<int64_t>(x->dims.size())) return;
  if (axis_w == 1) {  // a weight without its init net: [N, K] (FCTransposed: [K, N]), b [N]
    Dim k = prod(x->dims, static_cast<size_t>(axis), x->dims.size());
    const TypeData* w = c.weight(1, transposed ? std::vector<Dim>{k, Dim::unknown()} : std::vector<Dim>{Dim::unknown(), k});
    if (w && w->dims.size() == 2) c.weight(2, {w->dims[transposed ? 1 : 0]});
    x = c.ranked(0);
  } else {  // W's rank is not in the net (FC reads it flattened at axis_w); b is [N] all the same
    c.weight(2, {Dim::unknown()});
    x = c.ranked(0);
  }
  const TypeData* w = c.ranked(1);
  std::vector<Dim> out(x->dims.begin(), x->dims.begin() + axis);
  Dim n = Dim::unknown();
  if (w && axis_w >= 0 && axis_w <= static_cast<int64_t>(w->dims.size()))
    n = transposed ? prod(w->dims, static_cast<size_t>(axis_w), w->dims.size()) : prod(w->dims, 0, static_cast<size_t>(axis_w));
  out.push_back(n);
  c.set(0, x->elem, std::move(out));
}

void concat(Ctx& c) {
  const TypeData* x = c.ranked(0);
  if (!x) return;
  int64_t r = static_cast<int64_t>(x->dims.size());
  bool add_axis = c.i("add_axis", 0);
  int64_t axis = c.attr("axis") ? c.i("axis", 1) : c.s("order", "NCHW") == "NHWC" ? r - 1 : 1;
  if (axis < 0) axis += r + add_axis;
  if (axis < 0 || axis > r - !add_axis) return;
  std::vector<Dim> out = x->dims;
  size_t n = c.in.size();
  if (add_axis) {
    out.insert(out.begin() + axis, Dim::known(static_cast<int64_t>(n)));
  } else {
    Dim total = Dim::known(0);
    for (size_t k = 0; k < n; ++k) {
      const TypeData* t = c.ranked(k);
      Dim d = t && t->dims.size() == out.size() ? t->dims[axis] : Dim::unknown();
      total = total.is_known() && d.is_known() ? Dim::known(total.value() + d.value()) : Dim::unknown();
    }
    out[axis] = total;
  }
  c.set(0, x->elem, std::move(out));
  c.set(1, DType::Int32, {Dim::known(static_cast<int64_t>(n))});
}

void reshape(Ctx& c) {
  const TypeData* x = c.ranked(0);
  std::optional<std::vector<int64_t>> shape = c.ints("shape");
  if (x) c.set(1, DType::Int64, {Dim::known(static_cast<int64_t>(x->dims.size()))});
  if (!x || !shape) return;
  std::vector<Dim> out;
  int infer = -1;
  for (size_t k = 0; k < shape->size(); ++k) {
    int64_t d = (*shape)[k];
    if (d == 0) out.push_back(k < x->dims.size() ? x->dims[k] : Dim::unknown());
    else if (d == -1 && infer < 0) infer = static_cast<int>(k), out.push_back(Dim::unknown());
    else out.push_back(d > 0 ? Dim::known(d) : Dim::unknown());
  }
  if (infer >= 0) {
    Dim total = prod(x->dims, 0, x->dims.size()), rest = Dim::known(1);
    for (size_t k = 0; k < out.size(); ++k)
      if (static_cast<int>(k) != infer) rest = mul(rest, out[k]);
    if (total.is_known() && rest.is_known() && rest.value() > 0) out[infer] = Dim::known(total.value() / rest.value());
  }
  c.set(0, x->elem, std::move(out));
}

void flatten(Ctx& c) {
  const TypeData* x = c.ranked(0);
  if (!x) return;
  int64_t axis = c.i("axis", 1), r = static_cast<int64_t>(x->dims.size());
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return;
  c.set(0, x->elem, {prod(x->dims, 0, axis), prod(x->dims, axis, r)});
}

void transpose(Ctx& c) {
  const TypeData* x = c.ranked(0);
  if (!x) return;
  std::vector<int64_t> axes = c.ints("axes").value_or(std::vector<int64_t>());
  size_t r = x->dims.size();
  if (axes.empty())
    for (size_t k = r; k-- > 0;) axes.push_back(static_cast<int64_t>(k));
  if (axes.size() != r) return;
  std::vector<Dim> out;
  for (int64_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(r)) return;
    out.push_back(x->dims[a]);
  }
  c.set(0, x->elem, std::move(out));
}

void squeeze(Ctx& c, bool expand) {
  const TypeData* x = c.ranked(0);
  std::optional<std::vector<int64_t>> dims = c.ints("dims");
  if (!x || !dims) return;
  std::vector<int64_t> d = *dims;
  std::sort(d.begin(), d.end());
  std::vector<Dim> out = x->dims;
  if (expand) {
    for (int64_t a : d) {
      if (a < 0 || a > static_cast<int64_t>(out.size())) return;
      out.insert(out.begin() + a, Dim::known(1));
    }
  } else {
    for (size_t k = d.size(); k-- > 0;) {
      if (d[k] < 0 || d[k] >= static_cast<int64_t>(out.size())) return;
      out.erase(out.begin() + d[k]);
    }
  }
  c.set(0, x->elem, std::move(out));
}

void resize_nearest(Ctx& c) {
  const TypeData* x = c.ranked(0);
  if (!x || x->dims.size() != 4) return;
  const Value* ws = c.attr("width_scale");
  const Value* hs = c.attr("height_scale");
  auto scale = [](Dim d, const Value* v) {
    double f = !v ? 1.0 : v->is_float() ? v->as_float() : v->is_int() ? static_cast<double>(v->as_int()) : 1.0;
    return d.is_known() ? Dim::known(static_cast<int64_t>(static_cast<double>(d.value()) * f)) : Dim::unknown();
  };
  bool nhwc = c.s("order", "NCHW") == "NHWC";
  std::vector<Dim> out = x->dims;
  out[nhwc ? 1 : 2] = scale(out[nhwc ? 1 : 2], hs);
  out[nhwc ? 2 : 3] = scale(out[nhwc ? 2 : 3], ws);
  c.set(0, x->elem, std::move(out));
}

void fill(Ctx& c) {
  std::optional<std::vector<int64_t>> shape = c.ints("shape");
  std::string_view type = c.g.type_str(c.op);
  DType e = DType::Float32;
  if (type == "GivenTensorIntFill") e = DType::Int32;
  else if (type == "GivenTensorInt64Fill") e = DType::Int64;
  else if (type == "GivenTensorDoubleFill") e = DType::Float64;
  else if (type == "GivenTensorBoolFill") e = DType::Bool;
  else if (type == "GivenTensorInt16Fill") e = DType::Int16;
  if (shape) c.set(0, e, ir::dims_of(*shape));
}

// gather_op.cc: DATA's dimensions before `axis`, then INDICES', then DATA's after (match_outer: not typed).
void gather(Ctx& c) {
  const TypeData* x = c.ranked(0);
  const TypeData* i = c.ranked(1);
  if (!x || !i || c.i("match_outer", 0) != 0) return;
  int64_t r = static_cast<int64_t>(x->dims.size()), a = c.i("axis", 0);
  if (a < 0) a += r;
  if (a < 0 || a >= r) return;
  std::vector<Dim> out(x->dims.begin(), x->dims.begin() + a);
  out.insert(out.end(), i->dims.begin(), i->dims.end());
  out.insert(out.end(), x->dims.begin() + a + 1, x->dims.end());
  c.set(0, x->elem, std::move(out));
}

using Rule = std::function<void(Ctx&)>;

// One entry per op type.
const absl::flat_hash_map<std::string_view, Rule>& rules() {
  static const absl::flat_hash_map<std::string_view, Rule> r = [] {
    absl::flat_hash_map<std::string_view, Rule> m;
    auto same = [](Ctx& c) { c.same(0, 0); };
    for (const char* t : {"Relu", "Sigmoid", "Tanh", "Softmax", "LeakyRelu", "Clip", "Elu", "Exp", "Log", "Sqrt", "Abs",
                          "Negative", "Copy", "Alias", "Scale", "Softplus", "Softsign", "ChannelShuffle", "Swish", "PRelu",
                          "Sqr", "Reciprocal", "Sin", "Cos", "Floor", "Ceil", "Selu", "HardSigmoid", "StopGradient",
                          "Sign", "Not", "Erf", "Tan", "Atan", "Asin", "Acos", "Rsqrt", "Cube", "LpNorm", "Mish", "Gelu",
                          "AffineChannel", "ElementwiseLinear", "Logit", "Sum", "Mean", "Max", "Min", "Cbrt"})
      m[t] = same;
    m["LRN"] = [](Ctx& c) { c.same(0, 0), c.same(1, 0); };
    m["Dropout"] = [](Ctx& c) {
      c.same(0, 0);
      if (const TypeData* x = c.ranked(0)) c.set(1, DType::Bool, x->dims);
    };
    m["SpatialBN"] = [](Ctx& c) {
      if (const TypeData* x = c.ranked(0); x && x->dims.size() > 1) {
        Dim ch = c.s("order", "NCHW") == "NHWC" ? x->dims.back() : x->dims[1];
        for (size_t k = 1; k < 5; ++k) c.weight(k, {ch});
      }
      c.same(0, 0);
      for (size_t k = 1; k < c.out.size() && k < 5; ++k) c.same(k, 1);
    };
    for (const char* t : {"Add", "Sub", "Mul", "Div", "Pow"}) m[t] = elementwise;
    for (const char* t : {"EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Xor"}) m[t] = comparison;
    for (const char* t : {"Conv", "Conv1D", "Conv2D", "Conv3D"}) m[t] = [](Ctx& c) { conv_like(c, false); };
    for (const char* t : {"MaxPool", "AveragePool", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AveragePool1D", "AveragePool2D",
                          "AveragePool3D", "LpPool"})
      m[t] = [](Ctx& c) { conv_like(c, true); };
    m["ConvTranspose"] = conv_transpose;
    m["FC"] = [](Ctx& c) { fc(c, false); };
    m["FCTransposed"] = [](Ctx& c) { fc(c, true); };
    m["Concat"] = concat;
    m["Reshape"] = reshape;
    m["Flatten"] = flatten;
    m["FlattenToVec"] = [](Ctx& c) {
      if (const TypeData* x = c.ranked(0)) c.set(0, x->elem, {prod(x->dims, 0, x->dims.size())});
    };
    m["Transpose"] = transpose;
    m["Squeeze"] = [](Ctx& c) { squeeze(c, false); };
    m["ExpandDims"] = [](Ctx& c) { squeeze(c, true); };
    m["ResizeNearest"] = resize_nearest;
    m["Gather"] = gather;
    for (const char* t : {"GivenTensorFill", "GivenTensorIntFill", "GivenTensorInt64Fill", "GivenTensorDoubleFill",
                          "GivenTensorBoolFill", "GivenTensorInt16Fill"})
      m[t] = fill;
    return m;
  }();
  return r;
}

}  // namespace

ConvArgs conv_args(const ir::Graph& g, OpId op, size_t sp) {
  Ctx c{const_cast<ir::Graph&>(g), op, {}, {}, {}};
  auto fail = [&](const std::string& m) -> void { throw Error(g.path(op) + ": " + std::string(g.type_str(op)) + ": " + m); };
  // One of the spellings: the list, the _h/_w pair (2-D), the single value for every dimension.
  auto read = [&](const char* list, const char* h, const char* w, const char* one, int64_t dflt) {
    std::vector<int64_t> v;
    if (auto l = c.ints(list)) v = *l;
    else if (c.attr(h) || c.attr(w)) v = {c.i(h, dflt), c.i(w, dflt)};
    else v.assign(sp, c.i(one, dflt));
    if (v.size() != sp) fail(std::string(list) + " has " + std::to_string(v.size()) + " values for " + std::to_string(sp) + " spatial dimensions");
    return v;
  };
  ConvArgs a;
  a.global = c.i("global_pooling", 0) != 0;
  a.kernel = a.global ? std::vector<int64_t>(sp, 1) : read("kernels", "kernel_h", "kernel_w", "kernel", 0);
  a.stride = read("strides", "stride_h", "stride_w", "stride", 1);
  a.dilation = read("dilations", "dilation_h", "dilation_w", "dilation", 1);
  if (auto l = c.ints("pads")) {
    a.pads = *l;
  } else if (c.attr("pad_t") || c.attr("pad_l") || c.attr("pad_b") || c.attr("pad_r")) {
    if (sp != 2) fail("pad_t/pad_l/pad_b/pad_r are for 2 spatial dimensions");
    a.pads = {c.i("pad_t", 0), c.i("pad_l", 0), c.i("pad_b", 0), c.i("pad_r", 0)};
  } else {
    a.pads.assign(2 * sp, c.i("pad", 0));
  }
  if (a.pads.size() != 2 * sp) fail("pads has " + std::to_string(a.pads.size()) + " values for " + std::to_string(sp) + " spatial dimensions");
  if (!a.global)
    for (int64_t k : a.kernel)
      if (k <= 0) fail("no kernel size (kernel, kernel_h/kernel_w or kernels)");
  a.group = c.i("group", 1);
  a.legacy_pad = c.i("legacy_pad", 0);
  a.nhwc = c.s("order", "NCHW") == "NHWC";
  if (a.legacy_pad == 1 || a.legacy_pad == 2) std::fill(a.pads.begin(), a.pads.end(), 0);
  return a;
}

size_t infer_types(ir::Graph& g) {
  OpId root = g.root();
  // Initializers are typed by their tensors.
  Symbol s_init = g.sym("initializer");
  for (PortId p : g.inputs(root))
    if (!g.port_type(p))
      if (const Value* t = g.attr(p, s_init); t && t->is_tensor())
        g.set_port_type(p, g.types().tensor(t->as_tensor().dtype, ir::dims_of(t->as_tensor().shape)));
  size_t typed = 0;
  const auto& table = rules();
  for (OpId op = g.first_child(root); op; op = g.next_sibling(op)) {
    auto it = table.find(g.type_str(op));
    if (it == table.end()) continue;
    Ctx c{g, op, {}, {}, {}};
    for (PortId p : g.inputs(op)) {
      if (g.is_control(p)) continue;
      PortId src = g.producer(p);
      ir::TypeId t = src ? g.port_type(src) : ir::TypeId();
      c.in.push_back(t ? &g.types().get(t) : nullptr);
      c.src.push_back(src);
    }
    size_t n_out = 0;
    for (PortId p : g.outputs(op)) n_out += !g.is_control(p);
    c.out.resize(n_out);
    try {
      it->second(c);
    } catch (const Error&) {
      continue;  // arguments a rule cannot read: the outputs stay untyped (validation says why)
    }
    size_t k = 0;
    bool any = false;
    for (PortId p : g.outputs(op)) {
      if (g.is_control(p)) continue;
      const TypeData& t = c.out[k++];
      if (t.elem == DType::Undefined || g.port_type(p)) continue;
      g.set_port_type(p, g.types().tensor(t.elem, t.dims));
      any = true;
    }
    typed += any;
  }
  // Graph outputs take their producers' types.
  for (PortId p : g.outputs(root))
    if (PortId src = g.producer(p); src && !g.port_type(p) && g.port_type(src)) g.set_port_type(p, g.port_type(src));
  return typed;
}

}  // namespace amanda::caffe2_frontend
