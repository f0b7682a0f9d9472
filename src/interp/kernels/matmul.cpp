// Matrix products: MatMul (numpy semantics), Gemm, MatMulInteger, QLinearMatMul, Einsum, Det.
// float32/float64 products go to OpenBLAS (sgemm/dgemm, multi-threaded: see docs/interpreter.md
// for why OpenBLAS); other element types use a plain triple loop.
#include <cblas.h>
#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "amanda/support/diagnostics.h"
#include "families.h"

namespace amanda::interp::kernels {

namespace {
// OpenBLAS is loaded the first time a product needs it, not when the program starts: its pthread
// build starts a worker per core as it loads, and the workers spin for a while waiting for work,
// which doubled the CPU time of every `amanda` command that never multiplies a matrix (convert,
// fmt, inspect: 56 -> 28 ms for squeezenet1_0's conversion). Only the interpreter pays for it.
struct Blas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
};

const Blas& blas() {
  static const Blas b = [] {
    void* h = dlopen(AMANDA_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) throw amanda::Error(std::string("the matrix products need OpenBLAS, which cannot be loaded: ") + dlerror());
    Blas out;
    out.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(h, "cblas_sgemm"));
    out.dgemm = reinterpret_cast<decltype(&cblas_dgemm)>(dlsym(h, "cblas_dgemm"));
    auto set_threads = reinterpret_cast<decltype(&openblas_set_num_threads)>(dlsym(h, "openblas_set_num_threads"));
    if (!out.sgemm || !out.dgemm) throw amanda::Error(std::string(AMANDA_OPENBLAS_SONAME) + " has no cblas_sgemm/cblas_dgemm");
    if (int n = thread_count(); n && set_threads) set_threads(n);
    return out;
  }();
  return b;
}
}  // namespace

void gemm_f32(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
              int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
    return;
  }
  // oneDNN's sgemm (JIT-compiled for the machine): 2.5-5x Debian's OpenBLAS sgemm on vit_b_16's
  // shapes (bench/interp/gemm_bench.cpp, docs/interpreter.md). AMANDA_NO_DNNL=1 keeps OpenBLAS.
  static const bool no_dnnl = std::getenv("AMANDA_NO_DNNL") != nullptr;
  if (!no_dnnl && dnnl_available()) {
    init_threads();
    if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) == dnnl_success) return;
  }
  blas().sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(M),
              static_cast<int>(N), static_cast<int>(K), alpha, A, static_cast<int>(lda), B, static_cast<int>(ldb), beta, C,
              static_cast<int>(ldc));
}

void gemm_f64(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
              const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
    return;
  }
  blas().dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(M),
              static_cast<int>(N), static_cast<int>(K), alpha, A, static_cast<int>(lda), B, static_cast<int>(ldb), beta, C,
              static_cast<int>(ldc));
}

