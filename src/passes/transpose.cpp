// push_transpose_down: a Transpose moves below the elementwise op that reads it, so that it meets
// the Transpose after that op and the pair cancels (fuse_consecutive_transposes). Converters from
// channels-last frameworks (TF.js, TensorFlow, Keras) wrap every Conv/Pool in NHWC -> NCHW and
// NCHW -> NHWC Transposes, with Relu, Add, Clip, PRelu... in between in NHWC; onnxruntime's
// transpose optimizer does the same. What may be pushed is a table (kOps): the op's kind says which
// inputs follow the layout.
//
//   E(Transpose_P(a), Transpose_P(b), c)  ->  Transpose_P(E(a, b, c'))
//
// where every input that follows the layout is a Transpose with the same explicit perm P and no
// other use, or a constant (then c' = Transpose_{P^-1}(c padded to the rank with leading 1s)), and
// at least one is a Transpose: the number of Transposes never grows, and each push moves one down
// the graph, so a fixed point is reached.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

enum class Kind {
  Unary,      // input 0 follows the layout; other inputs (Clip's min/max) are scalars, unchanged
  Broadcast,  // every input follows the layout (multidirectional or unidirectional broadcasting)
  Concat,     // every input; the axis attribute is remapped
  Pad,        // input 0; the pads (input 1 or attribute) remapped, the constant value unchanged
  Reduce,     // input 0; the axes (attribute or input 1) remapped; keepdims=0 drops the reduced axes
              // from the perm (what is left is often the identity: no Transpose after)
};

struct PushOp {
  std::string_view type;
  Kind kind;
};

// Ops that compute each output element from the elements at the same index (after broadcasting),
// whatever the layout.
constexpr PushOp kOps[] = {
    {"Relu", Kind::Unary},        {"LeakyRelu", Kind::Unary},   {"Elu", Kind::Unary},       {"Selu", Kind::Unary},
    {"Sigmoid", Kind::Unary},     {"HardSigmoid", Kind::Unary}, {"HardSwish", Kind::Unary}, {"Tanh", Kind::Unary},
    {"Softplus", Kind::Unary},    {"Softsign", Kind::Unary},    {"Mish", Kind::Unary},      {"Gelu", Kind::Unary},
    {"Clip", Kind::Unary},        {"Abs", Kind::Unary},         {"Neg", Kind::Unary},       {"Exp", Kind::Unary},
    {"Log", Kind::Unary},         {"Sqrt", Kind::Unary},        {"Reciprocal", Kind::Unary}, {"Erf", Kind::Unary},
    {"Floor", Kind::Unary},       {"Ceil", Kind::Unary},        {"Round", Kind::Unary},     {"Sign", Kind::Unary},
    {"Sin", Kind::Unary},         {"Cos", Kind::Unary},         {"Not", Kind::Unary},       {"Cast", Kind::Unary},
    {"Identity", Kind::Unary},    {"IsNaN", Kind::Unary},       {"IsInf", Kind::Unary},
    {"Add", Kind::Broadcast},     {"Sub", Kind::Broadcast},     {"Mul", Kind::Broadcast},   {"Div", Kind::Broadcast},
    {"Pow", Kind::Broadcast},     {"PRelu", Kind::Broadcast},   {"Min", Kind::Broadcast},   {"Max", Kind::Broadcast},
    {"Sum", Kind::Broadcast},     {"Mean", Kind::Broadcast},    {"Equal", Kind::Broadcast}, {"Less", Kind::Broadcast},
    {"Greater", Kind::Broadcast}, {"LessOrEqual", Kind::Broadcast}, {"GreaterOrEqual", Kind::Broadcast},
    {"And", Kind::Broadcast},     {"Or", Kind::Broadcast},      {"Xor", Kind::Broadcast},   {"Where", Kind::Broadcast},
    {"Concat", Kind::Concat},     {"Pad", Kind::Pad},
    {"ReduceMean", Kind::Reduce}, {"ReduceSum", Kind::Reduce},  {"ReduceMax", Kind::Reduce}, {"ReduceMin", Kind::Reduce},
    {"ReduceProd", Kind::Reduce}, {"ReduceL1", Kind::Reduce},   {"ReduceL2", Kind::Reduce},  {"ReduceLogSum", Kind::Reduce},
    {"ReduceLogSumExp", Kind::Reduce}, {"ReduceSumSquare", Kind::Reduce},
};

