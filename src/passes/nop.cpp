// No-op removal: ops whose output equals one of their inputs (Identity; Dropout in inference;
// Cast to the type it has; Expand, Reshape, Transpose, Pad, Slice, Concat, Split, Flatten that
// change nothing; x + 0, x * 1). One table row per op says when its output is input k; the passes
// are named as onnxoptimizer names them.
#include <cmath>
#include <limits>

#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

using NopFn = std::function<int(const ir::Graph&, ir::OpId)>;  // the input the output equals, or -1

struct NopRule {
  std::string_view pass;
  std::string_view type;
  NopFn fn;
};

ir::DType onnx_dtype(int64_t code) {
  using D = ir::DType;
  static const D table[] = {D::Undefined, D::Float32, D::UInt8, D::Int8, D::UInt16, D::Int16, D::Int32, D::Int64, D::String,
                            D::Bool, D::Float16, D::Float64, D::UInt32, D::UInt64, D::Complex64, D::Complex128, D::BFloat16};
  return code >= 0 && code < 17 ? table[code] : D::Undefined;
}

bool only_output_used(const ir::Graph& g, ir::OpId op, size_t k) {
  auto outs = data_outputs(g, op);
  for (size_t i = 0; i < outs.size(); ++i)
    if (i != k && (g.first_out_edge(outs[i]) != ir::EdgeId())) return false;
  return k < outs.size();
}

std::optional<std::vector<int64_t>> shape_of(const ir::Graph& g, ir::PortId v) {
  if (const ir::Tensor* t = const_tensor(g, v)) return t->shape;
  return static_shape(g, v);
}

int dropout(const ir::Graph& g, ir::OpId op, bool ratio_zero_only) {
  if (!only_output_used(g, op, 0)) return -1;
  int opset = onnx_opset(g);
  if (opset >= 12) {
    if (ratio_zero_only) return -1;  // onnxoptimizer keeps these (ratio is an input)
    ir::PortId r = input_value(g, op, 1);
    if (r) {  // a zero ratio drops nothing, in training mode too (torchvision's swin exports those)
      auto v = constant_scalar(g, r);
      if (v && *v == 0) return 0;
    }
    ir::PortId tm = input_value(g, op, 2);
    if (tm) {
      auto v = constant_scalar(g, tm);
      if (!v || *v != 0) return -1;
    }
    return 0;
  }
  if (ratio_zero_only) {
    auto ratio = attr_float(g, op, "ratio");
    return ratio && *ratio == 0.0 ? 0 : -1;
  }
  if (opset < 7 && attr_int(g, op, "is_test", 0) == 0) return -1;  // training mode
  return 0;
}

int cast(const ir::Graph& g, ir::OpId op) {
  ir::PortId x = input_value(g, op, 0);
  auto to = attr_int(g, op, "to");
  if (!x || !to) return -1;
  ir::DType t = elem_type(g, x);
  return t != ir::DType::Undefined && t == onnx_dtype(*to) ? 0 : -1;
}

int expand(const ir::Graph& g, ir::OpId op) {
  ir::PortId x = input_value(g, op, 0), s = input_value(g, op, 1);
  auto shape = s ? constant_ints(g, s) : std::nullopt;
  if (!x || !shape) return -1;
  int64_t rank = rank_of(g, x);
  if (rank < 0 || static_cast<int64_t>(shape->size()) > rank) return -1;
  auto xs = shape_of(g, x);
  size_t off = static_cast<size_t>(rank) - shape->size();
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t want = (*shape)[i];
    if (want == 1) continue;
    if (!xs || (*xs)[off + i] != want) return -1;
  }
  return 0;
}

int reshape(const ir::Graph& g, ir::OpId op) {
  ir::PortId x = input_value(g, op, 0);
  if (!x) return -1;
  auto xs = shape_of(g, x);
  if (!xs) return -1;
  auto out = static_shape(g, data_outputs(g, op)[0]);
  if (out) return *out == *xs ? 0 : -1;
  ir::PortId s = input_value(g, op, 1);
  auto shape = s ? constant_ints(g, s) : attr_ints(g, op, "shape");
  if (!shape || shape->size() != xs->size()) return -1;
  bool allowzero = attr_int(g, op, "allowzero", 0) != 0;
  int minus = 0;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t d = (*shape)[i];
    if (d == 0 && !allowzero) continue;
    if (d == -1) {
      ++minus;
      continue;
    }
    if (d != (*xs)[i]) return -1;
  }
  return minus <= 1 ? 0 : -1;  // every other dimension equal: -1 is the remaining one
}

