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
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/conventions.h"
#include "amanda/support/diagnostics.h"
#include "frameworks/torch/helper_functions.h"
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
  std::vector<const HelperFunction*> helpers;  // the helper functions called, in first-use order
  std::string ind = "    ";  // the current block's indentation

  explicit Emitter(const ir::Graph& graph) : g(graph) {}

  std::string where(OpId op) const { return g.path(op) + " (" + std::string(g.type_str(op)) + ")"; }

  std::string value_name(PortId p) const {
    if (const Value* v = ir::get_attr(g, p, "@value"); v && v->is_string() && !v->as_string().empty()) return v->as_string();
    if (g.port_dir(p) == ir::PortDir::In) return std::string(g.port_name_str(p));  // a body's input
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

  // forward() takes and returns tensors of the element types torch has, and lists of them (ONNX's
  // sequences): anything else is refused. Returns the TorchScript type.
  std::string check_type(PortId p, const char* what) const {
    if (!g.port_type(p)) return "Tensor";
    const ir::TypeData* t = &g.port_type_data(p);
    std::string wrap_open, wrap_close;
    if (t->kind == ir::TypeKind::Sequence) {
      if (!t->inner) return "List[Tensor]";  // a sequence of unknown element type
      wrap_open = "List[", wrap_close = "]";
      t = &g.types().get(t->inner);
    }
    if (t->kind != ir::TypeKind::Tensor)
      throw Error(g.path(p) + ": a " + what + " that is not a tensor or a sequence of tensors (optionals and maps: "
                  "a TorchScript forward() could take Optional[Tensor], but Amanda does not write them)");
    if (t->elem != ir::DType::Undefined && !torch_has_dtype(t->elem))
      throw Error(g.path(p) + ": a " + what + " of element type " + std::string(ir::dtype_name(t->elem)) + " (torch 1.13 has no such tensors)");
    return wrap_open + "Tensor" + wrap_close;
  }

  bool is_sequence(PortId p) const { return g.port_type(p) && g.port_type_data(p).kind == ir::TypeKind::Sequence; }

  void graph_inputs(std::string& sig) {
    for (PortId p : g.inputs(g.root())) {
      if (g.is_control(p)) continue;
      const Value* init = ir::get_attr(g, p, "initializer");
      if (init && init->is_tensor()) {
        const ir::Tensor& t = init->as_tensor();
        expr[p.value] = tensor_attr(g.port_name_str(p), t, floating(t.dtype));
        continue;
      }
      std::string ty = check_type(p, "graph input");
      std::string n = locals.make(g.port_name_str(p));
      expr[p.value] = n;
      sig += ",\n    " + n + ": " + ty;
    }
  }

  std::vector<PortId> connected_inputs(OpId op) const {
    std::vector<PortId> v;
    for (PortId p : g.inputs(op))
      if (!g.is_control(p) && g.producer(p)) v.push_back(p);
    return v;
  }

  std::vector<PortId> data_ports(OpId op, ir::PortDir dir) const {
    std::vector<PortId> v;
    for (PortId p : g.ports(op, dir))
      if (!g.is_control(p) && !g.port_name_str(p).starts_with("@")) v.push_back(p);
    return v;
  }

  std::vector<std::string> bind_each(OpId op) {
    std::vector<std::string> v;
    for (PortId p : data_ports(op, ir::PortDir::Out)) {
      v.push_back(locals.make(value_name(p)));
      expr[p.value] = v.back();
    }
    return v;
  }

  void line(const std::string& s) { body += ind + s + "\n"; }

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
    if (type == "prim::If") return emit_if(op);
    if (type == "prim::Loop") return ir::get_attr(g, op, "@scan_inputs") ? emit_scan(op) : emit_loop(op);
    if (g.has_body(op) || !g.attr_graphs(op).empty())
      throw Error(where(op) + ": an op with subgraphs other than prim::If / prim::Loop (TorchScript has no other control flow)");
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
      // an empty list: of tensors when the value is a sequence (ONNX's SequenceEmpty), else of
      // ints (the aten schemas' dims and sizes)
      if (!tuple && ins.empty()) {
        PortId out = g.outputs(op).empty() ? PortId() : g.output(op, 0);
        rhs = out && is_sequence(out) ? "annotate(List[Tensor], [])" : "annotate(List[int], [])";
      }
    } else if (type == "prim::tolist") {
      rhs = tolist(op);
    } else if (type == "prim::ListUnpack" || type == "prim::TupleUnpack") {
      auto ins = connected_inputs(op);
      if (ins.size() != 1) throw Error(where(op) + ": expects one input");
      rhs = input_expr(op, ins[0]);
      std::string lhs = bind_outputs(op);
      line(lhs + (g.outputs(op).size() == 1 ? ", " : "") + " = " + rhs);
      return;
    } else {
      auto sep = type.find("::");
      if (sep == std::string::npos) throw Error(where(op) + ": not an op of the PyTorch namespace (no 'ns::' prefix)");
      std::string ns = type.substr(0, sep), fn = type.substr(sep + 2);
      if (auto dot = fn.find('.'); dot != std::string::npos) fn.resize(dot);  // the overload is chosen by the arguments
      // amanda:: ops are the writer's own helper functions (helper_functions.h): methods of the
      // class, called with keywords as aten ops (an input port the op lacks takes the default)
      const HelperFunction* helper = ns == "amanda" ? find_helper_function(type) : nullptr;
      if (ns == "amanda" && !helper) throw Error(where(op) + ": no helper function computes this op");
      if (helper && std::find(helpers.begin(), helpers.end(), helper) == helpers.end()) helpers.push_back(helper);
      bool positional = ns == "prim";
      rhs = helper ? "self." + std::string(helper->method) + "(" : (ns == "aten" ? "torch." : "ops." + ns + ".") + fn + "(";
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
    line(lhs + " = " + rhs);
  }

  // prim::tolist(t, dim, elem): a tensor's values as a list when the model runs (ONNX's shapes,
  // axes, bounds and scales fed as tensors, where an aten op takes int[] / float[]). Written as
  // torch.jit writes `l: List[int] = t.tolist()`: `annotate(List[int], t.tolist())`, the rank and
  // the element kind (0 int, 1 float, 2 bool: torch's own codes) as prim::tolist's constant
  // arguments; torch checks both against the tensor when the model runs.
  std::string tolist(OpId op) {
    auto ins = connected_inputs(op);
    if (ins.size() != 3) throw Error(where(op) + ": expects a tensor, its rank and an element kind");
    const std::string& dim = input_expr(op, ins[1]);
    const std::string& kind = input_expr(op, ins[2]);
    std::string elem = kind == "0" ? "int" : kind == "1" ? "float" : kind == "2" ? "bool" : "";
    if (elem.empty() || (dim != "0" && dim != "1"))
      throw Error(where(op) + ": a tolist of rank " + dim + " and element kind " + kind + " (written: rank 0 or 1 of int, float or bool)");
    return "annotate(" + (dim == "1" ? "List[" + elem + "]" : elem) + ", (" + input_expr(op, ins[0]) + ").tolist())";
  }

  // ---- control flow: prim::If / prim::Loop hold their bodies as graph attributes (block0, block1)
  // whose ops read outer values through the op's capture ports (`@capture.x`): a capture is the
  // outer value's expression, as TorchScript's blocks see the enclosing function's variables.
  OpId block(OpId op, const char* name) const {
    const Value* v = ir::get_attr(g, op, name);
    if (!v || !v->is_graph()) throw Error(where(op) + ": no graph attribute '" + name + "'");
    return v->as_graph();
  }

  void bind_captures(OpId op) {
    for (PortId p : g.inputs(op))
      if (!g.is_control(p) && g.port_name_str(p).starts_with("@") && g.producer(p)) expr[p.value] = input_expr(op, p);
  }

  void emit_scope(OpId scope) {
    auto topo = g.topo_order(scope);
    if (!topo.ok()) throw Error(g.path(topo.cycle.front()) + ": the body has a cycle");
    for (OpId o : topo.order) statement(o);
  }

  const std::string& source_expr(OpId op, PortId sink) {
    PortId src = g.producer(sink);
    auto it = src ? expr.find(src.value) : expr.end();
    if (it == expr.end()) throw Error(where(op) + ": a body output that nothing in the body computes (" + g.path(sink) + ")");
    return it->second;
  }

  PortId named_input(OpId op, std::string_view name) const {
    for (PortId p : g.inputs(op))
      if (g.port_name_str(p) == name) return p;
    return PortId();
  }

  // if bool(cond): <then> outs = ... else: <else> outs = ...
  void emit_if(OpId op) {
    PortId c = named_input(op, "cond");
    if (!c || !g.producer(c)) throw Error(where(op) + ": no condition");
    std::string cond = "bool(" + input_expr(op, c) + ")";
    bind_captures(op);
    OpId b[2] = {block(op, "block0"), block(op, "block1")};
    std::vector<std::string> outs = bind_each(op);
    for (int k = 0; k < 2; ++k) {
      line(k == 0 ? "if " + cond + ":" : std::string("else:"));
      std::string saved = ind;
      ind += "  ";
      emit_scope(b[k]);
      auto gouts = data_ports(b[k], ir::PortDir::Out);
      if (gouts.size() != outs.size())
        throw Error(where(op) + ": branch " + std::to_string(k) + " returns " + std::to_string(gouts.size()) + " values for " +
                    std::to_string(outs.size()) + " outputs");
      for (size_t i = 0; i < outs.size(); ++i) line(outs[i] + " = " + source_expr(op, gouts[i]));
      if (outs.empty()) line("pass");
      ind = saved;
    }
  }

  int64_t int_attr(OpId op, const char* name, int64_t dflt) const {
    const Value* v = ir::get_attr(g, op, name);
    return v && v->is_int() ? v->as_int() : dflt;
  }
  std::vector<int64_t> ints_attr(OpId op, const char* name, size_t n) const {
    std::vector<int64_t> r(n, 0);
    const Value* v = ir::get_attr(g, op, name);
    if (v && v->is_list())
      for (size_t i = 0; i < n && i < v->as_list().size(); ++i)
        if (v->as_list()[i].is_int()) r[i] = v->as_list()[i].as_int();
    return r;
  }

  // ONNX's Scan (opset 9 on; the table makes it a prim::Loop holding the Scan body, with the
  // attributes as `@scan_*`): a for loop over the scan inputs' axis, each iteration's slices
  // selected (from the end for a reverse direction), scan outputs stacked along their axis
  // (flipped back for a reverse direction).
  void emit_scan(OpId op) {
    std::vector<PortId> ins;  // the states and scan inputs (the trip count and condition ports stay empty)
    for (PortId p : data_ports(op, ir::PortDir::In))
      if (g.port_name_str(p) != "max_trip_count" && g.port_name_str(p) != "start_condition") ins.push_back(p);
    auto outs_ports = data_ports(op, ir::PortDir::Out);
    int64_t m = int_attr(op, "@scan_inputs", -1);
    OpId body_graph = block(op, "block0");
    auto gin = data_ports(body_graph, ir::PortDir::In), gout = data_ports(body_graph, ir::PortDir::Out);
    if (m < 1 || static_cast<size_t>(m) > ins.size() || gin.size() != ins.size() || gout.size() != outs_ports.size())
      throw Error(where(op) + ": not a Scan body (" + std::to_string(gin.size()) + " inputs, " + std::to_string(gout.size()) + " outputs)");
    size_t n = ins.size() - static_cast<size_t>(m), k = outs_ports.size() - n;
    if (outs_ports.size() < n) throw Error(where(op) + ": fewer outputs than states");
    auto in_axes = ints_attr(op, "@scan_input_axes", static_cast<size_t>(m));
    auto in_dirs = ints_attr(op, "@scan_input_directions", static_cast<size_t>(m));
    auto out_axes = ints_attr(op, "@scan_output_axes", k);
    auto out_dirs = ints_attr(op, "@scan_output_directions", k);
    bind_captures(op);
    std::vector<std::string> xs;
    for (size_t j = 0; j < static_cast<size_t>(m); ++j) {
      if (!g.producer(ins[n + j])) throw Error(where(op) + ": a scan input that is not connected");
      xs.push_back(input_expr(op, ins[n + j]));
    }
    std::string trips = locals.make("scan_length");
    line(trips + " = torch.size(" + xs[0] + ", " + std::to_string(in_axes[0]) + ")");
    std::vector<std::string> carried;
    for (size_t j = 0; j < n; ++j) {
      carried.push_back(locals.make(value_name(outs_ports[j])));
      line(carried.back() + " = " + input_expr(op, ins[j]));
    }
    std::vector<std::string> lists;
    for (size_t j = 0; j < k; ++j) {
      lists.push_back(locals.make(value_name(outs_ports[n + j]) + "_list"));
      line(lists.back() + " = annotate(List[Tensor], [])");
    }
    std::string i = locals.make("i");
    line("for " + i + " in range(" + trips + "):");
    std::string saved = ind;
    ind += "  ";
    for (size_t j = 0; j < n; ++j) expr[gin[j].value] = carried[j];
    for (size_t j = 0; j < static_cast<size_t>(m); ++j) {
      std::string e = locals.make(value_name(gin[n + j]));
      std::string at = in_dirs[j] ? trips + " - 1 - " + i : i;
      line(e + " = torch.select(" + xs[j] + ", " + std::to_string(in_axes[j]) + ", " + at + ")");
      expr[gin[n + j].value] = e;
    }
    emit_scope(body_graph);
    std::vector<std::string> next;
    for (size_t j = 0; j < n; ++j) {
      next.push_back(locals.make(carried[j] + "_next"));
      line(next.back() + " = " + source_expr(op, gout[j]));
    }
    for (size_t j = 0; j < k; ++j) line(lists[j] + ".append(" + source_expr(op, gout[n + j]) + ")");
    for (size_t j = 0; j < n; ++j) line(carried[j] + " = " + next[j]);
    if (n == 0 && k == 0) line("pass");
    ind = saved;
    for (size_t j = 0; j < n; ++j) expr[outs_ports[j].value] = carried[j];
    for (size_t j = 0; j < k; ++j) {
      std::string out = locals.make(value_name(outs_ports[n + j]));
      expr[outs_ports[n + j].value] = out;
      std::string ax = std::to_string(out_axes[j]);
      std::string stacked = "torch.stack(" + lists[j] + ", " + ax + ")";
      line(out + " = " + (out_dirs[j] ? "torch.flip(" + stacked + ", [" + ax + "])" : stacked));
    }
  }

  // ONNX's Loop (the PyTorch namespace's prim::Loop holds the same body: inputs (iteration number,
  // condition, carried...), outputs (condition, carried..., scan outputs...)) as a while loop on the
  // condition and the trip count; scan outputs are lists of the iterations' values, stacked after.
  void emit_loop(OpId op) {
    PortId m = named_input(op, "max_trip_count"), c = named_input(op, "start_condition");
    std::vector<PortId> init;
    for (PortId p : data_ports(op, ir::PortDir::In))
      if (p != m && p != c) init.push_back(p);
    OpId body_graph = block(op, "block0");
    auto gin = data_ports(body_graph, ir::PortDir::In), gout = data_ports(body_graph, ir::PortDir::Out);
    size_t n = init.size();
    auto outs_ports = data_ports(op, ir::PortDir::Out);
    if (gin.size() != n + 2 || gout.size() < n + 1 || outs_ports.size() != gout.size() - 1)
      throw Error(where(op) + ": the body takes " + std::to_string(gin.size()) + " and returns " + std::to_string(gout.size()) +
                  " values for " + std::to_string(n) + " carried and " + std::to_string(outs_ports.size()) + " outputs (not a Loop body)");
    std::string trip;
    if (m && g.producer(m)) {
      trip = locals.make("trip_count");
      line(trip + " = int(" + input_expr(op, m) + ")");
    }
    std::string go = locals.make("cond");
    line(go + " = " + (c && g.producer(c) ? "bool(" + input_expr(op, c) + ")" : std::string("True")));
    std::string i = locals.make("i");
    line(i + " = 0");
    bind_captures(op);
    std::vector<std::string> carried;
    for (size_t k = 0; k < n; ++k) {
      std::string init_expr = g.producer(init[k]) ? input_expr(op, init[k]) : std::string("None");
      carried.push_back(locals.make(value_name(outs_ports[k])));
      line(carried.back() + " = " + init_expr);
    }
    std::vector<std::string> lists;
    for (size_t j = n; j < outs_ports.size(); ++j) {
      lists.push_back(locals.make(value_name(outs_ports[j]) + "_list"));
      line(lists.back() + " = annotate(List[Tensor], [])");
    }
    line("while " + go + (trip.empty() ? std::string() : " and " + i + " < " + trip) + ":");
    std::string saved = ind;
    ind += "  ";
    std::string it = locals.make(value_name(gin[0])), ci = locals.make(value_name(gin[1]));
    line(it + " = torch.tensor(" + i + ")");
    line(ci + " = torch.tensor(" + go + ")");
    expr[gin[0].value] = it;
    expr[gin[1].value] = ci;
    for (size_t k = 0; k < n; ++k) expr[gin[2 + k].value] = carried[k];
    emit_scope(body_graph);
    // the new values into temporaries first: one may read another's previous value
    std::vector<std::string> next;
    for (size_t k = 0; k < n; ++k) {
      next.push_back(locals.make(carried[k] + "_next"));
      line(next.back() + " = " + source_expr(op, gout[1 + k]));
    }
    for (size_t j = 0; j < lists.size(); ++j) line(lists[j] + ".append(" + source_expr(op, gout[1 + n + j]) + ")");
    line(go + " = bool(" + source_expr(op, gout[0]) + ")");
    for (size_t k = 0; k < n; ++k) line(carried[k] + " = " + next[k]);
    line(i + " = " + i + " + 1");
    ind = saved;
    for (size_t k = 0; k < n; ++k) expr[outs_ports[k].value] = carried[k];
    for (size_t j = 0; j < lists.size(); ++j) {
      std::string out = locals.make(value_name(outs_ports[n + j]));
      expr[outs_ports[n + j].value] = out;
      // No iteration: torch.stack of an empty list fails; ONNX's result is [0, body shape...],
      // written when the body's value has a static shape and element type (else stack fails as said)
      if (auto empty = empty_stack(gout[1 + n + j])) {
        line("if torch.len(" + lists[j] + ") == 0:");
        line("  " + out + " = " + *empty);
        line("else:");
        line("  " + out + " = torch.stack(" + lists[j] + ")");
      } else {
        line(out + " = torch.stack(" + lists[j] + ")");
      }
    }
  }

  // torch.zeros([0, d1, ...], dtype=...) for a body value of static shape and known element type.
  std::optional<std::string> empty_stack(PortId body_out) const {
    PortId src = g.producer(body_out);
    for (PortId p : {body_out, src}) {
      if (!p || !g.port_type(p)) continue;
      const ir::TypeData& t = g.port_type_data(p);
      if (t.kind != ir::TypeKind::Tensor || !t.ranked || t.elem == ir::DType::Undefined) continue;
      const ir::DTypeCodes* codes = ir::conventions().dtype_codes("torch");
      if (!codes) return std::nullopt;
      std::string want(ir::dtype_name(t.elem));
      auto code = std::find_if(codes->begin(), codes->end(), [&](const auto& c) { return c.second == want; });
      if (code == codes->end()) return std::nullopt;
      std::string dims = "[0";
      for (const ir::Dim& d : t.dims) {
        if (!d.is_known()) return std::nullopt;
        dims += ", " + std::to_string(d.value());
      }
      return "torch.zeros(" + dims + "], dtype=" + std::to_string(code->first) + ")";
    }
    return std::nullopt;
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
      (void)check_type(p, "graph output");
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
    for (const HelperFunction* h : helpers) code += helper_source(*h, m.qualified_name);
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
