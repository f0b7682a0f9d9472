#include "util.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "amanda/interp/executor.h"
#include "amanda/interp/kernel.h"
#include "amanda/ir/conventions.h"
#include "amanda/support/diagnostics.h"

namespace amanda::passes::detail {

int onnx_opset(const Graph& g) {
  std::string_view ns = g.str(g.graph_namespace(g.root()));
  constexpr std::string_view prefix = "amanda/onnx/";
  if (!ns.starts_with(prefix)) return 0;
  int v = 0;
  for (char c : ns.substr(prefix.size())) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
    if (v > 100000) return 0;
  }
  return v;
}

bool is_onnx(const Graph& g) { return onnx_opset(g) > 0; }

bool is_capture(const Graph& g, PortId p) {
  return g.port_dir(p) == ir::PortDir::In && g.port_name_str(p).starts_with("@capture.");
}

std::vector<PortId> data_inputs(const Graph& g, OpId op) {
  std::vector<PortId> r;
  for (PortId p : g.inputs(op))
    if (!g.is_control(p) && !is_capture(g, p)) r.push_back(p);
  return r;
}

std::vector<PortId> data_outputs(const Graph& g, OpId op) {
  std::vector<PortId> r;
  for (PortId p : g.outputs(op))
    if (!g.is_control(p)) r.push_back(p);
  return r;
}

PortId input_value(const Graph& g, OpId op, size_t i) {
  size_t k = 0;
  for (PortId p : g.inputs(op)) {
    if (g.is_control(p) || is_capture(g, p)) continue;
    if (k++ == i) return g.producer(p);
  }
  return PortId();
}

bool is_scope_value(const Graph& g, PortId src) {
  OpId op = g.port_op(src);
  return op == g.root() || g.is_graph(op) || g.port_dir(src) == ir::PortDir::In;
}

const ir::Value* constant_value(const Graph& g, PortId src) {
  for (int hops = 0; src && hops < 64; ++hops) {
    if (is_capture(g, src)) {  // a capture: the outer value
      src = g.producer(src);
      continue;
    }
    if (g.port_dir(src) == ir::PortDir::In && !g.is_graph(g.port_op(src)) && g.port_op(src) != g.root()) return nullptr;
    return ir::constant_tensor(g, src);
  }
  return nullptr;
}

const ir::Tensor* const_tensor(const Graph& g, PortId src) {
  const ir::Value* v = constant_value(g, src);
  return v ? &v->as_tensor() : nullptr;
}

std::optional<interp::Tensor> constant_rtensor(const Graph& g, PortId src) {
  const ir::Value* v = constant_value(g, src);
  if (!v) return std::nullopt;
  const ir::Tensor& t = v->as_tensor();
  if (t.dtype == ir::DType::Undefined) return std::nullopt;
  if (t.dtype != ir::DType::String) {
    auto want = t.expected_bytes();
    if (!want || *want != t.size) return std::nullopt;
  }
  return interp::Tensor::borrow(v->tensor_ptr());
}

std::optional<std::vector<int64_t>> constant_ints(const Graph& g, PortId src) {
  const ir::Tensor* t = const_tensor(g, src);
  if (!t) return std::nullopt;
  auto n = t->element_count();
  if (!n) return std::nullopt;
  std::vector<int64_t> r(*n);
  if (t->dtype == ir::DType::Int64 && t->size == *n * 8) {
    std::memcpy(r.data(), t->data, t->size);
  } else if (t->dtype == ir::DType::Int32 && t->size == *n * 4) {
    for (size_t i = 0; i < *n; ++i) {
      int32_t x;
      std::memcpy(&x, t->data + 4 * i, 4);
      r[i] = x;
    }
  } else {
    return std::nullopt;
  }
  return r;
}

std::optional<double> constant_scalar(const Graph& g, PortId src) {
  auto t = constant_rtensor(g, src);
  if (!t || t->numel() != 1 || t->dtype() == ir::DType::String) return std::nullopt;
  return t->get_f64(0);
}

static const ir::Value* find_attr(const Graph& g, OpId op, std::string_view name) {
  Symbol s = g.symbols().find(name);
  return s == SymbolTable::kNone ? nullptr : g.attr(op, s);
}

std::optional<int64_t> attr_int(const Graph& g, OpId op, std::string_view name) {
  const ir::Value* v = find_attr(g, op, name);
  if (v && v->is_int()) return v->as_int();
  return std::nullopt;
}