bool is_identity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// What a Pad or a Reduce becomes on the untransposed input: new pads / axes, and the perm of the
// Transpose after it. nullopt: not pushed.
struct Remap {
  std::vector<int64_t> values;    // the new pads or axes (empty: unchanged)
  bool values_as_input = false;   // input 1 (else the attribute)
  std::vector<int64_t> out_perm;  // the Transpose after (identity: none)
};

std::optional<Remap> remap_pad(const ir::Graph& g, ir::OpId e, const std::vector<int64_t>& perm) {
  size_t rank = perm.size();
  Remap r;
  std::optional<std::vector<int64_t>> pads = attr_ints(g, e, "pads");
  if (!pads) {
    if (input_value(g, e, 3)) return std::nullopt;  // axes (opset 18): not remapped here
    ir::PortId p = input_value(g, e, 1);
    if (!p || !(pads = constant_ints(g, p))) return std::nullopt;
    r.values_as_input = true;
  }
  if (pads->size() != 2 * rank) return std::nullopt;
  r.values.assign(2 * rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    r.values[static_cast<size_t>(perm[i])] = (*pads)[i];
    r.values[rank + static_cast<size_t>(perm[i])] = (*pads)[rank + i];
  }
  r.out_perm = perm;
  return r;
}

std::optional<Remap> remap_reduce(const ir::Graph& g, ir::OpId e, const std::vector<int64_t>& perm) {
  int64_t rank = static_cast<int64_t>(perm.size());
  Remap r;
  std::optional<std::vector<int64_t>> axes = attr_ints(g, e, "axes");
  if (!axes) {
    if (ir::PortId p = input_value(g, e, 1)) {
      if (!(axes = constant_ints(g, p))) return std::nullopt;
      r.values_as_input = true;
    }
  }
  bool keep = attr_int(g, e, "keepdims", 1) != 0;
  if (!axes || axes->empty()) {
    if (attr_int(g, e, "noop_with_empty_axes", 0) != 0) return std::nullopt;
    // every axis reduced: a scalar (keepdims 0) or all ones
    if (!keep) return r;
    r.out_perm = perm;
    return r;
  }
  std::vector<bool> reduced(perm.size(), false);
  for (int64_t a : *axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank || reduced[static_cast<size_t>(a)]) return std::nullopt;
    reduced[static_cast<size_t>(a)] = true;
    r.values.push_back(perm[static_cast<size_t>(a)]);
  }
  if (keep) {
    r.out_perm = perm;
    return r;
  }
  // the axes of the input left, in the transposed order, renumbered among themselves
  std::vector<int64_t> left;
  for (int64_t i = 0; i < rank; ++i)
    if (!reduced[static_cast<size_t>(i)]) left.push_back(perm[static_cast<size_t>(i)]);
  std::vector<int64_t> sorted = left;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t x : left) r.out_perm.push_back(std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
  return r;
}

const PushOp* find_op(std::string_view type) {
  for (const PushOp& p : kOps)
    if (p.type == type) return &p;
  return nullptr;
}

ir::Value ints_value(const std::vector<int64_t>& v) {
  ir::Value::List l;
  for (int64_t x : v) l.emplace_back(x);
  return ir::Value(std::move(l));
}

// out[i] = in[perm[i]] (ONNX Transpose) of a constant's bytes, the constant first padded with
// leading 1s to perm's rank.
std::optional<ir::Tensor> transposed(const ir::Tensor& t, const std::vector<int64_t>& perm) {
  if (t.shape.size() > perm.size()) return std::nullopt;
  ir::Tensor padded = t;  // the same bytes (shared), leading 1s in the shape
  padded.shape.insert(padded.shape.begin(), perm.size() - t.shape.size(), 1);
  return transpose_tensor(padded, perm);
}

// The Transpose producing input `v` with an explicit perm, or OpId().
ir::OpId transpose_producer(const ir::Graph& g, ir::PortId v) {
  if (!v || g.port_dir(v) != ir::PortDir::Out || is_scope_value(g, v)) return ir::OpId();
  ir::OpId p = g.port_op(v);
  if (g.type_str(p) != "Transpose" || data_outputs(g, p).size() != 1 || !attr_ints(g, p, "perm")) return ir::OpId();
  return p;
}

