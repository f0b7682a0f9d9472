// The module's class as TorchScript source: one statement per op, in topological order; values
// keep the source graph's names where they make identifiers. aten ops are called as `torch.NAME`
// (TorchScript resolves `torch` to the aten builtins; the overload is chosen by the arguments, as
// when the user writes it) with the namespace schema's argument names as keywords, so an absent
// optional argument is simply left out; other namespaces as `ops.NS.NAME`. The few prim ops that
// are language (constants, lists, tuples) become literals and expressions.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "amanda/ir/attr_lookup.h"
#include "amanda/support/diagnostics.h"
#include "frameworks/torch/script_writer.h"

namespace amanda::torch_frontend {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

const std::unordered_set<std::string>& reserved() {
  static const std::unordered_set<std::string> r = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
      "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
      "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "self", "torch", "ops", "annotate",
      "Tensor", "List", "Tuple", "Optional", "Dict", "int", "float", "bool", "str", "CONSTANTS", "uninitialized",
      "fork", "wait", "math", "inf", "nan", "range", "len", "print", "isinstance", "unchecked_cast", "training",
      "forward", "__parameters__", "__buffers__", "Module", "getattr", "hasattr", "device", "dtype", "list", "tuple"};
  return r;
}

// A unique identifier made from `want`: invalid characters become '_', a leading digit gets 'v'.
class Names {
 public:
  std::string make(std::string_view want) {
    std::string s;
    for (char c : want) s.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    // Runs of '_' from separators ("/features/0/Conv_output_0") read better as one.
    std::string t;
    for (char c : s)
      if (!(c == '_' && !t.empty() && t.back() == '_')) t.push_back(c);
    while (t.size() > 1 && t.front() == '_' && !(t.size() > 1 && std::isdigit(static_cast<unsigned char>(t[1])))) t.erase(0, 1);
    if (t.empty() || t == "_") t = "v";
    if (std::isdigit(static_cast<unsigned char>(t[0]))) t = "v" + t;
    if (t.size() > 64) t = t.substr(t.size() - 64), t = std::isalpha(static_cast<unsigned char>(t[0])) ? t : "v" + t;
    if (reserved().count(t)) t += "_";
    std::string out = t;
    for (int k = 1; used_.count(out); ++k) out = t + "_" + std::to_string(k);
    used_.insert(out);
    return out;
  }

 private:
  std::unordered_set<std::string> used_;
};

std::string float_literal(double v) {
  if (std::isnan(v)) return "float(\"nan\")";
  if (std::isinf(v)) return v > 0 ? "float(\"inf\")" : "float(\"-inf\")";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".";
  return s;
}

std::string string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c < 0x20 || c >= 0x7F) throw Error("a string constant with a non-printable or non-ASCII byte (not written)");
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

// A scalar or list constant as a literal; nullopt for what is not one (a tensor).
std::optional<std::string> literal(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null: return "None";
    case Value::Kind::Bool: return v.as_bool() ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.as_int());
    case Value::Kind::Float: return float_literal(v.as_float());
    case Value::Kind::String: return string_literal(v.as_string());
    case Value::Kind::List: {
      const auto& l = v.as_list();
      if (l.empty()) return "annotate(List[int], [])";  // the integer lists (dims, sizes) of aten schemas
      std::string s = "[";
      for (size_t i = 0; i < l.size(); ++i) {
        auto e = literal(l[i]);
        if (!e || l[i].is_list()) return std::nullopt;
        s += (i ? ", " : "") + *e;
      }
      return s + "]";
    }
    default: return std::nullopt;
  }
}

struct Emitter {
  const ir::Graph& g;
  ModuleSource m;
  Names locals, attrs;
  std::unordered_map<uint32_t, std::string> expr;  // port id -> expression
  std::string body;

  explicit Emitter(const ir::Graph& graph) : g(graph) {}

  std::string where(OpId op) const { return g.path(op) + " (" + std::string(g.type_str(op)) + ")"; }

