// Helpers shared by the kernel families, and the registration function of each family. Every
// family file registers its ops in one function; register_all calls them all.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <stdexcept>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "amanda/interp/kernel.h"
#include "amanda/interp/tensor.h"

namespace amanda::interp::kernels {

void register_all(KernelRegistry& r);
void register_elementwise(KernelRegistry& r);
void register_reduce(KernelRegistry& r);
void register_shape(KernelRegistry& r);
void register_gather(KernelRegistry& r);
void register_conv(KernelRegistry& r);
void register_pool(KernelRegistry& r);
void register_norm(KernelRegistry& r);
void register_matmul(KernelRegistry& r);
void register_cast(KernelRegistry& r);
void register_control(KernelRegistry& r);
void register_sequence(KernelRegistry& r);
void register_quant(KernelRegistry& r);
void register_rnn(KernelRegistry& r);
void register_resize(KernelRegistry& r);
void register_loss(KernelRegistry& r);
void register_misc(KernelRegistry& r);
void register_signal(KernelRegistry& r);
void register_text(KernelRegistry& r);
void register_training(KernelRegistry& r);
void register_core(KernelRegistry& r);

// ---- element types
// Calls f(T{}) with the C++ type of a numeric element type (bool as bool; float16 and bfloat16
// are not dispatched: kernels compute them in float32, see to_float32/from_float32).
template <class F>
void dispatch(DType t, F&& f, const char* what = "op") {
  switch (t) {
    case DType::Float32: f(float{}); break;
    case DType::Float64: f(double{}); break;
    case DType::Int8: f(int8_t{}); break;
    case DType::Int16: f(int16_t{}); break;
    case DType::Int32: f(int32_t{}); break;
    case DType::Int64: f(int64_t{}); break;
    case DType::UInt8: f(uint8_t{}); break;
    case DType::UInt16: f(uint16_t{}); break;
    case DType::UInt32: f(uint32_t{}); break;
    case DType::UInt64: f(uint64_t{}); break;
    case DType::Bool: f(bool{}); break;
    default: throw std::runtime_error(std::string(what) + ": element type " + std::string(ir::dtype_name(t)) + " is not supported");
  }
}
// Copies of any element type, as raw bytes (strings too): for data movement ops.
template <class F>
void dispatch_bytes(DType t, F&& f) {
  switch (ir::dtype_size(t)) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    case 16: f(std::pair<uint64_t, uint64_t>{}); break;
    default: throw std::runtime_error("element type " + std::string(ir::dtype_name(t)) + " is not supported");
  }
}
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
inline bool is_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || is_half(t);
}
// Converts any numeric tensor to another element type with ONNX's Cast rules (cast.cpp).
Tensor cast_tensor(const Tensor& x, DType to, bool saturate = true);
// ONNX TensorProto.DataType code -> element type.
std::optional<DType> dtype_from_onnx(int64_t code);
// float16/bfloat16 -> float32 and back (other types pass through unchanged).
inline Tensor to_float32(const Tensor& x) { return is_half(x.dtype()) ? cast_tensor(x, DType::Float32) : x; }
inline Tensor from_float32(const Tensor& x, DType t) { return is_half(t) ? cast_tensor(x, t) : x; }

