// The amanda/core builder: one registry entry per op (its input names and its type rule); every
// constructor goes through make(), which checks first and creates the ir op only when the types
// fit, so a failed construction leaves the graph unchanged.
#include "amanda/core/builder.h"

#include <algorithm>
#include <functional>

#include "amanda/ir/value.h"
#include "registry.h"
#include "amanda/support/diagnostics.h"

namespace amanda::core {

namespace {

using detail::Failure;
using detail::OpDef;
using ir::Dim;
using ir::TypeData;

const OpDef& def(std::string_view type) {
  if (const OpDef* d = detail::find_def(type)) return *d;
  throw Error("amanda/core: no op '" + std::string(type) + "'");
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// The op's attributes with the registry's defaults added; a required one missing is a Failure.
ir::AttrList with_defaults(const OpDef& d, const ir::AttrList& attrs, ir::Graph& g) {
  ir::AttrList full = attrs;
  for (const auto& a : d.attrs) {
    bool have = false;
    for (const auto& [k, v] : attrs) have |= g.str(k) == a.name;
    if (have) continue;
    if (!a.dflt) throw Failure{"the attribute '" + std::string(a.name) + "' is required"};
    if (!a.dflt->is_null()) full.emplace_back(g.sym(a.name), *a.dflt);
  }
  return full;
}

TypeData apply_rule(const OpDef& d, std::span<const TypeData* const> in, const ir::AttrList& attrs, ir::Graph& g) {
  if (!d.variadic && in.size() != d.inputs.size())
    throw Failure{std::to_string(d.inputs.size()) + " inputs are expected, not " + std::to_string(in.size())};
  return d.rule(in, with_defaults(d, attrs, g), g);
}

std::string port_name(const OpDef& d, size_t i) {
  return d.variadic ? std::string(d.inputs[0]) + "." + std::to_string(i) : std::string(d.inputs[i]);
}

Output make(std::string_view type, std::span<const Output> inputs, ir::AttrList attrs, std::string_view name, ir::Graph* g = nullptr) {
  const OpDef& d = def(type);
  for (const Output& o : inputs) {
    if (!o) throw Error("amanda/core " + std::string(type) + ": an input is an empty Output");
    if (g && g != &o.graph()) throw Error("amanda/core " + std::string(type) + ": inputs from two different graphs");
    g = &o.graph();
  }
  if (!g) throw Error("amanda/core " + std::string(type) + ": no graph (an op without inputs is made through its Function)");
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
      throw Error(where + ": amanda/core " + std::string(type) + ": input " + port_name(d, i) + " has no type");
    in.push_back(&g->port_type_data(o.port()));
    ++i;
  }
  TypeData out;
  try {
    out = apply_rule(d, in, attrs, *g);
  } catch (const Failure& f) {
    throw Error(where + ": amanda/core " + std::string(type) + ": " + f.why);
  }
  ir::TypeId tid = g->types().intern(out);
  ir::OpId op = g->create_op(scope, g->sym(type), g->sym(nm));
  i = 0;
  for (const Output& o : inputs) g->connect(o.port(), g->add_input(op, g->sym(port_name(d, i++))));
  for (auto& [k, v] : attrs) g->set_attr(op, k, std::move(v));
  ir::PortId p = g->add_output(op, g->sym("out"));
  ir::write_type_attrs(*g, p, tid);
  return Output(g, p);
}

Output make(std::string_view type, std::initializer_list<Output> inputs, ir::AttrList attrs, std::string_view name) {
  return make(type, std::span<const Output>(inputs.begin(), inputs.size()), std::move(attrs), name);
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

Output op(std::string_view type, const std::vector<Output>& inputs, ir::AttrList attrs, std::string_view n) {
  return make(type, std::span<const Output>(inputs.data(), inputs.size()), std::move(attrs), n);
}

Output Function::constant(ir::Tensor value, std::string_view n) {
  ir::AttrList attrs{{g_->sym("value"), ir::Value(std::move(value))}};
  return make("Constant", std::span<const Output>(), std::move(attrs), n, g_);
}

const std::vector<std::string_view>& op_types() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> r;
    for (const auto& d : detail::registry()) r.push_back(d.type);
    return r;
  }();
  return names;
}

bool infer_types(ir::Graph& g, Diagnostics& diags) {
  size_t errors = 0;
  std::function<void(ir::OpId)> scope_pass = [&](ir::OpId scope) {
    ir::TopoResult topo = g.topo_order(scope);
    if (!topo.ok()) {
      diags.error(g.path(topo.cycle.front()), "amanda/core: the graph has a cycle");
      ++errors;
      return;
    }
    for (ir::OpId op : topo.order) {
      std::string type(g.type_str(op));
      const OpDef* d = detail::find_def(type);
      std::string where = g.path(op);
      if (!d) {
        diags.error(where, "amanda/core has no op '" + type + "'");
        ++errors;
        continue;
      }
      std::vector<TypeData> in;
      bool typed = true;
      for (ir::PortId p : g.inputs(op)) {
        if (g.is_control(p)) continue;
        ir::PortId src = g.producer(p);
        ir::TypeId t = src ? g.port_type(src) : ir::TypeId();
        if (src && !t) {
          // An initializer read from text carries its tensor, not type attributes: its type is the tensor's.
          Symbol init = g.symbols().find("initializer");
          const ir::Value* v = init ? g.attr(src, init) : nullptr;
          if (v && v->is_tensor()) {
            t = g.types().tensor(v->as_tensor().dtype, ir::dims_of(v->as_tensor().shape));
            g.set_port_type(src, t);
          }
        }
        if (!t) {
          diags.error(where + ":input " + std::string(g.port_name_str(p)), "amanda/core " + type + ": the input has no type");
          typed = false;
          break;
        }
        in.push_back(g.port_type_data(src));
      }
      if (!typed) {
        ++errors;
        continue;
      }
      std::vector<const TypeData*> ptrs;
      for (const auto& t : in) ptrs.push_back(&t);
      TypeData out;
      try {
        out = apply_rule(*d, ptrs, g.attrs(op), g);
      } catch (const Failure& f) {
        diags.error(where, "amanda/core " + type + ": " + f.why);
        ++errors;
        continue;
      }
      ir::TypeId tid = g.types().intern(out);
      for (ir::PortId p : g.outputs(op)) {
        if (g.is_control(p)) continue;
        ir::TypeId had = g.port_type(p);
        if (had && had != tid) {
          const TypeData h = g.port_type_data(p);
          // A declared type that says less (unknown dimensions or rank) is refined; one that says
          // something else is an error: the graph is not what its ops compute.
          bool compatible = h.elem == out.elem && (!h.ranked || (h.dims.size() == out.dims.size() &&
                                                                 std::equal(h.dims.begin(), h.dims.end(), out.dims.begin(),
                                                                            [](Dim a, Dim b) { return a == b || !a.is_known() || !b.is_known(); })));
          if (!compatible) {
            diags.error(where + ":output " + std::string(g.port_name_str(p)),
                        "amanda/core " + type + ": computes " + detail::show(g, out) + " but the graph declares " + detail::show(g, h));
            ++errors;
          }
        }
        g.set_port_type(p, tid);
        ir::write_type_attrs(g, p, tid);
      }
    }
  };
  scope_pass(g.root());
  return errors == 0;
}

}  // namespace amanda::core