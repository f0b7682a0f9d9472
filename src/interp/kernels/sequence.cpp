// Sequences and optionals: SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
// OptionalHasElement, OptionalGetElement.
#include <numeric>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

const std::vector<Tensor>& seq_of(const KernelContext& c, size_t i) {
  const RValue& v = c.value(i);
  if (v.kind != RValue::Kind::Sequence) c.fail("input " + std::to_string(i) + " must be a sequence");
  return v.seq;
}

int64_t seq_pos(const KernelContext& c, int64_t p, int64_t n, bool insert) {
  int64_t hi = insert ? n : n - 1;
  if (p < -n || p > hi) c.fail("position " + std::to_string(p) + " is out of range");
  return p < 0 ? p + n : p;
}

void k_seq_construct(KernelContext& c) {
  std::vector<Tensor> s;
  for (size_t i = 0; i < c.input_count(); ++i) s.push_back(c.input(i));
  c.set_output(0, RValue::sequence(std::move(s)));
}

void k_seq_empty(KernelContext& c) {
  DType t = DType::Float32;
  if (const ir::Value* d = c.attr("dtype"); d && d->is_int())
    if (auto dt = dtype_from_onnx(d->as_int())) t = *dt;
  c.set_output(0, RValue::sequence({}, t));
}

void k_seq_insert(KernelContext& c) {
  std::vector<Tensor> s = seq_of(c, 0);
  int64_t n = static_cast<int64_t>(s.size());
  int64_t p = c.has_input(2) ? seq_pos(c, c.input(2).get_i64(0), n, true) : n;
  s.insert(s.begin() + p, c.input(1));
  c.set_output(0, RValue::sequence(std::move(s), c.value(0).elem));
}

void k_seq_at(KernelContext& c) {
  const auto& s = seq_of(c, 0);
  c.set_output(0, s[seq_pos(c, c.input(1).get_i64(0), static_cast<int64_t>(s.size()), false)]);
}

void k_seq_erase(KernelContext& c) {
  std::vector<Tensor> s = seq_of(c, 0);
  int64_t n = static_cast<int64_t>(s.size());
  int64_t p = c.has_input(1) ? seq_pos(c, c.input(1).get_i64(0), n, false) : n - 1;
  if (n == 0) c.fail("erase from an empty sequence");
  s.erase(s.begin() + p);
  c.set_output(0, RValue::sequence(std::move(s), c.value(0).elem));
}

void k_seq_length(KernelContext& c) { c.set_output(0, Tensor::scalar_i64(static_cast<int64_t>(seq_of(c, 0).size()))); }

void k_split_to_seq(KernelContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = norm_axis(c, c.attr_int("axis", 0), x.rank());
  bool keep = c.attr_int("keepdims", 1);
  int64_t len = x.dim(axis);
  std::vector<int64_t> split;
  bool no_split = !c.has_input(1);
  if (no_split) {
    split.assign(len, 1);
  } else {
    const Tensor& sp = c.input(1);
    if (sp.rank() == 0) {
      int64_t k = sp.get_i64(0);
      for (int64_t o = 0; o < len; o += k) split.push_back(std::min(k, len - o));
    } else {
      split = sp.to_i64_vector();
    }
  }
  auto st = strides_of(x.shape());
  std::vector<Tensor> out;
  int64_t off = 0;
  for (int64_t s : split) {
    Shape sh = x.shape();
    sh[axis] = s;
    Tensor t = strided_copy(x, sh, st, off * st[axis]);
    if (no_split && !keep) {
      sh.erase(sh.begin() + axis);
      t = t.reshaped(sh);
    }
    out.push_back(t);
    off += s;
  }
  c.set_output(0, RValue::sequence(std::move(out), x.dtype()));
}

void k_concat_from_seq(KernelContext& c) {
  const auto& s = seq_of(c, 0);
  if (s.empty()) c.fail("the sequence is empty");
  int64_t axis = c.attr_int("axis", 0);
  if (c.attr_int("new_axis", 0)) {
    c.set_output(0, stack_tensors(c, s, norm_axis(c, axis, s[0].rank() + 1)));
    return;
  }
  std::vector<const Tensor*> ptrs;
  for (const auto& t : s) ptrs.push_back(&t);
  c.set_output(0, concat(c, ptrs, axis));
}

void k_seq_map(KernelContext& c) {
  ir::OpId body = c.attr_graph("body");
  const auto& s0 = seq_of(c, 0);
  size_t n = s0.size();
  std::vector<std::vector<Tensor>> outs(c.output_count());
  for (size_t k = 0; k < n; ++k) {
    std::vector<RValue> args;
    for (size_t i = 0; i < c.input_count(); ++i) {
      const RValue& v = c.value(i);
      args.emplace_back(v.kind == RValue::Kind::Sequence ? v.seq.at(k) : v.tensor);
    }
    auto r = c.run_body(body, std::move(args));
    for (size_t o = 0; o < outs.size() && o < r.size(); ++o) outs[o].push_back(r[o].tensor);
  }
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(o, RValue::sequence(std::move(outs[o])));
}

void k_optional(KernelContext& c) {
  if (c.has_input(0)) c.set_output(0, c.value(0));
  else c.set_output(0, RValue::none());
}

void k_optional_has(KernelContext& c) {
  Tensor t = Tensor::uninit(DType::Bool, {});
  *t.mutable_data<bool>() = c.has_input(0) && c.value(0).kind != RValue::Kind::None;
  c.set_output(0, t);
}

void k_optional_get(KernelContext& c) {
  const RValue& v = c.value(0);
  if (v.kind == RValue::Kind::None) c.fail("the optional is empty");
  c.set_output(0, v);
}

}  // namespace

void register_sequence(KernelRegistry& r) {
  r.add("SequenceConstruct", 11, k_seq_construct);
  r.add("SequenceEmpty", 11, k_seq_empty);
  r.add("SequenceInsert", 11, k_seq_insert);
  r.add("SequenceAt", 11, k_seq_at);
  r.add("SequenceErase", 11, k_seq_erase);
  r.add("SequenceLength", 11, k_seq_length);
  r.add("SplitToSequence", 11, k_split_to_seq);
  r.add("ConcatFromSequence", 11, k_concat_from_seq);
  r.add("SequenceMap", 17, k_seq_map);
  r.add("Optional", 15, k_optional);
  r.add("OptionalHasElement", 15, k_optional_has);
  r.add("OptionalGetElement", 15, k_optional_get);
}

}  // namespace amanda::interp::kernels
