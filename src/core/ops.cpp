// The amanda/core ops: one registry entry each (inputs, attributes, type rule). A rule sees its
// inputs' types and the op's attributes with the defaults filled in, and returns the output type
// or throws Failure saying what it expected. No rule broadcasts or converts implicitly: operands
// of elementwise ops have one element type and one shape (Broadcast and Convert say otherwise).
#include <algorithm>
#include <cstdlib>

#include "amanda/ir/value.h"
#include "registry.h"

namespace amanda::core::detail {

namespace {

using ir::Dim;
using ir::TypeData;
using In = std::span<const TypeData* const>;

bool is_float(ElemType e) {
  return e == ElemType::Float16 || e == ElemType::BFloat16 || e == ElemType::Float32 || e == ElemType::Float64;
}
bool is_numeric(ElemType e) { return e != ElemType::Bool && e != ElemType::String && e != ElemType::Undefined; }

const ir::Value& attr(const ir::AttrList& attrs, ir::Graph& g, std::string_view key) {
  static const ir::Value null;
  for (const auto& [k, v] : attrs)
    if (g.str(k) == key) return v;
  return null;
}

std::vector<int64_t> ints(const ir::Value& v, std::string_view what) {
  std::vector<int64_t> r;
  if (v.is_null()) return r;
  if (!v.is_list()) throw Failure{std::string(what) + " must be a list of integers"};
  for (const auto& x : v.as_list()) {
    if (!x.is_int()) throw Failure{std::string(what) + " must be a list of integers"};
    r.push_back(x.as_int());
  }
  return r;
}

int64_t int_of(const ir::Value& v, std::string_view what) {
  if (!v.is_int()) throw Failure{std::string(what) + " must be an integer"};
  return v.as_int();
}

TypeData ranked(const TypeData& t, std::string_view what, ir::Graph& g) {
  if (t.kind != ir::TypeKind::Tensor) throw Failure{std::string(what) + " is " + show(g, t) + ": a tensor is expected"};
  if (!t.ranked) throw Failure{std::string(what) + " is " + show(g, t) + ": its rank must be known"};
  return t;
}

Dim add_dims(Dim a, Dim b) { return a.is_known() && b.is_known() ? Dim::known(a.value() + b.value()) : Dim::unknown(); }

std::vector<Dim> dims_attr(const ir::Value& v, ir::Graph& g) {
  std::vector<Dim> d;
  if (!v.is_list()) throw Failure{"shape must be a list"};
  for (const auto& x : v.as_list())
    d.push_back(x.is_int() ? (x.as_int() < 0 ? Dim::unknown() : Dim::known(x.as_int()))
                : x.is_string() ? Dim::symbol(g.sym(x.as_string()))
                                : Dim::unknown());
  return d;
}

// ---- elementwise

TypeData same_type(In in, const ir::AttrList&, ir::Graph& g) {
  const TypeData a = *in[0];  // copies: interning a type (show) may move the table
  const TypeData b = *in[1];
  if (a.elem != b.elem)
    throw Failure{"element types differ: a is " + show(g, a) + ", b is " + show(g, b) + " (no implicit conversion: use Convert)"};
  if (a.ranked && b.ranked && a.dims != b.dims)
    throw Failure{"shapes differ: a is " + show(g, a) + ", b is " + show(g, b) + " (no implicit broadcast: use Broadcast)"};
  return a.ranked ? a : b;
}

TypeData numeric_binary(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData r = same_type(in, at, g);
  if (!is_numeric(r.elem)) throw Failure{"a is " + show(g, r) + ": a numeric element type is expected"};
  return r;
}

TypeData compare(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData r = same_type(in, at, g);
  r.elem = ElemType::Bool;
  return r;
}

TypeData logical(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData r = same_type(in, at, g);
  if (r.elem != ElemType::Bool) throw Failure{"a is " + show(g, r) + ": bool is expected"};
  return r;
}

TypeData select(In in, const ir::AttrList& at, ir::Graph& g) {
  const TypeData c = *in[0];
  if (c.elem != ElemType::Bool) throw Failure{"condition is " + show(g, c) + ": bool is expected"};
  TypeData r = same_type(in.subspan(1), at, g);
  if (c.ranked && r.ranked && c.dims != r.dims)
    throw Failure{"the condition's shape " + show(g, c) + " differs from the values' " + show(g, r) + " (no implicit broadcast: use Broadcast)"};
  return r;
}

TypeData float_unary(In in, const ir::AttrList&, ir::Graph& g) {
  if (!is_float(in[0]->elem)) throw Failure{"x is " + show(g, *in[0]) + ": a floating-point element type is expected"};
  return *in[0];
}

TypeData numeric_unary(In in, const ir::AttrList&, ir::Graph& g) {
  if (!is_numeric(in[0]->elem)) throw Failure{"x is " + show(g, *in[0]) + ": a numeric element type is expected"};
  return *in[0];
}

TypeData bool_unary(In in, const ir::AttrList&, ir::Graph& g) {
  if (in[0]->elem != ElemType::Bool) throw Failure{"x is " + show(g, *in[0]) + ": bool is expected"};
  return *in[0];
}

TypeData clamp(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData r = numeric_unary(in, at, g);
  const ir::Value& lo = attr(at, g, "min");
  const ir::Value& hi = attr(at, g, "max");
  auto num = [](const ir::Value& v) { return v.is_int() ? static_cast<double>(v.as_int()) : v.as_float(); };
  if (!(lo.is_int() || lo.is_float()) || !(hi.is_int() || hi.is_float())) throw Failure{"min and max must be numbers"};
  if (num(lo) > num(hi)) throw Failure{"min is greater than max"};
  return r;
}

// ---- shape and data movement

TypeData broadcast(In in, const ir::AttrList& at, ir::Graph& g) {
  std::vector<Dim> shape = dims_attr(attr(at, g, "shape"), g);
  std::vector<int64_t> axes = ints(attr(at, g, "axes"), "axes");
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(shape.size()) || (i && axes[i] <= axes[i - 1]))
      throw Failure{"axes must be increasing and less than the rank " + std::to_string(shape.size())};
  std::vector<Dim> kept;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i))) kept.push_back(shape[i]);
  const TypeData x = *in[0];
  if (x.ranked && x.dims != kept) {
    TypeData want = x;
    want.dims = kept;
    throw Failure{"x is " + show(g, x) + " but the shape without the broadcast axes is " + show(g, want)};
  }
  TypeData r = x;
  r.ranked = true;
  r.dims = shape;
  return r;
}

