#include "amanda/support/budget.h"
#include "amanda/interp/executor.h"

#include <chrono>
#include <deque>
#include <cstdlib>
#include <limits>
#include <optional>

#include <absl/container/node_hash_map.h>

#include "amanda/ir/types.h"
#include "amanda/support/diagnostics.h"

namespace amanda::interp {

namespace {
bool is_capture(std::string_view port_name) { return port_name.starts_with("@capture."); }
}  // namespace

// What running one scope needs, computed once: the order, each op's kernel and ports, and when
// each value is read for the last time (so it can be freed then).
struct Executor::Plan {
  struct Step {
    ir::OpId op;
    KernelFn fn = nullptr;
    int version = 0;
    std::vector<ir::PortId> args;      // positional input ports
    std::vector<ir::PortId> captures;  // capture ports
    std::vector<ir::PortId> outs;
    std::vector<bool> used;
    std::vector<ir::PortId> free_after;  // sources whose last reader is this step
    // Conv -> its only reader Relu/Clip/LeakyRelu: the index of that step, which the Conv step
    // then computes (when the run allows it, see run_graph).
    int fuse_next = -1;
    bool takes_native = false;  // the kernel accepts inputs in a native layout
    bool native_ok = false;     // output 0 may stay native: every reader takes native inputs
  };
  std::vector<Step> steps;
  std::vector<ir::PortId> outputs;  // the scope's output ports
};

Executor::Executor(const ir::Graph& g, const KernelRegistry& kernels) : g_(g), kernels_(kernels) {
  std::string_view ns = g.str(g.graph_namespace(g.root()));
  constexpr std::string_view prefix = "amanda/onnx/";
  const ir::Value* has_imports = g.attr(g.root(), g.symbols().find("opset_import"));
  if (ns.empty() && has_imports) ns = "amanda/onnx/0";  // only non-default domains (ai.onnx.preview.training)
  if (ns == kCoreNamespace) {
    // The typed core: its kernels are registered under "amanda/core::TYPE" at version 1, and the
    // ONNX kernels they reuse see opset 17 (core ops carry their parameters as attributes).
    core_ = true;
    opset_ = 17;
    return;
  }
  if (!ns.starts_with(prefix))
    throw Error("the interpreter runs graphs of the ONNX namespace (amanda/onnx/V) and of amanda/core; this graph is in '" +
                std::string(ns) + "'");
  try {
    opset_ = std::stoi(std::string(ns.substr(prefix.size())));
  } catch (...) {
    throw Error("cannot read the opset of namespace '" + std::string(ns) + "'");
  }
  if (const ir::Value* imports = g.attr(g.root(), g.symbols().find("opset_import")); imports && imports->is_list())
    for (const auto& e : imports->as_list()) {
      const ir::Value* d = e.find("domain");
      const ir::Value* v = e.find("version");
      if (d && v && d->is_string() && v->is_int()) domain_versions_[d->as_string()] = static_cast<int>(v->as_int());
    }
}

Executor::~Executor() = default;

std::string Executor::kernel_key(ir::OpId op) const {
  return core_ ? std::string(kCoreNamespace) + "::" + std::string(g_.type_str(op)) : std::string(g_.type_str(op));
}

int Executor::op_version(ir::OpId op) const {
  if (core_) return 1;
  std::string_view type = g_.type_str(op);
  size_t sep = type.find("::");
  if (sep == std::string_view::npos) return opset_;
  auto it = domain_versions_.find(std::string(type.substr(0, sep)));
  return it == domain_versions_.end() ? 1 : it->second;
}

std::vector<MissingKernel> Executor::missing_kernels() const {
  std::vector<MissingKernel> r;
  g_.for_each_op([&](ir::OpId op) {
    int v = op_version(op);
    if (!kernels_.find(kernel_key(op), v)) r.push_back({g_.path(op), std::string(g_.type_str(op)), v});
  });
  return r;
}

std::optional<DType> onnx_elem_type(std::string_view t) {
  if (!t.starts_with("tensor(") || !t.ends_with(")")) return std::nullopt;
  std::string_view e = t.substr(7, t.size() - 8);
  if (e == "float") return DType::Float32;
  if (e == "double") return DType::Float64;
  if (e == "float16") return DType::Float16;
  return ir::dtype_from_name(e);
}

std::vector<InputSpec> Executor::inputs() const {
  std::vector<InputSpec> r;
  amanda::Symbol s_graph_input = g_.symbols().find("graph_input"), s_type = g_.symbols().find("type"),
             s_shape = g_.symbols().find("shape"), s_init = g_.symbols().find("initializer");
  for (ir::PortId p : g_.inputs(g_.root())) {
    const ir::Value* gi = s_graph_input ? g_.attr(p, s_graph_input) : nullptr;
    if (gi && gi->is_bool() && !gi->as_bool()) continue;
    InputSpec spec;
    spec.name = std::string(g_.port_name_str(p));
    if (const ir::Value* t = s_type ? g_.attr(p, s_type) : nullptr; t && t->is_string()) {
      spec.type = t->as_string();
      if (auto d = onnx_elem_type(spec.type)) spec.dtype = *d;
      else if (auto e = ir::elem_from_any_name(spec.type)) spec.dtype = *e;  // another reader's spelling (float32, Float)
    }
    if (const ir::Value* sh = s_shape ? g_.attr(p, s_shape) : nullptr; sh && sh->is_list()) {
      spec.has_shape = true;
      for (const auto& d : sh->as_list()) spec.shape.push_back(d.is_int() ? d.as_int() : -1);
    }
    // A graph not read from ONNX (converted from another framework, not yet written): its ports'
    // IR types say what the attributes do not.
    if (const ir::TypeData& td = g_.port_type_data(p); g_.port_type(p) && td.kind == ir::TypeKind::Tensor) {
      if (spec.dtype == DType::Undefined && td.elem != DType::Undefined) {
        spec.dtype = td.elem;
        if (spec.type.empty()) spec.type = std::string(ir::dtype_name(td.elem));
      }
      if (!spec.has_shape && td.ranked) {
        spec.has_shape = true;
        for (ir::Dim d : td.dims) spec.shape.push_back(d.is_known() ? d.value() : -1);
      }
    }
    spec.has_initializer = s_init && g_.attr(p, s_init);
    r.push_back(std::move(spec));
  }
  return r;
}

std::vector<std::string> Executor::output_names() const {
  std::vector<std::string> r;
  for (ir::PortId p : g_.outputs(g_.root())) r.emplace_back(g_.port_name_str(p));
  return r;
}

const Executor::Plan& Executor::plan(ir::OpId scope) {
  auto it = plans_.find(scope.value);
  if (it != plans_.end()) return *it->second;
  auto p = std::make_unique<Plan>();
  ir::TopoResult topo = g_.topo_order(scope);
  if (!topo.ok()) throw Error(g_.path(topo.cycle.front()) + ": the graph has a cycle; it cannot be run");
  absl::flat_hash_map<uint32_t, size_t> last_use;
  for (ir::OpId op : topo.order) {
    Plan::Step st;
    st.op = op;
    st.version = op_version(op);
    st.fn = kernels_.find(kernel_key(op), st.version);
    if (!st.fn)
      throw Error(g_.path(op) + ": no kernel for op " + std::string(g_.type_str(op)) + " (opset " +
                  std::to_string(st.version) + ")");
    for (ir::PortId in : g_.inputs(op)) {
      (is_capture(g_.port_name_str(in)) ? st.captures : st.args).push_back(in);
      if (ir::PortId src = g_.producer(in)) last_use[src.value] = p->steps.size();
    }
    for (ir::PortId out : g_.outputs(op)) {
      st.outs.push_back(out);
      st.used.push_back(g_.out_degree(out) > 0);
    }
    p->steps.push_back(std::move(st));
  }
  if (!core_) {
    absl::flat_hash_map<uint32_t, int> step_of;
    for (size_t i = 0; i < p->steps.size(); ++i) step_of[p->steps[i].op.value] = static_cast<int>(i);
    // The kernels that take oneDNN's layouts: a chain Conv -> Conv (or -> Add -> Relu -> Conv,
    // the residual blocks) then never converts its values back to row-major in between. Natives
    // are float32 (only oneDNN's convolutions make them).
    for (auto& st : p->steps) {
      std::string_view t = g_.type_str(st.op);
      st.takes_native = t == "Conv" || t == "Add" || t == "Relu";
    }
    for (auto& st : p->steps) {
      if (!st.takes_native || st.outs.empty() || g_.out_degree(st.outs[0]) == 0) continue;
      bool ok = true;
      for (ir::PortId dst : g_.consumers(st.outs[0])) {
        auto it = step_of.find(g_.port_op(dst).value);
        ok = ok && it != step_of.end() && p->steps[static_cast<size_t>(it->second)].takes_native;
      }
      st.native_ok = ok;
    }
    for (auto& st : p->steps) {  // a fused activation's readers decide for its Conv
      if (g_.type_str(st.op) != "Conv" || st.outs.empty() || g_.out_degree(st.outs[0]) != 1) continue;
      ir::PortId dst = g_.consumers(st.outs[0]).front();
      auto it = step_of.find(g_.port_op(dst).value);
      if (it == step_of.end()) continue;
      auto& act = p->steps[static_cast<size_t>(it->second)];
      if (act.outs.empty() || g_.out_degree(act.outs[0]) == 0) continue;
      bool ok = true;
      for (ir::PortId d2 : g_.consumers(act.outs[0])) {
        auto i2 = step_of.find(g_.port_op(d2).value);
        ok = ok && i2 != step_of.end() && p->steps[static_cast<size_t>(i2->second)].takes_native;
      }
      act.native_ok = ok;
    }
    for (auto& st : p->steps) {
      if (g_.type_str(st.op) != "Conv" || st.outs.empty() || g_.out_degree(st.outs[0]) != 1) continue;
      ir::PortId dst = g_.consumers(st.outs[0]).front();
      auto it = step_of.find(g_.port_op(dst).value);
      if (it == step_of.end() || g_.port_index(dst) != 0) continue;
      std::string_view t = g_.type_str(g_.port_op(dst));
      if (t == "Relu" || t == "Clip" || t == "LeakyRelu") st.fuse_next = it->second;
    }
  }
  for (ir::PortId out : g_.outputs(scope)) {
    p->outputs.push_back(out);
    if (ir::PortId src = g_.producer(out)) last_use.erase(src.value);  // scope outputs live to the end
  }
  for (auto [src, step] : last_use) p->steps[step].free_after.push_back(ir::PortId(src));
  auto& ref = *p;
  plans_.emplace(scope.value, std::move(p));
  return ref;
}

std::vector<RValue> Executor::run(const std::map<std::string, RValue>& feeds, const RunOptions& options) {
  if (auto missing = missing_kernels(); !missing.empty()) {
    std::string msg = "no kernel for " + std::to_string(missing.size()) + " op(s):";
    for (const auto& m : missing) msg += "\n  " + m.path + ": " + m.type + " (opset " + std::to_string(m.opset) + ")";
    throw Error(msg);
  }
  for (const auto& [name, v] : feeds) {
    bool known = false;
    for (ir::PortId p : g_.inputs(g_.root())) known |= g_.port_name_str(p) == name;
    if (!known) throw Error("input '" + name + "': the model has no input of that name");
  }
  std::vector<RValue> args;
  std::vector<bool> fed;
  amanda::Symbol s_graph_input = g_.symbols().find("graph_input");
  for (ir::PortId p : g_.inputs(g_.root())) {
    const ir::Value* gi = s_graph_input ? g_.attr(p, s_graph_input) : nullptr;
    if (gi && gi->is_bool() && !gi->as_bool()) continue;
    auto it = feeds.find(std::string(g_.port_name_str(p)));
    fed.push_back(it != feeds.end());
    args.push_back(it == feeds.end() ? RValue::none() : it->second);
  }
  root_fed_ = std::move(fed);
  profile_ = options.profile;
  return run_graph(g_.root(), std::move(args), nullptr, &options);
}

namespace {
// The activation a Conv may apply for its reader `act`, when its parameters are known now: Relu;
// LeakyRelu's alpha; Clip's bounds (attributes before opset 11, inputs computed already after).
// A float32 Conv only: the kernel casts other types, and the activation must see the cast value.
template <class Frame, class Lookup>
std::optional<KernelContext::Activation> activation_of(const ir::Graph& g, ir::OpId op, int opset,
                                                       const std::vector<ir::PortId>& args, Frame& frame,
                                                       Lookup& lookup, Executor& ex) {
  using A = KernelContext::Activation;
  std::string_view t = g.type_str(op);
  KernelContext probe(g, op, opset, ex);
  A a;
  if (t == "Relu") {
    a.kind = A::Relu;
  } else if (t == "LeakyRelu") {
    a.kind = A::LeakyRelu;
    a.a = probe.attr_float("alpha", 0.01f);
  } else if (t == "Clip") {
    a.kind = A::Clip;
    a.a = -std::numeric_limits<float>::infinity();
    a.b = std::numeric_limits<float>::infinity();
    if (opset < 11) {
      a.a = probe.attr_float("min", -std::numeric_limits<float>::max());
      a.b = probe.attr_float("max", std::numeric_limits<float>::max());
    } else {
      for (size_t k = 1; k < args.size() && k < 3; ++k) {
        ir::PortId src = g.producer(args[k]);
        if (!src) continue;
        if (!frame.contains(src.value)) return std::nullopt;  // not computed yet
        const RValue* v = lookup(src, args[k]);
        if (!v->is_tensor() || v->tensor.dtype() != DType::Float32 || v->tensor.numel() != 1) return std::nullopt;
        (k == 1 ? a.a : a.b) = v->tensor.data<float>()[0];
      }
    }
  } else {
    return std::nullopt;
  }
  return a;
}
}  // namespace

std::vector<RValue> Executor::run_graph(ir::OpId scope, std::vector<RValue> args,
                                        const absl::flat_hash_map<uint32_t, const RValue*>* captures,
                                        const RunOptions* options) {
  const Plan& pl = plan(scope);
  // A body run is a step too (a Loop whose body has no op would otherwise run free).
  if (!Budget::run().try_charge(BudgetKind::Steps, 1)) Budget::run().exceeded(BudgetKind::Steps, 1, g_.path(scope));
  // node_hash_map: pointers to values stay valid while later values are added.
  absl::node_hash_map<uint32_t, RValue> frame;
  amanda::Symbol s_graph_input = g_.symbols().find("graph_input"), s_init = g_.symbols().find("initializer");
  size_t next_arg = 0;
  bool is_root = scope == g_.root();
  for (ir::PortId p : g_.inputs(scope)) {
    const ir::Value* gi = s_graph_input ? g_.attr(p, s_graph_input) : nullptr;
    const ir::Value* init = s_init ? g_.attr(p, s_init) : nullptr;
    bool formal = !(gi && gi->is_bool() && !gi->as_bool());
    if (formal && next_arg < args.size()) {
      size_t k = next_arg++;
      RValue& a = args[k];
      // At the root an input not fed falls back to its initializer.
      if (!(is_root && k < root_fed_.size() && !root_fed_[k])) {
        frame[p.value] = std::move(a);
        continue;
      }
    }
    if (init && init->is_tensor()) {
      frame[p.value] = RValue(Tensor::borrow(init->tensor_ptr()));
    } else if (formal) {
      if (is_root) throw Error("input '" + std::string(g_.port_name_str(p)) + "' is not given and has no initializer");
      // A body's formal input past the arguments (Loop passes exactly what it has).
    }
  }
  auto lookup = [&](ir::PortId src, ir::PortId dst) -> const RValue* {
    if (auto it = frame.find(src.value); it != frame.end()) return &it->second;
    if (captures)
      if (auto it = captures->find(src.value); it != captures->end()) return it->second;
    throw Error(g_.path(dst) + ": its value (from " + g_.path(src) + ") is not available");
  };
  // Fusion leaves the Conv's own output uncomputed: not when every value is asked for.
  static const bool no_fusion = std::getenv("AMANDA_NO_FUSION") != nullptr;  // for comparisons
  bool may_fuse = !no_fusion && !(options && options->on_value);
  std::vector<bool> skip;
  std::deque<RValue> converted;  // row-major copies of native values read from an outer scope
  for (size_t si = 0; si < pl.steps.size(); ++si) {
    const auto& st = pl.steps[si];
    if (!skip.empty() && skip[si]) {
      for (ir::PortId src : st.free_after) frame.erase(src.value);
      continue;
    }
    KernelContext ctx(g_, st.op, core_ ? opset_ : st.version, *this);
    ctx.inputs_.reserve(st.args.size());
    for (ir::PortId in : st.args) {
      ir::PortId src = g_.producer(in);
      const RValue* v = src ? lookup(src, in) : nullptr;
      if (v && !st.takes_native && v->is_tensor() && v->tensor.layout()) {
        // A value left native for other readers: converted once, for this one and the rest.
        auto it = frame.find(src.value);
        if (it != frame.end()) {
          it->second.tensor = it->second.tensor.plain();
          v = &it->second;
        } else {
          converted.push_back(RValue(v->tensor.plain()));
          v = &converted.back();
        }
      }
      ctx.inputs_.push_back(v);
    }
    absl::flat_hash_map<uint32_t, const RValue*> caps;
    for (ir::PortId in : st.captures)
      if (ir::PortId src = g_.producer(in)) caps[in.value] = lookup(src, in);
    ctx.captures_ = &caps;
    ctx.outputs_.resize(st.outs.size());
    for (auto& o : ctx.outputs_) o.kind = RValue::Kind::None, o.elem = DType::Undefined;
    ctx.used_ = st.used;
    const Plan::Step* fused = nullptr;
    if (may_fuse && st.fuse_next >= 0 && !ctx.inputs_.empty() && ctx.inputs_[0] && ctx.inputs_[0]->is_tensor() &&
        ctx.inputs_[0]->tensor.dtype() == DType::Float32) {
      const Plan::Step& act = pl.steps[static_cast<size_t>(st.fuse_next)];
      if (auto a = activation_of(g_, act.op, core_ ? opset_ : act.version, act.args, frame, lookup, *this)) {
        ctx.fused_ = *a;
        fused = &act;
      }
    }
    ctx.native_out_ = may_fuse && (fused ? fused->native_ok : st.native_ok);
    // One step per op run (the interpreter's and folding's share of --max-steps): a Loop of 2^62
    // trips stops here, not after the heat death of the machine.
    if (!Budget::run().try_charge(BudgetKind::Steps, 1)) Budget::run().exceeded(BudgetKind::Steps, 1, ctx.where());
    try {
      if (profile_) {
        auto t0 = std::chrono::steady_clock::now();
        st.fn(ctx);
        auto& e = (*profile_)[std::string(g_.type_str(st.op))];
        e.first += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++e.second;
      } else {
        st.fn(ctx);
      }
    } catch (const std::bad_alloc&) {
      throw Error(ctx.where() + ": out of memory");
    } catch (const NoSuchDim& e) {
      throw Error(ctx.where() + ": " + e.what());
    }
    if (fused) {
      // The Conv computed the activation's output: it goes to the activation's port, and the
      // activation's step is skipped (its inputs are still freed there).
      if (skip.empty()) skip.assign(pl.steps.size(), false);
      skip[static_cast<size_t>(st.fuse_next)] = true;
      if (fused->used[0]) frame[fused->outs[0].value] = std::move(ctx.outputs_[0]);
      for (ir::PortId src : st.free_after) frame.erase(src.value);
      continue;
    }
    for (size_t i = 0; i < st.outs.size(); ++i) {
      if (!st.used[i]) continue;
      if (options && options->on_value && is_root) options->on_value(st.op, st.outs[i], ctx.outputs_[i]);
      frame[st.outs[i].value] = std::move(ctx.outputs_[i]);
    }
    for (ir::PortId src : st.free_after) frame.erase(src.value);
  }
  std::vector<RValue> result;
  for (ir::PortId out : pl.outputs) {
    ir::PortId src = g_.producer(out);
    if (!src) throw Error(g_.path(out) + ": graph output has no producer");
    const RValue* v = lookup(src, out);
    result.push_back(v->is_tensor() && v->tensor.layout() ? RValue(v->tensor.plain()) : *v);
  }
  return result;
}

}  // namespace amanda::interp