Tensor matmul(const KernelContext& c, const Tensor& a0, const Tensor& b0) {
  if (a0.dtype() != b0.dtype()) c.fail("inputs have different element types");
  Tensor a = to_float32(a0), b = to_float32(b0);
  if (a.rank() == 0 || b.rank() == 0) c.fail("MatMul inputs must have rank >= 1");
  bool a1 = a.rank() == 1, b1 = b.rank() == 1;
  if (a1) a = a.reshaped({1, a.dim(0)});
  if (b1) b = b.reshaped({b.dim(0), 1});
  int64_t M = a.dim(a.rank() - 2), K = a.dim(a.rank() - 1), N = b.dim(b.rank() - 1);
  if (b.dim(b.rank() - 2) != K) c.fail("inner dimensions differ: " + shape_str(a0.shape()) + " x " + shape_str(b0.shape()));
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(c, {ab, bb});
  Shape out = batch;
  out.push_back(M);
  out.push_back(N);
  Tensor y = Tensor::uninit(a.dtype(), out);
  int64_t nb = numel(batch);
  auto sa = broadcast_strides(ab, batch), sb = broadcast_strides(bb, batch);
  std::vector<int64_t> ia(nb), ib(nb);
  {
    std::array<std::vector<int64_t>, 2> st{sa, sb};
    broadcast_loop<2>(batch, st, [&](int64_t o, const std::array<int64_t, 2>& i) { ia[o] = i[0], ib[o] = i[1]; });
  }
  // When every batch shares one B (a 2-D weight, the common case), the batch folds into M: one
  // [nb*M, K] x [K, N] product instead of nb small ones (seq-first attention exports have M = 1).
  const int64_t rows = M;  // M per batch, for the output shape
  bool shared_b = true;
  for (int64_t bi = 0; bi < nb; ++bi) shared_b = shared_b && ib[bi] == 0 && ia[bi] == bi;
  if (shared_b && nb > 1) {
    M *= nb;
    nb = 1;
  }
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* py = y.mutable_data<T>();
    for (int64_t bi = 0; bi < nb; ++bi) {
      const T* A = pa + ia[bi] * M * K;
      const T* B = pb + ib[bi] * K * N;
      T* C = py + bi * M * N;
      if constexpr (std::is_same_v<T, float>) {
        gemm_f32(false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
      } else if constexpr (std::is_same_v<T, double>) {
        gemm_f64(false, false, M, N, K, 1.0, A, K, B, N, 0.0, C, N);
      } else {
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            T s = 0;
            for (int64_t k = 0; k < K; ++k) s = static_cast<T>(s + A[i * K + k] * B[k * N + j]);
            C[i * N + j] = s;
          }
      }
    }
  });
  Shape final_shape = batch;
  if (!a1) final_shape.push_back(rows);
  if (!b1) final_shape.push_back(N);
  return from_float32(y.reshaped(final_shape), a0.dtype());
}

namespace {

void k_matmul(KernelContext& c) { c.set_output(0, matmul(c, c.input(0), c.input(1))); }

void k_gemm(KernelContext& c) {
  Tensor a = to_float32(c.input(0)), b = to_float32(c.input(1));
  bool ta = c.attr_int("transA", 0), tb = c.attr_int("transB", 0);
  float alpha = c.attr_float("alpha", 1.0f), beta = c.attr_float("beta", 1.0f);
  if (a.rank() != 2 || b.rank() != 2) c.fail("A and B must be 2-D");
  int64_t M = ta ? a.dim(1) : a.dim(0), K = ta ? a.dim(0) : a.dim(1);
  int64_t N = tb ? b.dim(0) : b.dim(1);
  if ((tb ? b.dim(1) : b.dim(0)) != K) c.fail("inner dimensions differ");
  Tensor y(a.dtype(), {M, N});
  bool has_c = c.has_input(2) && beta != 0;
  if (has_c) {
    Tensor cc = to_float32(c.input(2));
    Shape os{M, N};
    if (broadcast_shapes(c, {cc.shape(), os}) != os) c.fail("C cannot be broadcast to " + shape_str(os));
    y = strided_copy(cc, os, broadcast_strides(cc.shape(), os));
  }
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      gemm_f32(ta, tb, M, N, K, alpha, a.data<float>(), a.dim(1), b.data<float>(), b.dim(1), has_c ? beta : 0.0f,
               y.mutable_data<float>(), N);
    } else if constexpr (std::is_same_v<T, double>) {
      gemm_f64(ta, tb, M, N, K, alpha, a.data<double>(), a.dim(1), b.data<double>(), b.dim(1), has_c ? beta : 0.0,
               y.mutable_data<double>(), N);
    } else {
      const T* A = a.data<T>();
      const T* B = b.data<T>();
      T* C = y.mutable_data<T>();
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double s = 0;
          for (int64_t k = 0; k < K; ++k)
            s += double(ta ? A[k * M + i] : A[i * K + k]) * double(tb ? B[j * K + k] : B[k * N + j]);
          C[i * N + j] = static_cast<T>(alpha * s + (has_c ? beta * double(C[i * N + j]) : 0));
        }
    }
  });
  c.set_output(0, from_float32(y, c.input(0).dtype()));
}

// x - zero_point as int32, with a per-tensor or per-row/column zero point.
Tensor shift_zero(const Tensor& x, const Tensor* zp, bool per_row) {
  Tensor y = cast_tensor(x, DType::Int32);
  if (!zp) return y;
  int64_t cols = x.rank() ? x.dim(x.rank() - 1) : 1;
  int64_t rows = x.rank() >= 2 ? x.dim(x.rank() - 2) : 1;
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t k = zp->numel() == 1 ? 0 : (per_row ? (i / cols) % rows : i % cols);
    y.mutable_data<int32_t>()[i] -= static_cast<int32_t>(zp->get_i64(k));
  }
  return y;
}

