// The amanda/core builder: one registry entry per op (its input names and its type rule); every
// constructor goes through make(), which checks first and creates the ir op only when the types
// fit, so a failed construction leaves the graph unchanged.
#include "amanda/core/builder.h"

#include <algorithm>
#include <functional>

#include "amanda/ir/value.h"
#include "amanda/support/diagnostics.h"

namespace amanda::core {

namespace {

using ir::Dim;
using ir::TypeData;

// A type rule: the output type from the inputs' types and the op's attributes, or a message.
struct Failure {
  std::string why;
};
using Rule = std::function<TypeData(std::span<const TypeData* const> in, const ir::AttrList& attrs, ir::Graph& g)>;

struct OpDef {
  std::string_view type;
  std::vector<std::string_view> inputs;
  Rule rule;
};

std::string show(ir::Graph& g, TypeData t) { return ir::format_type(g, g.types().intern(t)); }  // t by value: it may live in the table

bool is_float(ElemType e) {
  return e == ElemType::Float16 || e == ElemType::BFloat16 || e == ElemType::Float32 || e == ElemType::Float64;
}

TypeData same_type(std::span<const TypeData* const> in, const ir::AttrList&, ir::Graph& g) {
  const TypeData a = *in[0];  // a copy: interning a type (show) may move the table
  const TypeData b = *in[1];  // a copy: interning a type (show) may move the table
  if (a.elem != b.elem)
    throw Failure{"element types differ: a is " + show(g, a) + ", b is " + show(g, b) + " (no implicit conversion: use Convert)"};
  if (a.ranked && b.ranked && a.dims != b.dims)
    throw Failure{"shapes differ: a is " + show(g, a) + ", b is " + show(g, b) + " (no implicit broadcast: use Broadcast)"};
  return a.ranked ? a : b;
}

TypeData float_unary(std::span<const TypeData* const> in, const ir::AttrList&, ir::Graph& g) {
  if (!is_float(in[0]->elem)) throw Failure{"x is " + show(g, *in[0]) + ": a floating-point element type is expected"};
  return *in[0];
}

TypeData numeric_unary(std::span<const TypeData* const> in, const ir::AttrList&, ir::Graph& g) {
  if (in[0]->elem == ElemType::Bool || in[0]->elem == ElemType::String)
    throw Failure{"x is " + show(g, *in[0]) + ": a numeric element type is expected"};
  return *in[0];
}

const ir::Value* find(const ir::AttrList& attrs, ir::Graph& g, std::string_view key) {
  for (const auto& [k, v] : attrs)
    if (g.str(k) == key) return &v;
  return nullptr;
}

std::vector<Dim> dims_attr(const ir::Value* v, ir::Graph& g) {
  std::vector<Dim> d;
  for (const auto& x : v->as_list())
    d.push_back(x.is_int() ? (x.as_int() < 0 ? Dim::unknown() : Dim::known(x.as_int())) : x.is_string() ? Dim::symbol(g.sym(x.as_string())) : Dim::unknown());
  return d;
}

TypeData broadcast_rule(std::span<const TypeData* const> in, const ir::AttrList& attrs, ir::Graph& g) {
  std::vector<Dim> shape = dims_attr(find(attrs, g, "shape"), g);
  std::vector<int64_t> axes;
  for (const auto& a : find(attrs, g, "axes")->as_list()) axes.push_back(a.as_int());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(shape.size()) || (i && axes[i] <= axes[i - 1]))
      throw Failure{"axes must be increasing and less than the rank " + std::to_string(shape.size())};
  std::vector<Dim> kept;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i))) kept.push_back(shape[i]);
  const TypeData x = *in[0];  // a copy: interning a type (show) may move the table
  if (x.ranked && x.dims != kept) {
    TypeData want = x;
    want.dims = kept;
    throw Failure{"x is " + show(g, x) + " but the shape without the broadcast axes is " + show(g, want)};
  }
  TypeData r = x;
  r.ranked = true;
  r.dims = shape;
  return r;
}

TypeData dot_rule(std::span<const TypeData* const> in, const ir::AttrList&, ir::Graph& g) {
  const TypeData a = *in[0];  // a copy: interning a type (show) may move the table
  const TypeData b = *in[1];  // a copy: interning a type (show) may move the table
  if (a.elem != b.elem) throw Failure{"element types differ: a is " + show(g, a) + ", b is " + show(g, b)};
  if (!a.ranked || !b.ranked || a.dims.size() != 2 || b.dims.size() != 2)
    throw Failure{"a and b must be matrices: a is " + show(g, a) + ", b is " + show(g, b)};
  if (a.dims[1] != b.dims[0])
    throw Failure{"inner dimensions differ: a is " + show(g, a) + ", b is " + show(g, b)};
  TypeData r = a;
  r.dims = {a.dims[0], b.dims[1]};
  return r;
}

