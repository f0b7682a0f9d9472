// Shape and data-movement ops: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Concat, Split, Slice, Expand, Tile, Identity, Constant, ConstantOfShape, Range, Pad,
// DepthToSpace, SpaceToDepth, Trilu, EyeLike, Dropout (inference), NonZero, Compress, OneHot,
// ReverseSequence, Unique. Reshapes share the input's bytes; the rest copy.
#include <algorithm>
#include <map>
#include <numeric>

#include "families.h"

namespace amanda::interp::kernels {

Tensor strided_copy(const Tensor& x, const Shape& out, const std::vector<int64_t>& st, int64_t offset) {
  Tensor y = Tensor::uninit(x.dtype(), out);
  std::array<std::vector<int64_t>, 1> s{st};
  if (x.dtype() == DType::String) {
    broadcast_loop<1>(out, s, [&](int64_t o, const std::array<int64_t, 1>& i) { y.strings()[o] = x.strings()[offset + i[0]]; });
    return y;
  }
  dispatch_bytes(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>() + offset;
    T* dst = y.mutable_data<T>();
    broadcast_loop<1>(out, s, [&](int64_t o, const std::array<int64_t, 1>& i) { dst[o] = src[i[0]]; });
  });
  return y;
}

Tensor take_flat(const Tensor& x, const Shape& out, const std::vector<int64_t>& src) {
  Tensor y = Tensor::uninit(x.dtype(), out);
  if (x.dtype() == DType::String) {
    for (size_t i = 0; i < src.size(); ++i) y.strings()[i] = x.strings()[src[i]];
    return y;
  }
  dispatch_bytes(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < src.size(); ++i) y.mutable_data<T>()[i] = x.data<T>()[src[i]];
  });
  return y;
}

Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  auto ist = strides_of(x.shape());
  Shape out(perm.size());
  std::vector<int64_t> st(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out[i] = x.shape()[perm[i]];
    st[i] = ist[perm[i]];
  }
  return strided_copy(x, out, st);
}

Tensor concat(const KernelContext& c, const std::vector<const Tensor*>& xs, int64_t axis0) {
  const Tensor& first = *xs[0];
  int64_t axis = norm_axis(c, axis0, first.rank());
  Shape out = first.shape();
  out[axis] = 0;
  for (const Tensor* t : xs) {
    if (t->rank() != first.rank() || t->dtype() != first.dtype()) c.fail("inputs differ in rank or element type");
    for (int64_t d = 0; d < first.rank(); ++d)
      if (d != axis && t->dim(d) != first.dim(d))
        c.fail("input shapes " + shape_str(first.shape()) + " and " + shape_str(t->shape()) + " differ off the axis");
    out[axis] += t->dim(axis);
  }
  Tensor y = Tensor::uninit(first.dtype(), out);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[d];
  for (int64_t d = axis + 1; d < first.rank(); ++d) inner *= out[d];
  int64_t orow = out[axis] * inner, off = 0;
  for (const Tensor* t : xs) {
    int64_t row = t->dim(axis) * inner;
    if (first.dtype() == DType::String) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < row; ++i) y.strings()[o * orow + off + i] = t->strings()[o * row + i];
    } else {
      size_t es = ir::dtype_size(first.dtype());
      for (int64_t o = 0; o < outer; ++o)
        if (row) std::memcpy(y.mutable_raw() + (o * orow + off) * es, t->raw() + o * row * es, row * es);
    }
    off += row;
  }
  return y;
}

