// 2-D float32 convolutions through oneDNN (Debian's libdnnl-dev): on resnet18's shapes it is about
// 3x faster than im2col + OpenBLAS sgemm, reorders included (bench/interp/conv_blas_vs_dnnl.cpp,
// docs/interpreter.md). The interpreter's tensors stay NCHW: the input is reordered into oneDNN's
// preferred layout and the output back, per call; weights that live in the model file (stable
// bytes) are reordered once and kept.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

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
    init_threads();
    return new Engine;
  }();
  return *e;
}

using WeightKey = std::tuple<const void*, int64_t, std::string>;

// One primitive per convolution geometry, created once: creating a primitive descriptor walks
// oneDNN's implementation list (tens of microseconds), more than a small convolution takes.
struct Prim {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  bool src_plain = false, dst_plain = false;
};

// Buffers for the reordered input and output, reused from call to call: a fresh allocation of a
// few megabytes is fresh pages from the kernel, and faulting them in cost more than the reorder.
struct Scratch {
  void* p = nullptr;
  size_t size = 0;
  void* get(size_t n) {
    if (n > size) {
      std::free(p);
      p = std::aligned_alloc(64, (n + 63) / 64 * 64);
      if (!p) throw std::bad_alloc();
      size = n;
    }
    return p;
  }
};

}  // namespace

// A tensor in one of oneDNN's layouts (the convolution's chosen source or destination layout).
class DnnlLayout final : public NativeLayout {
 public:
  explicit DnnlLayout(dnnl::memory::desc d) : desc(std::move(d)) {}
  size_t bytes() const override { return desc.get_size(); }
  bool same(const NativeLayout& o) const override {
    auto* d = dynamic_cast<const DnnlLayout*>(&o);
    return d && d->desc == desc;
  }
  void to_plain(const Tensor& src, Tensor& dst) const override {
    Engine& e = engine();
    const auto& dims = desc.dims();
    dnnl::memory::desc plain(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::abcd);
    if (dims.size() != 4) throw std::logic_error("oneDNN layouts are used for 4-D tensors only");
    dnnl::memory s(desc, e.eng, const_cast<uint8_t*>(src.raw())), d(plain, e.eng, dst.mutable_raw());
    dnnl::reorder(s, d).execute(e.strm, s, d);
    e.strm.wait();
  }
  dnnl::memory::desc desc;
};

// Elementwise sum of two tensors in the same oneDNN layout (a residual Add between convolutions);
// the padding of blocked layouts holds zeros in both, and so in the sum.
bool add_native_f32(const Tensor& a, const Tensor& b, bool native_out, Tensor& y) {
  if (!a.layout() || !b.layout() || a.dtype() != DType::Float32 || b.dtype() != DType::Float32 ||
      a.shape() != b.shape() || !a.layout()->same(*b.layout()))
    return false;
  Tensor r = Tensor::native(DType::Float32, a.shape(), a.layout_ptr());
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* pr = r.mutable_data<float>();
  parallel_for(static_cast<int64_t>(r.nbytes() / 4), 1 << 15, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) pr[i] = pa[i] + pb[i];
  });
  y = native_out ? r : r.plain();
  return true;
}

