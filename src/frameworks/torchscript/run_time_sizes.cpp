// Sizes read from an input's values (issue 33): `torch.zeros(int(n), 1)`, `x.topk(int(k))`,
// `torch.arange(end)` / `torch.linspace(a, b, n)` with 0-d tensors as bounds. torch.onnx.export
// makes such sizes graph values (ConstantOfShape of a computed shape, TopK's K input, Range);
// so does this: each number becomes a new run-time size (a symbolic dimension `dyn<k>` of the
// outputs), its value the graph's. The libtorch reader cannot (it fixes sizes at one run).
#include "frameworks/torchscript/importer_state.h"
#include "frameworks/torchscript/promotion.h"

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
      if (out_arg->known) out_arg->known->st->overwritten = true;
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

}  // namespace amanda::torchscript