namespace {

void k_identity(KernelContext& c) { c.set_output(0, c.value(0)); }

void k_shape(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t r = x.rank();
  int64_t start = c.attr_int("start", 0), end = c.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  int64_t n = std::max<int64_t>(0, end - start);
  Tensor y = Tensor::uninit(DType::Int64, {n});
  for (int64_t i = 0; i < n; ++i) y.mutable_data<int64_t>()[i] = x.dim(start + i);
  c.set_output(0, y);
}

void k_size(KernelContext& c) { c.set_output(0, Tensor::scalar_i64(c.input(0).numel())); }

void k_reshape(KernelContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> spec = c.opset() < 5 ? c.attr_ints("shape").value_or(std::vector<int64_t>{}) : c.input(1).to_i64_vector();
  bool allowzero = c.attr_int("allowzero", 0);
  Shape out(spec.size());
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= x.rank()) c.fail("shape has a 0 past the input's rank");
      d = x.dim(static_cast<int64_t>(i));
    }
    if (d == -1) {
      if (infer >= 0) c.fail("shape has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (d < 0) c.fail("shape has a negative dimension " + std::to_string(d));
    out[i] = d;
    known *= d;
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known) c.fail("cannot reshape " + shape_str(x.shape()) + " to " + shape_str(spec));
    out[infer] = x.numel() / known;
  }
  if (numel(out) != x.numel()) c.fail("cannot reshape " + shape_str(x.shape()) + " to " + shape_str(out));
  c.set_output(0, x.reshaped(out));
}

void k_flatten(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis > x.rank()) c.fail("axis out of range");
  int64_t a = 1;
  for (int64_t d = 0; d < axis; ++d) a *= x.dim(d);
  c.set_output(0, x.reshaped({a, a ? x.numel() / a : 0}));
}

std::vector<int64_t> axes_of(KernelContext& c, size_t input_index, int since_input) {
  if (c.opset() >= since_input) return c.has_input(input_index) ? c.input(input_index).to_i64_vector() : std::vector<int64_t>{};
  return c.attr_ints("axes").value_or(std::vector<int64_t>{});
}

void k_squeeze(KernelContext& c) {
  const Tensor& x = c.input(0);
  auto axes = axes_of(c, 1, 13);
  std::vector<bool> drop(x.rank(), false);
  if (axes.empty()) {
    for (int64_t d = 0; d < x.rank(); ++d) drop[d] = x.dim(d) == 1;
  } else {
    for (int64_t a : axes) {
      a = norm_axis(c, a, x.rank());
      if (x.dim(a) != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.dim(a)));
      drop[a] = true;
    }
  }
  Shape out;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!drop[d]) out.push_back(x.dim(d));
  c.set_output(0, x.reshaped(out));
}

void k_unsqueeze(KernelContext& c) {
  const Tensor& x = c.input(0);
  auto axes = axes_of(c, 1, 13);
  int64_t r = x.rank() + static_cast<int64_t>(axes.size());
  std::vector<bool> ins(r, false);
  for (int64_t a : axes) {
    a = norm_axis(c, a, r);
    if (ins[a]) c.fail("axis repeated");
    ins[a] = true;
  }
  Shape out;
  int64_t k = 0;
  for (int64_t d = 0; d < r; ++d) out.push_back(ins[d] ? 1 : x.dim(k++));
  c.set_output(0, x.reshaped(out));
}

void k_transpose(KernelContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> perm;
  if (auto p = c.attr_ints("perm")) perm = *p;
  else
    for (int64_t d = x.rank(); d-- > 0;) perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != x.rank()) c.fail("perm has the wrong length");
  std::vector<bool> seen(perm.size());
  for (auto& p : perm) {
    p = norm_axis(c, p, x.rank());
    if (seen[p]) c.fail("perm repeats an axis");
    seen[p] = true;
  }
  c.set_output(0, transpose(x, perm));
}

void k_concat(KernelContext& c) {
  std::vector<const Tensor*> xs;
  for (size_t i = 0; i < c.input_count(); ++i) xs.push_back(&c.input(i));
  c.set_output(0, concat(c, xs, c.attr_int("axis", 0)));
}

