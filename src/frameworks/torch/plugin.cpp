// libamanda_torch.so: TorchScript import and the PyTorch namespace from libtorch's operator
// registry. Loaded by loader.cpp; see docs/pytorch.md.
#include <ATen/Functions.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/shape_analysis.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/version.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include "amanda/frameworks/torch/torchscript.h"
#include "promotion_pass.h"
#include "writes_through_views.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"

namespace amanda::torch_frontend {

namespace tj = torch::jit;
using ir::OpId;
using ir::PortId;
using ir::Value;

namespace {

const std::string& ns_name() {
  static const std::string n = "amanda/pytorch/" + std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
  return n;
}

std::optional<ir::DType> dtype_of(c10::ScalarType t) {
  using S = c10::ScalarType;
  using D = ir::DType;
  switch (t) {
    case S::Bool: return D::Bool;
    case S::Char: return D::Int8;
    case S::Short: return D::Int16;
    case S::Int: return D::Int32;
    case S::Long: return D::Int64;
    case S::Byte: return D::UInt8;
    case S::Half: return D::Float16;
    case S::BFloat16: return D::BFloat16;
    case S::Float: return D::Float32;
    case S::Double: return D::Float64;
    case S::ComplexFloat: return D::Complex64;
    case S::ComplexDouble: return D::Complex128;
    default: return std::nullopt;
  }
}

// The bytes of an at::Tensor, kept alive by the Buffer (no copy when it is contiguous on the CPU).
class TensorBuffer final : public Buffer {
 public:
  explicit TensorBuffer(at::Tensor t) : t_(std::move(t)) {}
  const uint8_t* data() const override { return static_cast<const uint8_t*>(t_.data_ptr()); }
  size_t size() const override { return t_.nbytes(); }

 private:
  at::Tensor t_;
};

struct Fail : std::runtime_error {
  using std::runtime_error::runtime_error;
};

ir::Tensor tensor_of(const at::Tensor& t0, const std::string& what) {
  if (t0.is_quantized() || t0.is_sparse() || !t0.device().is_cpu())
    throw Fail(what + ": a " + std::string(t0.is_quantized() ? "quantized" : t0.is_sparse() ? "sparse" : "non-CPU") +
               " tensor (not supported)");
  auto d = dtype_of(t0.scalar_type());
  if (!d) throw Fail(what + ": tensor of element type " + std::string(c10::toString(t0.scalar_type())) + " (not supported)");
  at::Tensor t = t0.contiguous();
  std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  auto owner = std::make_shared<TensorBuffer>(t);
  return ir::Tensor::borrow(*d, std::move(shape), owner, owner->data(), owner->size());
}

Value value_of(const c10::IValue& v, const std::string& what) {
  if (v.isNone()) return Value();
  if (v.isBool()) return Value(v.toBool());
  if (v.isInt()) return Value(static_cast<int64_t>(v.toInt()));
  if (v.isDouble()) return Value(v.toDouble());
  if (v.isString()) return Value(v.toStringRef());
  if (v.isDevice()) return Value(v.toDevice().str());
  if (v.isTensor()) return Value(tensor_of(v.toTensor(), what));
  if (v.isIntList()) {
    Value::List l;
    for (auto x : v.toIntVector()) l.push_back(Value(static_cast<int64_t>(x)));
    return Value(std::move(l));
  }
  if (v.isDoubleList()) {
    Value::List l;
    for (auto x : v.toDoubleVector()) l.push_back(Value(x));
    return Value(std::move(l));
  }
  if (v.isBoolList()) {
    Value::List l;
    for (bool x : v.toBoolList()) l.push_back(Value(x));
    return Value(std::move(l));
  }
  if (v.isList()) {
    Value::List l;
    for (const c10::IValue& x : v.toListRef()) l.push_back(value_of(x, what));
    return Value(std::move(l));
  }
  if (v.isTuple()) {
    Value::List l;
    for (const auto& x : v.toTupleRef().elements()) l.push_back(value_of(x, what));
    return Value(std::move(l));
  }
  throw Fail(what + ": a constant of kind " + std::string(v.tagKind()) + " (not supported)");
}

// ---------------------------------------------------------------- names of ports

std::string op_type(const tj::Node* n) {
  std::string t = n->kind().toQualString();
  if (const c10::FunctionSchema* s = n->maybeSchema(); s && !s->overload_name().empty()) t += "." + s->overload_name();
  return t;
}

std::vector<std::string> input_names(const tj::Node* n) {
  std::vector<std::string> names;
  size_t count = n->inputs().size();
  if (const c10::FunctionSchema* s = n->maybeSchema()) {
    for (size_t i = 0; i < count && i < s->arguments().size(); ++i) names.push_back(s->arguments()[i].name());
    for (size_t k = 0; names.size() < count; ++k) names.push_back("args." + std::to_string(k));  // vararg
    return names;
  }
  std::string generic;
  switch (n->kind()) {
    case c10::prim::If: generic = "cond"; break;
    case c10::prim::Loop: {
      const char* fixed[] = {"max_trip_count", "start_condition"};
      for (size_t i = 0; i < count; ++i) names.push_back(i < 2 ? fixed[i] : "carried." + std::to_string(i - 2));
      return names;
    }
    case c10::prim::ListConstruct:
    case c10::prim::TupleConstruct: generic = "elements"; break;
    default: generic = "input";
  }
  if (count == 1 && n->kind() == c10::prim::If) return {generic};
  for (size_t k = 0; k < count; ++k) names.push_back(generic + "." + std::to_string(k));
  if (count == 1 && n->kind() != c10::prim::ListConstruct && n->kind() != c10::prim::TupleConstruct) names[0] = generic;
  return names;
}

std::vector<std::string> output_names(const tj::Node* n) {
  std::vector<std::string> names;
  size_t count = n->outputs().size();
  if (const c10::FunctionSchema* s = n->maybeSchema(); s && !s->is_varret() && s->returns().size() == count) {
    for (size_t i = 0; i < count; ++i) {
      const std::string& r = s->returns()[i].name();
      names.push_back(!r.empty() ? r : count == 1 ? "result" : "result" + std::to_string(i));
    }
    return names;
  }
  // prim::If / prim::Loop: `outputs.K` even for one (the namespace's variadic port).
  if (count == 1 && n->kind() != c10::prim::If && n->kind() != c10::prim::Loop) return {"output"};
  for (size_t k = 0; k < count; ++k) names.push_back("outputs." + std::to_string(k));
  return names;
}

// ---------------------------------------------------------------- import

// Graph ports get `type` and `shape`; op outputs the annotations `@type` and `@shape` (op schemas
// have no such attributes; the tables' rank()/shape()/dtype() read either).
void type_attrs(ir::Graph& g, PortId p, const tj::Value* v, bool graph_port) {
  const char* type_key = graph_port ? "type" : "@type";
  const char* shape_key = graph_port ? "shape" : "@shape";
  if (auto t = v->type()->cast<c10::TensorType>()) {
    if (auto st = t->scalarType())
      if (auto d = dtype_of(*st)) g.set_attr(p, g.sym(type_key), Value(std::string(ir::dtype_name(*d))));
    if (auto sizes = t->sizes().concrete_sizes()) {
      Value::List l;
      for (auto x : *sizes) l.push_back(Value(static_cast<int64_t>(x)));
      g.set_attr(p, g.sym(shape_key), Value(std::move(l)));
    } else if (auto rank = t->dim()) {
      g.set_attr(p, g.sym(shape_key), Value(Value::List(*rank, Value())));
    }
    return;
  }
  g.set_attr(p, g.sym("@torch_type"), Value(v->type()->annotation_str()));
  // A block's int or bool input or output (a loop's iteration number, a carried counter, a
  // condition) is a 0-d int64 / bool tensor in ONNX's If and Loop bodies: say so.
  if (graph_port) {
    if (v->type()->kind() == c10::TypeKind::IntType) {
      g.set_attr(p, g.sym("type"), Value(std::string("int64")));
      g.set_attr(p, g.sym("shape"), Value(Value::List{}));
    } else if (v->type()->kind() == c10::TypeKind::BoolType) {
      g.set_attr(p, g.sym("type"), Value(std::string("bool")));
      g.set_attr(p, g.sym("shape"), Value(Value::List{}));
    }
  }
}

struct Scope {
  OpId node;
  Scope* parent = nullptr;
  OpId owner;
  const tj::Block* block = nullptr;
  // Ops in a block are named <owner>.<block>.<k>: the text form names the owner of a capture
  // port by name, which a generated name of the block (_4) could shadow.
  std::string prefix;
  int next = 0;
  std::unordered_map<const tj::Value*, PortId> values;
  std::unordered_map<const tj::Value*, bool> none;  // values that are None constants
};

class Importer {
 public:
  Importer(text::Document& doc, std::string graph_name) : g_(doc.graph), graph_name_(std::move(graph_name)) {}

