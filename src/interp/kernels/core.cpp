// Kernels of the typed core namespace amanda/core (include/amanda/core/builder.h), registered as
// "amanda/core::TYPE". Where a core op means what an ONNX op means, the core kernel is the ONNX
// kernel itself (looked up in the registry at opset 17, which is what the executor tells kernels
// of core graphs), behind a strict check: core never broadcasts or converts implicitly, so an
// elementwise op whose operands differ in shape or element type is an error naming the op, not a
// numpy broadcast. Ops whose parameters core keeps as attributes where ONNX 17 reads inputs
// (Broadcast, Reshape, Convert, Clamp, Slice) have their own small kernels here; the reductions
// reuse reduce.cpp's code with axes from the attribute (registered there).
#include <array>
#include <utility>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// Every input of one element type and one shape (Add, Select's values, ...).
void check_same(const KernelContext& c, size_t first = 0) {
  const Tensor& a = c.input(first);
  for (size_t i = first + 1; i < c.input_count(); ++i) {
    const Tensor& b = c.input(i);
    if (b.dtype() != a.dtype())
      c.fail("element types differ: " + std::string(ir::dtype_name(a.dtype())) + " and " + std::string(ir::dtype_name(b.dtype())) +
             " (amanda/core converts only with Convert)");
    if (b.shape() != a.shape())
      c.fail("shapes differ: " + shape_str(a.shape()) + " and " + shape_str(b.shape()) + " (amanda/core broadcasts only with Broadcast)");
  }
}

enum class Check { None, Same, Select, Dot, BatchDot };

void check(const KernelContext& c, Check k) {
  switch (k) {
    case Check::None: return;
    case Check::Same: check_same(c); return;
    case Check::Select:
      check_same(c, 1);
      if (c.input(0).shape() != c.input(1).shape())
        c.fail("the condition's shape " + shape_str(c.input(0).shape()) + " differs from the values' " + shape_str(c.input(1).shape()));
      return;
    case Check::Dot:
      if (c.input(0).rank() != 2 || c.input(1).rank() != 2 || c.input(0).dtype() != c.input(1).dtype())
        c.fail("Dot takes two matrices of one element type, not " + shape_str(c.input(0).shape()) + " and " + shape_str(c.input(1).shape()));
      return;
    case Check::BatchDot: {
      const Shape &a = c.input(0).shape(), &b = c.input(1).shape();
      if (a.size() < 3 || a.size() != b.size() || !std::equal(a.begin(), a.end() - 2, b.begin()) || c.input(0).dtype() != c.input(1).dtype())
        c.fail("BatchDot takes stacks of matrices with equal batch dimensions, not " + shape_str(a) + " and " + shape_str(b));
      return;
    }
  }
}

// Core op -> the ONNX kernel it reuses, and the check that comes first.
struct Reuse {
  const char* core;
  const char* onnx;
  Check check;
};
constexpr Reuse kReuse[] = {
    {"Add", "Add", Check::Same},          {"Subtract", "Sub", Check::Same},  {"Multiply", "Mul", Check::Same},
    {"Divide", "Div", Check::Same},       {"Maximum", "Max", Check::Same},   {"Minimum", "Min", Check::Same},
    {"Power", "Pow", Check::Same},        {"Equal", "Equal", Check::Same},   {"Less", "Less", Check::Same},
    {"Greater", "Greater", Check::Same},  {"And", "And", Check::Same},       {"Or", "Or", Check::Same},
    {"Select", "Where", Check::Select},   {"Not", "Not", Check::None},       {"Relu", "Relu", Check::None},
    {"Negative", "Neg", Check::None},     {"Abs", "Abs", Check::None},       {"Sign", "Sign", Check::None},
    {"Exp", "Exp", Check::None},          {"Log", "Log", Check::None},       {"Sqrt", "Sqrt", Check::None},
    {"Erf", "Erf", Check::None},          {"Tanh", "Tanh", Check::None},     {"Sigmoid", "Sigmoid", Check::None},
    {"Sin", "Sin", Check::None},          {"Cos", "Cos", Check::None},       {"Floor", "Floor", Check::None},
    {"Ceiling", "Ceil", Check::None},     {"Transpose", "Transpose", Check::None}, {"Concat", "Concat", Check::None},
    {"Gather", "Gather", Check::None},    {"Constant", "Constant", Check::None}, {"Softmax", "Softmax", Check::None},
    {"LogSoftmax", "LogSoftmax", Check::None}, {"Dot", "MatMul", Check::Dot}, {"BatchDot", "MatMul", Check::BatchDot},
    {"Convolution", "Conv", Check::None}, {"MaxPool", "MaxPool", Check::None}, {"AvgPool", "AveragePool", Check::None},
    {"BatchNormInference", "BatchNormalization", Check::None}, {"ArgMax", "ArgMax", Check::None},
    {"ArgMin", "ArgMin", Check::None},
};
constexpr size_t kReuseCount = sizeof(kReuse) / sizeof(kReuse[0]);
std::array<KernelFn, kReuseCount> g_onnx{};

template <size_t I>
void reuse(KernelContext& c) {
  check(c, kReuse[I].check);
  g_onnx[I](c);
}

template <size_t... I>
void add_reused(KernelRegistry& r, std::index_sequence<I...>) {
  ((g_onnx[I] = r.find(kReuse[I].onnx, 17),
    g_onnx[I] ? r.add(std::string("amanda/core::") + kReuse[I].core, 1, &reuse<I>) : throw std::logic_error(kReuse[I].onnx)),
   ...);
}