void k_split(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = norm_axis(c, c.attr_int("axis", 0), x.rank());
  std::vector<int64_t> split;
  if (c.opset() >= 13) {
    if (c.has_input(1)) split = c.input(1).to_i64_vector();
  } else if (auto s = c.attr_ints("split")) {
    split = *s;
  }
  size_t n = c.output_count();
  int64_t len = x.dim(axis);
  if (split.empty()) {
    int64_t num = c.attr_int("num_outputs", static_cast<int64_t>(n));
    int64_t each = (len + num - 1) / num;
    for (int64_t i = 0; i < num; ++i) split.push_back(std::min(each, len - i * each));
  }
  if (std::accumulate(split.begin(), split.end(), int64_t(0)) != len) c.fail("split sizes do not add up to the axis length");
  auto st = strides_of(x.shape());
  int64_t off = 0;
  for (size_t i = 0; i < split.size(); ++i) {
    Shape out = x.shape();
    out[axis] = split[i];
    c.set_output(i, strided_copy(x, out, st, off * st[axis]));
    off += split[i];
  }
}

void k_slice(KernelContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    // Before opset 10 starts and ends are required attributes (a file may leave them out, or
    // give them as inputs the way opset 10 does: refused, never read from an empty optional).
    auto sa = c.attr_ints("starts"), ea = c.attr_ints("ends");
    if (!sa || !ea) c.fail("Slice before opset 10 needs the attributes starts and ends");
    starts = *sa;
    ends = *ea;
    axes = c.attr_ints("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = c.input(1).to_i64_vector();
    ends = c.input(2).to_i64_vector();
    if (c.has_input(3)) axes = c.input(3).to_i64_vector();
    if (c.has_input(4)) steps = c.input(4).to_i64_vector();
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps differ in length");
  Shape out = x.shape();
  auto ist = strides_of(x.shape());
  std::vector<int64_t> st = ist;
  int64_t offset = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = norm_axis(c, axes[i], x.rank());
    int64_t dim = x.dim(a), step = steps[i];
    if (step == 0) c.fail("step is 0");
    // A step longer than the axis selects at most one element, as a step of the axis length does:
    // clamping it keeps the count and the stride below from overflowing (a hostile step of 2^62
    // made a wrapped stride that strided_copy followed out of the tensor).
    int64_t span = std::max<int64_t>(dim, 1);
    step = std::clamp<int64_t>(step, -span, span);
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      out[a] = e > s ? 1 + (e - s - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      out[a] = s > e ? 1 + (s - e - 1) / (-step) : 0;
    }
    if (out[a] > 0) offset += s * ist[a];
    st[a] = ist[a] * step;
  }
  c.set_output(0, strided_copy(x, out, st, numel(out) ? offset : 0));
}

void k_expand(KernelContext& c) {
  const Tensor& x = c.input(0);
  Shape want = c.input(1).to_i64_vector();
  Shape out = broadcast_shapes(c, {x.shape(), want});
  c.set_output(0, strided_copy(x, out, broadcast_strides(x.shape(), out)));
}

void k_tile(KernelContext& c) {
  const Tensor& x = c.input(0);
  auto reps = c.input(1).to_i64_vector();
  if (static_cast<int64_t>(reps.size()) != x.rank()) c.fail("repeats must have one entry per axis");
  // Tile = expand a view [r0, d0, r1, d1, ...] with stride 0 on the repeat axes, then reshape.
  Shape view, out;
  std::vector<int64_t> st;
  auto ist = strides_of(x.shape());
  for (int64_t d = 0; d < x.rank(); ++d) {
    view.push_back(reps[d]);
    st.push_back(0);
    view.push_back(x.dim(d));
    st.push_back(ist[d]);
    out.push_back(reps[d] * x.dim(d));
  }
  c.set_output(0, strided_copy(x, view, st).reshaped(out));
}