  void run(tj::Graph& graph) {
    OpId root = g_.root();
    g_.set_graph_namespace(root, g_.sym(ns_name()));
    g_.set_name(root, g_.sym(graph_name_));
    g_.set_attr(root, g_.sym("producer_name"), Value("amanda"));
    g_.set_attr(root, g_.sym("producer_version"), Value("torchscript import, libtorch " + std::string(TORCH_VERSION)));
    Scope s;
    s.block = graph.block();
    s.node = root;
    for (const tj::Value* in : graph.inputs()) {
      PortId p = g_.add_port(root, ir::PortDir::In, unique_port(root, ir::PortDir::In, in->debugName()));
      g_.set_attr(p, g_.sym("graph_input"), Value(true));
      type_attrs(g_, p, in, true);
      s.values[in] = p;
    }
    import_block(graph.block(), s, true);
    std::vector<const tj::Value*> outs(graph.outputs().begin(), graph.outputs().end());
    // A tuple returned by forward() gives one graph output per element.
    if (outs.size() == 1 && outs[0]->node()->kind() == c10::prim::TupleConstruct)
      outs.assign(outs[0]->node()->inputs().begin(), outs[0]->node()->inputs().end());
    for (const tj::Value* v : outs) {
      PortId p = g_.add_port(root, ir::PortDir::Out, unique_port(root, ir::PortDir::Out, v->debugName()));
      type_attrs(g_, p, v, true);
      PortId src = resolve(s, v);
      if (!src) throw Fail("graph output %" + v->debugName() + " is None or a constant that is not a tensor (not supported)");
      g_.connect(src, p);
    }
  }

 private:
  ir::Graph& g_;
  std::string graph_name_;
  std::unordered_map<uint64_t, std::unordered_map<std::string, int>> taken_;

  amanda::Symbol unique_port(OpId node, ir::PortDir dir, std::string name) {
    if (name.empty()) name = "_";
    auto& t = taken_[(uint64_t(node.value) << 1) | (dir == ir::PortDir::Out ? 1 : 0)];
    std::string n = name;
    for (int k = 1; t.count(n); ++k) n = name + "." + std::to_string(k);
    t[n] = 1;
    return g_.sym(n);
  }

  PortId resolve(Scope& s, const tj::Value* v) {
    if (auto it = s.values.find(v); it != s.values.end()) return it->second;
    if (!s.parent) return PortId();
    // A number, bool, list, ... constant read in a block is made again in the block (not
    // captured), so the rules' const: captures see it beside the op that reads it.
    if (v->node()->kind() == c10::prim::Constant && v->node()->owningBlock() != s.block) {
      c10::IValue iv = *tj::toIValue(v);
      if (!iv.isTensor() && !iv.isNone()) {
        OpId op = create_op(s, "prim::Constant");
        g_.set_attr(op, g_.sym("value"), value_of(iv, where(v->node())));
        PortId p = g_.add_output(op, g_.sym("output"));
        g_.set_attr(p, g_.sym("@value"), Value(s.prefix + v->debugName()));  // ONNX values are named once across bodies
        type_attrs(g_, p, v, false);
        s.values[v] = p;
        return p;
      }
    }
    PortId outer = resolve(*s.parent, v);
    if (!outer) return PortId();
    PortId cap = g_.add_input(s.owner, unique_port(s.owner, ir::PortDir::In, "@capture." + v->debugName()));  // two bodies may capture one value
    g_.set_attr(cap, g_.sym("@value"), Value(v->debugName()));
    g_.connect(outer, cap);
    s.values[v] = cap;
    return cap;
  }

