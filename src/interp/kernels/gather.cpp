// Indexing ops: Gather, GatherElements, GatherND, Scatter (= ScatterElements before opset 11),
// ScatterElements and ScatterND (with their reductions). Negative indices count from the end; an
// index out of range is an error naming the op, never a read outside the tensor.
#include "families.h"

namespace amanda::interp::kernels {

namespace {

int64_t fix_index(const KernelContext& c, int64_t i, int64_t n) {
  if (i < -n || i >= n) c.fail("index " + std::to_string(i) + " is out of range [" + std::to_string(-n) + ", " + std::to_string(n) + ")");
  return i < 0 ? i + n : i;
}

void k_gather(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& ind = c.input(1);
  int64_t axis = norm_axis(c, c.attr_int("axis", 0), x.rank());
  int64_t outer = 1, inner = 1, n = x.dim(axis);
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  Shape out(x.shape().begin(), x.shape().begin() + axis);
  out.insert(out.end(), ind.shape().begin(), ind.shape().end());
  out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
  int64_t m = ind.numel();
  std::vector<int64_t> idx(m);
  for (int64_t j = 0; j < m; ++j) idx[j] = fix_index(c, ind.get_i64(j), n);
  if (x.dtype() != DType::String) {
    // Whole rows of `inner` elements at a time.
    Tensor y = Tensor::uninit(x.dtype(), out);
    size_t row = static_cast<size_t>(inner) * ir::dtype_size(x.dtype());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < m; ++j)
        if (row) std::memcpy(y.mutable_raw() + (o * m + j) * row, x.raw() + (o * n + idx[j]) * row, row);
    c.set_output(0, y);
    return;
  }
  std::vector<int64_t> src;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t i = 0; i < inner; ++i) src.push_back((o * n + idx[j]) * inner + i);
  c.set_output(0, take_flat(x, out, src));
}

void k_gather_elements(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& ind = c.input(1);
  int64_t axis = norm_axis(c, c.attr_int("axis", 0), x.rank());
  if (ind.rank() != x.rank()) c.fail("indices must have the data's rank");
  auto xst = strides_of(x.shape()), ist = strides_of(ind.shape());
  std::vector<int64_t> src(ind.numel());
  for (int64_t o = 0; o < ind.numel(); ++o) {
    int64_t rem = o, at = 0;
    for (int64_t d = 0; d < x.rank(); ++d) {
      int64_t i = rem / ist[d];
      rem %= ist[d];
      if (d == axis) i = fix_index(c, ind.get_i64(o), x.dim(d));
      at += i * xst[d];
    }
    src[o] = at;
  }
  c.set_output(0, take_flat(x, ind.shape(), src));
}

void k_gather_nd(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& ind = c.input(1);
  int64_t b = c.attr_int("batch_dims", 0);
  int64_t q = ind.rank(), k = ind.dim(q - 1);
  if (k > x.rank() - b) c.fail("indices' last dimension is too large");
  Shape out(ind.shape().begin(), ind.shape().end() - 1);
  out.insert(out.end(), x.shape().begin() + b + k, x.shape().end());
  int64_t batch = 1;
  for (int64_t d = 0; d < b; ++d) batch *= x.dim(d);
  int64_t slice = 1;
  for (int64_t d = b + k; d < x.rank(); ++d) slice *= x.dim(d);
  int64_t per_batch_x = x.numel() / std::max<int64_t>(batch, 1);
  int64_t tuples = ind.numel() / std::max<int64_t>(k, 1) / std::max<int64_t>(batch, 1);
  if (k == 0) tuples = ind.numel() / std::max<int64_t>(batch, 1);
  auto xst = strides_of(x.shape());
  std::vector<int64_t> src;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t at = bi * per_batch_x;
      for (int64_t j = 0; j < k; ++j) at += fix_index(c, ind.get_i64((bi * tuples + t) * k + j), x.dim(b + j)) * xst[b + j];
      for (int64_t s = 0; s < slice; ++s) src.push_back(at + s);
    }
  c.set_output(0, take_flat(x, out, src));
}

// Scatter with an optional reduction; computes in double for numeric types.
template <class F>
Tensor scatter_apply(KernelContext& c, const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& writes,
                     const Tensor& upd, const std::string& reduction) {
  Tensor y = x.clone();
  if (reduction == "none") {
    size_t es = ir::dtype_size(x.dtype());
    for (auto [dst, s] : writes) {
      if (x.dtype() == DType::String) y.strings()[dst] = upd.strings()[s];
      else std::memcpy(y.mutable_raw() + dst * es, upd.raw() + s * es, es);
    }
    return y;
  }
  Tensor yf = cast_tensor(to_float32(y), DType::Float64);
  Tensor uf = cast_tensor(to_float32(upd), DType::Float64);
  double* py = yf.mutable_data<double>();
  for (auto [dst, s] : writes) {
    double u = uf.data<double>()[s];
    if (reduction == "add") py[dst] += u;
    else if (reduction == "mul") py[dst] *= u;
    else if (reduction == "max") py[dst] = std::max(py[dst], u);
    else if (reduction == "min") py[dst] = std::min(py[dst], u);
    else c.fail("unknown reduction '" + reduction + "'");
  }
  return cast_tensor(yf, x.dtype());
}

void k_scatter_elements(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& ind = c.input(1);
  const Tensor& upd = c.input(2);
  int64_t axis = norm_axis(c, c.attr_int("axis", 0), x.rank());
  auto xst = strides_of(x.shape()), ist = strides_of(ind.shape());
  std::vector<std::pair<int64_t, int64_t>> writes;
  for (int64_t o = 0; o < ind.numel(); ++o) {
    int64_t rem = o, at = 0;
    for (int64_t d = 0; d < x.rank(); ++d) {
      int64_t i = rem / ist[d];
      rem %= ist[d];
      if (d == axis) i = fix_index(c, ind.get_i64(o), x.dim(d));
      at += i * xst[d];
    }
    writes.emplace_back(at, o);
  }
  c.set_output(0, scatter_apply<int>(c, x, writes, upd, c.attr_string("reduction", "none")));
}

void k_scatter_nd(KernelContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& ind = c.input(1);
  const Tensor& upd = c.input(2);
  int64_t q = ind.rank(), k = ind.dim(q - 1);
  auto xst = strides_of(x.shape());
  int64_t slice = 1;
  for (int64_t d = k; d < x.rank(); ++d) slice *= x.dim(d);
  int64_t tuples = ind.numel() / std::max<int64_t>(k, 1);
  std::vector<std::pair<int64_t, int64_t>> writes;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t j = 0; j < k; ++j) at += fix_index(c, ind.get_i64(t * k + j), x.dim(j)) * xst[j];
    for (int64_t s = 0; s < slice; ++s) writes.emplace_back(at + s, t * slice + s);
  }
  c.set_output(0, scatter_apply<int>(c, x, writes, upd, c.attr_string("reduction", "none")));
}

}  // namespace

void register_gather(KernelRegistry& r) {
  r.add("Gather", 1, k_gather);
  r.add("GatherElements", 11, k_gather_elements);
  r.add("GatherND", 11, k_gather_nd);
  r.add("Scatter", 9, k_scatter_elements);
  r.add("ScatterElements", 11, k_scatter_elements);
  r.add("ScatterND", 11, k_scatter_nd);
}

}  // namespace amanda::interp::kernels