int transpose(const ir::Graph& g, ir::OpId op) {
  auto perm = attr_ints(g, op, "perm");
  if (!perm) {
    ir::PortId x = input_value(g, op, 0);
    return x && rank_of(g, x) >= 0 && rank_of(g, x) <= 1 ? 0 : -1;
  }
  for (size_t i = 0; i < perm->size(); ++i)
    if ((*perm)[i] != static_cast<int64_t>(i)) return -1;
  return 0;
}

int pad(const ir::Graph& g, ir::OpId op) {
  auto pads = attr_ints(g, op, "pads");
  if (!pads) {
    ir::PortId p = input_value(g, op, 1);
    pads = p ? constant_ints(g, p) : std::nullopt;
  }
  if (!pads) return -1;
  for (int64_t x : *pads)
    if (x != 0) return -1;
  return 0;
}

int slice(const ir::Graph& g, ir::OpId op) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (auto s = attr_ints(g, op, "starts")) {
    starts = *s;
    ends = attr_ints(g, op, "ends").value_or(std::vector<int64_t>{});
    axes = attr_ints(g, op, "axes").value_or(std::vector<int64_t>{});
  } else {
    auto s1 = input_value(g, op, 1), e1 = input_value(g, op, 2), a1 = input_value(g, op, 3), st1 = input_value(g, op, 4);
    auto sv = s1 ? constant_ints(g, s1) : std::nullopt;
    auto ev = e1 ? constant_ints(g, e1) : std::nullopt;
    if (!sv || !ev) return -1;
    starts = *sv;
    ends = *ev;
    if (a1) {
      auto av = constant_ints(g, a1);
      if (!av) return -1;
      axes = *av;
    }
    if (st1) {
      auto stv = constant_ints(g, st1);
      if (!stv) return -1;
      steps = *stv;
    }
  }
  ir::PortId x = input_value(g, op, 0);
  auto xs = x ? shape_of(g, x) : std::nullopt;
  int64_t rank = x ? rank_of(g, x) : -1;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (starts[i] != 0 || i >= ends.size()) return -1;
    if (!steps.empty() && steps[i] != 1) return -1;
    int64_t axis = axes.empty() ? static_cast<int64_t>(i) : axes[i];
    if (axis < 0) {
      if (rank < 0) return -1;
      axis += rank;
    }
    if (ends[i] >= std::numeric_limits<int32_t>::max()) continue;
    if (!xs || axis < 0 || axis >= static_cast<int64_t>(xs->size()) || ends[i] < (*xs)[static_cast<size_t>(axis)]) return -1;
  }
  return 0;
}

int concat(const ir::Graph& g, ir::OpId op) { return data_inputs(g, op).size() == 1 ? 0 : -1; }

int split(const ir::Graph& g, ir::OpId op) {
  if (data_outputs(g, op).size() != 1) return -1;
  return 0;  // one output: the whole input (a split attribute or input can only say the whole axis)
}

int flatten(const ir::Graph& g, ir::OpId op) {
  ir::PortId x = input_value(g, op, 0);
  if (!x) return -1;
  int64_t rank = rank_of(g, x);
  int64_t axis = attr_int(g, op, "axis", 1);
  if (axis < 0) axis += rank;
  if (rank == 2 && axis == 1) return 0;
  auto xs = shape_of(g, x);
  if (rank == 2 && axis == 0 && xs && (*xs)[0] == 1) return 0;  // [1, n] -> [1, n]
  return -1;
}

// x + 0, x - 0, x * 1, x / 1, x ** 1 where the constant does not broadcast x to a bigger shape.
int unit(const ir::Graph& g, ir::OpId op) {
  std::string_view t = g.type_str(op);
  double neutral = (t == "Add" || t == "Sub") ? 0.0 : 1.0;
  bool commutes = t == "Add" || t == "Mul";
  for (int k : {1, 0}) {
    if (k == 0 && !commutes) break;
    ir::PortId c = input_value(g, op, static_cast<size_t>(k)), x = input_value(g, op, static_cast<size_t>(1 - k));
    if (!c || !x) return -1;
    auto ct = constant_rtensor(g, c);
    if (!ct || ct->dtype() == ir::DType::String) continue;
    bool all = ct->numel() > 0;
    for (int64_t i = 0; all && i < ct->numel(); ++i) all = ct->get_f64(i) == neutral;
    if (!all) continue;
    // x's dims (a symbolic batch is fine: only where the constant is not 1 must x's dim be known)
    std::vector<int64_t> xs;
    if (auto s = shape_of(g, x)) {
      xs = *s;
    } else if (g.port_type(x) && g.port_type_data(x).kind == ir::TypeKind::Tensor && g.port_type_data(x).ranked) {
      for (ir::Dim d : g.port_type_data(x).dims) xs.push_back(d.is_known() ? d.value() : -1);
    } else {
      continue;
    }
    if (ct->rank() > static_cast<int64_t>(xs.size())) continue;
    bool same_shape = true;
    for (int64_t i = 0; i < ct->rank(); ++i)
      same_shape = same_shape && (ct->dim(i) == 1 || ct->dim(i) == xs[xs.size() - static_cast<size_t>(ct->rank() - i)]);
    if (!same_shape || elem_type(g, x) != ct->dtype()) continue;
    return 1 - k;
  }
  return -1;
}

