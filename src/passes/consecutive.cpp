// Consecutive ops that compose into one: Transpose∘Transpose (perms composed), Reshape∘Reshape
// (the second shape, when it copies no dimension), Squeeze∘Squeeze and Unsqueeze∘Unsqueeze (axes
// merged), Slice∘Slice on different axes, Concat∘Concat on the same axis, and an ArgMax after a
// monotone op (the op goes). (Softmax -> Log is the rewrite table
// rewrites/onnx/fuse_consecutive_log_softmax.yaml.) The first op must have no other
// use, so the pair becomes one op.
#include <algorithm>
#include <set>

#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

ir::Value ints_value(const std::vector<int64_t>& v) {
  ir::Value::List l;
  for (int64_t x : v) l.emplace_back(x);
  return ir::Value(std::move(l));
}

// Axes of Squeeze/Unsqueeze/ReduceX: the attribute (old opsets) or the constant input 1.
std::optional<std::vector<int64_t>> axes_of(const ir::Graph& g, ir::OpId op, bool* from_input) {
  if (auto a = attr_ints(g, op, "axes")) {
    *from_input = false;
    return a;
  }
  ir::PortId p = input_value(g, op, 1);
  *from_input = true;
  if (!p) return std::nullopt;
  return constant_ints(g, p);
}

void set_axes(ir::Rewriter& rw, ir::OpId op, const std::vector<int64_t>& axes, bool as_input) {
  ir::Graph& g = rw.graph();
  if (!as_input) {
    rw.set_attr(op, "axes", ints_value(axes));
    return;
  }
  set_input(rw, op, 1, make_constant(rw, op, int64_tensor(axes), std::string(g.name_str(op)) + "/axes"), "axes");
}

// The inner op of a pair: the producer of input 0 when it is of `type` (used once, unless
// `shared`: then the second reads past it and the first stays for its other users).
ir::OpId inner(const ir::Graph& g, ir::OpId op, std::string_view type, bool shared = false) {
  ir::PortId v = input_value(g, op, 0);
  if (!v || g.port_dir(v) != ir::PortDir::Out || is_scope_value(g, v)) return ir::OpId();
  ir::OpId p = g.port_op(v);
  if (g.type_str(p) != type || data_outputs(g, p).size() != 1) return ir::OpId();
  if (!shared && (!single_use(g, v) || feeds_scope_output(g, v))) return ir::OpId();
  return p;
}

// Rewires op to read what `first` read (input 0) and erases `first` when nothing else reads it.
void bypass(ir::Rewriter& rw, ir::OpId op, ir::OpId first) {
  ir::Graph& g = rw.graph();
  set_input(rw, op, 0, input_value(g, first, 0), "data");
  for (ir::PortId p : g.outputs(first))
    if ((g.first_out_edge(p) != ir::EdgeId())) return;
  rw.erase_op(first);
}

bool transposes(const Match& m, ir::Rewriter& rw) {
  ir::Graph& g = rw.graph();
  ir::OpId b = m.root, a = inner(g, b, "Transpose", true);
  if (!a) return false;
  ir::PortId x = input_value(g, a, 0);
  int64_t rank = rank_of(g, x);
  auto pa = attr_ints(g, a, "perm"), pb = attr_ints(g, b, "perm");
  if (pa.has_value() != pb.has_value()) return false;  // onnxoptimizer's rule; a default perm meets only its like
  auto rev = [&](int64_t r) {
    std::vector<int64_t> v;
    for (int64_t i = r - 1; i >= 0; --i) v.push_back(i);
    return v;
  };
  if (!pa) {
    if (rank < 0) return false;
    pa = rev(rank);
  }
  if (!pb) pb = rev(static_cast<int64_t>(pa->size()));
  if (pa->size() != pb->size()) return false;
  std::vector<int64_t> p(pa->size());
  for (size_t i = 0; i < p.size(); ++i) {
    int64_t k = (*pb)[i];
    if (k < 0 || k >= static_cast<int64_t>(pa->size())) return false;
    p[i] = (*pa)[static_cast<size_t>(k)];
  }
  bool identity = true;
  for (size_t i = 0; i < p.size(); ++i) identity = identity && p[i] == static_cast<int64_t>(i);
  if (identity && can_replace(g, data_outputs(g, b)[0], x)) {  // they cancel
    replace_value(rw, data_outputs(g, b)[0], x);
    rw.erase_op(b);
    bool used = false;
    for (ir::PortId q : g.outputs(a)) used = used || (g.first_out_edge(q) != ir::EdgeId());
    if (!used) rw.erase_op(a);
    return true;
  }
  rw.set_attr(b, "perm", ints_value(p));
  bypass(rw, b, a);
  return true;
}

