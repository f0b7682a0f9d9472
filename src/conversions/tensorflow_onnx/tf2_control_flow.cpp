// TF2 functional control flow as ONNX If / Loop, before the TF -> ONNX tables run (see
// onnx_boundary.h, lower_tf2_control_flow; docs/tensorflow.md, "TF2 control flow").
//
// TF2 writes `If`/`StatelessIf(cond, inputs...)` {then_branch, else_branch: functions} and
// `While`/`StatelessWhile(inputs...)` {cond, body: functions} whose functions live in the graph's
// function library (imported as attribute graphs of the root, their ports the signature's
// arguments). An If becomes `onnx::If` whose branches hold a copy of each function's body, its
// arguments read as captures of the If's inputs. A While becomes `onnx::Loop` (no trip count):
// the cond function copied outside on the initial values gives the first test; the body graph
// holds a copy of the body function on the carried values, then a copy of the cond function on
// its results for the next test. Functions that call control flow themselves are lowered in turn
// (their copies are ops of the new graphs). A call of a library function by any other op
// (PartitionedCall, a function used as an op) is refused by name: the library goes with the
// boundary.
#include <functional>
#include <map>

#include <fmt/format.h>

#include "onnx_boundary.h"
#include "amanda/support/diagnostics.h"

namespace amanda::tf_frontend {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

class Functional {
 public:
  explicit Functional(ir::Graph& g) : g_(g), root_(g.root()) {
    if (const Value* lib = g_.attr(root_, g_.symbols().find("library")); lib && lib->is_map())
      if (const Value* f = lib->find("function"); f && f->is_list())
        for (const Value& v : f->as_list())
          if (v.is_graph()) functions_[std::string(g_.name_str(v.as_graph()))] = v.as_graph();
  }

  size_t run() {
    if (functions_.empty()) return 0;
    size_t n = 0;
    std::vector<std::pair<OpId, int>> scopes{{root_, 0}};  // a scope and how deep in copied functions it is
    while (!scopes.empty()) {
      auto [scope, depth] = scopes.back();
      scopes.pop_back();
      // (scanned again after each lowering: a While's first test copies its cond function, and
      // whatever control flow that holds, into this scope)
      for (bool again = true; again;) {
        again = false;
        for (OpId op : g_.children(scope)) {
          if (!g_.valid(op) || g_.is_graph(op)) continue;
          std::string_view t = g_.type_str(op);
          bool is_if = t == "If" || t == "StatelessIf", is_while = t == "While" || t == "StatelessWhile";
          if (is_if || is_while) {
            if (depth >= kMaxDepth || n >= kMaxLowered)
              throw Error(fmt::format("op '{}' ({}): control flow nested more than {} functions deep, or more than {} "
                                      "If/While in all (a function that calls itself?)", short_name(op), t, kMaxDepth, kMaxLowered));
            std::vector<OpId> made = is_if ? lower_if(op, scope) : lower_while(op, scope);
            for (OpId b : made) scopes.push_back({b, depth + 1});
            ++n;
            again = true;
            break;
          }
          if (t == "PartitionedCall" || t == "StatefulPartitionedCall" || functions_.contains(std::string(t)))
            throw Error(fmt::format("op '{}' ({}) calls a function of the graph's library: only functional If/While "
                                    "(StatelessIf, StatelessWhile) are converted to ONNX",
                                    g_.name_str(op), t));
        }
      }
    }
    return n;
  }

 private:
  ir::Graph& g_;
  OpId root_;
  std::map<std::string, OpId> functions_;
  // Copies of functions inside copies, and lowerings in all: a function that calls itself (in a
  // body, or in a While's cond, whose first test is copied into the same scope) has no end.
  static constexpr int kMaxDepth = 32;
  static constexpr size_t kMaxLowered = 1024;
  size_t copies_ = 0;

