#include "families.h"

#include <cstdlib>

namespace amanda::interp::kernels {

void register_all(KernelRegistry& r) {
  register_elementwise(r);
  register_reduce(r);
  register_shape(r);
  register_gather(r);
  register_conv(r);
  register_pool(r);
  register_norm(r);
  register_matmul(r);
  register_cast(r);
  register_control(r);
  register_sequence(r);
  register_quant(r);
  register_rnn(r);
  register_resize(r);
  register_loss(r);
  register_misc(r);
  register_signal(r);
  register_text(r);
  register_training(r);
  register_core(r);  // last: amanda/core's kernels reuse the ONNX ones registered above
}

int64_t norm_axis(const KernelContext& c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

Shape broadcast_shapes(const KernelContext& c, const std::vector<Shape>& shapes) {
  size_t r = 0;
  for (const auto& s : shapes) r = std::max(r, s.size());
  Shape out(r, 1);
  for (const auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[r - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string msg = "shapes cannot be broadcast together:";
      for (const auto& t : shapes) msg += " " + shape_str(t);
      c.fail(msg);
    }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  auto ist = strides_of(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : ist[i];
  return st;
}

int thread_count() {
  static int n = [] {
    if (const char* e = std::getenv("AMANDA_THREADS")) return std::max(1, std::atoi(e));
    return 0;  // 0: the library's default
  }();
  return n;
}

void apply_activation(const KernelContext::Activation& a, float* y, int64_t n) {
  using A = KernelContext::Activation;
  if (a.kind == A::None) return;
  parallel_for(n, 1 << 15, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float v = y[i];
      switch (a.kind) {
        case A::Relu: y[i] = v > 0 ? v : 0.0f; break;
        case A::LeakyRelu: y[i] = v >= 0 ? v : a.a * v; break;
        case A::Clip: y[i] = v < a.a ? a.a : (v > a.b ? a.b : v); break;
        case A::None: break;
      }
    }
  });
}

void init_threads() {
  static const bool done = [] {
    if (int n = thread_count()) omp_set_num_threads(n);
    return true;
  }();
  (void)done;
}

}  // namespace amanda::interp::kernels