bool reshapes(const Match& m, ir::Rewriter& rw) {
  ir::Graph& g = rw.graph();
  ir::OpId b = m.root, a = inner(g, b, "Reshape");
  if (!a) return false;
  ir::PortId s = input_value(g, b, 1);
  auto shape = s ? constant_ints(g, s) : attr_ints(g, b, "shape");
  if (!shape) return false;
  for (int64_t d : *shape)
    if (d == 0 && attr_int(g, b, "allowzero", 0) == 0) return false;  // copies a dimension of the first's output
  bypass(rw, b, a);
  return true;
}

std::optional<std::vector<int64_t>> normalized(std::vector<int64_t> axes, int64_t rank) {
  for (auto& x : axes) {
    if (x < 0) x += rank;
    if (x < 0 || x >= rank) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

bool squeezes(const Match& m, ir::Rewriter& rw) {
  ir::Graph& g = rw.graph();
  ir::OpId b = m.root, a = inner(g, b, "Squeeze", true);
  if (!a) return false;
  int64_t rank = rank_of(g, input_value(g, a, 0));
  bool ia = false, ib = false;
  auto aa = axes_of(g, a, &ia), ab = axes_of(g, b, &ib);
  if (rank < 0 || !aa || !ab || aa->empty() || ab->empty()) return false;  // no axes: squeeze every 1 (shape-dependent)
  auto na = normalized(*aa, rank);
  if (!na) return false;
  auto nb = normalized(*ab, rank - static_cast<int64_t>(na->size()));
  if (!nb) return false;
  std::vector<int64_t> kept;  // original indices of the intermediate's dims
  for (int64_t i = 0; i < rank; ++i)
    if (!std::binary_search(na->begin(), na->end(), i)) kept.push_back(i);
  std::set<int64_t> all(na->begin(), na->end());
  for (int64_t j : *nb) all.insert(kept[static_cast<size_t>(j)]);
  set_axes(rw, b, std::vector<int64_t>(all.begin(), all.end()), ib);
  bypass(rw, b, a);
  return true;
}

bool unsqueezes(const Match& m, ir::Rewriter& rw) {
  ir::Graph& g = rw.graph();
  ir::OpId b = m.root, a = inner(g, b, "Unsqueeze", true);
  if (!a) return false;
  int64_t rank = rank_of(g, input_value(g, a, 0));
  bool ia = false, ib = false;
  auto aa = axes_of(g, a, &ia), ab = axes_of(g, b, &ib);
  if (rank < 0 || !aa || !ab) return false;
  int64_t r1 = rank + static_cast<int64_t>(aa->size()), r2 = r1 + static_cast<int64_t>(ab->size());
  auto na = normalized(*aa, r1), nb = normalized(*ab, r2);
  if (!na || !nb) return false;
  std::vector<int64_t> free;  // final positions not made by the second: the intermediate's dims
  for (int64_t i = 0; i < r2; ++i)
    if (!std::binary_search(nb->begin(), nb->end(), i)) free.push_back(i);
  std::set<int64_t> all(nb->begin(), nb->end());
  for (int64_t i : *na) all.insert(free[static_cast<size_t>(i)]);
  set_axes(rw, b, std::vector<int64_t>(all.begin(), all.end()), ib);
  bypass(rw, b, a);
  return true;
}

struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

std::optional<SliceArgs> slice_args(const ir::Graph& g, ir::OpId op) {
  if (attr_ints(g, op, "starts")) return std::nullopt;  // opset < 10: attributes (not fused)
  SliceArgs s;
  auto st = constant_ints(g, input_value(g, op, 1)), en = constant_ints(g, input_value(g, op, 2));
  if (!input_value(g, op, 1) || !input_value(g, op, 2) || !st || !en) return std::nullopt;
  s.starts = *st;
  s.ends = *en;
  if (ir::PortId a = input_value(g, op, 3)) {
    auto v = constant_ints(g, a);
    if (!v) return std::nullopt;
    s.axes = *v;
  } else {
    for (size_t i = 0; i < s.starts.size(); ++i) s.axes.push_back(static_cast<int64_t>(i));
  }
  if (ir::PortId a = input_value(g, op, 4)) {
    auto v = constant_ints(g, a);
    if (!v) return std::nullopt;
    s.steps = *v;
  } else {
    s.steps.assign(s.starts.size(), 1);
  }
  return s;
}

bool slices(const Match& m, ir::Rewriter& rw) {
  ir::Graph& g = rw.graph();
  ir::OpId b = m.root, a = inner(g, b, "Slice");
  if (!a) return false;
  auto sa = slice_args(g, a), sb = slice_args(g, b);
  int64_t rank = rank_of(g, input_value(g, a, 0));
  if (!sa || !sb || rank < 0) return false;
  std::set<int64_t> seen;
  for (auto* s : {&*sa, &*sb})
    for (auto& x : s->axes) {
      if (x < 0) x += rank;
      if (!seen.insert(x).second) return false;  // the same axis sliced twice
    }
  SliceArgs c = *sa;
  c.starts.insert(c.starts.end(), sb->starts.begin(), sb->starts.end());
  c.ends.insert(c.ends.end(), sb->ends.begin(), sb->ends.end());
  c.axes.insert(c.axes.end(), sb->axes.begin(), sb->axes.end());
  c.steps.insert(c.steps.end(), sb->steps.begin(), sb->steps.end());
  std::string n(g.name_str(b));
  set_input(rw, b, 1, make_constant(rw, b, int64_tensor(c.starts), n + "/starts"), "starts");
  set_input(rw, b, 2, make_constant(rw, b, int64_tensor(c.ends), n + "/ends"), "ends");
  set_input(rw, b, 3, make_constant(rw, b, int64_tensor(c.axes), n + "/axes"), "axes");
  set_input(rw, b, 4, make_constant(rw, b, int64_tensor(c.steps), n + "/steps"), "steps");
  bypass(rw, b, a);
  return true;
}

bool concats(const Match& m, ir::Rewriter& rw) {
  ir::Graph& g = rw.graph();
  ir::OpId b = m.root;
  auto axis = attr_int(g, b, "axis");
  if (!axis) return false;
  std::vector<ir::PortId> flat;
  std::vector<ir::OpId> gone;
  for (ir::PortId in : data_inputs(g, b)) {
    ir::PortId v = g.producer(in);
    if (!v) return false;
    ir::OpId p = g.port_op(v);
    if (g.port_dir(v) == ir::PortDir::Out && !is_scope_value(g, v) && g.type_str(p) == "Concat" && attr_int(g, p, "axis") == axis &&
        single_use(g, v) && !feeds_scope_output(g, v)) {
      for (ir::PortId pin : data_inputs(g, p)) flat.push_back(g.producer(pin));
      gone.push_back(p);
    } else {
      flat.push_back(v);
    }
  }
  if (gone.empty()) return false;
  auto ins = data_inputs(g, b);
  Symbol name = g.port_name(ins[0]);
  for (ir::PortId in : ins) rw.erase_port(in);
  for (ir::PortId v : flat) {
    (void)name;
    ir::PortId q = rw.add_port(b, ir::PortDir::In, g.sym("inputs"));
    rw.connect(v, q);
  }
  for (ir::OpId p : gone) rw.erase_op(p);
  return true;
}

bool monotone_argmax(const Match& m, ir::Rewriter& rw) {
  ir::Graph& g = rw.graph();
  ir::OpId am = m.root;
  ir::PortId v = input_value(g, am, 0);
  if (!v || g.port_dir(v) != ir::PortDir::Out || is_scope_value(g, v)) return false;
  ir::OpId f = g.port_op(v);
  std::string_view t = g.type_str(f);
  static const std::set<std::string_view> elementwise = {"Exp", "Log", "Sigmoid", "Tanh", "Sqrt", "Softplus"};
  bool ok = elementwise.count(t) > 0;
  if (t == "Softmax" || t == "LogSoftmax") {
    int64_t rank = rank_of(g, v);
    int64_t sa = attr_int(g, f, "axis", onnx_opset(g) >= 13 ? -1 : 1), aa = attr_int(g, am, "axis", 0);
    if (rank >= 0) {
      if (sa < 0) sa += rank;
      if (aa < 0) aa += rank;
    }
    ok = onnx_opset(g) >= 13 && sa == aa;
  }
  if (!ok || !single_use(g, v) || feeds_scope_output(g, v)) return false;
  bypass(rw, am, f);
  return true;
}

struct Fusion {
  const char* name;
  const char* doc;
  const char* root;
  bool (*fn)(const Match&, ir::Rewriter&);
};

const Fusion kFusions[] = {
    {"fuse_consecutive_transposes", "Transpose of a Transpose -> one Transpose (perms composed)", "Transpose", transposes},
    {"fuse_consecutive_reshapes", "Reshape of a Reshape -> one Reshape (when the second copies no dimension)", "Reshape", reshapes},
    {"fuse_consecutive_squeezes", "Squeeze of a Squeeze -> one Squeeze (axes merged)", "Squeeze", squeezes},
    {"fuse_consecutive_unsqueezes", "Unsqueeze of an Unsqueeze -> one Unsqueeze (axes merged)", "Unsqueeze", unsqueezes},
    {"fuse_consecutive_slices", "Slice of a Slice on other axes -> one Slice", "Slice", slices},
    {"fuse_consecutive_concats", "Concat inputs that are Concats on the same axis -> their inputs", "Concat", concats},
    {"eliminate_nop_monotone_argmax", "ArgMax of a monotone op (Exp, Log, Softmax on the same axis, ...) -> ArgMax of its input",
     "ArgMax", monotone_argmax},
};

}  // namespace

void register_consecutive(PassRegistry& r) {
  for (const Fusion& f : kFusions) {
    const Fusion* fp = &f;
    r.add({f.name, f.doc, [fp](ir::Graph& g, const PassOptions& o) {
             PassResult res;
             replace_everywhere(g, o, op(fp->root), fp->fn, res, fp->name);
             return res;
           }, true, true});
  }
}

}  // namespace amanda::passes::detail