int64_t count(const std::vector<Dim>& d) {
  int64_t n = 1;
  for (Dim x : d) {
    if (!x.is_known()) return -1;
    n *= x.value();
  }
  return n;
}

TypeData reshape(In in, const ir::AttrList& at, ir::Graph& g) {
  const TypeData x = *in[0];
  std::vector<Dim> shape = dims_attr(attr(at, g, "shape"), g);
  if (!x.ranked || count(x.dims) < 0) throw Failure{"x is " + show(g, x) + ": Reshape needs a static shape"};
  TypeData r = x;
  r.dims = shape;
  if (count(shape) != count(x.dims))
    throw Failure{"x is " + show(g, x) + " (" + std::to_string(count(x.dims)) + " elements) but the shape " + show(g, r) +
                  " has " + std::to_string(count(shape))};
  return r;
}

TypeData convert(In in, const ir::AttrList& at, ir::Graph& g) {
  const ir::Value& to = attr(at, g, "to");
  auto e = to.is_string() ? ir::dtype_from_name(to.as_string()) : std::nullopt;
  if (!e || !ir::dtype_size(*e)) throw Failure{"to must name a numeric or bool element type (float32, int64, ...)"};
  TypeData r = *in[0];
  r.elem = *e;
  return r;
}

TypeData transpose(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "x", g);
  std::vector<int64_t> perm = ints(attr(at, g, "perm"), "perm");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != x.dims.size())
      throw Failure{"perm must be a permutation of 0.." + std::to_string(x.dims.size()) + " - 1 for x " + show(g, x)};
  TypeData r = x;
  for (size_t i = 0; i < perm.size(); ++i) r.dims[i] = x.dims[size_t(perm[i])];
  return r;
}