TypeData convert_rule(std::span<const TypeData* const> in, const ir::AttrList& attrs, ir::Graph& g) {
  TypeData r = *in[0];
  auto e = ir::dtype_from_name(find(attrs, g, "to")->as_string());
  r.elem = *e;
  return r;
}

TypeData reshape_rule(std::span<const TypeData* const> in, const ir::AttrList& attrs, ir::Graph& g) {
  const TypeData x = *in[0];  // a copy: interning a type (show) may move the table
  std::vector<Dim> shape = dims_attr(find(attrs, g, "shape"), g);
  auto count = [](const std::vector<Dim>& d) -> int64_t {
    int64_t n = 1;
    for (Dim x : d) {
      if (!x.is_known()) return -1;
      n *= x.value();
    }
    return n;
  };
  if (!x.ranked || count(x.dims) < 0) throw Failure{"x is " + show(g, x) + ": Reshape needs a static shape"};
  TypeData r = x;
  r.dims = shape;
  if (count(shape) != count(x.dims))
    throw Failure{"x is " + show(g, x) + " (" + std::to_string(count(x.dims)) + " elements) but the shape " + show(g, r) +
                  " has " + std::to_string(count(shape))};
  return r;
}

const std::vector<OpDef>& registry() {
  static const std::vector<OpDef> defs = {
      {"Add", {"a", "b"}, same_type},
      {"Subtract", {"a", "b"}, same_type},
      {"Multiply", {"a", "b"}, same_type},
      {"Divide", {"a", "b"}, same_type},
      {"Maximum", {"a", "b"}, same_type},
      {"Minimum", {"a", "b"}, same_type},
      {"Relu", {"x"}, numeric_unary},
      {"Negative", {"x"}, numeric_unary},
      {"Exp", {"x"}, float_unary},
      {"Tanh", {"x"}, float_unary},
      {"Sigmoid", {"x"}, float_unary},
      {"Broadcast", {"x"}, broadcast_rule},
      {"Dot", {"a", "b"}, dot_rule},
      {"Convert", {"x"}, convert_rule},
      {"Reshape", {"x"}, reshape_rule},
  };
  return defs;
}

const OpDef& def(std::string_view type) {
  for (const auto& d : registry())
    if (d.type == type) return d;
  throw Error("amanda/core: no op '" + std::string(type) + "'");
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

Output make(std::string_view type, std::initializer_list<Output> inputs, ir::AttrList attrs, std::string_view name) {
  const OpDef& d = def(type);
  ir::Graph* g = nullptr;
  for (const Output& o : inputs) {
    if (!o) throw Error("amanda/core " + std::string(type) + ": an input is an empty Output");
    if (g && g != &o.graph()) throw Error("amanda/core " + std::string(type) + ": inputs from two different graphs");
    g = &o.graph();
  }
  ir::OpId scope = g->root();
  std::string nm(name);
  if (nm.empty())
    for (size_t k = 0;; ++k)
      if (!g->find_op(scope, g->sym(nm = lower(type) + "_" + std::to_string(k)))) break;
  // The path the op will have ("h/f"; the root is never part of a path).
  std::string where = scope == g->root() ? nm : g->path(scope) + "/" + nm;
  std::vector<const TypeData*> in;
  size_t i = 0;
  for (const Output& o : inputs) {
    if (!o.type())
      throw Error(where + ": amanda/core " + std::string(type) + ": input " + std::string(d.inputs[i]) + " has no type");
    in.push_back(&g->port_type_data(o.port()));
    ++i;
  }
  TypeData out;
  try {
    out = d.rule(in, attrs, *g);
  } catch (const Failure& f) {
    throw Error(where + ": amanda/core " + std::string(type) + ": " + f.why);
  }
  ir::TypeId tid = g->types().intern(out);
  ir::OpId op = g->create_op(scope, g->sym(type), g->sym(nm));
  i = 0;
  for (const Output& o : inputs) g->connect(o.port(), g->add_input(op, g->sym(d.inputs[i++])));
  for (auto& [k, v] : attrs) g->set_attr(op, k, std::move(v));
  ir::PortId p = g->add_output(op, g->sym("out"));
  ir::write_type_attrs(*g, p, tid);
  return Output(g, p);
}

ir::Value dims_value(ir::Graph& g, const PartialShape& s) {
  ir::Value::List l;
  for (Dim d : s.dims) l.push_back(d.is_known() ? ir::Value(d.value()) : d.is_symbol() ? ir::Value(std::string(g.str(d.sym()))) : ir::Value(int64_t(-1)));
  return ir::Value(std::move(l));
}

}  // namespace

// ---- Function

Function::Function() : owned_(std::make_unique<ir::Graph>()), g_(owned_.get()) {
  g_->set_graph_namespace(g_->root(), g_->sym(kNamespace));
  g_->mark_has_body(g_->root());
}

