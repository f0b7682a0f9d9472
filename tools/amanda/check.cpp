#include "check.h"

#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "amanda/interp/executor.h"
#include "amanda/support/diagnostics.h"
#include "run_support.h"

namespace amanda::tool {

namespace {

struct Diff {
  bool ok = true;
  std::string what;
  double max_abs = 0;
};

// |a - b| <= atol + rtol * |b| elementwise (b: the source's value), same type and shape.
Diff compare(const interp::RValue& a, const interp::RValue& b, double rtol, double atol) {
  Diff d;
  if (a.kind != b.kind) return {false, "one is a tensor, the other not", 0};
  if (a.kind == interp::RValue::Kind::None) return d;
  if (a.kind == interp::RValue::Kind::Sequence) {
    if (a.seq.size() != b.seq.size()) return {false, "sequence lengths differ", 0};
    for (size_t i = 0; i < a.seq.size(); ++i) {
      Diff e = compare(interp::RValue(a.seq[i]), interp::RValue(b.seq[i]), rtol, atol);
      d.max_abs = std::max(d.max_abs, e.max_abs);
      if (!e.ok) return e;
    }
    return d;
  }
  const interp::Tensor &x = a.tensor, &y = b.tensor;
  if (x.dtype() != y.dtype())
    return {false, fmt::format("element type {} vs {}", ir::dtype_name(x.dtype()), ir::dtype_name(y.dtype())), 0};
  if (x.shape() != y.shape()) return {false, fmt::format("shape {} vs {}", interp::shape_str(x.shape()), interp::shape_str(y.shape())), 0};
  if (x.dtype() == ir::DType::String) return {x.strings() == y.strings(), "strings differ", 0};
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < x.numel(); ++i) {
    double p = x.get_f64(i), q = y.get_f64(i);
    if (std::isnan(p) && std::isnan(q)) continue;
    double e = std::fabs(p - q);
    if (!(e <= atol + rtol * std::fabs(q))) {
      if (first < 0) first = i;
      ++bad;
    }
    if (std::isfinite(e)) d.max_abs = std::max(d.max_abs, e);
  }
  if (bad) {
    d.ok = false;
    d.what = fmt::format("{} of {} elements differ (first at flat index {}: {} vs {}; max abs diff {:.3g})", bad, x.numel(),
                         first, x.get_f64(first), y.get_f64(first), d.max_abs);
  }
  return d;
}

std::string op_label(const ir::Graph& g, ir::OpId op) { return g.path(op) + " (" + std::string(g.type_str(op)) + ")"; }

}  // namespace

int check_conversion(const text::Document& source, const text::Document& converted,
                     const std::map<uint32_t, std::string>& provenance, const CheckOptions& o) {
  const ir::Graph &gs = source.graph, &gc = converted.graph;
  interp::Executor es(gs), ec(gc);
  bool missing = report_missing_kernels(es, "source");
  missing = report_missing_kernels(ec, "converted") || missing;
  if (missing) return 1;
  std::vector<std::string> random_names;
  auto feeds = prepare_inputs(es, o.inputs, o.seed, &random_names);
  // The converted graph gets the same inputs (its input names are the source's).
  std::map<std::string, interp::RValue> feeds_c;
  for (const auto& spec : ec.inputs())
    if (auto it = feeds.find(spec.name); it != feeds.end()) feeds_c.emplace(spec.name, it->second);
  // Source values by name, with the op that made each.
  std::map<std::string, std::pair<ir::OpId, interp::RValue>> src_values;
  interp::RunOptions rs;
  rs.on_value = [&](ir::OpId op, ir::PortId p, const interp::RValue& v) { src_values[value_name(gs, p)] = {op, v}; };
  auto out_s = es.run(feeds, rs);
  // Run the converted graph; the first op whose output differs from the source's same value.
  std::string first_divergence;
  interp::RunOptions rc;
  rc.on_value = [&](ir::OpId op, ir::PortId p, const interp::RValue& v) {
    if (!first_divergence.empty()) return;
    std::string name = value_name(gc, p);
    auto it = src_values.find(name);
    if (it == src_values.end()) return;  // a value the conversion introduced: checked where it flows out
    Diff d = compare(v, it->second.second, o.rtol, o.atol);
    if (d.ok) return;
    auto prov = provenance.find(op.value);
    first_divergence = fmt::format(
        "first diverging op: {} computes '{}' differently from the source's {}: {}\n  made by {}", op_label(gc, op), name,
        op_label(gs, it->second.first), d.what,
        prov != provenance.end() ? prov->second : std::string("no rule (the op passed through unchanged)"));
  };
  auto out_c = ec.run(feeds_c, rc);
  auto names_s = es.output_names(), names_c = ec.output_names();
  if (out_s.size() != out_c.size()) {
    std::cout << fmt::format("check: FAILED: the source has {} outputs, the converted graph {}\n", out_s.size(), out_c.size());
    return 1;
  }
  int failures = 0;
  double worst = 0;
  for (size_t i = 0; i < out_s.size(); ++i) {
    Diff d = compare(out_c[i], out_s[i], o.rtol, o.atol);
    worst = std::max(worst, d.max_abs);
    if (!d.ok) {
      ++failures;
      std::cout << fmt::format("check: output '{}' differs: {}\n", names_c[i], d.what);
    }
  }
  std::string inputs_note = random_names.empty() ? "" : fmt::format(" (random inputs, seed {})", o.seed);
  if (failures) {
    std::cout << (first_divergence.empty() ? "check: no intermediate value of the same name differs (the outputs do)\n"
                                           : "check: " + first_divergence + "\n");
    std::cout << fmt::format("check: FAILED: {} of {} outputs differ beyond rtol {} atol {}{}\n", failures, out_s.size(),
                             o.rtol, o.atol, inputs_note);
    return 1;
  }
  std::cout << fmt::format("check: ok: {} outputs match (max abs diff {:.3g}, rtol {} atol {}){}; both sides run by the "
                           "reference interpreter\n",
                           out_s.size(), worst, o.rtol, o.atol, inputs_note);
  return 0;
}

