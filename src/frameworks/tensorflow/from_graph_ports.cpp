// A converted graph's inputs and outputs -> TensorFlow's placeholders, weights and TF.js signature
// (from_graph_ports.h; docs/tensorflow.md, "ONNX -> TensorFlow").
#include "amanda/frameworks/tensorflow/from_graph_ports.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "amanda/ir/conventions.h"
#include "amanda/support/diagnostics.h"

namespace amanda::tf_frontend {

using ir::DType;
using ir::OpId;
using ir::PortId;
using ir::Tensor;
using ir::Value;

namespace {

// ONNX's element type spelling (`tensor(float)`) or a plain name -> TF's dtype name as TF.js reads it.
std::string tf_dtype_of(const Value* type) {
  std::string s = type && type->is_string() ? type->as_string() : "float";
  if (s.starts_with("tensor(") && s.ends_with(")")) s = s.substr(7, s.size() - 8);
  auto d = ir::dtype_from_name(s);
  if (!d) throw Error("a graph input of type " + s + " has no TensorFlow element type");
  if (*d == DType::Int64) return "int32";
  if (*d == DType::Float64) return "float32";
  return std::string(ir::dtype_name(*d));
}

std::string tf_enum_name(const std::string& dtype) {
  if (dtype == "float32") return "DT_FLOAT";
  if (dtype == "float64") return "DT_DOUBLE";
  if (dtype == "float16") return "DT_HALF";
  std::string u = dtype;
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "DT_" + u;
}

// TF.js computes in float32 and int32: narrower copies of 64-bit constants (integers clamped,
// ONNX's INT64_MAX "to the end" bounds become INT32_MAX).
Value narrow(const Tensor& t) {
  auto n = t.element_count();
  if (!n) return Value(t);
  std::string out;
  if (t.dtype == DType::Int64) {
    out.resize(*n * 4);
    for (uint64_t i = 0; i < *n; ++i) {
      int64_t v;
      std::memcpy(&v, t.data + 8 * i, 8);
      int32_t w = static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
      std::memcpy(out.data() + 4 * i, &w, 4);
    }
    return Value(Tensor::from_bytes(DType::Int32, t.shape, std::move(out)));
  }
  if (t.dtype == DType::Float64) {
    out.resize(*n * 4);
    for (uint64_t i = 0; i < *n; ++i) {
      double v;
      std::memcpy(&v, t.data + 8 * i, 8);
      float f = static_cast<float>(v);
      std::memcpy(out.data() + 4 * i, &f, 4);
    }
    return Value(Tensor::from_bytes(DType::Float32, t.shape, std::move(out)));
  }
  return Value(t);
}

// A valid TensorFlow node name: [A-Za-z0-9.][A-Za-z0-9_.\-/]*; TF.js splits names at ':'.
std::string valid_name(std::string_view s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/') ? c : '_';
  while (!out.empty() && out[0] == '/') out.erase(0, 1);
  if (out.empty() || !(std::isalnum(static_cast<unsigned char>(out[0])) || out[0] == '.')) out = "n" + out;
  return out;
}

class Boundary {
 public:
  explicit Boundary(ir::Graph& g) : g_(g), root_(g.root()) {}