TypeData concat(In in, const ir::AttrList& at, ir::Graph& g) {
  if (in.empty()) throw Failure{"at least one input is needed"};
  TypeData r = ranked(*in[0], "inputs.0", g);
  int64_t axis = int_of(attr(at, g, "axis"), "axis");
  if (axis < 0 || axis >= static_cast<int64_t>(r.dims.size()))
    throw Failure{"axis " + std::to_string(axis) + " is not an axis of " + show(g, r) + " (0 .. rank - 1)"};
  for (size_t k = 1; k < in.size(); ++k) {
    TypeData t = ranked(*in[k], "an input", g);
    if (t.elem != r.elem || t.dims.size() != r.dims.size())
      throw Failure{"inputs.0 is " + show(g, *in[0]) + " but inputs." + std::to_string(k) + " is " + show(g, t)};
    for (size_t d = 0; d < t.dims.size(); ++d)
      if (d != size_t(axis) && t.dims[d] != r.dims[d])
        throw Failure{"inputs.0 is " + show(g, *in[0]) + " but inputs." + std::to_string(k) + " is " + show(g, t) +
                      ": only the axis " + std::to_string(axis) + " may differ"};
    r.dims[size_t(axis)] = add_dims(r.dims[size_t(axis)], t.dims[size_t(axis)]);
  }
  return r;
}

TypeData gather(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "data", g);
  TypeData i = ranked(*in[1], "indices", g);
  if (i.elem != ElemType::Int32 && i.elem != ElemType::Int64) throw Failure{"indices is " + show(g, i) + ": int32 or int64 is expected"};
  int64_t axis = int_of(attr(at, g, "axis"), "axis");
  if (axis < 0 || axis >= static_cast<int64_t>(x.dims.size()))
    throw Failure{"axis " + std::to_string(axis) + " is not an axis of " + show(g, x)};
  TypeData r = x;
  r.dims.assign(x.dims.begin(), x.dims.begin() + axis);
  r.dims.insert(r.dims.end(), i.dims.begin(), i.dims.end());
  r.dims.insert(r.dims.end(), x.dims.begin() + axis + 1, x.dims.end());
  return r;
}

// ONNX's Slice rule on attributes: starts/ends clamped to the dimension, negative ones counted
// from the end, steps non-zero; axes default to 0..len(starts)-1.
TypeData slice(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "data", g);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> starts = ints(attr(at, g, "starts"), "starts"), ends = ints(attr(at, g, "ends"), "ends");
  std::vector<int64_t> axes = ints(attr(at, g, "axes"), "axes"), steps = ints(attr(at, g, "steps"), "steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw Failure{"starts, ends, axes and steps must have one length"};
  TypeData r = x;
  std::vector<bool> seen(size_t(rank), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank || seen[size_t(a)]) throw Failure{"axes must be distinct axes of " + show(g, x)};
    seen[size_t(a)] = true;
    if (steps[k] == 0) throw Failure{"a step is 0"};
    Dim d = x.dims[size_t(a)];
    if (!d.is_known()) {
      r.dims[size_t(a)] = Dim::unknown();
      continue;
    }
    int64_t n = d.value(), s = starts[k], e = ends[k], st = steps[k];
    if (s < 0) s += n;
    if (e < 0) e += n;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      r.dims[size_t(a)] = Dim::known(e > s ? (e - s + st - 1) / st : 0);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      r.dims[size_t(a)] = Dim::known(s > e ? (s - e - st - 1) / -st : 0);
    }
  }
  return r;
}

TypeData pad(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "x", g);
  if (!is_numeric(x.elem)) throw Failure{"x is " + show(g, x) + ": a numeric element type is expected"};
  std::vector<int64_t> pads = ints(attr(at, g, "pads"), "pads");
  size_t r = x.dims.size();
  if (pads.size() != 2 * r) throw Failure{"pads needs " + std::to_string(2 * r) + " values (begins, then ends) for x " + show(g, x)};
  for (int64_t p : pads)
    if (p < 0) throw Failure{"pads must be non-negative (a crop is a Slice)"};
  TypeData out = x;
  for (size_t d = 0; d < r; ++d) out.dims[d] = add_dims(x.dims[d], Dim::known(pads[d] + pads[r + d]));
  return out;
}