const std::vector<NopRule>& rules() {
  static const std::vector<NopRule> r = {
      {"eliminate_identity", "Identity", [](const ir::Graph&, ir::OpId) { return 0; }},
      {"eliminate_nop_dropout", "Dropout", [](const ir::Graph& g, ir::OpId op) { return dropout(g, op, true); }},
      {"eliminate_dropout", "Dropout", [](const ir::Graph& g, ir::OpId op) { return dropout(g, op, false); }},
      {"eliminate_nop_cast", "Cast", cast},
      {"eliminate_nop_expand", "Expand", expand},
      {"eliminate_nop_reshape", "Reshape", reshape},
      {"eliminate_nop_transpose", "Transpose", transpose},
      {"eliminate_nop_pad", "Pad", pad},
      {"eliminate_nop_slice", "Slice", slice},
      {"eliminate_nop_concat", "Concat", concat},
      {"eliminate_nop_split", "Split", split},
      {"eliminate_nop_flatten", "Flatten", flatten},
      {"eliminate_op_with_unit", "Add", unit},
      {"eliminate_op_with_unit", "Sub", unit},
      {"eliminate_op_with_unit", "Mul", unit},
      {"eliminate_op_with_unit", "Div", unit},
      {"eliminate_op_with_unit", "Pow", unit},
  };
  return r;
}

PassResult run_rules(ir::Graph& g, const PassOptions& o, std::string_view pass) {
  PassResult r;
  std::vector<const NopRule*> mine;
  for (const auto& rule : rules())
    if (rule.pass == pass) mine.push_back(&rule);
  ir::Rewriter rw(g);
  for (ir::OpId scope : scopes(g, o)) {
    if (!g.valid(scope)) continue;
    for (ir::OpId op : g.children(scope)) {
      if (!g.valid(op) || has_control_edges(g, op)) continue;
      for (const NopRule* rule : mine) {
        if (g.type_str(op) != rule->type) continue;
        int k = rule->fn(g, op);
        if (k < 0 || o.excluded(g, op)) break;
        ir::PortId x = input_value(g, op, static_cast<size_t>(k));
        ir::PortId out = data_outputs(g, op)[0];
        if (!x) break;
        rw.begin();
        if (!replace_value(rw, out, x)) {
          rw.rollback();
          ++r.refused;
          r.notes.push_back(g.path(op) + ": a no-op kept, its output is a graph output that its input cannot name");
          break;
        }
        for (ir::PortId p : data_outputs(g, op))
          if ((g.first_out_edge(p) != ir::EdgeId())) rw.replace_all_uses(p, x);  // (none: checked above)
        rw.erase_op(op);
        rw.commit();
        ++r.rewrites;
        ++r.erased;
        break;
      }
    }
  }
  return r;
}

}  // namespace

void register_nop(PassRegistry& r) {
  struct Doc {
    std::string_view name, doc;
    bool in_default;
  };
  static const Doc docs[] = {
      {"eliminate_identity", "removes Identity", true},
      {"eliminate_nop_dropout", "removes Dropout with ratio 0 (onnxoptimizer's rule; below opset 12)", false},
      {"eliminate_dropout", "removes Dropout in inference (mask unused, training_mode absent or false)", true},
      {"eliminate_nop_cast", "removes Cast to the element type its input has", true},
      {"eliminate_nop_expand", "removes Expand that broadcasts to the input's own shape", true},
      {"eliminate_nop_reshape", "removes Reshape to the input's own shape", true},
      {"eliminate_nop_transpose", "removes Transpose with the identity permutation", true},
      {"eliminate_nop_pad", "removes Pad with all pads zero", true},
      {"eliminate_nop_slice", "removes Slice that takes whole axes", true},
      {"eliminate_nop_concat", "removes Concat of one input", true},
      {"eliminate_nop_split", "removes Split into one output", true},
      {"eliminate_nop_flatten", "removes Flatten of a 2-D input to the same shape", true},
      {"eliminate_op_with_unit", "removes x + 0, x - 0, x * 1, x / 1, x ** 1 that do not broadcast x", true},
  };
  for (const Doc& d : docs) {
    std::string name(d.name);
    r.add({name, std::string(d.doc), [name](ir::Graph& g, const PassOptions& o) { return run_rules(g, o, name); }, true, d.in_default});
  }
}

}  // namespace amanda::passes::detail