  void run() {
    Value::Map sig_in, sig_out;
    std::vector<PortId> ins(g_.inputs(root_).begin(), g_.inputs(root_).end());
    std::vector<PortId> outs(g_.outputs(root_).begin(), g_.outputs(root_).end());
    OpId first = g_.first_child(root_);
    // outputs first: an output that is a graph input reads the port before it goes
    std::vector<std::pair<std::string, OpId>> identities;
    for (PortId q : outs) {
      if (g_.is_control(q)) continue;
      std::string name(g_.port_name_str(q));
      PortId src = g_.producer(q);
      if (!src) throw Error("graph output '" + name + "' has no producer");
      OpId id = g_.create_op(root_, "Identity", name);
      PortId in = g_.add_input(id, g_.sym("input"));
      PortId out = g_.add_output(id, g_.sym("output"));
      g_.connect(src, in);
      identities.emplace_back(name, id);
      g_.set_attr(id, g_.sym("T"), Value(type_of(src)));
      out_info_[id.value] = {name, shape_of(q)};
      (void)out;
    }
    for (PortId p : ins) {
      if (g_.is_control(p) || g_.port_name_str(p).starts_with("@")) continue;
      std::string name(g_.port_name_str(p));
      OpId op;
      if (const Value* init = ir::fixed_initializer(g_, p)) {
        op = g_.create_op(root_, "Const", name);
        Value v = narrow(init->as_tensor());
        g_.set_attr(op, g_.sym("dtype"), Value(std::string(ir::dtype_name(v.as_tensor().dtype))));
        g_.set_attr(op, g_.sym("value"), std::move(v));
      } else {
        op = g_.create_op(root_, "Placeholder", name);
        std::string dt = tf_dtype_of(g_.attr(p, g_.sym("type")));
        g_.set_attr(op, g_.sym("dtype"), Value(dt));
        Value::List shape;
        Value::List dims;
        bool ranked = false;
        if (const Value* s = g_.attr(p, g_.sym("shape")); s && s->is_list()) {
          ranked = true;
          for (const Value& d : s->as_list()) {
            shape.push_back(d.is_int() ? d : Value());
            dims.push_back(Value(Value::Map{{"size", Value(std::to_string(d.is_int() ? d.as_int() : -1))}}));
          }
        }
        g_.set_attr(op, g_.sym("shape"), ranked ? Value(std::move(shape)) : Value());
        placeholders_.push_back({name, op, dt, ranked ? Value(Value::Map{{"dim", Value(std::move(dims))}}) : Value(Value::Map{{"unknownRank", Value(true)}})});
      }
      PortId out = g_.add_output(op, g_.sym("output"));
      for (PortId c : g_.consumers(p)) {
        for (ir::EdgeId e : g_.in_edges(c))
          if (g_.edge_src(e) == p) g_.disconnect(e);
        g_.connect(out, c);
      }
      if (first) g_.move_before(op, first);
    }
    for (PortId p : ins) g_.erase_port(p);
    for (PortId q : outs) g_.erase_port(q);
    fold_weight_layouts();
    cancel_transposes();
    narrow_types();
    rename();
    for (auto& ph : placeholders_) {
      std::string tname = std::string(g_.name_str(ph.op)) + ":0";
      sig_in.push_back({ph.name, Value(Value::Map{{"name", Value(tname)}, {"dtype", Value(tf_enum_name(ph.dtype))}, {"tensorShape", ph.shape}})});
    }
    for (auto& [name, id] : identities) {
      const Value* t = g_.attr(id, g_.sym("T"));
      std::string tname = std::string(g_.name_str(id)) + ":0";
      Value::Map m{{"name", Value(tname)}};
      if (t && t->is_string() && !t->as_string().empty()) m.push_back({"dtype", Value(tf_enum_name(t->as_string()))});
      sig_out.push_back({name, Value(std::move(m))});
    }
    // The ONNX model's own attributes (ir_version, opset_import, ...) mean nothing in a GraphDef.
    std::vector<Symbol> keys;
    for (const auto& [k, v] : g_.attrs(root_)) keys.push_back(k);
    for (Symbol k : keys) g_.erase_attr(root_, k);
    // TF.js reads versions.producer; TF 2.2's GraphDef version (TF_GRAPH_DEF_VERSION) is 389.
    g_.set_attr(root_, g_.sym("versions"), Value(Value::Map{{"producer", Value(int64_t(389))}}));
    g_.set_attr(root_, g_.sym("tfjs"),
                Value(Value::Map{{"format", Value("graph-model")},
                                 {"generatedBy", Value("amanda (from ONNX)")},
                                 {"convertedBy", Value("amanda")},
                                 {"signature", Value(Value::Map{{"inputs", Value(std::move(sig_in))}, {"outputs", Value(std::move(sig_out))}})}}));
  }

 private:
  struct Placeholder {
    std::string name;
    OpId op;
    std::string dtype;
    Value shape;
  };
  ir::Graph& g_;
  OpId root_;
  std::vector<Placeholder> placeholders_;
  std::map<uint32_t, std::pair<std::string, Value>> out_info_;

