#include "amanda/interp/kernel.h"

#include <algorithm>

#include "amanda/interp/executor.h"
#include "amanda/support/diagnostics.h"
#include "kernels/families.h"

namespace amanda::interp {

const RValue& KernelContext::value(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required but not given");
  return *inputs_[i];
}

const Tensor& KernelContext::input(size_t i) const {
  const RValue& v = value(i);
  if (!v.is_tensor()) fail("input " + std::to_string(i) + " must be a tensor");
  return v.tensor;
}

void KernelContext::set_output(size_t i, RValue v) {
  if (i >= outputs_.size()) return;  // an optional output the node does not declare
  outputs_[i] = std::move(v);
}

const ir::Value* KernelContext::attr(std::string_view name) const {
  amanda::Symbol s = g_.symbols().find(name);
  return s ? g_.attr(op_, s) : nullptr;
}

int64_t KernelContext::attr_int(std::string_view name, int64_t dflt) const {
  const ir::Value* v = attr(name);
  if (!v) return dflt;
  if (v->is_int()) return v->as_int();
  if (v->is_bool()) return v->as_bool();
  fail("attribute '" + std::string(name) + "' must be an int");
}

float KernelContext::attr_float(std::string_view name, float dflt) const {
  const ir::Value* v = attr(name);
  if (!v) return dflt;
  if (v->is_float()) return static_cast<float>(v->as_float());
  if (v->is_int()) return static_cast<float>(v->as_int());
  fail("attribute '" + std::string(name) + "' must be a float");
}

std::string KernelContext::attr_string(std::string_view name, std::string dflt) const {
  const ir::Value* v = attr(name);
  if (!v) return dflt;
  if (v->is_string()) return v->as_string();
  fail("attribute '" + std::string(name) + "' must be a string");
}

std::optional<std::vector<int64_t>> KernelContext::attr_ints(std::string_view name) const {
  const ir::Value* v = attr(name);
  if (!v) return std::nullopt;
  std::vector<int64_t> r;
  if (v->is_int()) return std::vector<int64_t>{v->as_int()};
  if (!v->is_list()) fail("attribute '" + std::string(name) + "' must be a list of ints");
  for (const auto& e : v->as_list()) {
    if (!e.is_int()) fail("attribute '" + std::string(name) + "' must be a list of ints");
    r.push_back(e.as_int());
  }
  return r;
}

std::optional<std::vector<float>> KernelContext::attr_floats(std::string_view name) const {
  const ir::Value* v = attr(name);
  if (!v) return std::nullopt;
  std::vector<float> r;
  if (!v->is_list()) fail("attribute '" + std::string(name) + "' must be a list of floats");
  for (const auto& e : v->as_list()) {
    if (e.is_float()) r.push_back(static_cast<float>(e.as_float()));
    else if (e.is_int()) r.push_back(static_cast<float>(e.as_int()));
    else fail("attribute '" + std::string(name) + "' must be a list of floats");
  }
  return r;
}

std::optional<std::vector<std::string>> KernelContext::attr_strings(std::string_view name) const {
  const ir::Value* v = attr(name);
  if (!v) return std::nullopt;
  std::vector<std::string> r;
  if (v->is_string()) return std::vector<std::string>{v->as_string()};
  if (!v->is_list()) fail("attribute '" + std::string(name) + "' must be a list of strings");
  for (const auto& e : v->as_list()) {
    if (!e.is_string()) fail("attribute '" + std::string(name) + "' must be a list of strings");
    r.push_back(e.as_string());
  }
  return r;
}

const ir::Tensor* KernelContext::attr_tensor(std::string_view name) const {
  const ir::Value* v = attr(name);
  return v && v->is_tensor() ? &v->as_tensor() : nullptr;
}

std::shared_ptr<const ir::Tensor> KernelContext::attr_tensor_ptr(std::string_view name) const {
  const ir::Value* v = attr(name);
  return v && v->is_tensor() ? v->tensor_ptr() : nullptr;
}

ir::OpId KernelContext::attr_graph(std::string_view name) const {
  const ir::Value* v = attr(name);
  return v && v->is_graph() ? v->as_graph() : ir::OpId();
}

std::vector<RValue> KernelContext::run_body(ir::OpId body, std::vector<RValue> args) {
  return exec_.run_graph(body, std::move(args), captures_, nullptr);
}

std::string KernelContext::where() const { return g_.path(op_) + " (" + std::string(g_.type_str(op_)) + ")"; }

void KernelContext::fail(const std::string& message) const { throw Error(where() + ": " + message); }

void KernelRegistry::add(std::string_view op_type, int since_version, KernelFn fn) {
  auto& v = kernels_[std::string(op_type)];
  v.emplace_back(since_version, fn);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

KernelFn KernelRegistry::find(std::string_view op_type, int opset) const {
  auto it = kernels_.find(std::string(op_type));
  if (it == kernels_.end()) return nullptr;
  KernelFn best = nullptr;
  for (const auto& [since, fn] : it->second)
    if (since <= opset) best = fn;
  return best;
}

std::vector<std::string> KernelRegistry::op_types() const {
  std::vector<std::string> r;
  for (const auto& [k, v] : kernels_) r.push_back(k);
  std::sort(r.begin(), r.end());
  return r;
}

const KernelRegistry& KernelRegistry::builtin() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    kernels::register_all(*reg);
    return reg;
  }();
  return *r;
}

}  // namespace amanda::interp