  OpId create_op(Scope& s, const std::string& type) {
    OpId op = g_.create_op(s.node, type);
    if (!s.prefix.empty()) g_.set_name(op, g_.sym(s.prefix + std::to_string(s.next++)));
    return op;
  }

  bool is_none(Scope& s, const tj::Value* v) {
    for (Scope* c = &s; c; c = c->parent)
      if (c->none.count(v)) return true;
    return false;
  }

  static std::string where(const tj::Node* n) {
    std::string s = "node " + std::string(n->kind().toQualString());
    if (!n->outputs().empty()) s += " (%" + n->output(0)->debugName() + ")";
    return s;
  }

  void import_block(const tj::Block* b, Scope& s, bool top) {
    for (const tj::Node* n : b->nodes()) {
      if (n->kind() == c10::prim::Constant) {
        const tj::Value* out = n->output();
        c10::IValue iv = *tj::toIValue(out);
        if (iv.isNone()) {
          s.none[out] = true;  // an absent optional input
          continue;
        }
        if (top && iv.isTensor()) {
          OpId root = g_.root();
          PortId p = g_.add_port(root, ir::PortDir::In, unique_port(root, ir::PortDir::In, out->debugName()));
          g_.set_attr(p, g_.sym("graph_input"), Value(false));
          g_.set_attr(p, g_.sym("initializer"), Value(tensor_of(iv.toTensor(), where(n))));
          s.values[out] = p;
          continue;
        }
        OpId op = create_op(s, "prim::Constant");
        g_.set_attr(op, g_.sym("value"), value_of(iv, where(n)));
        PortId p = g_.add_output(op, g_.sym("output"));
        g_.set_attr(p, g_.sym("@value"), Value(out->debugName()));
        type_attrs(g_, p, out, false);
        s.values[out] = p;
        continue;
      }
      // The tuple forward() returns is its elements as graph outputs (run()): no op for it.
      if (top && n->kind() == c10::prim::TupleConstruct && b->outputs().size() == 1 && b->outputs()[0] == n->output() &&
          n->output()->uses().size() == 1)
        continue;
      OpId op = create_op(s, op_type(n));
      auto in_names = input_names(n);
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        PortId p = g_.add_input(op, g_.sym(in_names[i]));
        const tj::Value* v = n->inputs()[i];
        if (is_none(s, v)) continue;
        PortId src = resolve(s, v);
        if (!src) throw Fail(where(n) + ": input %" + v->debugName() + " is produced by nothing Amanda imported");
        g_.connect(src, p);
      }
      int bi = 0;
      for (const tj::Block* sub : n->blocks()) {
        OpId gn = g_.create_attr_graph(op, g_.sym("block" + std::to_string(bi)));
        Scope inner;
        inner.node = gn;
        inner.parent = &s;
        inner.owner = op;
        inner.block = sub;
        inner.prefix = std::string(g_.name_str(op)) + "." + std::to_string(bi) + ".";
        for (const tj::Value* in : sub->inputs()) {
          PortId p = g_.add_port(gn, ir::PortDir::In, unique_port(gn, ir::PortDir::In, in->debugName()));
          type_attrs(g_, p, in, true);
          inner.values[in] = p;
          // ONNX's Loop body takes (iteration number, condition, carried...), torch's (iteration
          // number, carried...): an unused `cond` input after the iteration number lets the
          // table map prim::Loop to Loop port for port.
          if (n->kind() == c10::prim::Loop && in == sub->inputs()[0]) {
            PortId c = g_.add_port(gn, ir::PortDir::In, unique_port(gn, ir::PortDir::In, "cond"));
            g_.set_attr(c, g_.sym("type"), Value(std::string("bool")));
            g_.set_attr(c, g_.sym("shape"), Value(Value::List{}));
          }
        }
        import_block(sub, inner, false);
        int oi = 0;
        for (const tj::Value* v : sub->outputs()) {
          PortId p = g_.add_port(gn, ir::PortDir::Out, unique_port(gn, ir::PortDir::Out, "_" + std::to_string(oi++)));
          type_attrs(g_, p, v, true);
          if (is_none(inner, v)) continue;
          PortId src = resolve(inner, v);
          if (!src) throw Fail(where(n) + ": block output %" + v->debugName() + " is produced by nothing Amanda imported");
          // A tensor from outside the block, returned as it is: ONNX names a body's outputs after
          // values of the body, so an aten::clone in the block gives it (an Identity in ONNX).
          if (g_.port_dir(src) == ir::PortDir::In && g_.port_op(src) == op && v->type()->cast<c10::TensorType>()) {
            OpId c = create_op(inner, "aten::clone");
            g_.connect(src, g_.add_input(c, g_.sym("self")));
            g_.add_input(c, g_.sym("memory_format"));
            PortId r = g_.add_output(c, g_.sym("result"));
            g_.set_attr(r, g_.sym("@value"), Value(inner.prefix + v->debugName()));
            type_attrs(g_, r, v, false);
            src = r;
          }
          g_.connect(src, p);
          // An ONNX body's output is named as the value it returns.
          if (g_.port_dir(src) == ir::PortDir::Out) {
            if (const Value* vn = g_.attr(src, g_.sym("@value"))) g_.set_attr(p, g_.sym("@value"), *vn);
          } else if (g_.port_op(src) == gn) {
            g_.set_attr(p, g_.sym("@value"), Value(std::string(g_.port_name_str(src))));
          }
        }
        g_.set_attr(op, g_.sym("block" + std::to_string(bi)), Value::graph(gn));
        ++bi;
      }
      auto out_names = output_names(n);
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        PortId p = g_.add_output(op, g_.sym(out_names[i]));
        g_.set_attr(p, g_.sym("@value"), Value(n->outputs()[i]->debugName()));
        type_attrs(g_, p, n->outputs()[i], false);
        s.values[n->outputs()[i]] = p;
      }
    }
  }
};

