// Control flow: If, Loop and Scan run their attribute-graph bodies through the executor
// (KernelContext::run_body); a body reads outer values through its owner's capture ports.
#include <algorithm>
#include <limits>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

void k_if(KernelContext& c) {
  const Tensor& cond = c.input(0);
  if (cond.numel() != 1) c.fail("cond must hold one element");
  bool taken = cond.get_f64(0) != 0;
  ir::OpId body = c.attr_graph(taken ? "then_branch" : "else_branch");
  if (!body) c.fail(std::string("has no ") + (taken ? "then_branch" : "else_branch"));
  auto outs = c.run_body(body, {});
  if (outs.size() != c.output_count())
    c.fail("the branch gives " + std::to_string(outs.size()) + " outputs for " + std::to_string(c.output_count()));
  for (size_t i = 0; i < outs.size(); ++i) c.set_output(i, std::move(outs[i]));
}

// Stacks tensors of one shape along a new axis.
Tensor stack(const KernelContext& c, const std::vector<Tensor>& parts, int64_t axis, const Shape& elem_shape, DType t) {
  if (parts.empty()) {
    Shape s = elem_shape;
    s.insert(s.begin() + std::min<int64_t>(axis, static_cast<int64_t>(s.size())), 0);
    return Tensor(t == DType::Undefined ? DType::Float32 : t, s);
  }
  std::vector<Tensor> expanded;
  std::vector<const Tensor*> ptrs;
  for (const auto& p : parts) {
    if (p.shape() != parts[0].shape()) c.fail("scan outputs of different shapes cannot be stacked");
    Shape s = p.shape();
    s.insert(s.begin() + axis, 1);
    expanded.push_back(p.reshaped(s));
  }
  for (const auto& e : expanded) ptrs.push_back(&e);
  return concat(c, ptrs, axis);
}

void k_loop(KernelContext& c) {
  ir::OpId body = c.attr_graph("body");
  if (!body) c.fail("has no body");
  int64_t max_trip = c.has_input(0) ? c.input(0).get_i64(0) : std::numeric_limits<int64_t>::max();
  bool cond = c.has_input(1) ? c.input(1).get_f64(0) != 0 : true;
  size_t n_carried = c.input_count() > 2 ? c.input_count() - 2 : 0;
  std::vector<RValue> carried;
  for (size_t i = 0; i < n_carried; ++i) carried.push_back(c.value(2 + i));
  size_t n_scan = c.output_count() - n_carried;
  std::vector<std::vector<Tensor>> scans(n_scan);
  for (int64_t it = 0; it < max_trip && cond; ++it) {
    std::vector<RValue> args;
    args.emplace_back(Tensor::scalar_i64(it));
    Tensor cv = Tensor::uninit(DType::Bool, {});
    *cv.mutable_data<bool>() = cond;
    args.emplace_back(cv);
    for (auto& v : carried) args.push_back(v);
    auto outs = c.run_body(body, std::move(args));
    if (outs.size() != 1 + n_carried + n_scan) c.fail("the body gives " + std::to_string(outs.size()) + " outputs");
    cond = outs[0].tensor.get_f64(0) != 0;
    for (size_t i = 0; i < n_carried; ++i) carried[i] = std::move(outs[1 + i]);
    for (size_t i = 0; i < n_scan; ++i) scans[i].push_back(outs[1 + n_carried + i].tensor);
  }
  for (size_t i = 0; i < n_carried; ++i) c.set_output(i, std::move(carried[i]));
  for (size_t i = 0; i < n_scan; ++i) c.set_output(n_carried + i, stack(c, scans[i], 0, {}, DType::Undefined));
}