bool conv2d_dnnl(const Tensor& x, const Tensor& w, const Tensor* bias, const Window& win, int64_t group,
                 const KernelContext::Activation& act, bool native_out, Tensor& y) {
  static const bool off = std::getenv("AMANDA_NO_DNNL") != nullptr;
  if (off || !dnnl_available()) return false;
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
  dnnl::memory::desc ba({M}, dt::f32, tag::a);
  dnnl::memory::desc xplain(src_d, dt::f32, tag::nchw), yplain(dst_d, dt::f32, tag::nchw);
  dnnl::memory::desc wplain(w_d, dt::f32, group > 1 ? tag::goihw : tag::oihw);

  static std::mutex mu;
  std::lock_guard lock(mu);  // the caches and scratch buffers below; kernels run one at a time
  static auto* prims = new std::map<std::vector<int64_t>, Prim>;
  using A = KernelContext::Activation;
  int32_t abits = 0, bbits = 0;
  std::memcpy(&abits, &act.a, 4);
  std::memcpy(&bbits, &act.b, 4);
  std::vector<int64_t> key{N, C, M, group, bias != nullptr, act.kind, abits, bbits};
  for (const dims* d : {&src_d, &dst_d, &w_d, &strides, &dil, &pl, &pr}) key.insert(key.end(), d->begin(), d->end());
  auto pit = prims->find(key);
  if (pit == prims->end()) {
    dnnl::memory::desc xa(src_d, dt::f32, tag::any), wa(w_d, dt::f32, tag::any), ya(dst_d, dt::f32, tag::any);
    auto desc = bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                       xa, wa, ba, ya, strides, dil, pl, pr)
                     : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                       xa, wa, ya, strides, dil, pl, pr);
    // The fused activation as a post-op: applied to each block of the output while it is in cache.
    dnnl::primitive_attr attr;
    if (act.kind != A::None) {
      dnnl::post_ops ops;
      if (act.kind == A::Relu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      if (act.kind == A::LeakyRelu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, act.a, 0.0f);
      if (act.kind == A::Clip) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, act.a, act.b);
      attr.set_post_ops(ops);
    }
    dnnl::convolution_forward::primitive_desc pd(desc, attr, e.eng);
    Prim p{pd, dnnl::convolution_forward(pd), pd.src_desc() == xplain, pd.dst_desc() == yplain};
    pit = prims->emplace(std::move(key), std::move(p)).first;
  }
  const Prim& P = pit->second;
  const auto& pd = P.pd;

  // The input: row-major, or already in a oneDNN layout (the previous convolution's output).
  const DnnlLayout* xl = dynamic_cast<const DnnlLayout*>(x.layout());
  if (x.layout() && !xl) throw std::logic_error("a convolution input in a layout oneDNN does not know");
  dnnl::memory xm(xl ? xl->desc : xplain, e.eng, const_cast<uint8_t*>(x.raw()));
  // The output: in the convolution's own layout when every reader takes that (the executor says).
  Shape yshape{N, M, win.out[0], win.out[1]};
  if (native_out && !P.dst_plain) y = Tensor::native(DType::Float32, yshape, std::make_shared<DnnlLayout>(pd.dst_desc()));
  else y = Tensor::uninit(DType::Float32, yshape);
  bool y_native = y.layout() != nullptr;
  dnnl::memory wm(wplain, e.eng, const_cast<uint8_t*>(w.raw()));
  // Weights: reordered once per (bytes, group, layout) when they are the model's own.
  dnnl::memory wi;
  // The entry remembers what owned the bytes: an address reused by another model's weights after
  // the first model is gone finds its owner expired and is reordered again.
  static auto* cache = new std::map<WeightKey, std::pair<std::weak_ptr<void>, dnnl::memory>>;
  if (pd.weights_desc() == wplain) {
    wi = wm;
  } else if (w.borrowed()) {
    // The layout oneDNN picks depends on the shapes: key on the chosen layout's size and dims too.
    WeightKey wkey{w.raw(), group, std::to_string(pd.weights_desc().get_size()) + "/" + std::to_string(N)};
    auto it = cache->find(wkey);
    if (it == cache->end() || it->second.first.lock() != w.owner()) {
      dnnl::memory m(pd.weights_desc(), e.eng);
      dnnl::reorder(wm, m).execute(e.strm, wm, m);
      (*cache)[wkey] = {w.owner(), m};
      it = cache->find(wkey);
    }
    wi = it->second.second;
  } else {
    wi = dnnl::memory(pd.weights_desc(), e.eng);
    dnnl::reorder(wm, wi).execute(e.strm, wm, wi);
  }
  static Scratch src_buf, dst_buf;
  dnnl::memory ym(y_native ? pd.dst_desc() : yplain, e.eng, y.mutable_raw());
  dnnl::memory xi = xm, yi = ym;
  if (xm.get_desc() != pd.src_desc()) {
    xi = dnnl::memory(pd.src_desc(), e.eng, src_buf.get(pd.src_desc().get_size()));
    dnnl::reorder(xm, xi).execute(e.strm, xm, xi);
  }
  if (ym.get_desc() != pd.dst_desc()) yi = dnnl::memory(pd.dst_desc(), e.eng, dst_buf.get(pd.dst_desc().get_size()));
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, xi}, {DNNL_ARG_WEIGHTS, wi}, {DNNL_ARG_DST, yi}};
  if (bias) args[DNNL_ARG_BIAS] = dnnl::memory(ba, e.eng, const_cast<uint8_t*>(bias->raw()));
  P.prim.execute(e.strm, args);
  if (yi != ym) dnnl::reorder(yi, ym).execute(e.strm, yi, ym);
  e.strm.wait();
  return true;
}

}  // namespace amanda::interp::kernels