void k_constant(KernelContext& c) {
  if (auto t = c.attr_tensor_ptr("value")) {
    c.set_output(0, Tensor::borrow(t));
    return;
  }
  if (const ir::Value* v = c.attr("value_float")) {
    c.set_output(0, Tensor::scalar_f32(static_cast<float>(v->as_float())));
    return;
  }
  if (const ir::Value* v = c.attr("value_int")) {
    c.set_output(0, Tensor::scalar_i64(v->as_int()));
    return;
  }
  if (auto v = c.attr_floats("value_floats")) {
    Tensor t = Tensor::uninit(DType::Float32, {static_cast<int64_t>(v->size())});
    std::copy(v->begin(), v->end(), t.mutable_data<float>());
    c.set_output(0, t);
    return;
  }
  if (auto v = c.attr_ints("value_ints")) {
    Tensor t = Tensor::uninit(DType::Int64, {static_cast<int64_t>(v->size())});
    std::copy(v->begin(), v->end(), t.mutable_data<int64_t>());
    c.set_output(0, t);
    return;
  }
  if (const ir::Value* v = c.attr("value_string")) {
    Tensor t = Tensor::uninit(DType::String, {});
    t.strings()[0] = v->as_string();
    c.set_output(0, t);
    return;
  }
  if (auto v = c.attr_strings("value_strings")) {
    Tensor t = Tensor::uninit(DType::String, {static_cast<int64_t>(v->size())});
    t.strings() = *v;
    c.set_output(0, t);
    return;
  }
  c.fail("no value attribute (sparse_value is not supported)");
}

void k_constant_of_shape(KernelContext& c) {
  Shape s = c.input(0).to_i64_vector();
  Tensor y;
  if (auto v = c.attr_tensor_ptr("value")) {
    Tensor v1 = Tensor::borrow(v);
    y = Tensor::uninit(v1.dtype(), s);
    size_t es = ir::dtype_size(v1.dtype());
    for (int64_t i = 0; i < y.numel(); ++i) std::memcpy(y.mutable_raw() + i * es, v1.raw(), es);
  } else {
    y = Tensor(DType::Float32, s);
  }
  c.set_output(0, y);
}

void k_range(KernelContext& c) {
  const Tensor& st = c.input(0);
  double s = st.get_f64(0), l = c.input(1).get_f64(0), d = c.input(2).get_f64(0);
  if (d == 0) c.fail("delta is 0");
  // In double, then range-checked: a count past int64 (start INT64_MIN, limit INT64_MAX) was
  // converted to INT64_MIN (undefined) and gave an empty tensor.
  double count = std::ceil((l - s) / d);
  if (std::isnan(count)) c.fail("the element count is not a number");
  if (count >= 9.2e18) c.fail("the element count " + std::to_string(count) + " is past int64");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
  Tensor y = Tensor::uninit(st.dtype(), {n});
  dispatch(st.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T v = st.data<T>()[0], dt = c.input(2).data<T>()[0];
      // The next value only while there is one: stepping past the last element can overflow
      // int64 (run_fuzz: a last element near INT64_MAX - delta), and the range never needs it.
      for (int64_t i = 0; i < n; ++i) {
        y.mutable_data<T>()[i] = v;
        if (i + 1 < n) v = static_cast<T>(v + dt);
      }
    }
  });
  c.set_output(0, y);
}