int check_with_runtime(const pipeline::Framework& source, const std::string& source_path, const text::Document& converted,
                       const CheckOptions& o) {
  std::string why;
  if (!source.can_run(&why)) {
    std::cerr << "amanda: error: --check of a " << source.name() << " source runs it in its own runtime, which is not available: "
              << why << "\n";
    return 2;
  }
  const ir::Graph& gc = converted.graph;
  interp::Executor ec(gc);
  if (report_missing_kernels(ec, "converted")) return 1;
  std::vector<std::string> random_names;
  auto feeds = prepare_inputs(ec, o.inputs, o.seed, &random_names);
  // forward()'s arguments: the converted graph's inputs that have no initializer, in order.
  std::vector<ir::Tensor> args;
  for (const auto& spec : ec.inputs()) {
    if (spec.has_initializer) continue;
    auto it = feeds.find(spec.name);
    if (it == feeds.end() || it->second.kind != interp::RValue::Kind::Tensor) {
      std::cout << fmt::format("check: FAILED: input '{}' is not a tensor the module's forward() can take\n", spec.name);
      return 1;
    }
    const interp::Tensor& t = it->second.tensor;
    args.push_back(ir::Tensor::from_bytes(t.dtype(), std::vector<int64_t>(t.shape().begin(), t.shape().end()),
                                          std::string(reinterpret_cast<const char*>(t.raw()), t.nbytes())));
  }
  std::vector<ir::Tensor> torch_out = source.run(source_path, args);
  auto out_c = ec.run(feeds, {});
  auto names_c = ec.output_names();
  if (torch_out.size() != out_c.size()) {
    std::cout << fmt::format("check: FAILED: the module's forward() returns {} tensors, the converted graph {} outputs\n",
                             torch_out.size(), out_c.size());
    return 1;
  }
  int failures = 0;
  double worst = 0;
  for (size_t i = 0; i < out_c.size(); ++i) {
    interp::RValue src(interp::Tensor::borrow(std::make_shared<const ir::Tensor>(std::move(torch_out[i]))));
    Diff d = compare(out_c[i], src, o.rtol, o.atol);
    worst = std::max(worst, d.max_abs);
    if (!d.ok) {
      ++failures;
      std::cout << fmt::format("check: output '{}' (result {} of forward()) differs: {}\n", names_c[i], i, d.what);
    }
  }
  std::string inputs_note = random_names.empty() ? "" : fmt::format(" (random inputs, seed {})", o.seed);
  if (failures) {
    std::cout << "check: the source ran in its own runtime (" << source.name() << "), which gives its outputs only: no op-by-op comparison\n";
    std::cout << fmt::format("check: FAILED: {} of {} outputs differ beyond rtol {} atol {}{}\n", failures, out_c.size(), o.rtol,
                             o.atol, inputs_note);
    return 1;
  }
  std::cout << fmt::format("check: ok: {} outputs match (max abs diff {:.3g}, rtol {} atol {}){}; the source ran in its own "
                           "runtime ({}, a child process), the converted graph in the reference interpreter\n",
                           out_c.size(), worst, o.rtol, o.atol, inputs_note, source.name());
  return 0;
}

}  // namespace amanda::tool