// ---- shapes
// Normalises a possibly negative axis against rank; throws with the op's name when out of range.
int64_t norm_axis(const KernelContext& c, int64_t axis, int64_t rank);
std::vector<int64_t> strides_of(const Shape& s);  // row-major element strides
// ONNX multidirectional broadcasting of shapes (numpy's rule); throws naming the shapes.
Shape broadcast_shapes(const KernelContext& c, const std::vector<Shape>& shapes);
// Element strides of `in` as seen from `out` (0 on broadcast dimensions); in is right-aligned.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Calls f(out_index, in_index...) for every element of `out`, with the input indices following
// the broadcast strides. Iterates the last dimension in an inner loop.
template <size_t N, class F>
void broadcast_loop(const Shape& out, const std::array<std::vector<int64_t>, N>& st, F&& f) {
  int64_t total = numel(out);
  if (total == 0) return;
  size_t r = out.size();
  if (r == 0) {
    std::array<int64_t, N> idx{};
    f(0, idx);
    return;
  }
  int64_t inner = out[r - 1];
  std::array<int64_t, N> inner_st;
  for (size_t k = 0; k < N; ++k) inner_st[k] = st[k][r - 1];
  std::vector<int64_t> ctr(r, 0);
  std::array<int64_t, N> base{};
  for (int64_t o = 0; o < total; o += inner) {
    std::array<int64_t, N> idx = base;
    for (int64_t i = 0; i < inner; ++i) {
      f(o + i, idx);
      for (size_t k = 0; k < N; ++k) idx[k] += inner_st[k];
    }
    // advance the outer counter
    for (size_t d = r - 1; d-- > 0;) {
      ++ctr[d];
      for (size_t k = 0; k < N; ++k) base[k] += st[k][d];
      if (ctr[d] < out[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= st[k][d] * out[d];
      ctr[d] = 0;
    }
  }
}

// Copies a strided view (shape `shape`, element strides `st`, starting at `src`) into dense `dst`.
template <class T>
void gather_strided(const T* src, const Shape& shape, const std::vector<int64_t>& st, T* dst) {
  std::array<std::vector<int64_t>, 1> s{st};
  broadcast_loop<1>(shape, s, [&](int64_t o, const std::array<int64_t, 1>& i) { dst[o] = src[i[0]]; });
}

// Number of threads the heavy kernels may use (the BLAS's setting).
int thread_count();

// Applies a fused activation (KernelContext::fused_activation) in place, as the Relu, Clip or
// LeakyRelu kernel would.
void apply_activation(const KernelContext::Activation& a, float* y, int64_t n);

// dnnl_lazy.cpp: whether oneDNN could be opened (the first call opens it; false: use OpenBLAS).
bool dnnl_available();

// conv_dnnl.cpp: a + b of two float32 tensors in the same oneDNN layout (false otherwise); y is
// native when native_out, else row-major.
bool add_native_f32(const Tensor& a, const Tensor& b, bool native_out, Tensor& y);

// Applies AMANDA_THREADS to OpenMP once (oneDNN's convolutions and sgemm, parallel_for below):
// libgomp reads OMP_NUM_THREADS when it is loaded, before main, so the variable must be set
// through the API.
void init_threads();

// Calls f(begin, end) on disjoint ranges covering [0, n), on the OpenMP threads when n is at
// least 2 * grain, else once on the caller's thread. f must not throw.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  if (n < 2 * grain) {
    f(int64_t{0}, n);
    return;
  }
  init_threads();
#pragma omp parallel
  {
    int64_t t = omp_get_thread_num(), T = omp_get_num_threads();
    int64_t per = (n + T - 1) / T, b = std::min(n, t * per), e = std::min(n, b + per);
    if (b < e) f(b, e);
  }
}

}  // namespace amanda::interp::kernels

namespace amanda::interp::kernels {
// A dense copy of the strided view of x (shape `out`, element strides `st`, first element at
// `offset`): Transpose, Slice, Expand are this. Any element type, strings too.
Tensor strided_copy(const Tensor& x, const Shape& out, const std::vector<int64_t>& st, int64_t offset = 0);
// out[i] = x[src[i]] for a flat index list (any element type).
Tensor take_flat(const Tensor& x, const Shape& out, const std::vector<int64_t>& src);
Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm);
// Concatenation along an axis.
Tensor concat(const KernelContext& c, const std::vector<const Tensor*>& xs, int64_t axis);
}  // namespace amanda::interp::kernels

namespace amanda::interp::kernels {
// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, row-major: OpenBLAS's sgemm/dgemm
// (multi-threaded). lda/ldb/ldc are row strides.
void gemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
              int64_t ldb, float beta, float* C, int64_t ldc);
void gemm_f64(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
              const double* B, int64_t ldb, double beta, double* C, int64_t ldc);
// numpy matmul of two tensors of the same element type (1-D promotion, batch broadcasting).
Tensor matmul(const KernelContext& c, const Tensor& a, const Tensor& b);
}  // namespace amanda::interp::kernels

namespace amanda::interp::kernels {
// The spatial geometry of a Conv/Pool op: kernel, strides, dilations, pads (begin, end) and output
// sizes, from the attributes and auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID).
struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;
};
Window window_geometry(const KernelContext& c, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode);
Tensor quant_requantize(const Tensor& real, float scale, const Tensor& zp);
}  // namespace amanda::interp::kernels

namespace amanda::interp::kernels {
// Stacks tensors of one shape along a new axis (Loop/Scan outputs, ConcatFromSequence new_axis).
Tensor stack_tensors(const KernelContext& c, const std::vector<Tensor>& parts, int64_t axis);
}  // namespace amanda::interp::kernels