void k_matmul_integer(KernelContext& c) {
  Tensor a = shift_zero(c.input(0), c.has_input(2) ? &c.input(2) : nullptr, true);
  Tensor b = shift_zero(c.input(1), c.has_input(3) ? &c.input(3) : nullptr, false);
  c.set_output(0, matmul(c, a, b));
}

// Rounds to nearest even and saturates to the quantized type.
Tensor requantize(const Tensor& real, float scale, const Tensor& zp) {
  Tensor y = Tensor::uninit(zp.dtype(), real.shape());
  double lo = zp.dtype() == DType::UInt8 ? 0 : -128, hi = zp.dtype() == DType::UInt8 ? 255 : 127;
  double z = zp.get_f64(0);
  for (int64_t i = 0; i < real.numel(); ++i) {
    double v = std::clamp(std::nearbyint(real.get_f64(i) / scale) + z, lo, hi);
    if (zp.dtype() == DType::UInt8) y.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v);
    else y.mutable_data<int8_t>()[i] = static_cast<int8_t>(v);
  }
  return y;
}

Tensor dequant(const Tensor& x, const Tensor& scale, const Tensor& zp, bool per_row) {
  Tensor y = Tensor::uninit(DType::Float32, x.shape());
  int64_t cols = x.rank() ? x.dim(x.rank() - 1) : 1;
  int64_t rows = x.rank() >= 2 ? x.dim(x.rank() - 2) : 1;
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = scale.numel() == 1 ? 0 : (per_row ? (i / cols) % rows : i % cols);
    y.mutable_data<float>()[i] = static_cast<float>((x.get_f64(i) - zp.get_f64(zp.numel() == 1 ? 0 : k)) * scale.get_f64(k));
  }
  return y;
}

void k_qlinear_matmul(KernelContext& c) {
  Tensor a = dequant(c.input(0), c.input(1), c.input(2), true);
  Tensor b = dequant(c.input(3), c.input(4), c.input(5), false);
  Tensor y = matmul(c, cast_tensor(a, DType::Float64), cast_tensor(b, DType::Float64));
  c.set_output(0, requantize(y, static_cast<float>(c.input(6).get_f64(0)), c.input(7)));
}

