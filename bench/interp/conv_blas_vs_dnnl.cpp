// Why the interpreter's Conv uses OpenBLAS (im2col + sgemm) rather than oneDNN: times both on
// resnet18's convolution shapes, NCHW float32 in and out (what the interpreter's tensors are), at
// batch 1 with the same thread count. oneDNN's time includes the reorders into and out of its
// blocked layout that an NCHW graph would pay at every Conv (weights are reordered once, outside
// the timing, as a cached-weight implementation would).
//
//   g++ -O2 -std=c++20 bench/interp/conv_blas_vs_dnnl.cpp -I/usr/include/x86_64-linux-gnu/openblas-pthread \
//       -lopenblas -ldnnl -o /tmp/conv_bench && OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 /tmp/conv_bench
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

struct Shape {
  int C, H, M, K, S, P;
};

static void im2col(const float* x, int C, int H, int W, int K, int S, int P, int OH, int OW, float* col) {
  for (int c = 0; c < C; ++c)
    for (int kh = 0; kh < K; ++kh)
      for (int kw = 0; kw < K; ++kw) {
        float* row = col + ((c * K + kh) * K + kw) * OH * OW;
        for (int oh = 0; oh < OH; ++oh) {
          int ih = oh * S - P + kh;
          for (int ow = 0; ow < OW; ++ow) {
            int iw = ow * S - P + kw;
            row[oh * OW + ow] = ih >= 0 && ih < H && iw >= 0 && iw < W ? x[(c * H + ih) * W + iw] : 0.f;
          }
        }
      }
}

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
  const Shape shapes[] = {{3, 224, 64, 7, 2, 3}, {64, 56, 64, 3, 1, 1}, {128, 28, 128, 3, 1, 1},
                          {256, 14, 256, 3, 1, 1}, {512, 7, 512, 3, 1, 1}, {256, 14, 512, 1, 2, 0}};
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(-1, 1);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  double tb = 0, td = 0;
  std::printf("%-28s %10s %10s\n", "conv (C,HxW -> M, KxK /S)", "blas ms", "dnnl ms");
  for (const auto& s : shapes) {
    int OH = (s.H + 2 * s.P - s.K) / s.S + 1;
    std::vector<float> x(s.C * s.H * s.H), w(s.M * s.C * s.K * s.K), y(s.M * OH * OH), col(s.C * s.K * s.K * OH * OH);
    for (auto& v : x) v = u(rng);
    for (auto& v : w) v = u(rng);
    double b = best_of(20, [&] {
      im2col(x.data(), s.C, s.H, s.H, s.K, s.S, s.P, OH, OH, col.data());
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.M, OH * OH, s.C * s.K * s.K, 1.f, w.data(), s.C * s.K * s.K,
                  col.data(), OH * OH, 0.f, y.data(), OH * OH);
    });
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    dnnl::memory::desc xd({1, s.C, s.H, s.H}, dt::f32, tag::nchw), wd({s.M, s.C, s.K, s.K}, dt::f32, tag::oihw),
        yd({1, s.M, OH, OH}, dt::f32, tag::nchw);
    dnnl::memory::desc xa({1, s.C, s.H, s.H}, dt::f32, tag::any), wa({s.M, s.C, s.K, s.K}, dt::f32, tag::any),
        ya({1, s.M, OH, OH}, dt::f32, tag::any);
    auto pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, xa, wa, ya,
                                        {s.S, s.S}, {s.P, s.P}, {s.P, s.P}),
        eng);
    dnnl::memory xm(xd, eng, x.data()), wm(wd, eng, w.data()), ym(yd, eng, y.data());
    dnnl::memory xi(pd.src_desc(), eng), wi(pd.weights_desc(), eng), yi(pd.dst_desc(), eng);
    dnnl::reorder(wm, wi).execute(strm, wm, wi);  // weights once
    dnnl::convolution_forward conv(pd);
    double d = best_of(20, [&] {
      dnnl::reorder(xm, xi).execute(strm, xm, xi);
      conv.execute(strm, {{DNNL_ARG_SRC, xi}, {DNNL_ARG_WEIGHTS, wi}, {DNNL_ARG_DST, yi}});
      dnnl::reorder(yi, ym).execute(strm, yi, ym);
      strm.wait();
    });
    tb += b;
    td += d;
    std::printf("%3d,%3dx%-3d -> %3d, %dx%d /%d     %10.3f %10.3f\n", s.C, s.H, s.H, s.M, s.K, s.K, s.S, b * 1e3, d * 1e3);
  }
  std::printf("total                        %10.3f %10.3f\n", tb * 1e3, td * 1e3);
}