// aten::size / aten::dim of tensors whose traced type has concrete sizes become constants.
void specialize_shapes(tj::Block* b) {
  for (auto it = b->nodes().begin(); it != b->nodes().end(); ++it) {
    tj::Node* n = *it;
    for (tj::Block* sub : n->blocks()) specialize_shapes(sub);
    bool size = n->kind() == c10::aten::size, dim = n->kind() == c10::aten::dim;
    if (!size && !dim) continue;
    auto t = n->input(0)->type()->cast<c10::TensorType>();
    if (!t) continue;
    auto sizes = t->sizes().concrete_sizes();
    if (!sizes) continue;
    c10::IValue c;
    if (dim && n->inputs().size() == 1) {
      c = static_cast<int64_t>(sizes->size());
    } else if (size && n->inputs().size() == 1) {
      c = c10::IValue(*sizes);
    } else if (size && n->inputs().size() == 2) {
      auto d = tj::toIValue(n->input(1));
      if (!d || !d->isInt()) continue;
      int64_t k = d->toInt(), r = static_cast<int64_t>(sizes->size());
      if (k < 0) k += r;
      if (k < 0 || k >= r) continue;
      c = (*sizes)[static_cast<size_t>(k)];
    } else {
      continue;
    }
    tj::WithInsertPoint guard(n);
    tj::Value* cv = n->owningGraph()->insertConstant(c);
    n->output()->replaceAllUsesWith(cv);
  }
}

std::optional<c10::ScalarType> scalar_type_of(const std::string& name) {
  auto dt = ir::dtype_from_name(name);
  if (!dt) return std::nullopt;
  for (auto s : {c10::ScalarType::Float, c10::ScalarType::Double, c10::ScalarType::Half, c10::ScalarType::Long,
                 c10::ScalarType::Int, c10::ScalarType::Bool, c10::ScalarType::Byte, c10::ScalarType::Char,
                 c10::ScalarType::Short, c10::ScalarType::BFloat16})
    if (dtype_of(s) == *dt) return s;
  return std::nullopt;
}

std::string first_line(const std::string& s);

c10::TypePtr complete_type(const at::Tensor& t) {
  return c10::TensorType::createContiguous(t.scalar_type(), at::kCPU, t.sizes());
}

at::Tensor on_meta(const at::Tensor& t) { return at::empty(t.sizes(), t.options().device(at::kMeta)); }
at::Tensor on_cpu(const at::Tensor& t) { return t.is_meta() ? at::zeros(t.sizes(), t.options().device(at::kCPU)) : t; }

// Shapes without arithmetic: runs the graph node by node on meta tensors (sizes and element types
// only, no data), so that typing vit_b_16 takes milliseconds instead of a 14 s forward pass on this
// machine's libtorch. An op without a meta kernel runs on the CPU on zeros of the right shapes
// (convolutions), or gets its known output shape (fused attention). False when something needs
// real data (an int computed from a tensor that had to run on the CPU, blocks): then the caller
// runs the graph for real.
bool annotate_types_meta(const std::shared_ptr<tj::Graph>& graph, const std::vector<c10::IValue>& args);
bool annotate_types_meta_or_not(const std::shared_ptr<tj::Graph>& graph, const std::vector<c10::IValue>& args) {
  try {
    return annotate_types_meta(graph, args);
  } catch (const std::exception& e) {
    if (std::getenv("AMANDA_TORCH_DEBUG")) std::cerr << "meta shapes failed: " << first_line(e.what()) << "\n";
    return false;
  }
}
bool annotate_types_meta(const std::shared_ptr<tj::Graph>& graph, const std::vector<c10::IValue>& args) {
  std::unordered_map<const tj::Value*, c10::IValue> env;
  for (size_t i = 0; i < args.size(); ++i) env[graph->inputs()[i]] = on_meta(args[i].toTensor());
  std::vector<std::pair<tj::Value*, at::Tensor>> typed;
  c10::InferenceMode guard;
  for (tj::Node* n : graph->nodes()) {
    if (!n->blocks().empty()) return false;
    if (n->kind() == c10::prim::Constant) {
      c10::IValue v = *tj::toIValue(n->output());
      // Weights go to meta; small constants (scalars in shape arithmetic) keep their values.
      env[n->output()] = v.isTensor() && v.toTensor().numel() > 16 ? c10::IValue(on_meta(v.toTensor())) : v;
      continue;
    }
    tj::Stack st;
    for (const tj::Value* v : n->inputs()) {
      auto it = env.find(v);
      if (it == env.end()) return false;
      st.push_back(it->second);
    }
    tj::Stack saved = st;
    // prim ops without a schema the registry can find.
    if (n->kind() == c10::prim::ListConstruct) {
      auto lt = n->output()->type()->cast<c10::ListType>();
      if (!lt) return false;
      c10::impl::GenericList l(lt->getElementType());
      for (auto& v : st) l.push_back(v);
      st = {c10::IValue(l)};
    } else if (n->kind() == c10::prim::TupleConstruct) {
      st = {c10::ivalue::Tuple::create(std::vector<c10::IValue>(st.begin(), st.end()))};
    } else if (n->kind() == c10::prim::ListUnpack || n->kind() == c10::prim::TupleUnpack) {
      c10::IValue v = st.at(0);
      st.clear();
      if (v.isList())
        for (const auto& x : v.toListRef()) st.push_back(x);
      else if (v.isTuple())
        for (const auto& x : v.toTupleRef().elements()) st.push_back(x);
      else
        return false;
    } else try {
      n->getOperation()(st);
    } catch (const std::exception& first) {
      if (std::getenv("AMANDA_TORCH_DEBUG")) {
        std::cerr << "meta shapes: " << std::string(first.what()).substr(0, 300) << " at " << *n;
        for (const auto& v : saved) std::cerr << "  input " << v.tagKind() << (v.isTensor() && v.toTensor().defined() ? " " + v.toTensor().toString() : "") << "\n";
      }
      st = saved;
      std::string kind = n->kind().toQualString();
      if (kind == "aten::_native_multi_head_attention") {
        // (query-shaped output, attention weights: none when need_weights is false)
        st = {on_meta(saved[0].toTensor()), at::Tensor()};
      } else if (kind == "aten::layer_norm" || kind == "aten::batch_norm" || kind == "aten::instance_norm" ||
                 kind == "aten::group_norm") {
        st = {on_meta(saved[0].toTensor())};  // the input's shape
      } else if (kind == "aten::_convolution" && saved.size() >= 9 && !saved[6].toBool()) {
        // No meta kernel in libtorch 1.13: out = (in + 2 pad - dilation (k - 1) - 1) / stride + 1.
        const at::Tensor& x = saved[0].toTensor();
        const at::Tensor& w = saved[1].toTensor();
        auto stride = saved[3].toIntVector(), pad = saved[4].toIntVector(), dil = saved[5].toIntVector();
        std::vector<int64_t> out{x.size(0), w.size(0)};
        for (size_t i = 0; i + 2 < static_cast<size_t>(x.dim()); ++i) {
          auto at = [](const std::vector<int64_t>& v, size_t i) { return v.size() == 1 ? v[0] : v.at(i); };
          out.push_back((x.size(static_cast<int64_t>(i + 2)) + 2 * at(pad, i) - at(dil, i) * (w.size(static_cast<int64_t>(i + 2)) - 1) - 1) / at(stride, i) + 1);
        }
        st = {at::empty(out, x.options().device(at::kMeta))};
      } else {
        if (std::getenv("AMANDA_TORCH_DEBUG")) std::cerr << "meta shapes: on the CPU: " << *n;
        for (auto& v : st)
          if (v.isTensor() && v.toTensor().defined()) v = on_cpu(v.toTensor());
        n->getOperation()(st);
        for (size_t i = 0; i < n->outputs().size(); ++i)
          if (!n->outputs()[i]->type()->cast<c10::TensorType>()) return false;  // a value from zeros: not to be trusted
        for (auto& v : st)
          if (v.isTensor() && v.toTensor().defined()) v = on_meta(v.toTensor());
      }
    }
    if (st.size() != n->outputs().size()) return false;
    for (size_t i = 0; i < st.size(); ++i) {
      env[n->outputs()[i]] = st[i];
      if (st[i].isTensor() && st[i].toTensor().defined()) typed.emplace_back(n->outputs()[i], st[i].toTensor());
    }
  }
  for (auto& [v, t] : typed) v->setType(complete_type(t));
  return true;
}