TypeData constant(In, const ir::AttrList& at, ir::Graph& g) {
  const ir::Value& v = attr(at, g, "value");
  if (!v.is_tensor()) throw Failure{"value must be a tensor"};
  const ir::Tensor& t = v.as_tensor();
  TypeData r;
  r.elem = t.dtype;
  r.ranked = true;
  r.dims = ir::dims_of(t.shape);
  return r;
}

// ---- products, convolution, pooling, normalisation, reductions

TypeData dot(In in, const ir::AttrList&, ir::Graph& g) {
  const TypeData a = *in[0], b = *in[1];
  if (a.elem != b.elem) throw Failure{"element types differ: a is " + show(g, a) + ", b is " + show(g, b)};
  if (!a.ranked || !b.ranked || a.dims.size() != 2 || b.dims.size() != 2)
    throw Failure{"a and b must be matrices: a is " + show(g, a) + ", b is " + show(g, b)};
  if (a.dims[1] != b.dims[0]) throw Failure{"inner dimensions differ: a is " + show(g, a) + ", b is " + show(g, b)};
  TypeData r = a;
  r.dims = {a.dims[0], b.dims[1]};
  return r;
}

TypeData batch_dot(In in, const ir::AttrList&, ir::Graph& g) {
  const TypeData a = *in[0], b = *in[1];
  if (a.elem != b.elem) throw Failure{"element types differ: a is " + show(g, a) + ", b is " + show(g, b)};
  if (!a.ranked || !b.ranked || a.dims.size() < 3 || a.dims.size() != b.dims.size())
    throw Failure{"a and b must be stacks of matrices of one rank >= 3: a is " + show(g, a) + ", b is " + show(g, b)};
  size_t n = a.dims.size();
  if (!std::equal(a.dims.begin(), a.dims.end() - 2, b.dims.begin()))
    throw Failure{"batch dimensions differ: a is " + show(g, a) + ", b is " + show(g, b) + " (no implicit broadcast: use Broadcast)"};
  if (a.dims[n - 1] != b.dims[n - 2]) throw Failure{"inner dimensions differ: a is " + show(g, a) + ", b is " + show(g, b)};
  TypeData r = a;
  r.dims[n - 1] = b.dims[n - 1];
  return r;
}

struct Geometry {
  std::vector<int64_t> strides, dilations, pads;
};

Geometry geometry(const ir::AttrList& at, ir::Graph& g, size_t n) {
  Geometry w;
  w.strides = ints(attr(at, g, "strides"), "strides");
  w.dilations = ints(attr(at, g, "dilations"), "dilations");
  w.pads = ints(attr(at, g, "pads"), "pads");
  if (w.strides.empty()) w.strides.assign(n, 1);
  if (w.dilations.empty()) w.dilations.assign(n, 1);
  if (w.pads.empty()) w.pads.assign(2 * n, 0);
  if (w.strides.size() != n || w.dilations.size() != n || w.pads.size() != 2 * n)
    throw Failure{"strides and dilations need " + std::to_string(n) + " values and pads " + std::to_string(2 * n) +
                  " (begin values, then end values)"};
  for (size_t i = 0; i < n; ++i)
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.pads[i] < 0 || w.pads[n + i] < 0)
      throw Failure{"strides and dilations must be positive, pads non-negative"};
  return w;
}

Dim window_out(Dim in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil_mode) {
  if (!in.is_known()) return Dim::unknown();
  int64_t ek = (k - 1) * d + 1, span = in.value() + pb + pe - ek;
  if (span < 0) throw Failure{"the window (" + std::to_string(ek) + ") is larger than the padded input (" + std::to_string(in.value() + pb + pe) + ")"};
  if (!ceil_mode) return Dim::known(span / s + 1);
  int64_t out = (span + s - 1) / s + 1;
  if ((out - 1) * s >= in.value() + pb) --out;
  return Dim::known(out);
}