void k_pad(KernelContext& c) {
  const Tensor& x = c.input(0);
  std::string mode = c.attr_string("mode", "constant");
  std::vector<int64_t> pads;
  double cval = 0;
  if (c.opset() < 11) {
    pads = c.attr_ints(c.opset() < 2 ? "paddings" : "pads").value_or(std::vector<int64_t>{});
    cval = c.attr_float("value", 0.0f);
  } else {
    pads = c.input(1).to_i64_vector();
    if (c.has_input(2) && c.input(2).numel() > 0) cval = c.input(2).get_f64(0);
  }
  int64_t r = x.rank();
  std::vector<int64_t> axes;
  if (c.has_input(3)) {
    for (int64_t a : c.input(3).to_i64_vector()) axes.push_back(norm_axis(c, a, r));
  } else {
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size()) c.fail("pads has the wrong length");
  std::vector<int64_t> before(r, 0), after(r, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    before[axes[i]] = pads[i];
    after[axes[i]] = pads[i + axes.size()];
  }
  Shape out(r);
  for (int64_t d = 0; d < r; ++d) {
    out[d] = x.dim(d) + before[d] + after[d];
    if (out[d] < 0) c.fail("pads make a negative dimension");
  }
  // Source index per output element; -1 = the constant.
  auto ist = strides_of(x.shape());
  auto ost = strides_of(out);
  int64_t n = numel(out);
  std::vector<int64_t> src(n);
  for (int64_t o = 0; o < n; ++o) {
    int64_t rem = o, idx = 0;
    bool constant = false;
    for (int64_t d = 0; d < r; ++d) {
      int64_t i = rem / ost[d] - before[d];
      rem %= ost[d];
      int64_t dim = x.dim(d);
      if (i < 0 || i >= dim) {
        if (mode == "constant") {
          constant = true;
          break;
        } else if (mode == "edge") {
          i = std::clamp<int64_t>(i, 0, dim - 1);
        } else if (mode == "reflect") {
          if (dim == 1) i = 0;
          else {
            int64_t period = 2 * (dim - 1);
            i = ((i % period) + period) % period;
            if (i >= dim) i = period - i;
          }
        } else if (mode == "wrap") {
          i = ((i % dim) + dim) % dim;
        } else {
          c.fail("unknown mode '" + mode + "'");
        }
      }
      idx += i * ist[d];
    }
    src[o] = constant ? -1 : idx;
  }
  Tensor y = Tensor::uninit(x.dtype(), out);
  Tensor xf = to_float32(x);
  Tensor yf = Tensor::uninit(xf.dtype(), out);
  dispatch(xf.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t o = 0; o < n; ++o) yf.mutable_data<T>()[o] = src[o] < 0 ? static_cast<T>(cval) : xf.data<T>()[src[o]];
  });
  c.set_output(0, from_float32(yf, x.dtype()));
}

void k_depth_to_space(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t b = c.attr_int("blocksize", 0);
  if (x.rank() != 4 || b <= 0) c.fail("needs a 4-D input and a positive blocksize");
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  bool crd = c.attr_string("mode", "DCR") == "CRD";
  Tensor t = crd ? x.reshaped({N, C / (b * b), b, b, H, W}) : x.reshaped({N, b, b, C / (b * b), H, W});
  Tensor y = crd ? transpose(t, {0, 1, 4, 2, 5, 3}) : transpose(t, {0, 3, 4, 1, 5, 2});
  c.set_output(0, y.reshaped({N, C / (b * b), H * b, W * b}));
}

void k_space_to_depth(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t b = c.attr_int("blocksize", 0);
  if (x.rank() != 4 || b <= 0) c.fail("needs a 4-D input and a positive blocksize");
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  Tensor t = transpose(x.reshaped({N, C, H / b, b, W / b, b}), {0, 3, 5, 1, 2, 4});
  c.set_output(0, t.reshaped({N, C * b * b, H / b, W / b}));
}

void k_trilu(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t k = c.has_input(1) ? c.input(1).get_i64(0) : 0;
  bool upper = c.attr_int("upper", 1);
  Tensor y = x.clone();
  int64_t R = x.dim(x.rank() - 2), C = x.dim(x.rank() - 1);
  size_t es = ir::dtype_size(x.dtype());
  for (int64_t m = 0; m < x.numel() / std::max<int64_t>(1, R * C); ++m)
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep) std::memset(y.mutable_raw() + ((m * R + i) * C + j) * es, 0, es);
      }
  c.set_output(0, y);
}

void k_eye_like(KernelContext& c) {
  const Tensor& x = c.input(0);
  if (x.rank() != 2) c.fail("EyeLike's input must be 2-D, not of shape " + shape_str(x.shape()));
  DType t = x.dtype();
  if (const ir::Value* d = c.attr("dtype"); d && d->is_int())
    if (auto dt = dtype_from_onnx(d->as_int())) t = *dt;
  int64_t k = c.attr_int("k", 0);
  Tensor y = Tensor(DType::Float64, x.shape());
  for (int64_t i = 0; i < x.dim(0); ++i)
    if (i + k >= 0 && i + k < x.dim(1)) y.mutable_data<double>()[i * x.dim(1) + i + k] = 1;
  c.set_output(0, cast_tensor(y, t));
}