  std::vector<PortId> data_inputs(OpId op) const {
    std::vector<PortId> r;
    for (PortId p : g_.inputs(op))
      if (!g_.is_control(p)) r.push_back(p);
    return r;
  }
  std::vector<PortId> data_outputs(OpId op) const {
    std::vector<PortId> r;
    for (PortId p : g_.outputs(op))
      if (!g_.is_control(p)) r.push_back(p);
    return r;
  }
  std::string short_name(OpId op) {
    std::string n(g_.name_str(op));
    return n.size() > 96 ? fmt::format("{}/copy{}", n.substr(0, 48), ++copies_) : n;
  }
  std::string unique_name(OpId scope, const std::string& base) {
    std::string n = base;
    for (int k = 1; g_.find_op(scope, n); ++k) n = fmt::format("{}_{}", base, k);
    return n;
  }
  OpId function(OpId op, const char* attr) {
    const Value* v = g_.attr(op, g_.sym(attr));
    const Value* name = v && v->is_map() ? v->find("name") : nullptr;
    if (!name || !name->is_string())
      throw Error(fmt::format("op '{}' ({}): attribute '{}' names no function", g_.name_str(op), g_.type_str(op), attr));
    auto it = functions_.find(name->as_string());
    if (it == functions_.end())
      throw Error(fmt::format("op '{}' ({}): function '{}' is not in the graph's library", g_.name_str(op), g_.type_str(op),
                              name->as_string()));
    return it->second;
  }
  std::string dtype_at(OpId op, const char* attr, size_t k) {
    const Value* v = g_.attr(op, g_.sym(attr));
    if (v && v->is_list() && k < v->as_list().size() && v->as_list()[k].is_string()) return v->as_list()[k].as_string();
    return {};
  }

  // Copies function fg's body into `scope`; args[k] is the value its input argument k reads there.
  // Returns the values of its output arguments. `tag` keeps the copies' names apart (ONNX's value
  // names are one namespace across a graph and its bodies).
  std::vector<PortId> inline_function(OpId fg, OpId scope, const std::vector<PortId>& args, std::string tag) {
    // (copies of copies would otherwise grow their names without bound)
    if (tag.size() > 96) tag = fmt::format("{}/copy{}", tag.substr(0, 48), ++copies_);
    std::vector<PortId> params = data_inputs(fg);
    if (params.size() != args.size())
      throw Error(fmt::format("function '{}' takes {} arguments, its caller gives {}", g_.name_str(fg), params.size(), args.size()));
    std::vector<OpId> ops = g_.children(fg);
    std::vector<OpId> made = ops.empty() ? std::vector<OpId>{} : g_.clone_subgraph(ops, scope);
    std::map<uint32_t, OpId> by_old;
    for (size_t i = 0; i < ops.size(); ++i) {
      by_old[ops[i].value] = made[i];
      g_.set_name(made[i], g_.sym(unique_name(scope, tag + "/" + std::string(g_.name_str(ops[i])))));
    }
    auto value = [&](PortId src) -> PortId {
      OpId op = g_.port_op(src);
      if (op == fg) {
        for (size_t k = 0; k < params.size(); ++k)
          if (params[k] == src) return args[k];
        throw Error(fmt::format("function '{}': a value is read from one of its outputs", g_.name_str(fg)));
      }
      auto it = by_old.find(op.value);
      if (it == by_old.end()) throw Error(fmt::format("function '{}' reads a value from outside its body", g_.name_str(fg)));
      return g_.output(it->second, g_.port_index(src));
    };
    for (size_t i = 0; i < ops.size(); ++i) {
      auto oi = g_.inputs(ops[i]);
      auto ni = g_.inputs(made[i]);
      for (size_t j = 0; j < oi.size() && j < ni.size(); ++j) {
        if (g_.is_control(ni[j])) {
          for (ir::EdgeId e : g_.in_edges(ni[j])) g_.disconnect(e);
          continue;
        }
        if (g_.producer(ni[j])) continue;  // an edge among the copies
        if (PortId src = g_.producer(oi[j])) g_.connect(value(src), ni[j]);
      }
    }
    std::vector<PortId> outs;
    for (PortId p : data_outputs(fg)) {
      PortId src = g_.producer(p);
      if (!src) throw Error(fmt::format("function '{}': output '{}' is fed by nothing", g_.name_str(fg), g_.port_name_str(p)));
      outs.push_back(value(src));
    }
    return outs;
  }