  std::string value_name(PortId p) const {
    if (const Value* v = ir::get_attr(g, p, "@value"); v && v->is_string() && !v->as_string().empty()) return v->as_string();
    OpId op = g.port_op(p);
    std::string n(g.name_generated(op) ? std::string_view("v") : g.name_str(op));
    if (g.outputs(op).size() > 1) n += "_" + std::string(g.port_name_str(p));
    return n;
  }

  std::string tensor_attr(std::string_view want, const ir::Tensor& t, bool parameter) {
    std::string n = attrs.make(want);
    m.attrs.push_back({n, &t, parameter});
    return "self." + n;
  }

  const std::string& input_expr(OpId op, PortId in) {
    PortId src = g.producer(in);
    auto it = expr.find(src.value);
    if (it == expr.end())
      throw Error(where(op) + ": input '" + std::string(g.port_name_str(in)) + "' reads a value that is not written before it");
    return it->second;
  }

  static bool floating(ir::DType d) {
    using D = ir::DType;
    return d == D::Float16 || d == D::BFloat16 || d == D::Float32 || d == D::Float64;
  }

  // forward() takes and returns tensors of the element types torch has: anything else is refused.
  void check_type(PortId p, const char* what) const {
    if (!g.port_type(p)) return;
    const ir::TypeData& t = g.port_type_data(p);
    if (t.kind != ir::TypeKind::Tensor)
      throw Error(g.path(p) + ": a " + what + " that is not a tensor (sequences, optionals, maps are not written yet)");
    if (t.elem != ir::DType::Undefined && !torch_has_dtype(t.elem))
      throw Error(g.path(p) + ": a " + what + " of element type " + std::string(ir::dtype_name(t.elem)) + " (torch 1.13 has no such tensors)");
  }

  void graph_inputs(std::string& sig) {
    for (PortId p : g.inputs(g.root())) {
      if (g.is_control(p)) continue;
      const Value* init = ir::get_attr(g, p, "initializer");
      if (init && init->is_tensor()) {
        const ir::Tensor& t = init->as_tensor();
        expr[p.value] = tensor_attr(g.port_name_str(p), t, floating(t.dtype));
        continue;
      }
      check_type(p, "graph input");
      std::string n = locals.make(g.port_name_str(p));
      expr[p.value] = n;
      sig += ",\n    " + n + ": Tensor";
    }
  }

  std::vector<PortId> connected_inputs(OpId op) const {
    std::vector<PortId> v;
    for (PortId p : g.inputs(op))
      if (!g.is_control(p) && g.producer(p)) v.push_back(p);
    return v;
  }

  // Names the op's outputs; returns the left-hand side of its statement.
  std::string bind_outputs(OpId op) {
    std::string lhs;
    auto outs = g.outputs(op);
    size_t n = 0;
    for (PortId p : outs) {
      if (g.is_control(p)) continue;
      std::string name = locals.make(value_name(p));
      expr[p.value] = name;
      lhs += (n++ ? ", " : "") + name;
    }
    if (n == 0) throw Error(where(op) + ": an op with no output (not written)");
    return lhs;
  }