int64_t attr_int(const Graph& g, OpId op, std::string_view name, int64_t dflt) { return attr_int(g, op, name).value_or(dflt); }

std::optional<double> attr_float(const Graph& g, OpId op, std::string_view name) {
  const ir::Value* v = find_attr(g, op, name);
  if (v && v->is_float()) return v->as_float();
  if (v && v->is_int()) return static_cast<double>(v->as_int());
  return std::nullopt;
}

std::optional<std::string> attr_string(const Graph& g, OpId op, std::string_view name) {
  const ir::Value* v = find_attr(g, op, name);
  if (v && v->is_string()) return v->as_string();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> attr_ints(const Graph& g, OpId op, std::string_view name) {
  const ir::Value* v = find_attr(g, op, name);
  if (!v || !v->is_list()) return std::nullopt;
  std::vector<int64_t> r;
  for (const auto& e : v->as_list()) {
    if (!e.is_int()) return std::nullopt;
    r.push_back(e.as_int());
  }
  return r;
}

bool has_graph_attr(const Graph& g, OpId op) {
  for (const auto& [k, v] : g.attrs(op)) {
    if (v.is_graph()) return true;
    if (v.is_list())
      for (const auto& e : v.as_list())
        if (e.is_graph()) return true;
  }
  return false;
}

size_t uses(const Graph& g, PortId out) { return g.out_degree(out); }

bool feeds_scope_output(const Graph& g, PortId out) {
  for (ir::EdgeId e = g.first_out_edge(out); e; e = g.next_out_edge(e)) {
    PortId d = g.edge_dst(e);
    OpId o = g.port_op(d);
    if ((o == g.root() || g.is_graph(o)) && g.port_dir(d) == ir::PortDir::Out) return true;
  }
  return false;
}

bool has_control_edges(const Graph& g, OpId op) {
  PortId ci = g.find_control(op, ir::PortDir::In), co = g.find_control(op, ir::PortDir::Out);
  return (ci && g.in_degree(ci) > 0) || (co && (g.first_out_edge(co) != ir::EdgeId()));
}

std::optional<std::vector<int64_t>> static_shape(const Graph& g, PortId p) {
  if (!g.port_type(p)) return std::nullopt;
  const ir::TypeData& d = g.port_type_data(p);
  if (d.kind != ir::TypeKind::Tensor || !d.ranked) return std::nullopt;
  std::vector<int64_t> r;
  for (ir::Dim x : d.dims) {
    if (!x.is_known()) return std::nullopt;
    r.push_back(x.value());
  }
  return r;
}

ir::DType elem_type(const Graph& g, PortId p) {
  if (const ir::Tensor* t = const_tensor(g, p)) return t->dtype;
  if (!g.port_type(p)) return ir::DType::Undefined;
  const ir::TypeData& d = g.port_type_data(p);
  return d.kind == ir::TypeKind::Tensor ? d.elem : ir::DType::Undefined;
}

int64_t rank_of(const Graph& g, PortId p) {
  if (const ir::Tensor* t = const_tensor(g, p)) return static_cast<int64_t>(t->shape.size());
  if (!g.port_type(p)) return -1;
  const ir::TypeData& d = g.port_type_data(p);
  return d.kind == ir::TypeKind::Tensor && d.ranked ? static_cast<int64_t>(d.dims.size()) : -1;
}

// An initializer nothing reads yet (one make_constant just made): it can take a graph output's name.
static bool fresh_initializer(const Graph& g, PortId p, OpId scope) {
  return g.port_dir(p) == ir::PortDir::In && g.port_op(p) == scope && (g.first_out_edge(p) == ir::EdgeId()) && ir::fixed_initializer(g, p);
}

bool can_replace(const Graph& g, PortId from, PortId to) {
  if (from == to) return false;
  if (!feeds_scope_output(g, from)) return true;
  if (fresh_initializer(g, to, g.parent(g.port_op(from)))) return true;
  // `to` takes over the output's value name: it must be an op output of the same scope that no
  // scope output reads yet.
  OpId op = g.port_op(to);
  if (g.port_dir(to) != ir::PortDir::Out || op == g.root() || g.is_graph(op)) return false;
  if (g.parent(op) != g.parent(g.port_op(from))) return false;
  return !feeds_scope_output(g, to);
}

bool replace_value(ir::Rewriter& rw, PortId from, PortId to) {
  Graph& g = rw.graph();
  if (!can_replace(g, from, to)) return false;
  if (feeds_scope_output(g, from) && fresh_initializer(g, to, g.parent(g.port_op(from)))) {
    // the initializer is the graph output: it takes the output's value name (a port made in this
    // transaction, so a rollback removes it with its name)
    Symbol s_value = g.sym("@value");
    if (const ir::Value* n = g.attr(from, s_value); n && n->is_string()) g.set_port_name(to, g.sym(n->as_string()));
  } else if (feeds_scope_output(g, from)) {
    Symbol s_value = g.sym("@value");
    if (const ir::Value* n = g.attr(from, s_value)) {
      ir::Value name = *n;
      rw.set_attr(to, s_value, name);
    }
    // the output's declared type is the value's
    if (g.port_type(from) && !g.port_type(to)) rw.set_port_type(to, g.port_type(from));
  }
  rw.replace_all_uses(from, to);
  return true;
}

void name_value(ir::Rewriter& rw, PortId out, std::string_view hint) {
  Graph& g = rw.graph();
  std::string name = std::string(hint.empty() ? std::string_view("value") : hint) + "__" + std::to_string(out.value);
  rw.set_attr(out, g.sym("@value"), ir::Value(std::move(name)));
}

namespace {

// Bytes another object keeps alive (an interpreter block), seen as an ir Buffer.
class KeptBytes : public Buffer {
 public:
  KeptBytes(std::shared_ptr<void> keep, const uint8_t* data, size_t size) : keep_(std::move(keep)), data_(data), size_(size) {}
  const uint8_t* data() const override { return data_; }
  size_t size() const override { return size_; }

 private:
  std::shared_ptr<void> keep_;
  const uint8_t* data_;
  size_t size_;
};

}  // namespace

ir::Tensor to_ir(const interp::Tensor& t0) {
  interp::Tensor t = t0.plain();
  if (t.dtype() == ir::DType::String) {
    ir::Tensor r;
    r.dtype = ir::DType::String;
    r.shape = t.shape();
    r.strings = t.strings();
    return r;
  }
  if (!t.owner() || t.nbytes() == 0) {
    std::string bytes(reinterpret_cast<const char*>(t.raw()), t.nbytes());
    return ir::Tensor::from_bytes(t.dtype(), t.shape(), std::move(bytes));
  }
  // The IR tensor borrows the interpreter's block (or the IR tensor the result shares bytes with):
  // a folded weight is not copied again (convnext_tiny folds 112 MB of transposed weights).
  auto owner = std::make_shared<KeptBytes>(t.owner(), t.raw(), t.nbytes());
  return ir::Tensor::borrow(t.dtype(), t.shape(), owner, t.raw(), t.nbytes());
}

ir::Tensor int64_tensor(const std::vector<int64_t>& v, std::vector<int64_t> shape) {
  std::string bytes(v.size() * 8, '\0');
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return ir::Tensor::from_bytes(ir::DType::Int64, std::move(shape), std::move(bytes));
}

ir::Tensor int64_tensor(const std::vector<int64_t>& v) { return int64_tensor(v, {static_cast<int64_t>(v.size())}); }

PortId make_constant(ir::Rewriter& rw, OpId before, const ir::Tensor& t, std::string_view hint) {
  // An initializer of the scope that holds `before` (what onnxruntime and onnxoptimizer make too):
  // no op to count, and the exporter writes it with the others.
  Graph& g = rw.graph();
  OpId scope = g.is_graph(before) || before == g.root() ? before : g.parent(before);
  std::string name = std::string(hint.empty() ? std::string_view("const") : hint) + "__" + std::to_string(g.port_id_bound());
  PortId p = rw.add_port(scope, ir::PortDir::In, g.sym(name));
  rw.set_attr(p, g.sym("graph_input"), ir::Value(false));
  rw.set_attr(p, g.sym("initializer"), ir::Value(t));
  g.set_port_role(p, ir::PortRole::Initializer);
  rw.set_port_type(p, g.types().tensor(t.dtype, ir::dims_of(t.shape)));
  return p;
}

PortId make_constant(ir::Rewriter& rw, OpId before, const interp::Tensor& t, std::string_view hint) {
  return make_constant(rw, before, to_ir(t), hint);
}

std::optional<std::vector<OpId>> topo(const Graph& g, OpId scope) {
  ir::TopoResult t = g.topo_order(scope);
  if (!t.ok()) return std::nullopt;
  return std::move(t.order);
}

bool nondeterministic(std::string_view type) {
  return type.starts_with("Random") || type == "Bernoulli" || type == "Multinomial" || type == "Dropout";
}

std::optional<std::vector<interp::Tensor>> eval_op(const Graph& g, OpId op, const std::vector<std::optional<interp::Tensor>>& inputs) {
  int opset = onnx_opset(g);
  std::string_view type = g.type_str(op);
  if (!opset || type.find("::") != std::string_view::npos) return std::nullopt;
  interp::KernelFn fn = interp::KernelRegistry::builtin().find(type, opset);
  if (!fn) return std::nullopt;
  try {
    interp::Executor ex(g);
    interp::KernelContext ctx(g, op, opset, ex);
    std::vector<interp::RValue> vals;
    vals.reserve(inputs.size());
    for (const auto& t : inputs) vals.emplace_back(t ? interp::RValue(*t) : interp::RValue::none());
    for (size_t i = 0; i < inputs.size(); ++i) ctx.inputs_.push_back(inputs[i] ? &vals[i] : nullptr);
    auto outs = data_outputs(g, op);
    ctx.outputs_.resize(outs.size());
    for (auto& o : ctx.outputs_) o.kind = interp::RValue::Kind::None, o.elem = ir::DType::Undefined;
    ctx.used_.assign(outs.size(), true);
    fn(ctx);
    std::vector<interp::Tensor> r;
    for (auto& o : ctx.outputs_) {
      if (!o.is_tensor() || !o.tensor.defined()) return std::nullopt;
      r.push_back(o.tensor.plain());
    }
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace amanda::passes::detail

namespace amanda::passes::detail {

std::optional<std::vector<double>> doubles(const Graph& g, PortId c) {
  auto t = constant_rtensor(g, c);
  if (!t) return std::nullopt;
  ir::DType d = t->dtype();
  if (d != ir::DType::Float32 && d != ir::DType::Float64 && d != ir::DType::Float16 && d != ir::DType::BFloat16) return std::nullopt;
  size_t n = static_cast<size_t>(t->numel());
  std::vector<double> r(n);
  // float32 read in one loop (memcpy: a weight in a mapped file need not be aligned): get_f64's
  // per-element dispatch was 7% of human_faceres' `amanda optimize` (the Conv fusions' weights).
  if (d == ir::DType::Float32 && t->nbytes() == n * 4) {
    const uint8_t* p = t->raw();
    for (size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      r[i] = f;
    }
    return r;
  }
  for (size_t i = 0; i < n; ++i) r[i] = t->get_f64(static_cast<int64_t>(i));
  return r;
}

std::optional<ir::Tensor> from_doubles(const std::vector<double>& v, std::vector<int64_t> shape, ir::DType t) {
  std::string bytes;
  switch (t) {
    case ir::DType::Float32: {
      bytes.resize(v.size() * 4);
      for (size_t i = 0; i < v.size(); ++i) {
        float f = static_cast<float>(v[i]);
        std::memcpy(bytes.data() + 4 * i, &f, 4);
      }
      break;
    }
    case ir::DType::Float64:
      bytes.resize(v.size() * 8);
      if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
      break;
    case ir::DType::Float16:
    case ir::DType::BFloat16: {
      bytes.resize(v.size() * 2);
      for (size_t i = 0; i < v.size(); ++i) {
        uint16_t h = t == ir::DType::Float16 ? interp::float_to_half(static_cast<float>(v[i])) : interp::float_to_bf16(static_cast<float>(v[i]));
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      }
      break;
    }
    default:
      return std::nullopt;
  }
  return ir::Tensor::from_bytes(t, std::move(shape), std::move(bytes));
}

void set_input(ir::Rewriter& rw, OpId op, size_t i, PortId src, std::string_view name) {
  Graph& g = rw.graph();
  auto ins = data_inputs(g, op);
  while (ins.size() <= i) {
    rw.add_port(op, ir::PortDir::In, g.sym(ins.size() == i ? name : std::string_view("input")));
    ins = data_inputs(g, op);
  }
  if (ir::EdgeId e = g.first_in_edge(ins[i])) rw.disconnect(e);
  rw.connect(src, ins[i]);
}

}  // namespace amanda::passes::detail

namespace amanda::passes::detail {

namespace {

// Elements of ES bytes, read and written with memcpy (a constant in a mapped file is not aligned).
// Heap bytes not zeroed first (a folded weight is written whole right after).
struct UninitBytes : Buffer {
  explicit UninitBytes(size_t n) : bytes(new uint8_t[n ? n : 1]), n(n) {}
  const uint8_t* data() const override { return bytes.get(); }
  size_t size() const override { return n; }
  std::unique_ptr<uint8_t[]> bytes;
  size_t n;
};

template <size_t ES>
void transpose_core(const uint8_t* src, uint8_t* dst, const std::vector<int64_t>& in, const std::vector<int64_t>& perm) {
  size_t rank = perm.size();
  std::vector<int64_t> ist(rank, 1), out(rank);
  for (size_t i = rank; i-- > 1;) ist[i - 1] = ist[i] * in[i];
  for (size_t i = 0; i < rank; ++i) out[i] = in[static_cast<size_t>(perm[i])];
  if (rank == 2 && perm[0] == 1) {  // a matrix: 32 x 32 tiles, both sides stay in cache
    int64_t rows = in[0], cols = in[1];
    constexpr int64_t B = 32;
    for (int64_t r0 = 0; r0 < rows; r0 += B)
      for (int64_t c0 = 0; c0 < cols; c0 += B)
        for (int64_t c = c0; c < std::min(cols, c0 + B); ++c)
          for (int64_t r = r0; r < std::min(rows, r0 + B); ++r)
            std::memcpy(dst + (c * rows + r) * ES, src + (r * cols + c) * ES, ES);
    return;
  }
  // General: the output in order, as 2-D tiles between its innermost axis `a` and the axis `b`
  // that is the input's innermost (stride 1), over every index of the other axes. Walking the
  // output element by element instead read the input with the innermost axis' stride: a TF.js
  // weight HWIO -> OIHW ([3, 3, 256, 256], perm [3, 2, 0, 1]) gathered 3 elements per output row
  // from 3 places 256 x 256 elements apart, 18% of human_faceres' whole `amanda optimize`.
  if (rank == 0) {
    std::memcpy(dst, src, ES);
    return;
  }
  std::vector<int64_t> st(rank), ost(rank, 1);
  for (size_t i = 0; i < rank; ++i) st[i] = ist[static_cast<size_t>(perm[i])];
  for (size_t i = rank; i-- > 1;) ost[i - 1] = ost[i] * out[i];
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  if (total == 0) return;
  size_t a = rank - 1, b = a;
  for (size_t k = 0; k < rank; ++k)
    if (st[k] == 1 && out[k] > 1) b = k;  // (axes of size 1 have stride 1 too: they do not matter)
  std::vector<size_t> rest;  // the other axes, walked by idx
  for (size_t k = 0; k < rank; ++k)
    if (k != a && k != b) rest.push_back(k);
  std::vector<int64_t> idx(rest.size(), 0);
  const int64_t A = out[a], sa = st[a];
  const int64_t Bn = b == a ? 1 : out[b], ob = b == a ? 0 : ost[b];
  constexpr int64_t T = 32;
  for (;;) {
    int64_t ibase = 0, obase = 0;
    for (size_t j = 0; j < rest.size(); ++j) {
      ibase += idx[j] * st[rest[j]];
      obase += idx[j] * ost[rest[j]];
    }
    if (b == a) {
      if (sa == 1) {
        std::memcpy(dst + obase * ES, src + ibase * ES, static_cast<size_t>(A) * ES);
      } else {
        for (int64_t x = 0; x < A; ++x) std::memcpy(dst + (obase + x) * ES, src + (ibase + x * sa) * ES, ES);
      }
    } else {
      for (int64_t y0 = 0; y0 < Bn; y0 += T)
        for (int64_t x0 = 0; x0 < A; x0 += T) {
          int64_t y1 = std::min(Bn, y0 + T), x1 = std::min(A, x0 + T);
          for (int64_t y = y0; y < y1; ++y)
            for (int64_t x = x0; x < x1; ++x)
              std::memcpy(dst + (obase + y * ob + x) * ES, src + (ibase + y + x * sa) * ES, ES);
        }
    }
    size_t j = idx.size();
    while (j-- > 0) {
      if (++idx[j] < out[rest[j]]) break;
      idx[j] = 0;
    }
    if (j == static_cast<size_t>(-1)) break;
  }
}

// The same transpose on fewer, longer axes: axes of size 1 dropped, and output axes that follow each
// other in the input too merged into one (HWIO -> OIHW is [HW, I, O] -> [O, I, HW]).
template <size_t ES>
void transpose_bytes(const uint8_t* src, uint8_t* dst, const std::vector<int64_t>& in, const std::vector<int64_t>& perm) {
  size_t rank = perm.size();
  int64_t total = 1;
  for (int64_t d : in) total *= d;
  if (total == 0) return;
  std::vector<int64_t> renum(rank, -1), in2;
  for (size_t i = 0; i < rank; ++i)
    if (in[i] != 1) {
      renum[i] = static_cast<int64_t>(in2.size());
      in2.push_back(in[i]);
    }
  std::vector<int64_t> perm2;
  for (int64_t p : perm)
    if (renum[static_cast<size_t>(p)] >= 0) perm2.push_back(renum[static_cast<size_t>(p)]);
  // Runs of output axes that are consecutive input axes: (first input axis, size), in output order.
  std::vector<std::pair<int64_t, int64_t>> groups;
  for (size_t k = 0; k < perm2.size(); ++k) {
    int64_t ax = perm2[k];
    if (k > 0 && ax == perm2[k - 1] + 1) groups.back().second *= in2[static_cast<size_t>(ax)];
    else groups.emplace_back(ax, in2[static_cast<size_t>(ax)]);
  }
  std::vector<size_t> by_input(groups.size());  // groups in input order
  for (size_t g = 0; g < groups.size(); ++g) by_input[g] = g;
  std::sort(by_input.begin(), by_input.end(), [&](size_t x, size_t y) { return groups[x].first < groups[y].first; });
  std::vector<int64_t> in3(groups.size()), perm3(groups.size());
  for (size_t pos = 0; pos < by_input.size(); ++pos) {
    in3[pos] = groups[by_input[pos]].second;
    perm3[by_input[pos]] = static_cast<int64_t>(pos);
  }
  if (in3.size() <= 1) {  // nothing moves
    std::memcpy(dst, src, static_cast<size_t>(total) * ES);
    return;
  }
  transpose_core<ES>(src, dst, in3, perm3);
}

}  // namespace

std::optional<ir::Tensor> transpose_tensor(const ir::Tensor& t, const std::vector<int64_t>& perm) {
  size_t rank = perm.size();
  if (t.shape.size() != rank || t.dtype == ir::DType::String) return std::nullopt;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
  }
  size_t es = ir::dtype_size(t.dtype);
  auto n = t.expected_bytes();
  if (!es || !n || *n != t.size) return std::nullopt;
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) out[i] = t.shape[static_cast<size_t>(perm[i])];
  // A permutation that keeps the axes longer than 1 in their order moves no byte (an identity
  // Transpose, one of a unit axis): the result shares the bytes (a TF.js export's Transpose of a
  // [3136, 128] weight by [0, 1] copied 1.6 MB).
  int64_t last = -1;
  bool moves = false;
  for (int64_t p : perm)
    if (t.shape[static_cast<size_t>(p)] != 1) {
      moves = moves || p < last;
      last = p;
    }
  if (!moves) {
    ir::Tensor r = t;
    r.shape = std::move(out);
    return r;
  }
  auto buf = std::make_shared<UninitBytes>(t.size);  // every byte is written below
  uint8_t* dst = buf->bytes.get();
  switch (es) {
    case 1: transpose_bytes<1>(t.data, dst, t.shape, perm); break;
    case 2: transpose_bytes<2>(t.data, dst, t.shape, perm); break;
    case 4: transpose_bytes<4>(t.data, dst, t.shape, perm); break;
    case 8: transpose_bytes<8>(t.data, dst, t.shape, perm); break;
    case 16: transpose_bytes<16>(t.data, dst, t.shape, perm); break;
    default: return std::nullopt;
  }
  const uint8_t* p = buf->bytes.get();
  return ir::Tensor::borrow(t.dtype, std::move(out), std::move(buf), p, t.size);
}

}  // namespace amanda::passes::detail