  std::string type_of(PortId src) {
    OpId op = g_.port_op(src);
    if (op == root_) return tf_dtype_of(g_.attr(src, g_.sym("type")));
    // the producing TF op's output: its T / dtype / DstT attribute, else float32
    for (const char* k : {"T", "dtype", "DstT", "out_type", "output_type", "Tparams"})
      if (const Value* v = g_.attr(op, g_.sym(k)); v && v->is_string()) return v->as_string() == "int64" ? "int32" : v->as_string() == "float64" ? "float32" : v->as_string();
    return "float32";
  }
  Value shape_of(PortId q) {
    const Value* s = g_.attr(q, g_.sym("shape"));
    return s ? *s : Value();
  }

  const Tensor* const_value(PortId src) {
    if (!src) return nullptr;
    OpId op = g_.port_op(src);
    if (op == root_ || g_.type_str(op) != "Const") return nullptr;
    const Value* v = g_.attr(op, g_.sym("value"));
    return v && v->is_tensor() ? &v->as_tensor() : nullptr;
  }

  static std::vector<int64_t> ints(const Tensor& t) {
    std::vector<int64_t> out;
    size_t n = t.element_count().value_or(0);
    for (size_t i = 0; i < n; ++i) {
      if (t.dtype == DType::Int64) {
        int64_t v;
        std::memcpy(&v, t.data + 8 * i, 8);
        out.push_back(v);
      } else if (t.dtype == DType::Int32) {
        int32_t v;
        std::memcpy(&v, t.data + 4 * i, 4);
        out.push_back(v);
      }
    }
    return out;
  }

  // Transpose (and Reshape) of constants: the weights a rule puts in TF's layout (OIHW -> HWIO)
  // are stored in it, not transposed on every run.
  void fold_weight_layouts() {
    for (bool changed = true; changed;) {
      changed = false;
      for (OpId op : g_.children(root_)) {
        std::string_view t = g_.type_str(op);
        if (t != "Transpose" && t != "Reshape") continue;
        if (g_.inputs(op).size() < 2 || g_.outputs(op).empty()) continue;
        const Tensor* x = const_value(g_.producer(g_.input(op, 0)));
        const Tensor* p = const_value(g_.producer(g_.input(op, 1)));
        if (!x || !p || x->dtype == DType::String) continue;
        std::vector<int64_t> arg = ints(*p);
        size_t es = ir::dtype_size(x->dtype);
        auto n = x->element_count();
        if (!es || !n) continue;
        Tensor r;
        if (t == "Transpose") {
          size_t rank = x->shape.size();
          if (arg.size() != rank) continue;
          std::vector<int64_t> shape(rank), in_strides(rank, 1);
          for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * x->shape[i];
          for (size_t i = 0; i < rank; ++i) shape[i] = x->shape[size_t(arg[i])];
          std::string bytes(*n * es, '\0');
          std::vector<int64_t> idx(rank, 0);
          for (uint64_t k = 0; k < *n; ++k) {
            int64_t off = 0;
            for (size_t i = 0; i < rank; ++i) off += idx[i] * in_strides[size_t(arg[i])];
            std::memcpy(bytes.data() + k * es, x->data + off * es, es);
            for (size_t i = rank; i-- > 0;) {
              if (++idx[i] < shape[i]) break;
              idx[i] = 0;
            }
          }
          r = Tensor::from_bytes(x->dtype, std::move(shape), std::move(bytes));
        } else {
          int64_t known = 1, minus = -1;
          for (size_t i = 0; i < arg.size(); ++i) {
            if (arg[i] == -1) minus = int64_t(i);
            else known *= arg[i];
          }
          if (minus >= 0 && known) arg[size_t(minus)] = int64_t(*n) / known;
          int64_t total = 1;
          for (int64_t d : arg) total *= d;
          if (total != int64_t(*n)) continue;
          r = Tensor::from_bytes(x->dtype, arg, std::string(x->bytes()));
        }
        OpId c = g_.create_op(root_, "Const", std::string(g_.name_str(op)) + "_folded");
        g_.set_attr(c, g_.sym("dtype"), Value(std::string(ir::dtype_name(r.dtype))));
        g_.set_attr(c, g_.sym("value"), Value(std::move(r)));
        PortId out = g_.add_output(c, g_.sym("output"));
        g_.move_before(c, op);
        g_.replace_all_uses(g_.output(op, 0), out);
        std::vector<OpId> producers{g_.port_op(g_.producer(g_.input(op, 0))), g_.port_op(g_.producer(g_.input(op, 1)))};
        g_.erase_op(op);
        for (OpId q : producers)
          if (g_.valid(q) && g_.consumers(g_.output(q, 0)).empty()) g_.erase_op(q);
        changed = true;
      }
    }
  }

