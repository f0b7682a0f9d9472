// Sizes read from an input's values (issue 33): `torch.zeros(int(n), 1)`, `x.topk(int(k))`,
// `torch.arange(end)` / `torch.linspace(a, b, n)` with 0-d tensors as bounds. torch.onnx.export
// makes such sizes graph values (ConstantOfShape of a computed shape, TopK's K input, Range);
// so does this: each number becomes a new run-time size (a symbolic dimension `dyn<k>` of the
// outputs), its value the graph's. The libtorch reader cannot (it fixes sizes at one run).
#include "frameworks/torchscript/importer_state.h"
#include "frameworks/torchscript/promotion.h"

#include <cstdint>
#include <functional>
#include <set>

namespace amanda::torchscript {

namespace {

bool run_time_number(const Val& v) {
  return (v.k == Val::K::Int && (v.data || v.dyn)) || (v.is_tensor() && !v.known && v.shape_known && v.shape.empty());
}

bool float_number(const Val& v) { return v.k == Val::K::Float || (v.is_tensor() && is_float_type(v.dtype)); }

}  // namespace

// nullopt: not such a call (the ordinary path).
std::optional<VRef> Importer::run_time_size_call(const std::string& base, const std::vector<VRef>& args,
                                                 const std::vector<std::pair<std::string, VRef>>& kwargs) {
  // x[:] (slice over a whole dimension, step 1) is x itself: the same memory and shape, so a
  // write through it (`state[:] = v`, in place) is a write of x, as torch has it. (The
  // general write through a view of a graph tensor is refused; this one needs nothing.)
  // (Not for a known tensor: its folded views and the write of a whole one are graph_emitter's.)
  if (base == "aten::slice" && args.size() >= 1 && args[0]->is_tensor() && !args[0]->known && args[0]->shape_known && !args[0]->shape.empty() &&
      kwargs.empty()) {
    auto num = [&](size_t k, int64_t dflt) -> std::optional<int64_t> {
      if (k >= args.size() || args[k]->k == Val::K::None) return dflt;
      if (args[k]->k != Val::K::Int || args[k]->data || args[k]->dyn) return std::nullopt;
      return args[k]->i;
    };
    auto dim = num(1, 0), start = num(2, 0), end = num(3, INT64_MAX), step = num(4, 1);
    int64_t r = static_cast<int64_t>(args[0]->shape.size());
    if (dim && start && end && step && *step == 1 && *start == 0 && *dim >= -r && *dim < r) {
      int64_t size = args[0]->shape[static_cast<size_t>(*dim < 0 ? *dim + r : *dim)];
      if (*end == INT64_MAX || (!is_sym(size) && *end >= size)) return args[0];
    }
  }
  // squeeze of a dimension whose size is known only at run time: torch removes it only when it
  // is 1, which the stand-in number cannot say (torch.onnx.export makes an If): refused.
  if ((base == "aten::squeeze" || base == "aten::squeeze_") && !args.empty() && args[0]->is_tensor() && args[0]->shape_known) {
    const auto& sh = args[0]->shape;
    int64_t r = static_cast<int64_t>(sh.size());
    bool sym = false;
    if (args.size() == 1) {
      for (int64_t d : sh) sym |= is_sym(d);
    } else if (args[1]->k == Val::K::Int && !args[1]->data && !args[1]->dyn && args[1]->i >= -r && args[1]->i < r) {
      sym = is_sym(sh[static_cast<size_t>(args[1]->i < 0 ? args[1]->i + r : args[1]->i)]);
    }
    if (sym)
      throw Unsupported(where_ + ": " + base + " of a dimension whose size is known only at run time (torch removes it only when it is 1); give --input-shape numbers");
  }
  // Ops that take sizes as numbers and whose rules take a size tensor: a number the graph
  // computes from an input's values (data) becomes a size known at run time.
  static const std::set<std::string> size_takers{"aten::zeros", "aten::ones", "aten::empty", "aten::full", "aten::topk"};
  if (size_takers.count(base)) {
    bool any = false;
    std::function<VRef(const VRef&, int)> conv = [&](const VRef& v, int depth) -> VRef {
      if (v->k == Val::K::Int && v->data) {
        if (v->data->dtype != DType::Int64) return v;
        VRef r = make_int(new_run_time_dim());
        VRef t = std::make_shared<Val>(*v->data);  // the same graph value, with the stand-in as its hint
        t->has_hint = true, t->hint = r->i;
        r->dyn = t;
        any = true;
        return r;
      }
      if ((v->k == Val::K::List || v->k == Val::K::Tuple) && depth == 0) {
        auto c = std::make_shared<Val>(*v);
        for (auto& x : c->items) x = conv(x, 1);
        return c;
      }
      return v;
    };
    std::vector<VRef> a;
    for (const auto& v : args) a.push_back(conv(v, 0));
    std::vector<std::pair<std::string, VRef>> kw;
    for (const auto& [n, v] : kwargs) kw.emplace_back(n, conv(v, 0));
    if (!any) return std::nullopt;
    // (a size of 0 or less is torch's error or an empty tensor, as ONNX's ConstantOfShape makes it)
    return call_op(base, a, kw);
  }
  if (base == "aten::addmm" || base == "aten::baddbmm" || base == "aten::addmv" || base == "aten::addbmm") return run_time_scalars(base, args, kwargs);
  if (base != "aten::arange" && base != "aten::linspace") return std::nullopt;
  bool any = false;
  for (const auto& v : args) any |= run_time_number(*v);
  if (!any) return std::nullopt;
  VRef dtype_arg = make_none(), out_arg;
  for (const auto& [n, v] : kwargs) {
    if (n == "dtype") dtype_arg = v;
    else if (n == "out" && base == "aten::arange") out_arg = v;
    else if (n == "layout" || n == "device" || n == "pin_memory") continue;
    else if (n == "steps" && base == "aten::linspace") continue;
    else throw Unsupported(where_ + ": " + base + " with a bound from an input's values and the argument " + n + " (not supported)");
  }
  for (const auto& v : args)
    if (!(v->k == Val::K::Int || v->k == Val::K::Float || run_time_number(*v) || (v->is_known_tensor() && v->shape.empty())))
      throw Unsupported(where_ + ": " + base + " with a bound from an input's values and " + describe(*v) + " (not supported)");
  // A 0-d int64 / float64 tensor of a number.
  auto tensor_of = [&](const VRef& v) -> VRef {
    if (v->is_tensor()) return v;
    if (v->k == Val::K::Int && v->data) return v->data;
    if (v->k == Val::K::Int && v->dyn) return v->dyn;
    if (v->k == Val::K::Int) return make_known(DType::Int64, {}, {static_cast<double>(v->i)});
    return make_known(DType::Float64, {}, {v->f});
  };
  auto cast = [&](const VRef& v, DType t) {
    return call_op("aten::to", {v, make_int(scalar_type_code(t)), make_bool(false), make_bool(false)}, {});
  };
  bool floats = false;
  for (const auto& v : args) floats |= float_number(*v);
  DType out = floats || base == "aten::linspace" ? DType::Float32 : DType::Int64;
  // arange(..., out=t): the result takes t's type and replaces t (traced: `out_t =
  // torch.tensor([1.0])` a constant copied). Other tensors sharing t's memory are stale after
  // the write: t's storage is marked overwritten (known) or its alias written, so reading one
  // of them is refused.
  if (out_arg) {
    if (!out_arg->is_tensor() || !(out_arg->known || out_arg->alias) || dtype_arg->k != Val::K::None)
      throw Unsupported(where_ + ": aten::arange.out into " + describe(*out_arg) + " with a bound from an input's values (only into a tensor the module made)");
    out = out_arg->dtype;
  }
  if (dtype_arg->k == Val::K::Int) out = dtype_from_scalar_type(dtype_arg->i, where_);
  else if (dtype_arg->k != Val::K::None) throw Unsupported(where_ + ": " + base + " with dtype " + describe(*dtype_arg));
  const schema::OpSchema* range = ns_.find("aten::arange.start_step");
  if (!range) throw Error(where_ + ": internal: aten::arange.start_step");

  if (base == "aten::arange") {
    std::vector<VRef> b;  // start, end, step
    if (args.size() == 1) b = {make_int(0), args[0], make_int(1)};
    else if (args.size() == 2) b = {args[0], args[1], make_int(1)};
    else if (args.size() == 3) b = {args[0], args[1], args[2]};
    else throw Unsupported(where_ + ": aten::arange with a bound from an input's values and " + std::to_string(args.size()) + " numbers");
    // torch's CPU kernel (RangeFactories.cpp) counts ceil((end - start) / step) in double and
    // computes start + i * step in double for a floating result; for int64 it truncates the
    // three to int64 first (ONNX Cast truncates too). For the other integer types it counts from
    // the numbers as given: refused when one is a float.
    DType compute;
    if (is_float_type(out)) compute = DType::Float64;
    else if (out == DType::Int64 || !floats) compute = DType::Int64;
    else throw Unsupported(where_ + ": aten::arange of " + std::string(ir::dtype_name(out)) + " with float bounds from an input's values (torch counts from the unrounded numbers)");
    for (auto& v : b) v = cast(tensor_of(v), compute);
    VRef r = emit(*range, {b[0], b[1], b[2], make_int(scalar_type_code(compute)), make_none(), make_none(), make_none()},
                  {OutInfo{compute, {new_run_time_dim()}}});
    VRef res = r->dtype == out ? r : cast(r, out);
    if (out_arg) {
      if (out_arg->known) out_arg->known->st->overwritten = true, out_arg->known->st->overwritten_by = "aten::arange.out";
      if (out_arg->alias) {  // the tensors sharing its memory (the views it was taken from) are stale now
        ++out_arg->alias->version;
        out_arg->alias->writer = "aten::arange.out";
      }
      *out_arg = *res;
      return out_arg;
    }
    return res;
  }

  // linspace(start, end, steps): torch's CPU kernel (RangeFactoriesKernel.cpp) computes, in the
  // result's type, step = (end - start) / (steps - 1), then start + step * i for i < steps / 2 and
  // end - step * (steps - 1 - i) after; steps == 1 gives start.
  if (args.size() != 3) throw Unsupported(where_ + ": aten::linspace with a bound from an input's values and " + std::to_string(args.size()) + " arguments");
  if (!is_float_type(out)) throw Unsupported(where_ + ": aten::linspace of " + std::string(ir::dtype_name(out)) + " with bounds from an input's values (only floating results)");
  VRef start = cast(tensor_of(args[0]), out), end = cast(tensor_of(args[1]), out);
  VRef steps = cast(tensor_of(args[2]), DType::Int64);
  VRef idx = emit(*range, {make_known(DType::Int64, {}, {0}), steps, make_known(DType::Int64, {}, {1}), make_int(scalar_type_code(DType::Int64)),
                           make_none(), make_none(), make_none()},
                  {OutInfo{DType::Int64, {new_run_time_dim()}}});
  VRef one = make_known(DType::Int64, {}, {1});
  VRef steps_f = cast(steps, out);
  // (steps - 1 at least 1: steps == 1 picks start + 0 * step, not a NaN from 0 / 0)
  VRef denom = cast(call_op("aten::maximum", {call_op("aten::sub", {steps, one}, {}), one}, {}), out);
  VRef step = call_op("aten::div", {call_op("aten::sub", {end, start}, {}), denom}, {});
  VRef idx_f = cast(idx, out);
  VRef lo = call_op("aten::add", {start, call_op("aten::mul", {step, idx_f}, {})}, {});
  VRef back = call_op("aten::sub", {call_op("aten::sub", {steps_f, cast(one, out)}, {}), idx_f}, {});
  VRef hi = call_op("aten::sub", {end, call_op("aten::mul", {step, back}, {})}, {});
  VRef half = call_op("aten::floor_divide", {steps, make_known(DType::Int64, {}, {2})}, {});
  VRef first = call_op("aten::lt", {idx, half}, {});
  VRef single = call_op("aten::eq", {steps, one}, {});
  VRef pick = call_op("aten::logical_or", {first, single}, {});
  return call_op("aten::where", {pick, lo, hi}, {});
}

// addmm / baddbmm / addmv / addbmm with beta or alpha a 0-d tensor the graph computes (traced
// `torch.baddbmm(x, a, b, beta=t, alpha=u)`: aten::ScalarImplicit of a tensor): beta * self +
// alpha * (a @ b), the scalars cast to the result's type as torch converts a Scalar; where beta
// is 0, self is not read (torch ignores it, NaN and inf included).
std::optional<VRef> Importer::run_time_scalars(const std::string& base, const std::vector<VRef>& args,
                                               const std::vector<std::pair<std::string, VRef>>& kwargs) {
  if (args.size() < 3) return std::nullopt;
  VRef beta = args.size() > 3 ? args[3] : make_int(1), alpha = args.size() > 4 ? args[4] : make_int(1);
  if (args.size() > 5) return std::nullopt;
  for (const auto& [n, v] : kwargs) {
    if (n == "beta") beta = v;
    else if (n == "alpha") alpha = v;
    else return std::nullopt;
  }
  auto run_time = [](const Val& v) { return (v.k == Val::K::Int && v.data) || (v.is_tensor() && !v.known && v.shape_known && v.shape.empty()); };
  if (!run_time(*beta) && !run_time(*alpha)) return std::nullopt;
  for (size_t k = 0; k < 3; ++k)
    if (!args[k]->is_tensor() || !args[k]->shape_known || args[k]->dtype != args[0]->dtype)
      throw Unsupported(where_ + ": " + base + " with a run-time beta or alpha and tensors of different types (not supported)");
  DType t = args[0]->dtype;
  auto scalar = [&](const VRef& v) -> VRef {
    VRef x;
    if (v->is_tensor()) x = v;
    else if (v->k == Val::K::Int && v->data) x = v->data;
    else if (v->k == Val::K::Int || v->k == Val::K::Bool) x = make_known(DType::Int64, {}, {static_cast<double>(v->k == Val::K::Int ? v->i : v->b)});
    else if (v->k == Val::K::Float) x = make_known(DType::Float64, {}, {v->f});
    else throw Unsupported(where_ + ": " + base + " with beta or alpha " + describe(*v));
    if (is_float_type(x->dtype) && !is_float_type(t))
      throw Unsupported(where_ + ": " + base + " of " + std::string(ir::dtype_name(t)) + " tensors with a floating beta or alpha (torch refuses it)");
    return call_op("aten::to", {x, make_int(scalar_type_code(t)), make_bool(false), make_bool(false)}, {});
  };
  VRef b = scalar(beta), a = scalar(alpha);
  VRef prod = call_op(base == "aten::addbmm" ? "aten::bmm" : "aten::matmul", {args[1], args[2]}, {});
  if (base == "aten::addbmm") prod = call_op("aten::sum", {prod, make_list({make_int(0)}), make_bool(false), make_none()}, {});
  VRef zero = make_known(t, {}, {0});
  VRef first = call_op("aten::where", {call_op("aten::eq", {b, zero}, {}), zero, call_op("aten::mul", {args[0], b}, {})}, {});
  return call_op("aten::add", {first, call_op("aten::mul", {prod, a}, {})}, {});
}

}  // namespace amanda::torchscript