TypeData convolution(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "x", g), w = ranked(*in[1], "w", g);
  if (!is_float(x.elem) || x.elem != w.elem) throw Failure{"x is " + show(g, x) + ", w is " + show(g, w) + ": one floating-point type is expected"};
  if (x.dims.size() < 3 || w.dims.size() != x.dims.size())
    throw Failure{"x [N, C, spatial...] and w [M, C / group, kernel...] must have one rank >= 3: x is " + show(g, x) + ", w is " + show(g, w)};
  size_t n = x.dims.size() - 2;
  int64_t group = int_of(attr(at, g, "group"), "group");
  Geometry geo = geometry(at, g, n);
  if (group <= 0) throw Failure{"group must be positive"};
  if (x.dims[1].is_known() && w.dims[1].is_known() && x.dims[1].value() != w.dims[1].value() * group)
    throw Failure{"x has " + std::to_string(x.dims[1].value()) + " channels but w takes " + std::to_string(w.dims[1].value()) +
                  " per group of " + std::to_string(group)};
  TypeData r = x;
  r.dims[1] = w.dims[0];
  for (size_t i = 0; i < n; ++i) {
    if (!w.dims[2 + i].is_known()) throw Failure{"w is " + show(g, w) + ": the kernel size must be known"};
    r.dims[2 + i] = window_out(x.dims[2 + i], w.dims[2 + i].value(), geo.strides[i], geo.dilations[i], geo.pads[i], geo.pads[n + i], false);
  }
  return r;
}

TypeData pool(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "x", g);
  if (!is_float(x.elem)) throw Failure{"x is " + show(g, x) + ": a floating-point element type is expected"};
  std::vector<int64_t> k = ints(attr(at, g, "kernel_shape"), "kernel_shape");
  if (k.empty() || x.dims.size() != k.size() + 2)
    throw Failure{"x is " + show(g, x) + ": [N, C] and " + std::to_string(k.size()) + " spatial dimensions (kernel_shape) are expected"};
  Geometry geo = geometry(at, g, k.size());
  bool ceil_mode = int_of(attr(at, g, "ceil_mode"), "ceil_mode") != 0;
  TypeData r = x;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k[i] <= 0) throw Failure{"kernel_shape must be positive"};
    r.dims[2 + i] = window_out(x.dims[2 + i], k[i], geo.strides[i], geo.dilations[i], geo.pads[i], geo.pads[k.size() + i], ceil_mode);
  }
  return r;
}

TypeData batch_norm(In in, const ir::AttrList&, ir::Graph& g) {
  TypeData x = ranked(*in[0], "x", g);
  if (!is_float(x.elem) || x.dims.size() < 2) throw Failure{"x is " + show(g, x) + ": floating point [N, C, ...] is expected"};
  const char* names[] = {"x", "gamma", "beta", "mean", "variance"};
  for (size_t k = 1; k < 5; ++k) {
    TypeData p = ranked(*in[k], names[k], g);
    if (p.elem != x.elem || p.dims.size() != 1 || p.dims[0] != x.dims[1])
      throw Failure{std::string(names[k]) + " is " + show(g, p) + " where x is " + show(g, x) + ": [C] of x's element type is expected"};
  }
  return x;
}

TypeData reduce(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "x", g);
  if (!is_numeric(x.elem)) throw Failure{"x is " + show(g, x) + ": a numeric element type is expected"};
  std::vector<int64_t> axes = ints(attr(at, g, "axes"), "axes");
  bool keep = int_of(attr(at, g, "keepdims"), "keepdims") != 0;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(x.dims.size()) || (i && axes[i] <= axes[i - 1]))
      throw Failure{"axes must be increasing axes of " + show(g, x)};
  TypeData r = x;
  r.dims.clear();
  for (size_t d = 0; d < x.dims.size(); ++d) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d));
    if (!reduced) r.dims.push_back(x.dims[d]);
    else if (keep) r.dims.push_back(Dim::known(1));
  }
  return r;
}

TypeData arg_reduce(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "x", g);
  if (!is_numeric(x.elem)) throw Failure{"x is " + show(g, x) + ": a numeric element type is expected"};
  int64_t axis = int_of(attr(at, g, "axis"), "axis");
  bool keep = int_of(attr(at, g, "keepdims"), "keepdims") != 0;
  if (axis < 0 || axis >= static_cast<int64_t>(x.dims.size())) throw Failure{"axis " + std::to_string(axis) + " is not an axis of " + show(g, x)};
  TypeData r = x;
  r.elem = ElemType::Int64;
  if (keep) r.dims[size_t(axis)] = Dim::known(1);
  else r.dims.erase(r.dims.begin() + axis);
  return r;
}