  // The NHWC <-> NCHW transposes the rules put around each convolution and pool: a Transpose
  // sinks below an elementwise op it alone feeds (Relu, Sigmoid, a Mul by a scalar, an AddV2 of
  // two inputs transposed alike, ...), and two transposes that undo each other go away. TF.js then
  // runs conv -> relu -> conv without leaving NHWC.
  std::vector<int64_t> perm_of(OpId t) {
    if (g_.type_str(t) != "Transpose" || g_.inputs(t).size() < 2) return {};
    const Tensor* p = const_value(g_.producer(g_.input(t, 1)));
    return p ? ints(*p) : std::vector<int64_t>{};
  }
  static bool elementwise(std::string_view t, bool& binary) {
    static const std::set<std::string_view> unary{"Relu", "Relu6", "Sigmoid", "Tanh", "Elu", "Selu", "Exp", "Log", "Sqrt", "Abs",
                                                  "Neg", "Erf", "Softplus", "Floor", "Ceil", "Round", "Sign",
                                                  "Reciprocal", "Sin", "Cos", "LeakyRelu", "Square", "Rsqrt", "IsNan", "LogicalNot"};
    static const std::set<std::string_view> two{"AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow"};
    binary = two.count(t) > 0;
    return binary || unary.count(t) > 0;
  }
  bool scalar_const(PortId in) {
    const Tensor* t = const_value(g_.producer(in));
    return t && t->element_count().value_or(2) == 1 && t->shape.size() <= 1;
  }
  void erase_if_unused(OpId op) {
    if (!g_.valid(op)) return;
    for (PortId o : g_.outputs(op))
      if (!g_.is_control(o) && g_.out_degree(o)) return;
    std::vector<OpId> feeders;
    for (PortId i : g_.inputs(op))
      if (PortId src = g_.producer(i)) feeders.push_back(g_.port_op(src));
    g_.erase_op(op);
    for (OpId f : feeders)
      if (f != root_ && g_.type_str(f) == "Const") erase_if_unused(f);
  }
  void cancel_transposes() {
    bool any = false;
    for (bool changed = true; changed;) {
      changed = false;
      for (OpId t : g_.children(root_)) {
        if (!g_.valid(t)) continue;
        std::vector<int64_t> p = perm_of(t);
        if (p.empty()) continue;
        PortId out = g_.output(t, 0);
        PortId src = g_.producer(g_.input(t, 0));
        std::vector<PortId> uses = g_.consumers(out);
        if (uses.empty() || !src) continue;
        // (a) every consumer a transpose that undoes this one
        bool all_inverse = true;
        for (PortId c : uses) {
          std::vector<int64_t> q = perm_of(g_.port_op(c));
          bool inv = q.size() == p.size() && g_.port_index(c) == 0;
          for (size_t i = 0; inv && i < q.size(); ++i) inv = q[i] >= 0 && size_t(q[i]) < p.size() && p[size_t(q[i])] == int64_t(i);
          all_inverse = all_inverse && inv;
        }
        if (all_inverse) {
          for (PortId c : uses) {
            OpId t2 = g_.port_op(c);
            g_.replace_all_uses(g_.output(t2, 0), src);
            erase_if_unused(t2);
          }
          erase_if_unused(t);
          changed = any = true;
          continue;
        }
        // (b) sink below the one elementwise op it feeds
        if (uses.size() != 1) continue;
        OpId e = g_.port_op(uses[0]);
        bool binary = false;
        // (not into an op whose output nothing reads: the graph outputs' Identities stay NCHW)
        if (!elementwise(g_.type_str(e), binary) || g_.outputs(e).empty() || !g_.out_degree(g_.output(e, 0))) continue;
        std::vector<PortId> ein;
        for (PortId i : g_.inputs(e))
          if (!g_.is_control(i)) ein.push_back(i);
        OpId other_t;
        if (binary) {
          if (ein.size() != 2) continue;
          PortId other = ein[0] == uses[0] ? ein[1] : ein[0];
          PortId osrc = g_.producer(other);
          if (!osrc) continue;
          OpId ot = g_.port_op(osrc);
          if (ot != t && ot != root_ && perm_of(ot) == p && g_.out_degree(osrc) == 1) other_t = ot;
          else if (!scalar_const(other)) continue;
        } else if (ein.size() != 1) {
          continue;
        }
        for (OpId tr : {t, other_t}) {
          if (!tr) continue;
          PortId tin = g_.producer(g_.input(tr, 0));
          for (PortId i : ein)
            if (g_.producer(i) == g_.output(tr, 0)) {
              for (ir::EdgeId x : g_.in_edges(i)) g_.disconnect(x);
              g_.connect(tin, i);
            }
        }
        PortId eout = g_.output(e, 0);
        for (PortId c : g_.consumers(eout)) {
          for (ir::EdgeId x : g_.in_edges(c))
            if (g_.edge_src(x) == eout) g_.disconnect(x);
          g_.connect(out, c);
        }
        for (ir::EdgeId x : g_.in_edges(g_.input(t, 0))) g_.disconnect(x);
        g_.connect(eout, g_.input(t, 0));
        if (other_t) erase_if_unused(other_t);
        changed = any = true;
      }
    }
    if (!any) return;
    ir::TopoResult order = g_.topo_order(root_);
    if (order.ok())
      for (OpId op : order.order) g_.move_before(op, OpId());
  }