  // What feeds input `p` of op `op` (every input of a functional op must be fed).
  PortId fed(OpId op, PortId p) {
    PortId src = g_.producer(p);
    if (!src) throw Error(fmt::format("op '{}' ({}): input '{}' is fed by nothing", short_name(op), g_.type_str(op), g_.port_name_str(p)));
    return src;
  }

  // A value of the enclosing scope as op `holder`'s body reads it: a capture port of the holder.
  PortId capture(OpId holder, PortId src) {
    OpId op = g_.port_op(src);
    std::string pname = "@capture." + (g_.is_graph(op) ? std::string(g_.port_name_str(src))
                                                         : std::string(g_.name_str(op)) + ":" + std::to_string(g_.port_index(src)));
    PortId r = g_.find_input(holder, g_.sym(pname));
    if (!r) {
      r = g_.add_input(holder, g_.sym(pname));
      g_.set_port_role(r, ir::PortRole::Capture);
      g_.connect(src, r);
    }
    return r;
  }

  // A body's output: an Identity of its own (a graph output is one value name).
  void body_output(OpId body, PortId value, const std::string& name, const std::string& tf_dtype) {
    OpId id = g_.create_op(body, g_.sym("Identity"), g_.sym(unique_name(body, name)));
    PortId in = g_.add_input(id, g_.sym("input")), out = g_.add_output(id, g_.sym("output"));
    if (!tf_dtype.empty()) g_.set_attr(id, g_.sym("T"), Value(tf_dtype));
    g_.connect(value, in);
    g_.connect(out, g_.add_port(body, ir::PortDir::Out, g_.sym(name)));
  }

  OpId new_body(OpId owner, const std::string& name, const char* attr) {
    OpId b = g_.create_attr_graph(owner, g_.sym(name));
    g_.set_graph_namespace(b, g_.graph_namespace(root_));
    g_.mark_has_body(b);
    g_.set_attr(owner, g_.sym(attr), Value::graph(b));
    return b;
  }

  std::vector<OpId> lower_if(OpId op, OpId scope) {
    std::vector<OpId> made;
    std::string base = short_name(op);
    if (const Value* tc = g_.attr(op, g_.sym("Tcond")); tc && tc->is_string() && tc->as_string() != "bool")
      throw Error(fmt::format("op '{}' ({}): a condition of type {} (ONNX's If takes a bool; TF tests a tensor's "
                              "truth by its size and value)", base, g_.type_str(op), tc->as_string()));
    auto ins = data_inputs(op);
    auto outs = data_outputs(op);
    if (ins.empty()) throw Error(fmt::format("op '{}' ({}) has no condition input", base, g_.type_str(op)));
    OpId iff = g_.create_op(scope, g_.sym("onnx::If"), g_.sym(unique_name(scope, base + "/If")));
    g_.connect(fed(op, ins[0]), g_.add_input(iff, g_.sym("cond")));
    std::vector<PortId> new_outs;
    for (size_t k = 0; k < outs.size(); ++k) new_outs.push_back(g_.add_output(iff, g_.sym(fmt::format("outputs.{}", k))));
    for (int branch = 1; branch >= 0; --branch) {
      OpId fn = function(op, branch ? "then_branch" : "else_branch");
      std::string tag = base + (branch ? "/then" : "/else");
      OpId gr = new_body(iff, tag, branch ? "then_branch" : "else_branch");
      std::vector<PortId> args;
      for (size_t k = 1; k < ins.size(); ++k) args.push_back(capture(iff, fed(op, ins[k])));
      std::vector<PortId> res = inline_function(fn, gr, args, tag);
      if (res.size() != outs.size())
        throw Error(fmt::format("op '{}' ({}): function '{}' gives {} results for {} outputs", base, g_.type_str(op),
                                g_.name_str(fn), res.size(), outs.size()));
      for (size_t k = 0; k < res.size(); ++k) body_output(gr, res[k], fmt::format("{}_out{}", tag, k), dtype_at(op, "Tout", k));
      made.push_back(gr);
    }
    for (size_t k = 0; k < outs.size(); ++k) g_.replace_all_uses(outs[k], new_outs[k]);
    g_.erase_op(op);
    return made;
  }

