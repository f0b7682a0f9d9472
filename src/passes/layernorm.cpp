// LayerNormalization fusion (opset 17 and later, where ONNX has the op): the decomposition torch
// exports below opset 17 and hand-written layer norms give,
//
//   mean = ReduceMean(x, last axes); d = Sub(x, mean); var = ReduceMean(Pow(d, 2), same axes)
//   y = Div(d, Sqrt(Add(var, eps))) [* gamma] [+ beta]
//
// becomes LayerNormalization(x, gamma, beta, axis, epsilon). x and d are shared nodes of the
// pattern (x read by the ReduceMean and the Sub, d by the Pow and the Div).
#include <algorithm>

#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

// The reduced axes of a ReduceMean as the trailing axes [k, rank): k, or -1.
int64_t trailing_axes(const ir::Graph& g, ir::OpId rm, int64_t rank) {
  if (attr_int(g, rm, "keepdims", 1) != 1 || rank <= 0) return -1;
  auto axes = attr_ints(g, rm, "axes");
  if (!axes) {
    ir::PortId a = input_value(g, rm, 1);
    axes = a ? constant_ints(g, a) : std::nullopt;
  }
  if (!axes || axes->empty()) return -1;
  std::vector<int64_t> v = *axes;
  for (auto& x : v)
    if (x < 0) x += rank;
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != rank - static_cast<int64_t>(v.size()) + static_cast<int64_t>(i)) return -1;
  return v.front();
}

// The other operand of a binary op whose one operand is `v`, when it is constant.
ir::PortId constant_other(const ir::Graph& g, ir::OpId op, ir::PortId v) {
  ir::PortId a = input_value(g, op, 0), b = input_value(g, op, 1);
  ir::PortId c = a == v ? b : b == v ? a : ir::PortId();
  return c && const_tensor(g, c) ? c : ir::PortId();
}

// The op that alone reads `v`, when it is of `type`.
ir::OpId single_user(const ir::Graph& g, ir::PortId v, std::string_view type) {
  if (!single_use(g, v) || feeds_scope_output(g, v)) return ir::OpId();
  ir::OpId u = g.port_op(g.edge_dst(g.first_out_edge(v)));
  return g.type_str(u) == type ? u : ir::OpId();
}