// Runs a copy of the graph, with every top-level tensor value as an extra output, on `args`; each
// value then gets the complete type (element type, sizes) of what it held.
bool has_blocks(const tj::Block* b) {
  for (const tj::Node* n : b->nodes())
    if (!n->blocks().empty()) return true;
  return false;
}

void annotate_types(const std::shared_ptr<tj::Graph>& graph, const std::vector<c10::IValue>& args) {
  auto probe = graph->copy();
  std::vector<tj::Value*> orig;
  auto a = graph->nodes().begin();
  auto b = probe->nodes().begin();
  for (; a != graph->nodes().end(); ++a, ++b)
    for (size_t i = 0; i < a->outputs().size(); ++i)
      if (a->outputs()[i]->type()->cast<c10::TensorType>()) {
        orig.push_back(a->outputs()[i]);
        probe->registerOutput(b->outputs()[i]);
      }
  tj::Code code(probe, "amanda_probe");
  tj::InterpreterState state(code);
  tj::Stack stack(args.begin(), args.end());
  {
    c10::InferenceMode guard;
    state.run(stack);
  }
  size_t base = stack.size() - orig.size();
  // A second run on ones: a value whose size differs depends on the inputs' values (topk(x, k)
  // with k an input, a Resize scale or a pad read from a tensor), and the sizes of the run on
  // zeros would be baked into the model as constants. Refused, naming the op. (If the run on
  // ones fails, the inputs are indices that must stay small: nothing is learnt.)
  std::vector<c10::IValue> ones;
  for (const c10::IValue& v : args) ones.emplace_back(v.isTensor() ? c10::IValue(at::ones_like(v.toTensor())) : v);
  tj::InterpreterState state2(code);
  tj::Stack stack2(ones.begin(), ones.end());
  bool second = true;
  try {
    c10::InferenceMode guard;
    state2.run(stack2);
  } catch (const std::exception&) {
    second = false;
  }
  size_t base2 = second ? stack2.size() - orig.size() : 0;
  for (size_t k = 0; k < orig.size(); ++k) {
    if (!stack[base + k].isTensor() || !stack[base + k].toTensor().defined()) continue;
    if (second && stack2[base2 + k].isTensor() && stack2[base2 + k].toTensor().defined() &&
        stack2[base2 + k].toTensor().sizes() != stack[base + k].toTensor().sizes())
      throw Fail("node " + std::string(orig[k]->node()->kind().toQualString()) + " (%" + orig[k]->debugName() +
                 "): its size depends on the inputs' values (the libtorch reader fixes every size at one run; the "
                 "libtorch-free reader makes such sizes graph values)");
    orig[k]->setType(complete_type(stack[base + k].toTensor()));
  }
}

// new_zeros(self, ...) and its kin read only self's element type and device.
bool reads_only_metadata(const tj::Node* n) {
  std::string k = n->kind().toQualString();
  return k == "aten::new_zeros" || k == "aten::new_ones" || k == "aten::new_full" || k == "aten::new_empty";
}

bool in_place(const tj::Node* n) {
  std::string k = n->kind().toUnqualString();
  return !k.empty() && k.back() == '_' && k.front() != '_';
}