  void narrow_types() {
    for (OpId op : g_.children(root_)) {
      if (g_.type_str(op) == "Const") {
        const Value* v = g_.attr(op, g_.sym("value"));
        if (v && v->is_tensor()) {
          Value n = narrow(v->as_tensor());
          g_.set_attr(op, g_.sym("dtype"), Value(std::string(ir::dtype_name(n.as_tensor().dtype))));
          g_.set_attr(op, g_.sym("value"), std::move(n));
        }
      }
      std::vector<std::pair<Symbol, Value>> changes;
      for (const auto& [k, v] : g_.attrs(op)) {
        if (g_.str(k).starts_with("@") || !v.is_string()) continue;
        if (v.as_string() == "int64") changes.emplace_back(k, Value("int32"));
        if (v.as_string() == "float64") changes.emplace_back(k, Value("float32"));
      }
      for (auto& [k, v] : changes) g_.set_attr(op, k, std::move(v));
    }
  }

  void rename() {
    std::set<std::string> used;
    std::vector<OpId> ops = g_.children(root_);
    // Identities of outputs and placeholders first: they keep the graph's names when they can.
    std::stable_partition(ops.begin(), ops.end(), [&](OpId op) {
      return g_.type_str(op) == "Placeholder" || out_info_.count(op.value);
    });
    std::vector<std::pair<OpId, std::string>> names;
    for (OpId op : ops) {
      std::string base = valid_name(g_.name_str(op));
      std::string n = base;
      for (int k = 1; used.count(n); ++k) n = base + "_" + std::to_string(k);
      used.insert(n);
      names.emplace_back(op, n);
    }
    // Two steps: a name may move from one op to another.
    for (auto& [op, n] : names) g_.set_name(op, g_.sym("\x01tmp" + std::to_string(op.value)));
    for (auto& [op, n] : names) g_.set_name(op, g_.sym(n));
  }
};

}  // namespace

void graph_ports_to_ops(ir::Graph& g) {
  if (g.inputs(g.root()).empty() && g.outputs(g.root()).empty()) return;
  Boundary(g).run();
}

}  // namespace amanda::tf_frontend
