// 2-D float32 convolutions through oneDNN (Debian's libdnnl-dev): on resnet18's shapes it is about
// 3x faster than im2col + OpenBLAS sgemm, reorders included (bench/interp/conv_blas_vs_dnnl.cpp,
// docs/interpreter.md). The interpreter's tensors stay NCHW: the input is reordered into oneDNN's
// preferred layout and the output back, per call; weights that live in the model file (stable
// bytes) are reordered once and kept.
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

struct Engine {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
};

Engine& engine() {
  static Engine* e = [] {
    // oneDNN's OpenMP runtime reads this at its first parallel region: one knob for all libraries.
    if (int n = thread_count()) setenv("OMP_NUM_THREADS", std::to_string(n).c_str(), 1);
    return new Engine;
  }();
  return *e;
}

using WeightKey = std::tuple<const void*, int64_t, std::string>;

}  // namespace

bool conv2d_dnnl(const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win, int64_t group, Tensor& y) {
  if (std::getenv("AMANDA_NO_DNNL")) return false;
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  Engine& e = engine();
  int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
  dims src_d{N, C, win.in[0], win.in[1]}, dst_d{N, M, win.out[0], win.out[1]};
  dims w_d = group > 1 ? dims{group, M / group, C / group, win.kernel[0], win.kernel[1]}
                       : dims{M, C, win.kernel[0], win.kernel[1]};
  dims strides{win.strides[0], win.strides[1]}, dil{win.dilations[0] - 1, win.dilations[1] - 1};
  dims pl{win.pad_begin[0], win.pad_begin[1]}, pr{win.pad_end[0], win.pad_end[1]};
  dnnl::memory::desc xa(src_d, dt::f32, tag::any), wa(w_d, dt::f32, tag::any), ya(dst_d, dt::f32, tag::any);
  dnnl::memory::desc ba({M}, dt::f32, tag::a);
  auto desc = bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                     xa, wa, ba, ya, strides, dil, pl, pr)
                   : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                     xa, wa, ya, strides, dil, pl, pr);
  dnnl::convolution_forward::primitive_desc pd(desc, e.eng);
  dnnl::memory xm({src_d, dt::f32, tag::nchw}, e.eng, const_cast<uint8_t*>(x.raw()));
  dnnl::memory ym({dst_d, dt::f32, tag::nchw}, e.eng, y.mutable_raw());
  dnnl::memory wm({w_d, dt::f32, group > 1 ? tag::goihw : tag::oihw}, e.eng, const_cast<uint8_t*>(w.raw()));
  // Weights: reordered once per (bytes, group, layout) when they are the model's own.
  dnnl::memory wi;
  static std::mutex mu;
  static std::map<WeightKey, dnnl::memory>* cache = new std::map<WeightKey, dnnl::memory>;
  bool direct_w = pd.weights_desc() == wm.get_desc();
  if (direct_w) {
    wi = wm;
  } else if (w.borrowed()) {
    std::lock_guard lock(mu);
    // The layout oneDNN picks depends on the shapes: key on the chosen layout's size and dims too.
    WeightKey key{w.raw(), group, std::to_string(pd.weights_desc().get_size()) + "/" + std::to_string(N)};
    auto it = cache->find(key);
    if (it == cache->end()) {
      dnnl::memory m(pd.weights_desc(), e.eng);
      dnnl::reorder(wm, m).execute(e.strm, wm, m);
      it = cache->emplace(key, m).first;
    }
    wi = it->second;
  } else {
    wi = dnnl::memory(pd.weights_desc(), e.eng);
    dnnl::reorder(wm, wi).execute(e.strm, wm, wi);
  }
  dnnl::memory xi = xm, yi = ym;
  if (pd.src_desc() != xm.get_desc()) {
    xi = dnnl::memory(pd.src_desc(), e.eng);
    dnnl::reorder(xm, xi).execute(e.strm, xm, xi);
  }
  if (pd.dst_desc() != ym.get_desc()) yi = dnnl::memory(pd.dst_desc(), e.eng);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, xi}, {DNNL_ARG_WEIGHTS, wi}, {DNNL_ARG_DST, yi}};
  if (bias) args[DNNL_ARG_BIAS] = dnnl::memory(ba, e.eng, const_cast<uint8_t*>(bias->raw()));
  dnnl::convolution_forward(pd).execute(e.strm, args);
  if (yi != ym) dnnl::reorder(yi, ym).execute(e.strm, yi, ym);
  e.strm.wait();
  return true;
}

}  // namespace amanda::interp::kernels