void k_dropout(KernelContext& c) {
  // Inference: the identity (training_mode, when given and true, is refused: it needs randomness).
  if (c.has_input(2) && c.input(2).get_f64(0) != 0) {
    double ratio = c.has_input(1) ? c.input(1).get_f64(0) : 0.5;
    if (ratio != 0) c.fail("training_mode Dropout with a non-zero ratio is random; the interpreter runs inference");
  }
  const Tensor& x = c.input(0);
  c.set_output(0, x);
  if (c.output_count() > 1) {
    Tensor m = Tensor::uninit(DType::Bool, x.shape());
    std::memset(m.mutable_raw(), 1, m.nbytes());
    c.set_output(1, m);
  }
}

void k_nonzero(KernelContext& c) {
  Tensor x = to_float32(c.input(0));
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.get_f64(i) != 0) hits.push_back(i);
  int64_t r = x.rank(), n = static_cast<int64_t>(hits.size());
  Tensor y = Tensor::uninit(DType::Int64, {r, n});
  auto st = strides_of(x.shape());
  for (int64_t j = 0; j < n; ++j) {
    int64_t rem = hits[j];
    for (int64_t d = 0; d < r; ++d) {
      y.mutable_data<int64_t>()[d * n + j] = rem / st[d];
      rem %= st[d];
    }
  }
  c.set_output(0, y);
}

void k_compress(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& cond = c.input(1);
  const ir::Value* ax = c.attr("axis");
  std::vector<int64_t> src;
  if (!ax) {
    for (int64_t i = 0; i < std::min(cond.numel(), x.numel()); ++i)
      if (cond.data<bool>()[i]) src.push_back(i);
    c.set_output(0, take_flat(x, {static_cast<int64_t>(src.size())}, src));
    return;
  }
  int64_t axis = norm_axis(c, ax->as_int(), x.rank());
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min(cond.numel(), x.dim(axis)); ++i)
    if (cond.data<bool>()[i]) keep.push_back(i);
  Shape out = x.shape();
  out[axis] = static_cast<int64_t>(keep.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : keep)
      for (int64_t i = 0; i < inner; ++i) src.push_back((o * x.dim(axis) + k) * inner + i);
  c.set_output(0, take_flat(x, out, src));
}

void k_onehot(KernelContext& c) {
  const Tensor& idx = c.input(0);
  int64_t depth = static_cast<int64_t>(c.input(1).get_f64(0));
  const Tensor& vals = c.input(2);
  int64_t r = idx.rank() + 1;
  int64_t axis = norm_axis(c, c.attr_int("axis", -1), r);
  Shape out = idx.shape();
  out.insert(out.begin() + axis, depth);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= out[d];
  std::vector<int64_t> src(numel(out), 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t k = static_cast<int64_t>(idx.get_f64(o * inner + i));
      if (k < 0) k += depth;
      for (int64_t d = 0; d < depth; ++d) src[(o * depth + d) * inner + i] = d == k ? 1 : 0;
    }
  c.set_output(0, take_flat(vals, out, src));
}

void k_reverse_sequence(KernelContext& c) {
  const Tensor& x = c.input(0);
  auto lens = c.input(1).to_i64_vector();
  int64_t ba = c.attr_int("batch_axis", 1), ta = c.attr_int("time_axis", 0);
  auto st = strides_of(x.shape());
  std::vector<int64_t> src(x.numel());
  for (int64_t o = 0; o < x.numel(); ++o) {
    int64_t b = (o / st[ba]) % x.dim(ba), t = (o / st[ta]) % x.dim(ta);
    int64_t nt = t < lens[b] ? lens[b] - 1 - t : t;
    src[o] = o + (nt - t) * st[ta];
  }
  c.set_output(0, take_flat(x, x.shape(), src));
}

