// Why the interpreter's float32 products use oneDNN's sgemm rather than OpenBLAS's: times both on
// vit_b_16's shapes (the attention's projections and MLP at 197 tokens, the per-head products of
// 12 heads) and mobilenet_v2's classifier, row-major float32, the same thread count.
//
//   g++ -O2 -std=c++20 bench/interp/gemm_blas_vs_dnnl.cpp -I/usr/include/x86_64-linux-gnu/openblas-pthread \
//       -lopenblas -ldnnl -o /tmp/gemm_bench && OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 /tmp/gemm_bench
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include <oneapi/dnnl/dnnl.h>

template <class F>
static double best_of(int n, F f) {
  double best = 1e30;
  for (int i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

int main() {
  struct S {
    int M, N, K, reps;
    const char* what;
  } shapes[] = {{197, 2304, 768, 1, "vit qkv projection"}, {197, 768, 768, 1, "vit attention output"},
                {197, 3072, 768, 1, "vit mlp up"},          {197, 768, 3072, 1, "vit mlp down"},
                {197, 197, 64, 12, "vit q x k, 12 heads"},  {197, 64, 197, 12, "vit attn x v, 12 heads"},
                {1, 1000, 1280, 1, "mobilenet_v2 classifier"}};
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(-1, 1);
  double tb = 0, td = 0;
  std::printf("%-26s %5s %5s %5s %4s %12s %12s\n", "product", "M", "N", "K", "x", "openblas ms", "onednn ms");
  for (const auto& s : shapes) {
    std::vector<float> a(size_t(s.M) * s.K), b(size_t(s.K) * s.N), c(size_t(s.M) * s.N);
    for (auto& v : a) v = u(rng);
    for (auto& v : b) v = u(rng);
    double t1 = best_of(20, [&] {
      for (int r = 0; r < s.reps; ++r)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.M, s.N, s.K, 1.f, a.data(), s.K, b.data(), s.N, 0.f,
                    c.data(), s.N);
    });
    double t2 = best_of(20, [&] {
      for (int r = 0; r < s.reps; ++r)
        dnnl_sgemm('N', 'N', s.M, s.N, s.K, 1.f, a.data(), s.K, b.data(), s.N, 0.f, c.data(), s.N);
    });
    tb += t1;
    td += t2;
    std::printf("%-26s %5d %5d %5d %4d %12.3f %12.3f\n", s.what, s.M, s.N, s.K, s.reps, t1 * 1e3, t2 * 1e3);
  }
  std::printf("%-26s %29s %12.3f %12.3f\n", "total", "", tb * 1e3, td * 1e3);
}