std::vector<int64_t> static_shape(const KernelContext& c, std::string_view name) {
  const ir::Value* v = c.attr(name);
  std::vector<int64_t> s;
  if (!v || !v->is_list()) c.fail(std::string(name) + " is missing");
  for (const auto& d : v->as_list()) {
    if (!d.is_int() || d.as_int() < 0) c.fail(std::string(name) + " has a dimension that is not a known size");
    s.push_back(d.as_int());
  }
  return s;
}

void k_broadcast(KernelContext& c) {
  const Tensor& x = c.input(0);
  Shape out = static_shape(c, "shape");
  std::vector<int64_t> axes = c.attr_ints("axes").value_or(std::vector<int64_t>{});
  std::vector<int64_t> xs = strides_of(x.shape()), st(out.size(), 0);
  size_t k = 0;
  Shape kept;
  for (size_t d = 0; d < out.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end()) continue;
    kept.push_back(out[d]);
    if (k < xs.size()) st[d] = xs[k];
    ++k;
  }
  if (kept != x.shape())
    c.fail("x is " + shape_str(x.shape()) + " but the shape " + shape_str(out) + " without the axes is " + shape_str(kept));
  c.set_output(0, strided_copy(x, out, st));
}

void k_reshape(KernelContext& c) {
  const Tensor& x = c.input(0);
  Shape s = static_shape(c, "shape");
  if (numel(s) != x.numel()) c.fail("x is " + shape_str(x.shape()) + " but the shape " + shape_str(s) + " has another element count");
  c.set_output(0, x.reshaped(s));
}

void k_convert(KernelContext& c) {
  auto to = ir::dtype_from_name(c.attr_string("to"));
  if (!to) c.fail("to names no element type");
  c.set_output(0, cast_tensor(c.input(0), *to));
}

void k_clamp(KernelContext& c) {
  const Tensor& in = c.input(0);
  Tensor x = to_float32(in);
  const ir::Value* lo = c.attr("min");
  const ir::Value* hi = c.attr("max");
  auto num = [](const ir::Value* v) { return v->is_int() ? static_cast<double>(v->as_int()) : v->as_float(); };
  if (!lo || !hi) c.fail("min and max are required");
  double a = num(lo), b = num(hi);
  Tensor y(x.dtype(), x.shape());
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool>) {
      c.fail("Clamp takes numbers");
    } else {
      const T* p = x.data<T>();
      T* q = y.mutable_data<T>();
      T l = static_cast<T>(a), h = static_cast<T>(b);
      for (int64_t i = 0; i < x.numel(); ++i) q[i] = p[i] < l ? l : (p[i] > h ? h : p[i]);
    }
  });
  c.set_output(0, from_float32(y, in.dtype()));
}

// ONNX's Slice with the bounds as attributes (the arithmetic of shape.cpp's Slice, on a strided view).
void k_slice(KernelContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> starts = c.attr_ints("starts").value_or(std::vector<int64_t>{});
  std::vector<int64_t> ends = c.attr_ints("ends").value_or(std::vector<int64_t>{});
  std::vector<int64_t> axes = c.attr_ints("axes").value_or(std::vector<int64_t>{});
  std::vector<int64_t> steps = c.attr_ints("steps").value_or(std::vector<int64_t>(starts.size(), 1));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps differ in length");
  Shape out = x.shape();
  std::vector<int64_t> xs = strides_of(x.shape()), st = xs;
  int64_t offset = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = norm_axis(c, axes[k], x.rank()), n = x.dim(a), s = starts[k], e = ends[k], step = steps[k];
    if (step == 0) c.fail("a step is 0");
    if (s < 0) s += n;
    if (e < 0) e += n;
    int64_t len;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      len = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      len = s > e ? (s - e - step - 1) / -step : 0;
    }
    out[a] = len;
    st[a] = xs[a] * step;
    if (len) offset += s * xs[a];
  }
  c.set_output(0, strided_copy(x, out, st, offset));
}

// Constant padding: the output filled with `value`, x copied into its interior.
void k_pad(KernelContext& c) {
  const Tensor& in = c.input(0);
  Tensor x = to_float32(in);
  std::vector<int64_t> pads = c.attr_ints("pads").value_or(std::vector<int64_t>{});
  size_t r = static_cast<size_t>(x.rank());
  if (pads.size() != 2 * r) c.fail("pads needs two values per dimension");
  Shape out = x.shape();
  int64_t offset = 0;
  for (size_t d = 0; d < r; ++d) {
    if (pads[d] < 0 || pads[r + d] < 0) c.fail("pads must be non-negative");
    out[d] += pads[d] + pads[r + d];
  }
  std::vector<int64_t> os = strides_of(out);
  for (size_t d = 0; d < r; ++d) offset += pads[d] * os[d];
  double value = c.attr_float("value", 0.0f);
  Tensor y(x.dtype(), out);
  dispatch(x.dtype(), [&](auto t) {
    using T = decltype(t);
    T* q = y.mutable_data<T>();
    std::fill(q, q + y.numel(), static_cast<T>(value));
    const T* p = x.data<T>();
    std::array<std::vector<int64_t>, 1> st{os};
    // x's elements in order; st maps x's index to the output's offset
    broadcast_loop<1>(x.shape(), st, [&](int64_t i, const std::array<int64_t, 1>& o) { q[offset + o[0]] = p[i]; });
  });
  c.set_output(0, from_float32(y, in.dtype()));
}

}  // namespace

void register_core(KernelRegistry& r) {
  r.add("amanda/core::Pad", 1, k_pad);
  add_reused(r, std::make_index_sequence<kReuseCount>{});
  r.add("amanda/core::Broadcast", 1, k_broadcast);
  r.add("amanda/core::Reshape", 1, k_reshape);
  r.add("amanda/core::Convert", 1, k_convert);
  r.add("amanda/core::Clamp", 1, k_clamp);
  r.add("amanda/core::Slice", 1, k_slice);
}

}  // namespace amanda::interp::kernels