// Evaluates, once, every top-level computation that depends on no graph input (attention masks
// built with new_zeros + slice + fill_, shape arithmetic left over) and puts its results used by
// the rest in as constants. Skipped when an op outside writes into such a value, or when one of
// its in-place ops comes after a read from outside.
void fold_input_independent(const std::shared_ptr<tj::Graph>& graph) {
  std::unordered_set<const tj::Node*> fold;
  std::unordered_set<const tj::Value*> vals;
  std::unordered_map<const tj::Node*, size_t> pos;
  size_t k = 0;
  for (tj::Node* n : graph->nodes()) {
    pos[n] = k++;
    if (n->kind() == c10::prim::Constant || !n->blocks().empty() || n->hasSideEffects() || n->isNondeterministic()) continue;
    if (n->inputs().empty()) continue;
    bool ok = true;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const tj::Value* v = n->inputs()[i];
      if (i == 0 && reads_only_metadata(n)) continue;
      if (v->node()->kind() != c10::prim::Constant && !vals.count(v)) ok = false;
    }
    if (!ok) continue;
    fold.insert(n);
    for (const tj::Value* v : n->outputs()) vals.insert(v);
  }
  if (fold.empty()) return;
  // Connected groups of folded nodes (a mask, its views and in-place writes are one group): a
  // group is folded only if all its in-place writes come before the first read from outside.
  std::unordered_map<const tj::Node*, const tj::Node*> parent;
  std::function<const tj::Node*(const tj::Node*)> find = [&](const tj::Node* n) {
    const tj::Node* p = parent.count(n) ? parent[n] : n;
    if (p == n) return n;
    const tj::Node* r = find(p);
    parent[n] = r;
    return r;
  };
  for (tj::Node* n : graph->nodes())
    if (fold.count(n))
      for (const tj::Value* v : n->inputs())
        if (fold.count(v->node())) parent[find(n)] = find(v->node());
  std::unordered_map<const tj::Node*, size_t> last_write, first_read;
  std::unordered_set<const tj::Node*> bad;
  for (tj::Node* n : graph->nodes()) {
    if (fold.count(n)) {
      if (in_place(n)) last_write[find(n)] = std::max(last_write[find(n)], pos[n]);
      continue;
    }
    for (const tj::Value* v : n->inputs())
      if (vals.count(v)) {
        const tj::Node* g = find(v->node());
        if (in_place(n)) bad.insert(g);  // an op outside writes into a folded value
        first_read[g] = first_read.count(g) ? std::min(first_read[g], pos[n]) : pos[n];
      }
  }
  for (const auto& [g, w] : last_write)
    if (first_read.count(g) && w > first_read[g]) bad.insert(g);
  if (!bad.empty())
    for (auto it = fold.begin(); it != fold.end();) {
      if (bad.count(find(*it))) {
        for (const tj::Value* v : (*it)->outputs()) vals.erase(v);
        it = fold.erase(it);
      } else {
        ++it;
      }
    }
  std::vector<tj::Value*> wanted;
  for (tj::Node* n : graph->nodes())
    if (fold.count(n))
      for (tj::Value* v : n->outputs()) {
        bool outside = false;
        for (const tj::Use& u : v->uses())
          if (!fold.count(u.user)) outside = true;
        if (outside) wanted.push_back(v);
      }
  if (std::getenv("AMANDA_TORCH_DEBUG"))
    std::cerr << "fold: " << fold.size() << " nodes, " << wanted.size() << " values, " << bad.size() << " groups left alone\n";
  if (wanted.empty()) return;
  // A graph of the folded nodes (and the constants they read), returning the wanted values.
  auto sub = std::make_shared<tj::Graph>();
  std::unordered_map<tj::Value*, tj::Value*> map;
  auto env = [&](tj::Value* v) {
    if (auto it = map.find(v); it != map.end()) return it->second;
    // The `self` of new_zeros & co.: only its element type matters; an empty tensor of it stands in.
    auto t = v->type()->cast<c10::TensorType>();
    tj::Value* c = sub->insertConstant(at::empty({0}, at::TensorOptions().dtype(t && t->scalarType() ? *t->scalarType() : at::kFloat)));
    map[v] = c;
    return c;
  };
  for (tj::Node* n : graph->nodes()) {
    bool need = fold.count(n) > 0;
    if (n->kind() == c10::prim::Constant)
      for (const tj::Use& u : n->output()->uses())
        if (fold.count(u.user)) need = true;
    if (!need) continue;
    tj::Node* c = sub->insertNode(sub->createClone(n, env));
    for (size_t i = 0; i < n->outputs().size(); ++i) map[n->outputs()[i]] = c->outputs()[i];
  }
  for (tj::Value* v : wanted) sub->registerOutput(map.at(v));
  tj::Code code(sub, "amanda_fold");
  tj::InterpreterState state(code);
  tj::Stack stack;
  {
    c10::InferenceMode guard;
    state.run(stack);
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    c10::IValue r = stack[stack.size() - wanted.size() + i];
    if (r.isTensor()) r = r.toTensor().clone();  // its own storage, not a view of a folded buffer
    tj::WithInsertPoint guard(graph->block()->nodes().front());
    auto c = tj::tryInsertConstant(*graph, r);
    if (!c) continue;
    (*c)->setType(wanted[i]->type());
    wanted[i]->replaceAllUsesWith(*c);
  }
}

struct Timer {
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  void lap(const char* what) {
    auto now = std::chrono::steady_clock::now();
    if (std::getenv("AMANDA_TORCH_DEBUG"))
      std::cerr << "torch import: " << what << " " << std::chrono::duration<double>(now - t).count() << " s\n";
    t = now;
  }
};

std::string first_line(const std::string& s) {
  auto p = s.find('\n');
  return p == std::string::npos ? s : s.substr(0, p);
}

