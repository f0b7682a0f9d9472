// Constant folding (every op whose inputs are all constant is computed once by the interpreter's
// kernels: interp's registry, the same kernels interp::fold_constants runs) and shape folding
// (partial evaluation of the small integer vectors torch exports compute shapes with: Shape,
// Gather, Slice, Concat, Unsqueeze, Squeeze, Cast and integer arithmetic, element by element, so
// that an element that depends on a symbolic batch N stays computed and the others become
// constants).
#include <algorithm>
#include <cstring>
#include <optional>

#include <absl/container/flat_hash_map.h>

#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

// A Transpose of a constant (the exporters' weight Transposes: vit_b_16 has 340 MB of them),
// without the interpreter: its kernel would first copy each unaligned weight of the mapped file
// to an aligned block, then walk it element by element.
bool fold_transpose(ir::Graph& g, ir::Rewriter& rw, ir::OpId op, const PassOptions& o, PassResult& r) {
  ir::PortId src = input_value(g, op, 0);
  const ir::Tensor* t = src ? const_tensor(g, src) : nullptr;
  auto outs = data_outputs(g, op);
  if (!t || outs.size() != 1 || g.first_out_edge(outs[0]) == ir::EdgeId() || o.excluded(g, op)) return false;
  std::vector<int64_t> perm;
  if (auto p = attr_ints(g, op, "perm")) {
    perm = *p;
  } else {
    for (size_t i = t->shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  auto res = transpose_tensor(*t, perm);
  if (!res) return false;
  rw.begin();
  ir::PortId c = make_constant(rw, op, *res, g.name_str(op));
  if (!replace_value(rw, outs[0], c)) {
    rw.rollback();
    return false;
  }
  rw.erase_op(op);
  rw.commit();
  ++r.created;
  ++r.rewrites;
  ++r.erased;
  return true;
}

PassResult constant_folding(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  ir::Rewriter rw(g);
  for (ir::OpId scope : scopes(g, o)) {
    if (!g.valid(scope)) continue;
    auto order = topo(g, scope);
    if (!order) continue;
    for (ir::OpId op : *order) {
      std::string_view type = g.type_str(op);
      if (type == "Constant" || nondeterministic(type) || has_graph_attr(g, op) || has_control_edges(g, op)) continue;
      if (type == "Transpose" && fold_transpose(g, rw, op, o, r)) continue;
      auto ins = data_inputs(g, op);
      std::vector<std::optional<interp::Tensor>> args;
      size_t in_bytes = 0;
      bool ok = !ins.empty(), any = false;
      for (ir::PortId p : ins) {
        ir::PortId src = g.producer(p);
        if (!src) {
          args.emplace_back(std::nullopt);
          continue;
        }
        auto t = constant_rtensor(g, src);
        if (!t) {
          ok = false;
          break;
        }
        any = true;
        in_bytes += t->nbytes();
        args.emplace_back(std::move(*t));
      }
      if (!ok || !any || o.excluded(g, op)) continue;
      auto outs = data_outputs(g, op);
      bool used = false;
      for (ir::PortId p : outs) used = used || (g.first_out_edge(p) != ir::EdgeId());
      if (!used) continue;  // dead: eliminate_deadend's business
      auto vals = eval_op(g, op, args);
      if (!vals || vals->size() != outs.size()) continue;
      size_t out_bytes = 0;
      for (const auto& t : *vals) out_bytes += t.nbytes();
      if (out_bytes > o.fold_size_limit && out_bytes > in_bytes) {
        ++r.refused;
        r.notes.push_back(g.path(op) + " (" + std::string(type) + "): not folded, its " + std::to_string(out_bytes) +
                          " bytes exceed the size limit");
        continue;
      }
      rw.begin();
      bool done = true;
      for (size_t i = 0; i < outs.size() && done; ++i) {
        if ((g.first_out_edge(outs[i]) == ir::EdgeId())) continue;
        std::string hint(g.name_str(op));
        ir::PortId c = make_constant(rw, op, (*vals)[i], hint);
        ++r.created;
        done = replace_value(rw, outs[i], c);
      }
      if (!done) {
        rw.rollback();
        continue;
      }
      rw.erase_op(op);
      rw.commit();
      ++r.rewrites;
      ++r.erased;
    }
  }
  return r;
}

// ---- shape folding

struct Partial {
  ir::DType dtype = ir::DType::Int64;
  bool scalar = false;                       // rank 0 (else rank 1)
  std::vector<std::optional<int64_t>> v;     // nullopt: not known before run time
  bool complete() const {
    for (const auto& x : v)
      if (!x) return false;
    return true;
  }
};

constexpr size_t kMaxPartial = 64;

std::optional<Partial> from_constant(const ir::Graph& g, ir::PortId src) {
  const ir::Tensor* t = const_tensor(g, src);
  if (!t || t->shape.size() > 1 || (t->dtype != ir::DType::Int64 && t->dtype != ir::DType::Int32)) return std::nullopt;
  auto ints = constant_ints(g, src);
  if (!ints || ints->size() > kMaxPartial) return std::nullopt;
  Partial p;
  p.dtype = t->dtype;
  p.scalar = t->shape.empty();
  for (int64_t x : *ints) p.v.emplace_back(x);
  return p;
}

std::optional<int64_t> arith(std::string_view type, std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  if (type == "Add") return *a + *b;
  if (type == "Sub") return *a - *b;
  if (type == "Mul") return *a * *b;
  if (type == "Div") {
    if (*b == 0) return std::nullopt;
    int64_t q = *a / *b;  // ONNX integer Div truncates
    return q;
  }
  return std::nullopt;
}

// What op computes from partially known inputs (nullopt: nothing known).
std::optional<Partial> evaluate(const ir::Graph& g, ir::OpId op, const absl::flat_hash_map<uint32_t, Partial>& known) {
  std::string_view type = g.type_str(op);
  auto in = [&](size_t i) -> std::optional<Partial> {
    ir::PortId src = input_value(g, op, i);
    if (!src) return std::nullopt;
    auto it = known.find(src.value);
    if (it != known.end()) return it->second;
    return from_constant(g, src);
  };
  if (type == "Shape") {
    ir::PortId x = input_value(g, op, 0);
    if (!x || !g.port_type(x)) return std::nullopt;
    const ir::TypeData& d = g.port_type_data(x);
    if (d.kind != ir::TypeKind::Tensor || !d.ranked) return std::nullopt;
    int64_t rank = static_cast<int64_t>(d.dims.size());
    int64_t start = attr_int(g, op, "start", 0), end = attr_int(g, op, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    Partial p;
    for (int64_t i = start; i < end; ++i) {
      ir::Dim dim = d.dims[static_cast<size_t>(i)];
      p.v.push_back(dim.is_known() ? std::optional<int64_t>(dim.value()) : std::nullopt);
    }
    return p;
  }
  if (type == "Size") {
    ir::PortId x = input_value(g, op, 0);
    auto s = x ? static_shape(g, x) : std::nullopt;
    if (!s) return std::nullopt;
    int64_t n = 1;
    for (int64_t d : *s) n *= d;
    Partial p;
    p.scalar = true;
    p.v.emplace_back(n);
    return p;
  }
  if (type == "Identity") return in(0);
  if (type == "Cast") {
    auto a = in(0);
    int64_t to = attr_int(g, op, "to", 0);
    if (!a || (to != 7 && to != 6)) return std::nullopt;  // int64, int32
    a->dtype = to == 7 ? ir::DType::Int64 : ir::DType::Int32;
    return a;
  }
  if (type == "Gather") {
    auto a = in(0);
    ir::PortId is = input_value(g, op, 1);
    auto idx = is ? constant_ints(g, is) : std::nullopt;
    const ir::Tensor* it = is ? const_tensor(g, is) : nullptr;
    if (!a || a->scalar || !idx || !it || it->shape.size() > 1 || attr_int(g, op, "axis", 0) != 0) return std::nullopt;
    Partial p;
    p.dtype = a->dtype;
    p.scalar = it->shape.empty();
    int64_t n = static_cast<int64_t>(a->v.size());
    for (int64_t i : *idx) {
      if (i < 0) i += n;
      if (i < 0 || i >= n) return std::nullopt;
      p.v.push_back(a->v[static_cast<size_t>(i)]);
    }
    return p;
  }
  if (type == "Unsqueeze" || type == "Squeeze") {
    auto a = in(0);
    if (!a) return std::nullopt;
    if (type == "Unsqueeze" && a->scalar) {
      a->scalar = false;
      return a;
    }
    if (type == "Squeeze" && !a->scalar && a->v.size() == 1) {
      a->scalar = true;
      return a;
    }
    return std::nullopt;
  }
  if (type == "Concat") {
    if (attr_int(g, op, "axis", 0) != 0 && attr_int(g, op, "axis", 0) != -1) return std::nullopt;
    Partial p;
    size_t n = data_inputs(g, op).size();
    for (size_t i = 0; i < n; ++i) {
      auto a = in(i);
      if (!a || a->scalar) return std::nullopt;
      p.dtype = a->dtype;
      p.v.insert(p.v.end(), a->v.begin(), a->v.end());
    }
    if (p.v.size() > kMaxPartial) return std::nullopt;
    return p;
  }
  if (type == "Slice") {
    auto a = in(0);
    if (!a || a->scalar) return std::nullopt;
    std::vector<int64_t> starts, ends, axes{0}, steps{1};
    if (auto s = attr_ints(g, op, "starts")) {  // opset < 10
      starts = *s;
      ends = attr_ints(g, op, "ends").value_or(std::vector<int64_t>{});
      if (auto ax = attr_ints(g, op, "axes")) axes = *ax;
    } else {
      auto ps = input_value(g, op, 1), pe = input_value(g, op, 2), pa = input_value(g, op, 3), pst = input_value(g, op, 4);
      auto s1 = ps ? constant_ints(g, ps) : std::nullopt;
      auto e1 = pe ? constant_ints(g, pe) : std::nullopt;
      if (!s1 || !e1) return std::nullopt;
      starts = *s1;
      ends = *e1;
      if (pa) {
        auto a1 = constant_ints(g, pa);
        if (!a1) return std::nullopt;
        axes = *a1;
      }
      if (pst) {
        auto st = constant_ints(g, pst);
        if (!st) return std::nullopt;
        steps = *st;
      }
    }
    if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || (axes[0] != 0 && axes[0] != -1) || steps.size() != 1 ||
        steps[0] == 0)
      return std::nullopt;
    int64_t n = static_cast<int64_t>(a->v.size()), st = steps[0];
    int64_t b = starts[0], e = ends[0];
    if (b < 0) b += n;
    if (e < 0) e += n;
    Partial p;
    p.dtype = a->dtype;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      for (int64_t i = b; i < e; i += st) p.v.push_back(a->v[static_cast<size_t>(i)]);
    } else {
      b = std::clamp<int64_t>(b, -1, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      for (int64_t i = b; i > e; i += st) p.v.push_back(a->v[static_cast<size_t>(i)]);
    }
    return p;
  }
  if (type == "Add" || type == "Sub" || type == "Mul" || type == "Div") {
    auto a = in(0), b = in(1);
    if (!a || !b || a->dtype != b->dtype) return std::nullopt;
    size_t n = std::max(a->v.size(), b->v.size());
    if ((a->v.size() != n && a->v.size() != 1) || (b->v.size() != n && b->v.size() != 1)) return std::nullopt;
    Partial p;
    p.dtype = a->dtype;
    p.scalar = a->scalar && b->scalar;
    for (size_t i = 0; i < n; ++i) p.v.push_back(arith(type, a->v[a->v.size() == 1 ? 0 : i], b->v[b->v.size() == 1 ? 0 : i]));
    return p;
  }
  return std::nullopt;
}

PassResult shape_folding(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  ir::Rewriter rw(g);
  for (ir::OpId scope : scopes(g, o)) {
    if (!g.valid(scope)) continue;
    auto order = topo(g, scope);
    if (!order) continue;
    absl::flat_hash_map<uint32_t, Partial> known;
    std::vector<ir::OpId> touched;
    for (ir::OpId op : *order) {
      std::string_view type = g.type_str(op);
      if (type == "Constant") continue;
      if (type == "Reshape") {
        // A target shape known but for one element (the batch): that element is what -1 computes.
        ir::PortId sp = input_value(g, op, 1);
        auto it = sp ? known.find(sp.value) : known.end();
        if (it == known.end() || it->second.complete() || o.excluded(g, op)) continue;
        const Partial& p = it->second;
        size_t unknown = 0;
        bool ok = !p.scalar;
        for (const auto& x : p.v) {
          if (!x) ++unknown;
          else ok = ok && *x > 0;
        }
        if (!ok || unknown != 1) continue;
        std::vector<int64_t> v;
        for (const auto& x : p.v) v.push_back(x ? *x : -1);
        rw.begin();
        ir::PortId c = make_constant(rw, op, int64_tensor(v), std::string(g.name_str(op)) + "/shape");
        ir::PortId port = data_inputs(g, op)[1];
        rw.disconnect(g.first_in_edge(port));
        rw.connect(c, port);
        rw.commit();
        ++r.rewrites;
        ++r.created;
        touched.push_back(g.port_op(sp));
        continue;
      }
      auto outs = data_outputs(g, op);
      if (outs.size() != 1) continue;
      auto p = evaluate(g, op, known);
      if (!p || p->v.size() > kMaxPartial) continue;
      if (!p->complete()) {
        known.emplace(outs[0].value, std::move(*p));
        continue;
      }
      if ((g.first_out_edge(outs[0]) == ir::EdgeId()) || o.excluded(g, op) || has_control_edges(g, op)) continue;
      std::vector<int64_t> v;
      for (const auto& x : p->v) v.push_back(*x);
      ir::Tensor t = int64_tensor(v, p->scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(v.size())});
      if (p->dtype == ir::DType::Int32) {
        std::string bytes(v.size() * 4, '\0');
        for (size_t i = 0; i < v.size(); ++i) {
          int32_t x = static_cast<int32_t>(v[i]);
          std::memcpy(bytes.data() + 4 * i, &x, 4);
        }
        t = ir::Tensor::from_bytes(ir::DType::Int32, t.shape, std::move(bytes));
      }
      rw.begin();
      ir::PortId c = make_constant(rw, op, t, std::string(g.name_str(op)));
      if (!replace_value(rw, outs[0], c)) {
        rw.rollback();
        continue;
      }
      rw.commit();
      ++r.rewrites;
      ++r.created;
      touched.push_back(op);
      known.emplace(c.value, *p);
    }
    // What the folded values came from goes when nothing else reads it.
    for (auto it = order->rbegin(); it != order->rend(); ++it) {
      ir::OpId op = *it;
      if (!g.valid(op) || g.type_str(op) == "Constant" || o.excluded(g, op)) continue;
      bool in_known = false, used = false;
      for (ir::PortId p : g.outputs(op)) {
        in_known = in_known || known.contains(p.value);
        used = used || (g.first_out_edge(p) != ir::EdgeId());
      }
      bool was_touched = std::find(touched.begin(), touched.end(), op) != touched.end();
      if ((in_known || was_touched) && !used && !g.outputs(op).empty()) {
        rw.erase_op(op);
        ++r.erased;
      }
    }
  }
  return r;
}

}  // namespace

void register_fold(PassRegistry& r) {
  r.add({"constant_folding", "computes ops whose inputs are all constant (never random ops; a size limit for big results)",
         constant_folding, true, true});
  r.add({"shape_folding",
         "partial evaluation of Shape/Gather/Slice/Concat/Unsqueeze/Cast chains: elements that do not depend on a symbolic "
         "dimension become constants; a Reshape whose target is known but for one element gets -1 there",
         shape_folding, true, true});
}

}  // namespace amanda::passes::detail
