#include "amanda/interp/fold.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/node_hash_map.h>

#include <algorithm>
#include <optional>

#include "amanda/interp/executor.h"
#include "amanda/ir/conventions.h"
#include "amanda/ir/value.h"
#include "amanda/support/budget.h"
#include "kernels/families.h"

namespace amanda::interp {

namespace {

constexpr uint64_t kFoldSteps = 200'000;  // ops one folding run may execute

bool nondeterministic(std::string_view type) {
  return type.starts_with("Random") || type == "Bernoulli" || type == "Multinomial" || type == "Dropout";
}

// Ops whose output shape follows from their inputs' shapes alone (not from the values of inputs
// after the first): for them, a value-dependent second input does not make the shape dynamic.
bool shape_from_shapes(std::string_view t) {
  static const absl::flat_hash_set<std::string_view> ops = {
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "And", "Or", "Xor", "Where", "PRelu", "BitShift", "MatMul", "Gemm", "Conv", "ConvTranspose",
      "BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization", "Concat", "Gather",
      "GatherElements", "GatherND", "ScatterND", "ScatterElements", "Scatter", "Einsum", "CastLike", "Dropout", "Clip"};
  return ops.contains(t);
}

bool static_shape(const ir::Graph& g, ir::PortId p) {
  ir::TypeId t = g.port_type(p);
  if (!t) return false;
  const ir::TypeData& d = g.port_type_data(p);
  if (d.kind != ir::TypeKind::Tensor || !d.ranked) return false;
  for (ir::Dim x : d.dims)
    if (!x.is_known()) return false;
  return true;
}

}  // namespace

FoldResult fold_constants(ir::Graph& g) {
  FoldResult res;
  ir::OpId root = g.root();
  ir::TopoResult topo = g.topo_order(root);
  if (!topo.ok()) return res;
  // Which ports hold values that no graph input changes.
  absl::flat_hash_set<uint32_t> constant;  // port ids
  for (ir::PortId p : g.inputs(root))
    if (ir::fixed_initializer(g, p)) constant.insert(p.value);
  // Which ports have a shape that no graph input's values change: graph inputs of static shape,
  // initializers, and what ops make from those (where the op's shape follows from shapes, or its
  // other inputs are constant). Shape and Size of such a value are constants.
  absl::flat_hash_set<uint32_t> static_shaped;
  for (ir::PortId p : g.inputs(root))
    if (constant.contains(p.value) || static_shape(g, p)) static_shaped.insert(p.value);
  absl::flat_hash_set<uint32_t> const_ops;
  for (ir::OpId op : topo.order) {
    std::string_view type = g.type_str(op);
    bool has_graph = false;
    for (const auto& [k, v] : g.attrs(op)) has_graph |= v.is_graph();
    bool all = !nondeterministic(type) && !has_graph && g.inputs(op).size() > 0;
    bool shapes = !has_graph && type != "NonZero" && type != "Unique" && type != "Compress" && type != "NonMaxSuppression";
    size_t k = 0;
    for (ir::PortId in : g.inputs(op)) {
      if (g.is_control(in)) continue;
      ir::PortId src = g.producer(in);
      size_t index = k++;
      if (!src) continue;  // an omitted optional input
      bool c = constant.contains(src.value);
      all = all && c;
      if (!static_shaped.contains(src.value) || (index > 0 && !c && !shape_from_shapes(type))) shapes = false;
    }
    if ((type == "Shape" || type == "Size") && !g.inputs(op).empty()) {
      ir::PortId src = g.producer(g.inputs(op)[0]);
      all = src && static_shaped.contains(src.value);
    }
    if (type == "Constant") all = shapes = true;
    if (shapes || all)
      for (ir::PortId out : g.outputs(op))
        if (!g.is_control(out)) static_shaped.insert(out.value);
    if (!all) continue;
    const_ops.insert(op.value);
    for (ir::PortId out : g.outputs(op))
      if (!g.is_control(out)) constant.insert(out.value);
  }
  // The boundary: constant outputs of computing ops read by an op that is not constant. Values
  // that are graph outputs stay as they are.
  std::vector<ir::PortId> boundary;
  for (ir::OpId op : topo.order) {
    if (!const_ops.contains(op.value) || g.type_str(op) == "Constant") continue;
    for (ir::PortId out : g.outputs(op)) {
      if (g.is_control(out)) continue;
      bool outside = false, graph_output = false;
      for (ir::PortId c : g.consumers(out)) {
        ir::OpId user = g.port_op(c);
        if (user == root) graph_output = true;
        else if (!const_ops.contains(user.value)) outside = true;
      }
      if (outside && !graph_output) boundary.push_back(out);
    }
  }
  if (boundary.empty()) return res;
  // The graph's inputs must have static shapes (folding is defined for those graphs only).
  for (ir::PortId p : g.inputs(root))
    if (!constant.contains(p.value) && !static_shape(g, p)) return res;
  // Compute only the constant ops the boundary values need, one by one with the interpreter's
  // kernels, and the Shape / Size of a static-shaped value from its type: the rest of the model
  // (its convolutions and matmuls, on inputs of ones) is not run. Running the whole graph made
  // folding cost as much as an inference, and started the kernels' OpenMP threads (vit_b_16:
  // 13.6 s to convert under load; 2.6 s now, most of it writing the archive).
  absl::flat_hash_set<uint32_t> needed;  // op ids
  {
    std::vector<ir::OpId> stack;
    for (ir::PortId p : boundary) stack.push_back(g.port_op(p));
    while (!stack.empty()) {
      ir::OpId op = stack.back();
      stack.pop_back();
      if (op == root || !const_ops.contains(op.value) || !needed.insert(op.value).second) continue;
      std::string_view type = g.type_str(op);
      for (ir::PortId in : g.inputs(op)) {
        if (g.is_control(in)) continue;
        ir::PortId src = g.producer(in);
        if (!src || ((type == "Shape" || type == "Size") && !constant.contains(src.value))) continue;
        stack.push_back(g.port_op(src));
      }
    }
  }
  absl::flat_hash_map<uint32_t, Tensor> values;
  // A folded value becomes a constant of the written model: one past this size is left computed
  // (a ConstantOfShape of a hostile size is not written out as gigabytes of zeros).
  constexpr size_t kMaxFoldedBytes = size_t(256) << 20;
  {
    // Folding is an optimisation: a graph it cannot run within a share of the budgets (a Loop of
    // 2^62 trips, a ConstantOfShape of terabytes) is left as it is, and the steps it spent are
    // given back to the run.
    struct Share {
      Budget& b = Budget::run();
      BudgetLimits saved = b.limits();
      uint64_t steps0 = b.used(BudgetKind::Steps);
      Share() {
        BudgetLimits mine = saved;
        mine.steps = std::min(saved.steps, steps0 + kFoldSteps);
        b.set_limits(mine);
      }
      ~Share() {
        b.set_limits(saved);
        b.refund(BudgetKind::Steps, b.used(BudgetKind::Steps) - steps0);
      }
    } share;
    std::optional<Executor> ex;
    try {
      ex.emplace(g);
    } catch (const Error&) {
      return res;  // not an ONNX graph
    }
    const KernelRegistry& kernels = KernelRegistry::builtin();
    absl::node_hash_map<uint32_t, RValue> frame;  // port -> value (node map: pointers stay valid)
    for (ir::PortId p : g.inputs(root))
      if (constant.contains(p.value))
        if (const ir::Value* v = ir::fixed_initializer(g, p); v && v->is_tensor())
          frame.emplace(p.value, RValue(Tensor::borrow(v->tensor_ptr())));
    try {
      for (ir::OpId op : topo.order) {
        if (!needed.contains(op.value)) continue;
        std::string_view type = g.type_str(op);
        std::vector<ir::PortId> outs;
        for (ir::PortId out : g.outputs(op))
          if (!g.is_control(out)) outs.push_back(out);
        if (!Budget::run().try_charge(BudgetKind::Steps, 1)) return res;
        std::vector<ir::PortId> ins;
        for (ir::PortId in : g.inputs(op))
          if (!g.is_control(in)) ins.push_back(in);
        ir::PortId first = ins.empty() ? ir::PortId() : g.producer(ins[0]);
        if ((type == "Shape" || type == "Size") && first && !constant.contains(first.value)) {
          // From the type, when it is known: a value static_shaped by constants this round folds
          // (Pad with computed pads) has its type after the next round's inference.
          if (!static_shape(g, first)) continue;
          std::vector<int64_t> dims;
          for (ir::Dim d : g.port_type_data(first).dims) dims.push_back(d.value());
          const int64_t rank = static_cast<int64_t>(dims.size());
          if (outs.size() != 1) continue;
          if (type == "Size") {
            int64_t n = 1;
            try {
              for (int64_t d : dims) n = checked_mul(n, d, "a folded Size");
            } catch (const Error&) {
              continue;  // (a hostile shape: left computed)
            }
            frame.emplace(outs[0].value, RValue(Tensor::scalar_i64(n)));
            continue;
          }
          KernelContext ctx(g, op, ex->opset(), *ex);
          auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank); };
          int64_t b = clamp(ctx.attr_int("start", 0)), e = clamp(ctx.attr_int("end", rank));
          Tensor t(DType::Int64, Shape{std::max(e - b, int64_t(0))});
          for (int64_t i = b; i < e; ++i) t.mutable_data<int64_t>()[i - b] = dims[static_cast<size_t>(i)];
          frame.emplace(outs[0].value, RValue(std::move(t)));
          continue;
        }
        if (type.find("::") != std::string_view::npos) continue;  // (other domains: left computed)
        KernelFn fn = kernels.find(type, ex->opset());
        if (!fn) continue;
        std::vector<const RValue*> args;
        bool ok = true;
        for (ir::PortId in : ins) {
          ir::PortId src = g.producer(in);
          if (!src) {
            args.push_back(nullptr);
            continue;
          }
          auto it = frame.find(src.value);
          if (it == frame.end()) {
            ok = false;  // an input this fold could not compute
            break;
          }
          args.push_back(&it->second);
        }
        if (!ok) continue;
        KernelContext ctx(g, op, ex->opset(), *ex);
        ctx.inputs_ = std::move(args);
        ctx.outputs_.resize(outs.size());
        for (auto& o : ctx.outputs_) o.kind = RValue::Kind::None, o.elem = DType::Undefined;
        ctx.used_.assign(outs.size(), true);
        try {
          fn(ctx);
        } catch (const BudgetExceeded&) {
          throw;
        } catch (const std::exception&) {
          continue;  // a kernel refusing its inputs: the value stays computed
        }
        for (size_t i = 0; i < outs.size(); ++i) {
          RValue& v = ctx.outputs_[i];
          if (v.is_tensor() && v.tensor.layout()) v.tensor = v.tensor.plain();
          if (v.kind != RValue::Kind::None) frame.emplace(outs[i].value, std::move(v));
        }
      }
    } catch (const BudgetExceeded&) {
      return res;
    }
    for (ir::PortId p : boundary) {
      auto it = frame.find(p.value);
      if (it == frame.end()) continue;
      const RValue& v = it->second;
      if (v.is_tensor() && v.tensor.dtype() != DType::String && v.tensor.nbytes() <= kMaxFoldedBytes)
        values.emplace(p.value, v.tensor.plain());
    }
  }
  res.ran = true;
  Symbol s_value = g.sym("@value"), s_val = g.sym("value");
  for (ir::PortId p : boundary) {
    auto it = values.find(p.value);
    if (it == values.end()) continue;
    const Tensor& t = it->second;
    std::string bytes(reinterpret_cast<const char*>(t.raw()), t.nbytes());
    ir::Tensor it_tensor = ir::Tensor::from_bytes(t.dtype(), t.shape(), std::move(bytes));
    ir::OpId producer = g.port_op(p);
    std::string name = std::string(g.str(g.name(producer))) + "/folded_" + std::string(g.port_name_str(p));
    ir::OpId c = g.create_op(root, g.sym("Constant"), g.sym(name));
    g.set_attr(c, s_val, ir::Value(std::move(it_tensor)));
    ir::PortId out = g.add_output(c, g.sym("output"));
    g.set_port_role(out, ir::PortRole::Constant);
    if (const ir::Value* vn = g.attr(p, s_value)) g.set_attr(out, s_value, *vn);
    g.set_port_type(out, g.types().tensor(t.dtype(), ir::dims_of(t.shape())));
    // the consumers outside the constant part read the Constant now
    for (ir::EdgeId e : g.out_edges(p)) {
      ir::PortId cons = g.edge_dst(e);
      if (const_ops.contains(g.port_op(cons).value)) continue;
      g.disconnect(e);
      g.connect(out, cons);
    }
    ++res.folded;
  }
  // Constant ops nothing reads any more go away (reverse order: users before producers).
  for (auto it = topo.order.rbegin(); it != topo.order.rend(); ++it) {
    ir::OpId op = *it;
    if (!const_ops.contains(op.value)) continue;
    bool used = false;
    for (ir::PortId out : g.outputs(op)) used |= g.out_degree(out) > 0;
    if (used) continue;
    g.erase_op(op);
    ++res.erased;
  }
  return res;
}

}  // namespace amanda::interp