bool do_read(const char* path_c, const ImportOptions* o, text::Document* out, std::string* err) {
  std::string path = path_c;
  try {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      *err = path + ": error: no such file";
      return false;
    }
    Timer timer;
    tj::Module m;
    try {
      m = tj::load(path);
    } catch (const c10::Error& e) {
      *err = path + ": error: not a TorchScript file that libtorch " + TORCH_VERSION + " can load (" +
             first_line(e.what_without_backtrace()) + ")";
      return false;
    }
    if (!m.find_method("forward")) {
      *err = path + ": error: the module has no forward() method";
      return false;
    }
    timer.lap("load");
    m.eval();
    tj::Module frozen = tj::freeze(m, c10::nullopt, o->optimize);
    timer.lap("freeze");
    std::shared_ptr<tj::Graph> graph = frozen.get_method("forward").graph();
    tj::Inline(*graph);
    // forward's `self`: unused once frozen.
    if (!graph->inputs().empty() && graph->inputs()[0]->type()->cast<c10::ClassType>()) {
      if (graph->inputs()[0]->hasUses()) {
        *err = path + ": error: forward() still reads module attributes after freezing (not supported)";
        return false;
      }
      graph->eraseInput(0);
    }
    std::vector<c10::ScalarType> sts;  // per tensor input (--input-type once for all, or one per input)
    for (size_t k = 0; k < std::max<size_t>(1, o->input_dtypes.size()); ++k) {
      auto st = scalar_type_of(o->dtype_of_input(k));
      if (!st) {
        *err = "error: --input-type " + o->dtype_of_input(k) + " is not an element type torch has";
        return false;
      }
      sts.push_back(*st);
    }
    auto st_of = [&](size_t k) { return k < sts.size() && !o->input_dtypes.empty() ? sts[k] : sts[0]; };
    size_t tensors = 0;
    for (tj::Value* in : graph->inputs()) {
      if (!in->type()->cast<c10::TensorType>()) {
        *err = path + ": error: forward() takes a " + in->type()->annotation_str() + " (only tensor inputs are supported)";
        return false;
      }
      ++tensors;
    }
    if (!o->input_shapes.empty() && o->input_shapes.size() != tensors) {
      *err = path + ": error: " + std::to_string(o->input_shapes.size()) + " input shapes given, forward() takes " +
             std::to_string(tensors) + " tensors";
      return false;
    }
    if (!o->input_dtypes.empty() && o->input_dtypes.size() != tensors) {
      *err = path + ": error: " + std::to_string(o->input_dtypes.size()) + " input types given, forward() takes " +
             std::to_string(tensors) + " tensors";
      return false;
    }
    if (o->input_shapes.empty()) {
      size_t k = 0;
      for (tj::Value* in : graph->inputs())
        in->setType(c10::TensorType::create(st_of(k++), c10::nullopt, c10::SymbolicShape(), c10::VaryingShape<c10::Stride>(), c10::nullopt));
    } else {
      std::vector<c10::IValue> args;
      for (size_t i = 0; i < tensors; ++i) {
        at::Tensor z = at::zeros(o->input_shapes[i], at::TensorOptions().dtype(st_of(i)));
        graph->inputs()[i]->setType(c10::TensorType::create(z));
        args.emplace_back(z);
      }
      // One run on zeros gives every value its element type and shape; then shape arithmetic and
      // everything else that does not depend on the inputs' data folds into constants.
      try {
        // Sizes of the inputs first (cheap, and the meta run then meets less int arithmetic).
        if (o->specialize_shapes) {
          specialize_shapes(graph->block());
          tj::ConstantPropagation(graph);
        }
        bool meta = annotate_types_meta_or_not(graph, args);
        if (!meta) {
          // Values inside If/Loop bodies (control flow on data): the one run above does not
          // reach them, so torch's shape analysis types them from the now complete types
          // around (both branches merged, a loop to its fixed point); the run then gives the
          // top level its measured types back.
          if (has_blocks(graph->block())) {
            annotate_types(graph, args);
            try {
              tj::PropagateInputShapes(graph);
            } catch (const c10::Error& e) {  // the bodies stay untyped: their ops' rules that need types say so
              if (std::getenv("AMANDA_TORCH_DEBUG")) std::cerr << "shape analysis of the blocks failed: " << first_line(e.what_without_backtrace()) << "\n";
            }
          }
          annotate_types(graph, args);
        }
        timer.lap(meta ? "shapes on meta tensors" : "shapes from a forward pass");
      } catch (const c10::Error& e) {
        *err = path + ": error: forward() on inputs of the given shapes failed: " + first_line(e.what_without_backtrace());
        return false;
      }
      if (o->specialize_shapes) {
        specialize_shapes(graph->block());
        tj::ConstantPropagation(graph);
        tj::EliminateDeadCode(graph);
        timer.lap("specialize");
        fold_input_independent(graph);
        tj::EliminateDeadCode(graph);
        timer.lap("fold");
      }
    }
    tj::ConstantPropagation(graph);
    tj::EliminateDeadCode(graph);
    timer.lap("constant propagation");
    lower_writes_through_views(graph);
    make_promotion_explicit(graph);
    text::Document doc;
    Importer(doc, std::filesystem::path(path).stem().string()).run(*graph);
    *out = std::move(doc);
    timer.lap("to Amanda's graph");
    return true;
  } catch (const Fail& e) {
    *err = path + ": error: " + e.what();
  } catch (const c10::Error& e) {
    *err = path + ": error: libtorch: " + first_line(e.what_without_backtrace());
  } catch (const std::exception& e) {
    *err = path + ": error: " + e.what();
  }
  return false;
}

// ---------------------------------------------------------------- the namespace

schema::AttrType constant_str(const std::string& v) {
  schema::AttrType a;
  a.form = schema::AttrType::Form::Constant;
  a.type = "str";
  a.value = Value(v);
  return a;
}

schema::PortSchema port(const std::string& name, const std::string& type, schema::Arity arity) {
  schema::PortSchema p;
  p.attrs.push_back({"name", constant_str(name)});
  p.arity = arity;
  p.arity_given = true;
  p.type = type;
  if (arity == schema::Arity::Variadic) p.min_arity = 0;
  return p;
}

// prim ops that have no schema in the registry but appear in frozen graphs.
void add_prim_ops(schema::NamespaceSchema& ns) {
  using A = schema::Arity;
  auto add = [&](const std::string& type, std::vector<schema::PortSchema> in, std::vector<schema::PortSchema> out) {
    if (ns.find(type)) return;
    auto op = std::make_unique<schema::OpSchema>();
    op->type = type;
    op->inputs = std::move(in);
    op->outputs = std::move(out);
    ns.add(std::move(op));
  };
  {
    auto op = std::make_unique<schema::OpSchema>();
    op->type = "prim::Constant";
    schema::AttrType v;
    v.type = "Any";
    op->attrs.push_back({"value", v});
    op->outputs.push_back(port("output", "Any", A::Single));
    ns.add(std::move(op));
  }
  add("prim::ListConstruct", {port("elements", "Any", A::Variadic)}, {port("output", "Any[]", A::Single)});
  add("prim::TupleConstruct", {port("elements", "Any", A::Variadic)}, {port("output", "Any", A::Single)});
  add("prim::ListUnpack", {port("input", "Any[]", A::Single)}, {port("outputs", "Any", A::Variadic)});
  add("prim::DictConstruct", {port("elements", "Any", A::Variadic)}, {port("output", "Any", A::Single)});
  for (const char* t : {"prim::If", "prim::Loop"}) {
    auto op = std::make_unique<schema::OpSchema>();
    op->type = t;
    schema::AttrType gt;
    gt.type = "Any";
    op->attrs.push_back({"block0", gt});
    if (std::string(t) == "prim::If") {
      schema::AttrType gt1 = gt;
      op->attrs.push_back({"block1", gt1});
      op->inputs.push_back(port("cond", "bool", A::Single));
    } else {
      op->inputs.push_back(port("max_trip_count", "int", A::Single));
      op->inputs.push_back(port("start_condition", "bool", A::Single));
      op->inputs.push_back(port("carried", "Any", A::Variadic));
    }
    op->outputs.push_back(port("outputs", "Any", A::Variadic));
    ns.add(std::move(op));
  }
}