// Every use of `v` is an op this pass pushes through (a Transpose read by several of them, x and
// x + 3 of a hard swish: each push takes one use, the last one erases it). A few uses only.
bool all_uses_pushable(const ir::Graph& g, ir::PortId v) {
  int budget = 8;
  for (ir::EdgeId e = g.first_out_edge(v); e; e = g.next_out_edge(e)) {
    if (budget-- == 0) return false;
    ir::OpId u = g.port_op(g.edge_dst(e));
    if (g.is_graph(u) || !find_op(g.type_str(u))) return false;
  }
  return true;
}

// A Transpose of `v` with perm `inv` in `scope` among v's first uses, or OpId().
ir::OpId inverse_use(const ir::Graph& g, ir::PortId v, const std::vector<int64_t>& inv, ir::OpId scope) {
  int budget = 16;  // a value read by thousands of ops is not searched
  for (ir::EdgeId e = g.first_out_edge(v); e && budget-- > 0; e = g.next_out_edge(e)) {
    ir::OpId t = g.port_op(g.edge_dst(e));
    if (g.is_graph(t) || g.parent(t) != scope || g.type_str(t) != "Transpose" || data_outputs(g, t).size() != 1) continue;
    if (attr_ints(g, t, "perm") == inv && input_value(g, t, 0) == v) return t;
  }
  return ir::OpId();
}