Function::Function(ir::Graph& g) : g_(&g) {
  std::string_view ns = g.str(g.graph_namespace(g.root()));
  if (!ns.empty() && ns != kNamespace)
    throw Error("amanda/core: the graph is in namespace " + std::string(ns) + ", not " + std::string(kNamespace));
  if (ns.empty()) g.set_graph_namespace(g.root(), g.sym(kNamespace));
}

Output Function::parameter(ElemType t, const PartialShape& shape, std::string_view name) {
  ir::OpId root = g_->root();
  std::string nm(name);
  if (nm.empty()) nm = "p" + std::to_string(g_->inputs(root).size());
  if (g_->find_input(root, g_->sym(nm))) throw Error("amanda/core: Parameter '" + nm + "' already exists");
  if (t == ElemType::Undefined) throw Error("amanda/core: Parameter '" + nm + "' needs an element type");
  ir::PortId p = g_->add_input(root, g_->sym(nm));
  g_->set_port_role(p, ir::PortRole::GraphInput);
  ir::write_type_attrs(*g_, p, g_->types().tensor(t, shape.dims));
  return Output(g_, p);
}

void Function::result(Output v, std::string_view name) {
  if (!v || &v.graph() != g_) throw Error("amanda/core: a result must be a value of this function");
  ir::OpId root = g_->root();
  std::string nm(name);
  if (nm.empty()) nm = "r" + std::to_string(g_->outputs(root).size());
  if (g_->find_output(root, g_->sym(nm))) throw Error("amanda/core: result '" + nm + "' already exists");
  ir::PortId p = g_->add_output(root, g_->sym(nm));
  g_->connect(v.port(), p);
  ir::write_type_attrs(*g_, p, v.type());
}

std::vector<Output> Function::parameters() const {
  std::vector<Output> r;
  for (ir::PortId p : g_->inputs(g_->root()))
    if (!g_->is_control(p)) r.emplace_back(g_, p);
  return r;
}

std::vector<Output> Function::results() const {
  std::vector<Output> r;
  for (ir::PortId p : g_->outputs(g_->root()))
    if (!g_->is_control(p)) r.emplace_back(g_, p);
  return r;
}

// ---- ops

Output add(Output a, Output b, std::string_view n) { return make("Add", {a, b}, {}, n); }
Output subtract(Output a, Output b, std::string_view n) { return make("Subtract", {a, b}, {}, n); }
Output multiply(Output a, Output b, std::string_view n) { return make("Multiply", {a, b}, {}, n); }
Output divide(Output a, Output b, std::string_view n) { return make("Divide", {a, b}, {}, n); }
Output maximum(Output a, Output b, std::string_view n) { return make("Maximum", {a, b}, {}, n); }
Output minimum(Output a, Output b, std::string_view n) { return make("Minimum", {a, b}, {}, n); }
Output relu(Output x, std::string_view n) { return make("Relu", {x}, {}, n); }
Output negative(Output x, std::string_view n) { return make("Negative", {x}, {}, n); }
Output exp(Output x, std::string_view n) { return make("Exp", {x}, {}, n); }
Output tanh(Output x, std::string_view n) { return make("Tanh", {x}, {}, n); }
Output sigmoid(Output x, std::string_view n) { return make("Sigmoid", {x}, {}, n); }
Output dot(Output a, Output b, std::string_view n) { return make("Dot", {a, b}, {}, n); }

Output broadcast(Output x, const PartialShape& shape, const std::vector<int64_t>& axes, std::string_view n) {
  if (!x) throw Error("amanda/core Broadcast: the input is an empty Output");
  ir::Graph& g = x.graph();
  ir::Value::List ax;
  for (int64_t a : axes) ax.push_back(ir::Value(a));
  return make("Broadcast", {x}, {{g.sym("shape"), dims_value(g, shape)}, {g.sym("axes"), ir::Value(std::move(ax))}}, n);
}

Output convert(Output x, ElemType to, std::string_view n) {
  if (!x) throw Error("amanda/core Convert: the input is an empty Output");
  ir::Graph& g = x.graph();
  return make("Convert", {x}, {{g.sym("to"), ir::Value(std::string(ir::dtype_name(to)))}}, n);
}

Output reshape(Output x, const Shape& shape, std::string_view n) {
  if (!x) throw Error("amanda/core Reshape: the input is an empty Output");
  ir::Graph& g = x.graph();
  return make("Reshape", {x}, {{g.sym("shape"), dims_value(g, PartialShape(shape))}}, n);
}

const std::vector<std::string_view>& op_types() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> r;
    for (const auto& d : registry()) r.push_back(d.type);
    return r;
  }();
  return names;
}

}  // namespace amanda::core