void k_unique(KernelContext& c) {
  Tensor x = to_float32(c.input(0));
  bool sorted = c.attr_int("sorted", 1);
  const ir::Value* ax = c.attr("axis");
  int64_t axis = ax ? norm_axis(c, ax->as_int(), x.rank()) : -1;
  Tensor flat = axis < 0 ? x.reshaped({x.numel()}) : x;
  if (axis < 0) axis = 0;
  int64_t n = flat.dim(axis), outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= flat.dim(d);
  for (int64_t d = axis + 1; d < flat.rank(); ++d) inner *= flat.dim(d);
  std::vector<std::vector<double>> slices(n);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) slices[k].push_back(flat.get_f64((o * n + k) * inner + i));
  std::vector<int64_t> first;                // index of the first occurrence of each unique slice
  std::map<std::vector<double>, int64_t> pos;  // slice -> unique id (in first-occurrence order)
  std::vector<int64_t> inverse(n), counts;
  for (int64_t k = 0; k < n; ++k) {
    auto [it, fresh] = pos.emplace(slices[k], static_cast<int64_t>(first.size()));
    if (fresh) {
      first.push_back(k);
      counts.push_back(0);
    }
    inverse[k] = it->second;
    ++counts[it->second];
  }
  std::vector<int64_t> order(first.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted) std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return slices[first[a]] < slices[first[b]]; });
  std::vector<int64_t> rank_of(order.size());
  for (size_t i = 0; i < order.size(); ++i) rank_of[order[i]] = static_cast<int64_t>(i);
  int64_t u = static_cast<int64_t>(order.size());
  Shape ys = flat.shape();
  ys[axis] = u;
  std::vector<int64_t> src;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < u; ++j)
      for (int64_t i = 0; i < inner; ++i) src.push_back((o * n + first[order[j]]) * inner + i);
  c.set_output(0, from_float32(take_flat(x.reshaped(flat.shape()), ys, src), c.input(0).dtype()));
  auto vec = [](const std::vector<int64_t>& v) {
    Tensor t = Tensor::uninit(DType::Int64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
    return t;
  };
  std::vector<int64_t> idx, cnt, inv(n);
  for (int64_t j = 0; j < u; ++j) {
    idx.push_back(first[order[j]]);
    cnt.push_back(counts[order[j]]);
  }
  for (int64_t k = 0; k < n; ++k) inv[k] = rank_of[inverse[k]];
  c.set_output(1, vec(idx));
  c.set_output(2, vec(inv));
  c.set_output(3, vec(cnt));
}

}  // namespace

void register_shape(KernelRegistry& r) {
  r.add("Identity", 1, k_identity);
  r.add("Shape", 1, k_shape);
  r.add("Size", 1, k_size);
  r.add("Reshape", 1, k_reshape);
  r.add("Flatten", 1, k_flatten);
  r.add("Squeeze", 1, k_squeeze);
  r.add("Unsqueeze", 1, k_unsqueeze);
  r.add("Transpose", 1, k_transpose);
  r.add("Concat", 1, k_concat);
  r.add("Split", 1, k_split);
  r.add("Slice", 1, k_slice);
  r.add("Expand", 8, k_expand);
  r.add("Tile", 6, k_tile);
  r.add("Constant", 1, k_constant);
  r.add("ConstantOfShape", 9, k_constant_of_shape);
  r.add("Range", 11, k_range);
  r.add("Pad", 1, k_pad);
  r.add("DepthToSpace", 1, k_depth_to_space);
  r.add("SpaceToDepth", 1, k_space_to_depth);
  r.add("Trilu", 14, k_trilu);
  r.add("EyeLike", 9, k_eye_like);
  r.add("Dropout", 1, k_dropout);
  r.add("NonZero", 9, k_nonzero);
  r.add("Compress", 9, k_compress);
  r.add("OneHot", 9, k_onehot);
  r.add("ReverseSequence", 10, k_reverse_sequence);
  r.add("Unique", 11, k_unique);
}

}  // namespace amanda::interp::kernels
