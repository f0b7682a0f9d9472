// Type inference for graphs in the PyTorch namespace (torch_frontend::infer_types): the shape rules
// of the libtorch-free reader (tensor_ops.cpp's infer(), shape_rules.cpp's infer_more()) run over
// the IR, op after op in topological order, with their arguments rebuilt from the graph: a
// prim::Constant's value, a prim::ListConstruct's elements, a tensor's element type and shape from
// its producer's port type, an initializer's tensor or a graph input's type attributes, and the
// schema's default for an input port the op does not have. The reader uses the same rules while it
// runs forward(); this pass gives them to graphs that come from elsewhere: the libtorch reader's
// (whose types are only what libtorch's own propagation knew), a text file, a table's rewrite.
#include <string>
#include <vector>

#include "amanda/frameworks/torch/torchscript.h"
#include "amanda/ir/graph.h"
#include "amanda/ir/types.h"
#include "amanda/schema/schema.h"
#include "frameworks/torchscript/runtime.h"
#include "frameworks/torchscript/shape_rules.h"

namespace amanda::torch_frontend {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;
using torchscript::Val;
using torchscript::VRef;

std::string strip_alias(std::string t) {
  // "Tensor(a!)" -> "Tensor"
  size_t p = t.find('(');
  if (p != std::string::npos) {
    size_t q = t.find(')', p);
    if (q != std::string::npos) t.erase(p, q - p + 1);
  }
  return t;
}

VRef from_value(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null: return torchscript::make_none();
    case Value::Kind::Bool: return torchscript::make_bool(v.as_bool());
    case Value::Kind::Int: return torchscript::make_int(v.as_int());
    case Value::Kind::Float: return torchscript::make_float(v.as_float());
    case Value::Kind::String: return torchscript::make_str(v.as_string());
    case Value::Kind::List: {
      std::vector<VRef> items;
      for (const Value& x : v.as_list()) {
        VRef e = from_value(x);
        if (!e) return nullptr;
        items.push_back(e);
      }
      return torchscript::make_list(std::move(items));
    }
    case Value::Kind::Tensor: {
      const ir::Tensor& t = v.as_tensor();
      return torchscript::make_symbolic(t.dtype, t.shape);
    }
    default: return nullptr;
  }
}

class Inferrer {
 public:
  Inferrer(ir::Graph& g, const schema::NamespaceSchema& ns) : g_(g), ns_(ns) {}

  TypeInferResult run() {
    scope(g_.root());
    return res_;
  }

 private:
  const Value* attr(PortId p, const char* key) { return g_.attr(p, g_.sym(key)); }
  const Value* attr(OpId o, const char* key) { return g_.attr(o, g_.sym(key)); }

  // A tensor from a port's type: known element type and every dimension known.
  VRef tensor_of(PortId p) {
    ir::TypeId t = g_.port_type(p);
    if (!t) {
      OpId op = g_.port_op(p);
      bool graph_port = op == g_.root() || g_.is_graph(op);
      t = ir::type_from_attrs(g_, attr(p, graph_port ? "type" : "@type"), attr(p, graph_port ? "shape" : "@shape"));
      if (!t && graph_port)
        if (const Value* init = attr(p, "initializer"); init && init->is_tensor())
          return torchscript::make_symbolic(init->as_tensor().dtype, init->as_tensor().shape);
      if (!t) return nullptr;
    }
    const ir::TypeData& td = g_.types().get(t);
    if (td.kind != ir::TypeKind::Tensor || !td.ranked || td.elem == ir::ElemType::Undefined) return nullptr;
    std::vector<int64_t> dims;
    for (const ir::Dim& d : td.dims) {
      if (!d.is_known()) return nullptr;
      dims.push_back(d.value());
    }
    return torchscript::make_symbolic(td.elem, dims);
  }

  // The argument an input port carries: nullptr when it cannot be told.
  VRef arg_of(PortId in) {
    PortId src = g_.producer(in);
    if (!src) return torchscript::make_none();
    OpId op = g_.port_op(src);
    if (op != g_.root() && !g_.is_graph(op)) {
      std::string_view type = g_.type_str(op);
      if (type == "prim::Constant") {
        const Value* v = attr(op, "value");
        return v ? from_value(*v) : torchscript::make_none();
      }
      if (type == "prim::ListConstruct") {
        std::vector<VRef> items;
        for (PortId e : g_.inputs(op)) {
          if (g_.is_control(e)) continue;
          VRef x = arg_of(e);
          if (!x) return nullptr;
          items.push_back(x);
        }
        return torchscript::make_list(std::move(items));
      }
    }
    return tensor_of(src);
  }

  void scope(OpId s) {
    ir::TopoResult order = g_.topo_order(s);
    for (OpId op : order.order) infer_op(op);
  }

  void infer_op(OpId op) {
    std::string type(g_.type_str(op));
    if (type == "prim::Constant" || type == "prim::ListConstruct") return;
    ++res_.ops;
    const schema::OpSchema* s = ns_.find(type);
    if (!s) {
      ++res_.no_schema;
      return;
    }
    // Arguments in the schema's order; an input the op does not have takes the default.
    torchscript::Args args;
    for (size_t k = 0; k < s->inputs.size(); ++k) {
      std::string name = s->inputs[k].expected_name().value_or("input." + std::to_string(k));
      PortId in;
      for (PortId p : g_.inputs(op))
        if (!g_.is_control(p) && g_.port_name_str(p) == name) in = p;
      VRef a;
      if (in) {
        a = arg_of(in);
      } else if (const schema::AttrSchema* d = s->inputs[k].attr("default")) {
        a = from_value(d->type.value);
      } else if (std::string t = strip_alias(s->inputs[k].type); !t.empty() && t.back() == '?') {
        a = torchscript::make_none();
      }
      if (!a) {
        ++res_.untyped_inputs;
        return;
      }
      args.push_back(a);
    }
    std::optional<std::vector<torchscript::OutInfo>> outs;
    std::string where = std::string(g_.name_str(op)) + ": " + type;
    try {
      outs = torchscript::infer(type, args, where);
      if (!outs) outs = torchscript::infer_more(type, args, where);
    } catch (const std::exception& e) {
      res_.errors.push_back(e.what());
      return;
    }
    if (!outs) {
      ++res_.no_rule;
      return;
    }
    size_t k = 0;
    bool any = false;
    for (PortId p : g_.outputs(op)) {
      if (g_.is_control(p)) continue;
      if (k >= outs->size()) break;
      const torchscript::OutInfo& o = (*outs)[k++];
      if (!o.defined || !o.shape_known) continue;
      std::vector<ir::Dim> dims;
      for (int64_t d : o.shape) dims.push_back(d < 0 ? ir::Dim::unknown() : ir::Dim::known(d));  // kRunTimeDim: a size known at run time
      ir::TypeId t = g_.types().tensor(o.dtype, dims);
      g_.set_port_type(p, t);
      ir::write_type_attrs(g_, p, t);
      any = true;
    }
    if (any) ++res_.inferred;
  }

  ir::Graph& g_;
  const schema::NamespaceSchema& ns_;
  TypeInferResult res_;
};

}  // namespace

TypeInferResult infer_types(ir::Graph& g, const schema::NamespaceSchema& ns) { return Inferrer(g, ns).run(); }

}  // namespace amanda::torch_frontend