TypeData softmax(In in, const ir::AttrList& at, ir::Graph& g) {
  TypeData x = ranked(*in[0], "x", g);
  if (!is_float(x.elem)) throw Failure{"x is " + show(g, x) + ": a floating-point element type is expected"};
  int64_t axis = int_of(attr(at, g, "axis"), "axis");
  if (axis < 0 || axis >= static_cast<int64_t>(x.dims.size())) throw Failure{"axis " + std::to_string(axis) + " is not an axis of " + show(g, x)};
  return x;
}

}  // namespace

std::string show(ir::Graph& g, TypeData t) { return ir::format_type(g, g.types().intern(t)); }

const std::vector<OpDef>& registry() {
  static const std::vector<OpDef> defs = [] {
    const ir::Value opt;  // an optional attribute without a default
    std::vector<OpDef> d = {
        {"Add", {"a", "b"}, {}, numeric_binary, false, "a + b"},
        {"Subtract", {"a", "b"}, {}, numeric_binary, false, "a - b"},
        {"Multiply", {"a", "b"}, {}, numeric_binary, false, "a * b"},
        {"Divide", {"a", "b"}, {}, numeric_binary, false, "a / b (integers: truncated)"},
        {"Maximum", {"a", "b"}, {}, numeric_binary, false, "max(a, b)"},
        {"Minimum", {"a", "b"}, {}, numeric_binary, false, "min(a, b)"},
        {"Power", {"a", "b"}, {}, numeric_binary, false, "a ** b"},
        {"Equal", {"a", "b"}, {}, compare, false, "a == b (bool)"},
        {"Less", {"a", "b"}, {}, compare, false, "a < b (bool)"},
        {"Greater", {"a", "b"}, {}, compare, false, "a > b (bool)"},
        {"And", {"a", "b"}, {}, logical, false, "a and b"},
        {"Or", {"a", "b"}, {}, logical, false, "a or b"},
        {"Not", {"x"}, {}, bool_unary, false, "not x"},
        {"Select", {"condition", "a", "b"}, {}, select, false, "a where condition, else b (one shape)"},
        {"Relu", {"x"}, {}, numeric_unary, false, "max(x, 0)"},
        {"Negative", {"x"}, {}, numeric_unary, false, "-x"},
        {"Abs", {"x"}, {}, numeric_unary, false, "|x|"},
        {"Sign", {"x"}, {}, numeric_unary, false, "-1, 0 or 1"},
        {"Exp", {"x"}, {}, float_unary, false, ""},
        {"Log", {"x"}, {}, float_unary, false, ""},
        {"Sqrt", {"x"}, {}, float_unary, false, ""},
        {"Erf", {"x"}, {}, float_unary, false, ""},
        {"Tanh", {"x"}, {}, float_unary, false, ""},
        {"Sigmoid", {"x"}, {}, float_unary, false, "1 / (1 + exp(-x))"},
        {"Sin", {"x"}, {}, float_unary, false, ""},
        {"Cos", {"x"}, {}, float_unary, false, ""},
        {"Floor", {"x"}, {}, float_unary, false, ""},
        {"Ceiling", {"x"}, {}, float_unary, false, ""},
        {"Clamp", {"x"}, {{"min", "float", std::nullopt}, {"max", "float", std::nullopt}}, clamp, false, "min(max(x, min), max)"},
        {"Broadcast", {"x"}, {{"shape", "any", std::nullopt}, {"axes", "ints", std::nullopt}}, broadcast, false,
         "x placed in `shape`; `axes` are the new axes (increasing); x's shape is `shape` without them"},
        {"Reshape", {"x"}, {{"shape", "any", std::nullopt}}, reshape, false, "the same elements in another static shape"},
        {"Convert", {"x"}, {{"to", "string", std::nullopt}}, convert, false, "another element type (the only conversion there is)"},
        {"Transpose", {"x"}, {{"perm", "ints", std::nullopt}}, transpose, false, "axes permuted: out dim i is x dim perm[i]"},
        {"Concat", {"inputs"}, {{"axis", "int", std::nullopt}}, concat, true, "inputs joined along a non-negative axis"},
        {"Gather", {"data", "indices"}, {{"axis", "int", ir::Value(int64_t(0))}}, gather, false,
         "slices of data along a non-negative axis at indices (negative indices count from the end)"},
        {"Slice", {"data"}, {{"starts", "ints", std::nullopt}, {"ends", "ints", std::nullopt}, {"axes", "ints", opt}, {"steps", "ints", opt}},
         slice, false, "ONNX's Slice with constant bounds"},
        {"Constant", {}, {{"value", "tensor", std::nullopt}}, constant, false, "a tensor"},
        {"Pad", {"x"}, {{"pads", "ints", std::nullopt}, {"value", "float", ir::Value(0.0)}}, pad, false,
         "x surrounded by `value`: pads are the begin counts, then the end counts (non-negative)"},
        {"Dot", {"a", "b"}, {}, dot, false, "[m, k] x [k, n]"},
        {"BatchDot", {"a", "b"}, {}, batch_dot, false, "[..., m, k] x [..., k, n] with equal batch dimensions"},
        {"Convolution", {"x", "w"},
         {{"strides", "ints", opt}, {"dilations", "ints", opt}, {"pads", "ints", opt}, {"group", "int", ir::Value(int64_t(1))}},
         convolution, false, "x [N, C, ...] * w [M, C / group, ...] (no bias: Broadcast + Add); pads: begins, then ends"},
        {"MaxPool", {"x"},
         {{"kernel_shape", "ints", std::nullopt}, {"strides", "ints", opt}, {"dilations", "ints", opt}, {"pads", "ints", opt},
          {"ceil_mode", "int", ir::Value(int64_t(0))}},
         pool, false, "the maximum of each window (padding never wins)"},
        {"AvgPool", {"x"},
         {{"kernel_shape", "ints", std::nullopt}, {"strides", "ints", opt}, {"pads", "ints", opt},
          {"ceil_mode", "int", ir::Value(int64_t(0))}, {"count_include_pad", "int", ir::Value(int64_t(0))}},
         pool, false, "the mean of each window"},
        {"BatchNormInference", {"x", "gamma", "beta", "mean", "variance"}, {{"epsilon", "float", ir::Value(1e-5)}}, batch_norm, false,
         "gamma * (x - mean) / sqrt(variance + epsilon) + beta over axis 1"},
        {"ReduceSum", {"x"}, {{"axes", "ints", std::nullopt}, {"keepdims", "int", ir::Value(int64_t(1))}}, reduce, false, ""},
        {"ReduceMean", {"x"}, {{"axes", "ints", std::nullopt}, {"keepdims", "int", ir::Value(int64_t(1))}}, reduce, false, ""},
        {"ReduceMax", {"x"}, {{"axes", "ints", std::nullopt}, {"keepdims", "int", ir::Value(int64_t(1))}}, reduce, false, ""},
        {"ReduceMin", {"x"}, {{"axes", "ints", std::nullopt}, {"keepdims", "int", ir::Value(int64_t(1))}}, reduce, false, ""},
        {"ReduceProd", {"x"}, {{"axes", "ints", std::nullopt}, {"keepdims", "int", ir::Value(int64_t(1))}}, reduce, false, ""},
        {"ArgMax", {"x"}, {{"axis", "int", std::nullopt}, {"keepdims", "int", ir::Value(int64_t(1))}}, arg_reduce, false,
         "int64 index of the first maximum along one non-negative axis"},
        {"ArgMin", {"x"}, {{"axis", "int", std::nullopt}, {"keepdims", "int", ir::Value(int64_t(1))}}, arg_reduce, false,
         "int64 index of the first minimum along one non-negative axis"},
        {"Softmax", {"x"}, {{"axis", "int", std::nullopt}}, softmax, false, "along one non-negative axis"},
        {"LogSoftmax", {"x"}, {{"axis", "int", std::nullopt}}, softmax, false, "along one non-negative axis"},
    };
    return d;
  }();
  return defs;
}

const OpDef* find_def(std::string_view type) {
  for (const auto& d : registry())
    if (d.type == type) return &d;
  return nullptr;
}

}  // namespace amanda::core::detail