bool do_namespace(const schema::TypeSystems* types, std::unique_ptr<schema::NamespaceSchema>* out, std::string* err) {
  try {
    auto ns = std::make_unique<schema::NamespaceSchema>();
    ns->name = ns_name();
    ns->type_system = "torchscript";
    std::vector<std::pair<std::string, const c10::FunctionSchema*>> all;
    auto ops = tj::getAllOperators();
    for (const auto& op : ops) {
      const c10::FunctionSchema& s = op->schema();
      std::string t = s.name() + (s.overload_name().empty() ? "" : "." + s.overload_name());
      all.emplace_back(std::move(t), &s);
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [type, s] : all) {
      if (ns->find(type)) continue;
      auto op = std::make_unique<schema::OpSchema>();
      op->type = type;
      op->domain = s->name().substr(0, s->name().find("::"));
      for (const c10::Argument& a : s->arguments()) {
        bool optional = a.default_value().has_value() || a.type()->kind() == c10::TypeKind::OptionalType;
        schema::PortSchema p = port(a.name(), a.type()->str(), optional ? schema::Arity::Optional : schema::Arity::Single);
        if (a.default_value()) {
          try {
            schema::AttrType d;
            d.form = schema::AttrType::Form::Default;
            d.type = "Any";
            d.value = value_of(*a.default_value(), "default");
            p.attrs.push_back({"default", std::move(d)});
          } catch (const Fail&) {
          }
        }
        op->inputs.push_back(std::move(p));
      }
      if (s->is_vararg()) op->inputs.push_back(port("args", "Any", schema::Arity::Variadic));
      if (s->is_varret()) {
        op->outputs.push_back(port("outputs", "Any", schema::Arity::Variadic));
      } else {
        size_t n = s->returns().size();
        for (size_t i = 0; i < n; ++i) {
          const c10::Argument& r = s->returns()[i];
          std::string name = !r.name().empty() ? r.name() : n == 1 ? "result" : "result" + std::to_string(i);
          op->outputs.push_back(port(name, r.type()->str(), schema::Arity::Single));
        }
      }
      ns->add(std::move(op));
    }
    add_prim_ops(*ns);
    schema::compile_types(*ns, *types);
    *out = std::move(ns);
    return true;
  } catch (const std::exception& e) {
    *err = e.what();
    return false;
  }
}

// ---------------------------------------------------------------- running forward()

void flatten_outputs(const c10::IValue& v, std::vector<ir::Tensor>& out, const std::string& what) {
  if (v.isTensor()) {
    out.push_back(tensor_of(v.toTensor(), what));
  } else if (v.isTuple()) {
    const auto& elems = v.toTupleRef().elements();
    for (size_t i = 0; i < elems.size(); ++i) flatten_outputs(elems[i], out, what + "[" + std::to_string(i) + "]");
  } else if (v.isList()) {
    auto list = v.toList();
    for (size_t i = 0; i < list.size(); ++i) flatten_outputs(list.get(i), out, what + "[" + std::to_string(i) + "]");
  } else {
    throw Fail(what + " is a " + v.tagKind() + ", not a tensor (only tensors, and tuples and lists of them, are compared)");
  }
}

bool do_run(const char* path_c, const std::vector<ir::Tensor>* inputs, std::vector<ir::Tensor>* outputs, std::string* err) {
  std::string path = path_c;
  try {
    tj::Module m;
    try {
      m = tj::load(path);
    } catch (const c10::Error& e) {
      *err = path + ": error: not a TorchScript file that libtorch " + TORCH_VERSION + " can load (" +
             first_line(e.what_without_backtrace()) + ")";
      return false;
    }
    if (!m.find_method("forward")) {
      *err = path + ": error: the module has no forward() method";
      return false;
    }
    m.eval();
    std::vector<c10::IValue> args;
    for (size_t k = 0; k < inputs->size(); ++k) {
      const ir::Tensor& t = (*inputs)[k];
      std::optional<c10::ScalarType> st;
      for (auto s : {c10::ScalarType::Float, c10::ScalarType::Double, c10::ScalarType::Half, c10::ScalarType::BFloat16,
                     c10::ScalarType::Long, c10::ScalarType::Int, c10::ScalarType::Short, c10::ScalarType::Char,
                     c10::ScalarType::Byte, c10::ScalarType::Bool, c10::ScalarType::ComplexFloat,
                     c10::ScalarType::ComplexDouble})
        if (dtype_of(s) == t.dtype) st = s;
      if (!st) throw Fail("input " + std::to_string(k) + ": element type " + std::string(ir::dtype_name(t.dtype)) + " has no torch equivalent");
      auto expected = t.expected_bytes();
      if (!expected || *expected != t.size) throw Fail("input " + std::to_string(k) + ": its bytes do not match its shape");
      at::Tensor a = at::empty(t.shape, at::TensorOptions().dtype(*st));
      if (t.size) std::memcpy(a.data_ptr(), t.data, t.size);
      args.emplace_back(std::move(a));
    }
    c10::IValue result;
    {
      c10::InferenceMode guard;
      result = m.forward(args);
    }
    outputs->clear();
    flatten_outputs(result, *outputs, "forward()'s result");
    return true;
  } catch (const Fail& e) {
    *err = path + ": error: " + e.what();
  } catch (const c10::Error& e) {
    *err = path + ": error: libtorch: " + first_line(e.what_without_backtrace());
  } catch (const std::exception& e) {
    *err = path + ": error: " + e.what();
  }
  return false;
}

const PluginApi kApi{1, TORCH_VERSION, &do_read, &do_namespace, &do_run};

}  // namespace

}  // namespace amanda::torch_frontend

extern "C" __attribute__((visibility("default"))) const amanda::torch_frontend::PluginApi* amanda_torch_plugin_v1() {
  return &amanda::torch_frontend::kApi;
}