  void statement(OpId op) {
    std::string type(g.type_str(op));
    if (g.has_body(op) || !g.attr_graphs(op).empty())
      throw Error(where(op) + ": control flow and ops with subgraphs are not written yet (TorchScript if/loop: issue 29)");
    if (type == "prim::Constant") {
      const Value* v = ir::get_attr(g, op, "value");
      PortId out = g.outputs(op).empty() ? PortId() : g.output(op, 0);
      if (!out) return;
      if (!v) {
        expr[out.value] = "None";
        return;
      }
      if (v->is_tensor()) {
        expr[out.value] = tensor_attr(g.name_generated(op) ? "const" : g.name_str(op), v->as_tensor(), false);
        return;
      }
      auto lit = literal(*v);
      if (!lit) throw Error(where(op) + ": a constant of this kind is not written (nested lists, maps, graphs)");
      expr[out.value] = *lit;
      return;
    }
    std::string rhs;
    if (type == "prim::ListConstruct" || type == "prim::TupleConstruct") {
      bool tuple = type == "prim::TupleConstruct";
      auto ins = connected_inputs(op);
      rhs = tuple ? "(" : "[";
      for (size_t i = 0; i < ins.size(); ++i) rhs += (i ? ", " : "") + input_expr(op, ins[i]);
      if (tuple && ins.size() == 1) rhs += ",";
      rhs += tuple ? ")" : "]";
      if (!tuple && ins.empty()) rhs = "annotate(List[int], [])";
    } else if (type == "prim::ListUnpack" || type == "prim::TupleUnpack") {
      auto ins = connected_inputs(op);
      if (ins.size() != 1) throw Error(where(op) + ": expects one input");
      rhs = input_expr(op, ins[0]);
      std::string lhs = bind_outputs(op);
      body += "    " + lhs + (g.outputs(op).size() == 1 ? ", " : "") + " = " + rhs + "\n";
      return;
    } else {
      auto sep = type.find("::");
      if (sep == std::string::npos) throw Error(where(op) + ": not an op of the PyTorch namespace (no 'ns::' prefix)");
      std::string ns = type.substr(0, sep), fn = type.substr(sep + 2);
      if (auto dot = fn.find('.'); dot != std::string::npos) fn.resize(dot);  // the overload is chosen by the arguments
      bool positional = ns == "prim";
      rhs = (ns == "aten" ? "torch." : "ops." + ns + ".") + fn + "(";
      // An input port without an edge is None (the PyTorch namespace's absent optional argument);
      // a port the op does not have takes the schema's default.
      size_t k = 0;
      for (PortId p : g.inputs(op)) {
        if (g.is_control(p) || g.port_name_str(p).starts_with("@")) continue;
        rhs += k++ ? ", " : "";
        if (!positional) rhs += std::string(g.port_name_str(p)) + "=";
        rhs += g.producer(p) ? input_expr(op, p) : std::string("None");
      }
      rhs += ")";
    }
    std::string lhs = bind_outputs(op);
    body += "    " + lhs + " = " + rhs + "\n";
  }

  void run() {
    m.qualified_name = "__torch__.amanda_export.Model";
    std::string sig = "  def forward(self: " + m.qualified_name;
    graph_inputs(sig);
    auto topo = g.topo_order(g.root());
    if (!topo.ok()) throw Error(g.path(topo.cycle.front()) + ": the graph has a cycle (a TorchScript forward cannot hold it)");
    for (OpId op : topo.order) statement(op);
    std::vector<std::string> rets;
    for (PortId p : g.outputs(g.root())) {
      if (g.is_control(p)) continue;
      PortId src = g.producer(p);
      auto it = src ? expr.find(src.value) : expr.end();
      if (it == expr.end()) throw Error(g.path(p) + ": a graph output that nothing computes");
      check_type(p, "graph output");
      rets.push_back(it->second);
    }
    if (rets.empty()) throw Error("the graph has no output (a forward() must return a value)");
    std::string ret = rets.size() == 1 ? rets[0] : "(" + fmt::format("{}", fmt::join(rets, ", ")) + ")";
    std::string code = "class Model(Module):\n";
    std::string params, buffers, decls;
    for (const auto& a : m.attrs) {
      (a.parameter ? params : buffers) += "\"" + a.name + "\", ";
      decls += "  " + a.name + " : Tensor\n";
    }
    code += "  __parameters__ = [" + params + "]\n";
    code += "  __buffers__ = [" + buffers + "]\n";
    code += decls + "  training : bool\n";
    code += sig + "):\n";  // the return type is inferred (a tensor, a tuple, a list)
    code += body;
    code += "    return " + ret + "\n";
    m.code = std::move(code);
  }
};

}  // namespace

ModuleSource emit_module(const ir::Graph& g) {
  Emitter e(g);
  e.run();
  return std::move(e.m);
}

}  // namespace amanda::torch_frontend