  std::vector<OpId> lower_while(OpId op, OpId scope) {
    std::string base = short_name(op);
    auto ins = data_inputs(op);
    auto outs = data_outputs(op);
    if (ins.size() != outs.size())
      throw Error(fmt::format("op '{}' ({}): {} inputs but {} outputs", base, g_.type_str(op), ins.size(), outs.size()));
    OpId cond_fn = function(op, "cond"), body_fn = function(op, "body");
    OpId loop = g_.create_op(scope, g_.sym("onnx::Loop"), g_.sym(unique_name(scope, base + "/Loop")));
    g_.add_input(loop, g_.sym("M"));
    PortId cond_in = g_.add_input(loop, g_.sym("cond"));
    std::vector<PortId> init;
    for (PortId p : ins) init.push_back(fed(op, p));
    // The first test, in the enclosing scope, on the initial values.
    std::vector<PortId> first = inline_function(cond_fn, scope, init, base + "/first_test");
    if (first.size() != 1) throw Error(fmt::format("op '{}': its cond function gives {} results, not 1", base, first.size()));
    g_.connect(first[0], cond_in);
    std::vector<PortId> loop_out;
    for (size_t k = 0; k < ins.size(); ++k) {
      g_.connect(init[k], g_.add_input(loop, g_.sym(fmt::format("v_initial.{}", k))));
      loop_out.push_back(g_.add_output(loop, g_.sym(fmt::format("v_final_and_scan_outputs.{}", k))));
    }
    OpId body = new_body(loop, base + "/body", "body");
    g_.set_attr(loop, g_.sym("@tf2_while"), Value(base));  // (type_loop_bodies gives its body's inputs ranks)
    PortId b_iter = g_.add_port(body, ir::PortDir::In, g_.sym(base + "/iteration"));
    g_.set_attr(b_iter, g_.sym("type"), Value(std::string("tensor(int64)")));
    g_.set_attr(b_iter, g_.sym("shape"), Value(Value::List{}));
    g_.set_port_type(b_iter, g_.types().tensor(ir::DType::Int64, std::span<const ir::Dim>()));
    PortId b_cond = g_.add_port(body, ir::PortDir::In, g_.sym(base + "/cond_in"));
    g_.set_attr(b_cond, g_.sym("type"), Value(std::string("tensor(bool)")));
    g_.set_attr(b_cond, g_.sym("shape"), Value(Value::List{}));
    g_.set_port_type(b_cond, g_.types().tensor(ir::DType::Bool, std::span<const ir::Dim>()));
    std::vector<PortId> b_in;
    // (untyped: ONNX's Loop inference gives the body's inputs the types of the Loop's inputs)
    for (size_t k = 0; k < ins.size(); ++k) b_in.push_back(g_.add_port(body, ir::PortDir::In, g_.sym(fmt::format("{}/v{}", base, k))));
    std::vector<PortId> next = inline_function(body_fn, body, b_in, base + "/body");
    if (next.size() != ins.size())
      throw Error(fmt::format("op '{}': its body function gives {} results for {} loop values", base, next.size(), ins.size()));
    std::vector<PortId> again = inline_function(cond_fn, body, next, base + "/next_test");
    if (again.size() != 1) throw Error(fmt::format("op '{}': its cond function gives {} results, not 1", base, again.size()));
    body_output(body, again[0], base + "/cond_out", "bool");
    for (size_t k = 0; k < next.size(); ++k) body_output(body, next[k], fmt::format("{}/v{}_out", base, k), dtype_at(op, "T", k));
    for (size_t k = 0; k < outs.size(); ++k) g_.replace_all_uses(outs[k], loop_out[k]);
    g_.erase_op(op);
    return {body};
  }
};

}  // namespace

size_t lower_tf2_control_flow(ir::Graph& g) { return Functional(g).run(); }

}  // namespace amanda::tf_frontend