void k_scan(KernelContext& c) {
  ir::OpId body = c.attr_graph("body");
  if (!body) c.fail("has no body");
  int64_t n_scan_in = c.attr_int("num_scan_inputs", 0);
  bool v8 = c.opset() < 9;  // opset 8: a sequence_lens input first and a batch axis 0
  size_t first = v8 ? 1 : 0;
  size_t n_state = c.input_count() - first - static_cast<size_t>(n_scan_in);
  size_t n_scan_out = c.output_count() - n_state;
  auto in_axes = c.attr_ints("scan_input_axes").value_or(std::vector<int64_t>(n_scan_in, 0));
  auto in_dirs = c.attr_ints(v8 ? "directions" : "scan_input_directions").value_or(std::vector<int64_t>(n_scan_in, 0));
  auto out_axes = c.attr_ints("scan_output_axes").value_or(std::vector<int64_t>(n_scan_out, 0));
  auto out_dirs = c.attr_ints("scan_output_directions").value_or(std::vector<int64_t>(n_scan_out, 0));
  int64_t batch = v8 ? c.input(first).dim(0) : 1;
  std::vector<std::vector<Tensor>> final_states(n_state), final_scans(n_scan_out);
  for (int64_t b = 0; b < batch; ++b) {
    auto slice0 = [&](const Tensor& t) {  // the b-th item of a batched tensor (opset 8)
      if (!v8) return t;
      Shape s(t.shape().begin() + 1, t.shape().end());
      auto st = strides_of(t.shape());
      return strided_copy(t, s, std::vector<int64_t>(st.begin() + 1, st.end()), b * st[0]);
    };
    std::vector<RValue> state;
    for (size_t i = 0; i < n_state; ++i) state.emplace_back(slice0(c.input(first + i)));
    std::vector<Tensor> xs;
    for (int64_t j = 0; j < n_scan_in; ++j) xs.push_back(slice0(c.input(first + n_state + j)));
    int64_t steps = -1;
    for (int64_t j = 0; j < n_scan_in; ++j) {
      int64_t ax = norm_axis(c, v8 ? 0 : in_axes[j], xs[j].rank());
      in_axes[j] = ax;
      if (steps >= 0 && xs[j].dim(ax) != steps) c.fail("scan inputs differ in length");
      steps = xs[j].dim(ax);
    }
    if (v8 && c.has_input(0)) steps = std::min(steps, c.input(0).get_i64(b));
    std::vector<std::vector<Tensor>> scans(n_scan_out);
    for (int64_t t = 0; t < steps; ++t) {
      std::vector<RValue> args = state;
      for (int64_t j = 0; j < n_scan_in; ++j) {
        int64_t ax = in_axes[j], k = in_dirs[j] ? steps - 1 - t : t;
        auto st = strides_of(xs[j].shape());
        Shape s = xs[j].shape();
        s.erase(s.begin() + ax);
        std::vector<int64_t> sst = st;
        sst.erase(sst.begin() + ax);
        args.emplace_back(strided_copy(xs[j], s, sst, k * st[ax]));
      }
      auto outs = c.run_body(body, std::move(args));
      if (outs.size() != n_state + n_scan_out) c.fail("the body gives " + std::to_string(outs.size()) + " outputs");
      for (size_t i = 0; i < n_state; ++i) state[i] = std::move(outs[i]);
      for (size_t i = 0; i < n_scan_out; ++i) scans[i].push_back(outs[n_state + i].tensor);
    }
    for (size_t i = 0; i < n_state; ++i) final_states[i].push_back(state[i].tensor);
    for (size_t i = 0; i < n_scan_out; ++i) {
      if (out_dirs[i]) std::reverse(scans[i].begin(), scans[i].end());
      Shape es = scans[i].empty() ? Shape{} : scans[i][0].shape();
      int64_t ax = v8 ? 0 : norm_axis(c, out_axes[i], static_cast<int64_t>(es.size()) + 1);
      final_scans[i].push_back(stack(c, scans[i], ax, es, DType::Undefined));
    }
  }
  for (size_t i = 0; i < n_state; ++i)
    c.set_output(i, v8 ? stack(c, final_states[i], 0, {}, DType::Undefined) : final_states[i][0]);
  for (size_t i = 0; i < n_scan_out; ++i)
    c.set_output(n_state + i, v8 ? stack(c, final_scans[i], 0, {}, DType::Undefined) : final_scans[i][0]);
}

}  // namespace

Tensor stack_tensors(const KernelContext& c, const std::vector<Tensor>& parts, int64_t axis) {
  return stack(c, parts, axis, {}, DType::Undefined);
}

void register_control(KernelRegistry& r) {
  r.add("If", 1, k_if);
  r.add("Loop", 1, k_loop);
  r.add("Scan", 8, k_scan);
}

}  // namespace amanda::interp::kernels