bool push(const Match& m, ir::Rewriter& rw, const PushOp& kind) {
  ir::Graph& g = rw.graph();
  ir::OpId e = m.root;
  auto outs = data_outputs(g, e);
  auto ins = data_inputs(g, e);
  if (outs.size() != 1 || ins.empty() || has_control_edges(g, e) || has_graph_attr(g, e)) return false;
  size_t follow = kind.kind == Kind::Broadcast || kind.kind == Kind::Concat ? ins.size() : 1;
  // the perm: the first input's Transpose
  std::optional<std::vector<int64_t>> perm;
  for (size_t i = 0; i < follow && !perm; ++i)
    if (ir::OpId t = transpose_producer(g, input_value(g, e, i))) perm = attr_ints(g, t, "perm");
  if (!perm || perm->empty()) return false;
  size_t rank = perm->size();
  std::vector<int64_t> inv(rank, -1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t k = (*perm)[i];
    if (k < 0 || k >= static_cast<int64_t>(rank) || inv[static_cast<size_t>(k)] >= 0) return false;
    inv[static_cast<size_t>(k)] = static_cast<int64_t>(i);
  }
  // every input that follows the layout: a single-use Transpose with that perm, or a constant
  std::vector<ir::OpId> ts(follow);
  std::vector<std::optional<ir::Tensor>> consts(follow);
  std::vector<ir::OpId> inverses(follow);
  size_t moved = 0;
  for (size_t i = 0; i < follow; ++i) {
    ir::PortId v = input_value(g, e, i);
    if (!v) {
      if (i == 0) return false;
      continue;  // an omitted optional input
    }
    ir::OpId t = transpose_producer(g, v);
    if (t && attr_ints(g, t, "perm") == perm && !feeds_scope_output(g, v) && (single_use(g, v) || all_uses_pushable(g, v))) {
      ts[i] = t;
      ++moved;
      continue;
    }
    if (const ir::Tensor* c = const_tensor(g, v); c && kind.kind == Kind::Broadcast) {
      consts[i] = transposed(*c, inv);
      if (!consts[i]) return false;
      continue;
    }
    // A value that already has a Transpose with the inverse perm among its uses (the residual
    // branch of a channels-last block: the same value goes to a Conv through that Transpose):
    // e reads that one, so no Transpose is added.
    if (kind.kind != Kind::Broadcast || !(inverses[i] = inverse_use(g, v, inv, g.parent(e)))) return false;
  }
  if (moved == 0) return false;  // (an excluded Transpose: the exclusion listener rolls the erase back)
  ir::PortId y = outs[0];
  int64_t axis = 0;
  if (kind.kind == Kind::Concat) {
    axis = attr_int(g, e, "axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) return false;
  }
  Remap remap;
  remap.out_perm = *perm;
  if (kind.kind == Kind::Pad || kind.kind == Kind::Reduce) {
    auto r = kind.kind == Kind::Pad ? remap_pad(g, e, *perm) : remap_reduce(g, e, *perm);
    if (!r) return false;
    remap = std::move(*r);
  }
  if (!is_identity(remap.out_perm)) {
    // the new Transpose after e takes over e's value (its uses, its name if it is a graph output)
    const std::vector<int64_t>& op_ = remap.out_perm;
    rw.set_insertion_point_after(e);
    ir::OpId nt = rw.create_op(g.sym("Transpose"), g.sym(std::string(g.name_str(e)) + "/transpose"));
    ir::PortId nin = rw.add_input(nt, "data");
    ir::PortId nout = rw.add_output(nt, "transposed");
    rw.set_attr(nt, "perm", ints_value(op_));
    name_value(rw, nout, g.name_str(nt));
    ir::TypeId old_type = g.port_type(y);
    if (old_type) rw.set_port_type(nout, old_type);
    bool named_output = feeds_scope_output(g, y);
    if (!replace_value(rw, y, nout)) return false;
    // The value_info the file gave y (its layout) now describes nout; y's layout is permuted.
    {
      const Symbol moved_attrs[] = {g.sym("@type"), g.sym("@shape"), g.sym("@value_info"), g.sym("@doc_string")};
      ir::AttrList keep, all = g.attrs(y);  // (a copy: set_attr may move the lists)
      for (const auto& [k, v] : all) {
        if (std::find(std::begin(moved_attrs), std::end(moved_attrs), k) != std::end(moved_attrs)) rw.set_attr(nout, k, v);
        else keep.emplace_back(k, v);
      }
      rw.set_attr_list(y, std::move(keep));
    }
    if (named_output) name_value(rw, y, g.name_str(e));  // nout took the graph output's name
    rw.connect(y, nin);
    if (old_type) {
      const ir::TypeData& td = g.types().get(old_type);
      if (td.kind == ir::TypeKind::Tensor && td.ranked && td.dims.size() == op_.size()) {
        std::vector<ir::Dim> d(op_.size());
        for (size_t i = 0; i < op_.size(); ++i) d[static_cast<size_t>(op_[i])] = td.dims[i];
        rw.set_port_type(y, g.types().tensor(td.elem, d));
      }
    }
  }
  if (!remap.values.empty()) {
    const char* key = kind.kind == Kind::Pad ? "pads" : "axes";
    if (remap.values_as_input)
      set_input(rw, e, 1, make_constant(rw, e, int64_tensor(remap.values), std::string(g.name_str(e)) + "/" + key), key);
    else
      rw.set_attr(e, key, ints_value(remap.values));
  }
  for (size_t i = 0; i < follow; ++i) {
    if (ts[i]) {
      ir::PortId src = input_value(g, ts[i], 0);
      set_input(rw, e, i, src, "input");
      if (g.first_out_edge(data_outputs(g, ts[i])[0]) == ir::EdgeId()) rw.erase_op(ts[i]);  // else: its other uses follow
    } else if (inverses[i]) {
      rw.move_before(inverses[i], e);  // its input is computed before e (e reads it)
      set_input(rw, e, i, data_outputs(g, inverses[i])[0], "input");
    } else if (consts[i]) {
      set_input(rw, e, i, make_constant(rw, e, *consts[i], std::string(g.name_str(e)) + "/transposed"), "input");
    }
  }
  if (kind.kind == Kind::Concat) rw.set_attr(e, "axis", ir::Value((*perm)[static_cast<size_t>(axis)]));
  return true;
}

}  // namespace

void register_transpose(PassRegistry& r) {
  r.add({"push_transpose_down",
         "Transpose_P feeding an elementwise op (Relu, Add, Clip, PRelu, Concat, ...; the others of its inputs Transposes "
         "with the same perm or constants) -> the op on the untransposed values, then one Transpose_P (meets the next "
         "Transpose and cancels: channels-last conversions)",
         [](ir::Graph& g, const PassOptions& o) {
           PassResult res;
           static const std::string types = [] {
             std::string t;
             for (const PushOp& p : kOps) t += (t.empty() ? "" : "|") + std::string(p.type);
             return t;
           }();
           replace_everywhere(g, o, op(types), [](const Match& m, ir::Rewriter& rw) {
             const PushOp* k = find_op(rw.graph().type_str(m.root));
             return k && push(m, rw, *k);
           }, res, "push_transpose_down");
           return res;
         },
         true, true});
}

}  // namespace amanda::passes::detail