void k_einsum(KernelContext& c) {
  std::string eq = c.attr_string("equation");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::string lhs = eq, rhs;
  bool explicit_out = false;
  if (auto p = eq.find("->"); p != std::string::npos) {
    lhs = eq.substr(0, p);
    rhs = eq.substr(p + 2);
    explicit_out = true;
  }
  std::vector<std::string> terms;
  for (size_t s = 0;;) {
    size_t e = lhs.find(',', s);
    terms.push_back(lhs.substr(s, e - s));
    if (e == std::string::npos) break;
    s = e + 1;
  }
  if (terms.size() != c.input_count()) c.fail("equation has " + std::to_string(terms.size()) + " operands");
  // Ellipsis: expand "..." into upper-case letters for the broadcast dimensions.
  size_t ell_rank = 0;
  for (size_t t = 0; t < terms.size(); ++t)
    if (auto p = terms[t].find("..."); p != std::string::npos)
      ell_rank = std::max(ell_rank, static_cast<size_t>(c.input(t).rank()) - (terms[t].size() - 3));
  std::string ell;
  for (size_t i = 0; i < ell_rank; ++i) ell += static_cast<char>('A' + i);
  for (size_t t = 0; t < terms.size(); ++t)
    if (auto p = terms[t].find("..."); p != std::string::npos) {
      size_t r = static_cast<size_t>(c.input(t).rank()) - (terms[t].size() - 3);
      terms[t].replace(p, 3, ell.substr(ell_rank - r));
    }
  std::map<char, int64_t> dims;
  std::map<char, int> count;
  for (size_t t = 0; t < terms.size(); ++t) {
    const Tensor& x = c.input(t);
    if (terms[t].size() != static_cast<size_t>(x.rank())) c.fail("operand " + std::to_string(t) + " rank differs from the equation");
    for (size_t i = 0; i < terms[t].size(); ++i) {
      char ch = terms[t][i];
      int64_t d = x.dim(static_cast<int64_t>(i));
      if (dims.count(ch) && dims[ch] != d && dims[ch] != 1 && d != 1) c.fail(std::string("dimension of '") + ch + "' differs");
      dims[ch] = std::max(dims.count(ch) ? dims[ch] : 1, d);
      ++count[ch];
    }
  }
  if (explicit_out) {
    if (auto p = rhs.find("..."); p != std::string::npos) rhs.replace(p, 3, ell);
  } else {
    rhs = ell;
    for (auto [ch, n] : count)
      if (n == 1 && !(ch >= 'A' && ch <= 'Z')) rhs += ch;
  }
  std::vector<char> letters;
  for (auto [ch, d] : dims) letters.push_back(ch);
  std::vector<Tensor> xs;
  for (size_t t = 0; t < terms.size(); ++t) xs.push_back(cast_tensor(to_float32(c.input(t)), DType::Float64));
  Shape out;
  for (char ch : rhs) out.push_back(dims[ch]);
  Tensor y(DType::Float64, out);
  std::vector<int64_t> idx(letters.size(), 0);
  std::map<char, size_t> pos;
  for (size_t i = 0; i < letters.size(); ++i) pos[letters[i]] = i;
  std::vector<std::vector<int64_t>> xst;
  for (auto& x : xs) xst.push_back(strides_of(x.shape()));
  auto ost = strides_of(out);
  int64_t total = 1;
  for (char ch : letters) total *= dims[ch];
  for (int64_t it = 0; it < total; ++it) {
    double prod = 1;
    for (size_t t = 0; t < xs.size(); ++t) {
      int64_t at = 0;
      for (size_t i = 0; i < terms[t].size(); ++i) {
        int64_t v = idx[pos[terms[t][i]]];
        if (xs[t].dim(static_cast<int64_t>(i)) == 1) v = 0;
        at += v * xst[t][i];
      }
      prod *= xs[t].data<double>()[at];
    }
    int64_t o = 0;
    for (size_t i = 0; i < rhs.size(); ++i) o += idx[pos[rhs[i]]] * ost[i];
    y.mutable_data<double>()[o] += prod;
    for (size_t i = letters.size(); i-- > 0;) {
      if (++idx[i] < dims[letters[i]]) break;
      idx[i] = 0;
    }
  }
  c.set_output(0, cast_tensor(y, c.input(0).dtype()));
}

void k_det(KernelContext& c) {
  Tensor x = cast_tensor(to_float32(c.input(0)), DType::Float64);
  int64_t n = x.dim(x.rank() - 1);
  Shape out(x.shape().begin(), x.shape().end() - 2);
  Tensor y = Tensor::uninit(DType::Float64, out);
  for (int64_t m = 0; m < numel(out); ++m) {
    std::vector<double> a(x.data<double>() + m * n * n, x.data<double>() + (m + 1) * n * n);
    double det = 1;
    for (int64_t k = 0; k < n; ++k) {
      int64_t p = k;
      for (int64_t i = k + 1; i < n; ++i)
        if (std::fabs(a[i * n + k]) > std::fabs(a[p * n + k])) p = i;
      if (a[p * n + k] == 0) {
        det = 0;
        break;
      }
      if (p != k) {
        for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
        det = -det;
      }
      det *= a[k * n + k];
      for (int64_t i = k + 1; i < n; ++i) {
        double f = a[i * n + k] / a[k * n + k];
        for (int64_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
      }
    }
    y.mutable_data<double>()[m] = det;
  }
  c.set_output(0, cast_tensor(y, c.input(0).dtype()));
}

}  // namespace

Tensor quant_requantize(const Tensor& real, float scale, const Tensor& zp) { return requantize(real, scale, zp); }

void register_matmul(KernelRegistry& r) {
  r.add("MatMul", 1, k_matmul);
  r.add("Gemm", 1, k_gemm);
  r.add("MatMulInteger", 10, k_matmul_integer);
  r.add("QLinearMatMul", 10, k_qlinear_matmul);
  r.add("Einsum", 12, k_einsum);
  r.add("Det", 11, k_det);
}

}  // namespace amanda::interp::kernels