bool fuse(const Match& m, ir::Rewriter& rw, const Pat& x_p, const Pat& mean_p, const Pat& var_p, const Pat& pow_p,
          const Pat& eps_p, const PassOptions& o) {
  ir::Graph& g = rw.graph();
  ir::PortId x = m.value(x_p);
  int64_t rank = rank_of(g, x);
  int64_t k1 = trailing_axes(g, m.op(g, mean_p), rank), k2 = trailing_axes(g, m.op(g, var_p), rank);
  if (k1 < 0 || k1 != k2) return false;
  auto two = constant_scalar(g, input_value(g, m.op(g, pow_p), 1));
  auto eps = constant_scalar(g, m.value(eps_p));
  const ir::Tensor* eps_t = const_tensor(g, m.value(eps_p));
  if (!two || *two != 2.0 || !eps || !eps_t || eps_t->shape.size() > 1) return false;
  ir::DType t = elem_type(g, x);
  if (t != ir::DType::Float32 && t != ir::DType::Float64 && t != ir::DType::Float16 && t != ir::DType::BFloat16) return false;
  // normalized shape: x's trailing dims from k1
  std::vector<int64_t> norm;
  if (g.port_type(x)) {
    const ir::TypeData& d = g.port_type_data(x);
    for (size_t i = static_cast<size_t>(k1); i < d.dims.size(); ++i) norm.push_back(d.dims[i].is_known() ? d.dims[i].value() : -1);
  }
  ir::OpId div = m.root;
  ir::PortId y = data_outputs(g, div)[0];
  std::vector<ir::OpId> gone{div};
  ir::PortId scale, bias;
  if (ir::OpId mul = single_user(g, y, "Mul"); mul && !o.excluded(g, mul)) {
    if (ir::PortId s = constant_other(g, mul, y)) {
      const ir::Tensor* st = const_tensor(g, s);
      std::vector<int64_t> ss = st->shape;
      while (!ss.empty() && ss.front() == 1 && ss.size() > norm.size()) ss.erase(ss.begin());
      if (ss == norm && st->dtype == t) {
        scale = s;
        y = data_outputs(g, mul)[0];
        gone.push_back(mul);
        if (ir::OpId add = single_user(g, y, "Add"); add && !o.excluded(g, add)) {
          if (ir::PortId b = constant_other(g, add, y)) {
            const ir::Tensor* bt = const_tensor(g, b);
            std::vector<int64_t> bs = bt->shape;
            while (!bs.empty() && bs.front() == 1 && bs.size() > norm.size()) bs.erase(bs.begin());
            if (bs == norm && bt->dtype == t) {
              bias = b;
              y = data_outputs(g, add)[0];
              gone.push_back(add);
            }
          }
        }
      }
    }
  }
  int64_t count = 1;
  for (int64_t n : norm) count = n < 0 ? -1 : count * n;
  if (!scale || (scale && const_tensor(g, scale)->shape != norm)) {
    // LayerNormalization wants Scale (and B) of the normalized shape exactly: make them so
    if (count < 0) return false;
    std::vector<double> sv(static_cast<size_t>(count), 1.0);
    if (scale) {
      auto v = doubles(g, scale);
      if (!v) return false;
      sv = *v;
    }
    auto st = from_doubles(sv, norm, t);
    if (!st) return false;
    scale = make_constant(rw, m.root, *st, std::string(g.name_str(div)) + "/scale");
  }
  if (bias && const_tensor(g, bias)->shape != norm) {
    auto v = doubles(g, bias);
    auto bt = v ? from_doubles(*v, norm, t) : std::nullopt;
    if (!bt) return false;
    bias = make_constant(rw, m.root, *bt, std::string(g.name_str(div)) + "/bias");
  }
  rw.set_insertion_point_before(m.root);
  ir::OpId ln = rw.create_op(g.sym("LayerNormalization"), g.sym(std::string(g.name_str(div)) + "/layernorm"));
  ir::PortId ix = rw.add_input(ln, "X"), is = rw.add_input(ln, "Scale");
  rw.connect(x, ix);
  rw.connect(scale, is);
  if (bias) rw.connect(bias, rw.add_input(ln, "B"));
  ir::PortId out = rw.add_output(ln, "Y");
  name_value(rw, out, g.name_str(ln));
  if (g.port_type(y)) rw.set_port_type(out, g.port_type(y));
  rw.set_attr(ln, "axis", ir::Value(k1));
  rw.set_attr(ln, "epsilon", ir::Value(*eps));
  if (!replace_value(rw, y, out)) return false;
  for (auto it = gone.rbegin(); it != gone.rend(); ++it) rw.erase_op(*it);
  for (bool again = true; again;) {  // users before producers, whatever the match order
    again = false;
    for (ir::OpId op : m.ops)
      if (op != div && g.valid(op) && !rw.erased(op)) {
        bool used = false;
        for (ir::PortId p : g.outputs(op)) used = used || (g.first_out_edge(p) != ir::EdgeId());
        if (!used) rw.erase_op(op), again = true;
      }
  }
  return true;
}

PassResult fuse_layer_norm(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  if (onnx_opset(g) < 17) {
    r.notes.push_back("skipped: LayerNormalization exists from opset 17");
    return r;
  }
  Pat x = any();
  Pat mean = op("ReduceMean").in(x).opt(constant()).uses(1);
  Pat d = op("Sub").in(x).in(mean).uses(2);
  Pat pw = op("Pow").in(d).in(constant()).uses(1);
  Pat var = op("ReduceMean").in(pw).opt(constant()).uses(1);
  Pat eps = constant();
  Pat add = op("Add").in(var).in(eps).uses(1);
  Pat sq = op("Sqrt").in(add).uses(1);
  Pat div = op("Div").in(d).in(sq);
  replace_everywhere(g, o, div, [&](const Match& m, ir::Rewriter& rw) {
    // the ops in the middle die with the fusion only when nothing else reads them
    return m.closed(g) && fuse(m, rw, x, mean, var, pw, eps, o);
  }, r, "fuse_layer_norm");
  return r;
}

}  // namespace

void register_layernorm(PassRegistry& r) {
  r.add({"fuse_layer_norm", "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div [Mul] [Add] -> LayerNormalization (opset >= 17)",
         fuse_layer_norm, true, true});
}

}  // namespace amanda::passes::detail
