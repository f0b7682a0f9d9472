// TF1 while loops (Enter/Merge/Switch/LoopCond/NextIteration/Exit frames) as ONNX Loops, before
// the TF -> ONNX tables run (see onnx_boundary.h, lower_tf1_loops; docs/tensorflow.md, "Loops").
//
// A frame of TensorFlow's control_flow_ops.while_loop is, per loop variable k:
//
//   x_k -> Enter -> Merge(Enter, NextIteration) -> Switch(Merge, LoopCond) -:0-> Exit -> outside
//                    |                                                     -:1-> body -> NextIteration
//                    +-> cond ops -> LoopCond (one per frame)
//
// and loop invariants come in through Enters with is_constant (or, in the graphs TF 2 lowers from
// a functional While, as variables the body passes through). ONNX's Loop tests its condition
// before each iteration from a value given to it, and the body computes the next one: so the cond
// ops are copied twice, once outside on the Enters' inputs (the first test), once in the body on
// the values the body hands to NextIteration (the test for the next iteration), as tf2onnx's
// loop_rewriter does. The body ops move into the Loop's body graph (an attribute graph of an op
// `onnx::Loop`: the root imports `onnx` = amanda/onnx/13, so the TF table keeps it and converts
// the ops of its body; name_onnx_outputs renames it `Loop` afterwards). Consts the body reads are
// copied into it (rules read them with `const:`); other outer values are captures.
//
// TensorLists, TF 2's TensorArrays: a list made by TensorListFromTensor that the body only reads
// with TensorListGetItem becomes the tensor itself, read with GatherV2 on axis 0; a list made by
// TensorListReserve that the body only writes with TensorListSetItem at the iteration's index
// and that only TensorListStack reads after the loop becomes a scan output of the Loop. Anything
// else is refused, naming the frame and the op.
#include <cstring>
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include "onnx_boundary.h"
#include "tf1_vocabulary.h"
#include "amanda/support/diagnostics.h"

namespace amanda::tf_frontend {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

struct LoopVar {
  OpId enter, merge, sw, next, exit;
  PortId init;             // the Enter's input (outside)
  std::string dtype;       // TF dtype name
  OpId stack;              // TensorListStack after the loop (a scan output)
  PortId item;             // what TensorListSetItem writes (a scan output)
  std::string item_dtype;
  bool invariant = false;  // the body passes it on unchanged: read outside, not carried
};

class Lowering {
 public:
  Lowering(ir::Graph& g, const Tf1Vocabulary& v) : g_(g), root_(g.root()), v_(v) {}

  bool run() {
    std::map<std::string, std::vector<OpId>> frames;
    for (OpId op = g_.first_child(root_); op; op = g_.next_sibling(op))
      if (type(op) == v_.enter) frames[v_.frame_name(g_, op)].push_back(op);
    // (A TF1 cond, Switch/Merge outside any frame, is left to the table, which refuses it by name.)
    // Inner frames first: an inner loop's Enters read values of the outer frame, and once it is an
    // onnx::Loop op the outer frame's lowering moves that op into its own body like any other op.
    // A frame's walk (forward from its Enters to the Exits) reaches the Enters of the frames nested
    // in it: fewer such frames is deeper, so frames go in that order.
    std::vector<std::pair<size_t, std::string>> order;
    if (frames.size() > 1) {
      if (frames.size() > 4096) throw Error(fmt::format("{} TF1 while-loop frames (more than 4096)", frames.size()));
      absl::flat_hash_map<uint32_t, std::string> enter_frame;
      for (auto& [name, enters] : frames)
        for (OpId e : enters) enter_frame[e.value] = name;
      for (auto& [name, enters] : frames) {
        std::set<std::string> nested;
        for (uint32_t o : in_frames({{name, enters}}))
          if (auto it = enter_frame.find(o); it != enter_frame.end() && it->second != name) nested.insert(it->second);
        order.push_back({nested.size(), name});
      }
    } else {
      for (auto& [name, enters] : frames) order.push_back({0, name});
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [depth, name] : order) lower(name, frames[name]);
    return !frames.empty();
  }

 private:
  ir::Graph& g_;
  OpId root_;
  const Tf1Vocabulary& v_;

  std::string_view type(OpId op) const { return g_.type_str(op); }
  std::string str_attr(OpId op, std::string_view k) const {
    const Value* v = g_.attr(op, g_.symbols().find(k));
    return v && v->is_string() ? v->as_string() : std::string();
  }
  bool bool_attr(OpId op, std::string_view k) const {
    const Value* v = g_.attr(op, g_.symbols().find(k));
    return v && v->is_bool() && v->as_bool();
  }
  OpId producer_op(PortId in) const {
    PortId p = g_.producer(in);
    return p ? g_.port_op(p) : OpId();
  }
  std::vector<PortId> data_outputs(OpId op) const {
    std::vector<PortId> r;
    for (PortId p : g_.outputs(op))
      if (!g_.is_control(p)) r.push_back(p);
    return r;
  }
  std::vector<PortId> data_inputs(OpId op) const {
    std::vector<PortId> r;
    for (PortId p : g_.inputs(op))
      if (!g_.is_control(p)) r.push_back(p);
    return r;
  }
  // Every op forward from some frame's Enters, up to the Exits (one walk, linear in the graph).
  std::set<uint32_t> in_frames(const std::map<std::string, std::vector<OpId>>& frames) const {
    std::set<uint32_t> seen;
    std::vector<OpId> work;
    for (auto& [n, enters] : frames) work.insert(work.end(), enters.begin(), enters.end());
    while (!work.empty()) {
      OpId o = work.back();
      work.pop_back();
      if (!seen.insert(o.value).second) continue;
      if (type(o) == v_.exit) continue;
      for (PortId p : data_outputs(o))
        for (PortId c : g_.consumers(p)) work.push_back(g_.port_op(c));
    }
    return seen;
  }
  // The inputs that read `out`, through Identity ops (iterative: a chain of 60,000 Identities
  // recursed once per op and overflowed the stack).
  std::vector<PortId> uses(PortId out) const {
    std::vector<PortId> r, work;  // work: consumer inputs still to look at, next on top
    std::set<uint32_t> seen;      // Identity ops expanded (a cycle of them ends)
    auto push = [&](PortId o) {
      auto cs = g_.consumers(o);
      work.insert(work.end(), cs.rbegin(), cs.rend());
    };
    push(out);
    while (!work.empty()) {
      PortId c = work.back();
      work.pop_back();
      OpId x = g_.port_op(c);
      if (type(x) != v_.identity) {
        r.push_back(c);
      } else if (seen.insert(x.value).second) {
        auto outs = data_outputs(x);
        if (!outs.empty()) push(outs[0]);
      }
    }
    return r;
  }
  // Through Identity ops, to the value they pass on.
  PortId through_identity(PortId out) const {
    // (At most one step per op: a cycle of Identities ends.)
    for (size_t n = 0; out && type(g_.port_op(out)) == v_.identity; ++n) {
      if (n > g_.op_count() || g_.inputs(g_.port_op(out)).empty()) return PortId();
      out = g_.producer(g_.input(g_.port_op(out), 0));
    }
    return out;
  }
  [[noreturn]] void refuse(const std::string& frame, const std::string& why) const {
    throw Error(fmt::format("TF1 while loop '{}': {} (not converted to an ONNX Loop)", frame, why));
  }
  // A frame op with fewer data ports than its kind has (a hostile file: the readers make the ports
  // the file lists) is refused before anything indexes them.
  void need(const std::string& frame, OpId op, size_t ins, size_t outs) const {
    if (data_inputs(op).size() < ins || data_outputs(op).size() < outs || g_.inputs(op).size() < ins || g_.outputs(op).size() < outs)
      refuse(frame, fmt::format("{} '{}' has {} data inputs and {} data outputs (at least {} and {} expected)", type(op), g_.name_str(op),
                                data_inputs(op).size(), data_outputs(op).size(), ins, outs));
  }
  OpId make_const(OpId scope, const std::string& name, ir::DType dt, const std::string& tf_dtype, std::string bytes,
                  std::vector<int64_t> shape = {}) {
    OpId c = g_.create_op(scope, g_.sym("Const"), g_.sym(unique_name(scope, name)));
    g_.add_output(c, g_.sym("output"));
    g_.set_attr(c, g_.sym("dtype"), Value(tf_dtype));
    g_.set_attr(c, g_.sym("value"), Value(ir::Tensor::from_bytes(dt, std::move(shape), std::move(bytes))));
    return c;
  }
  // ONNX's value names are one namespace across a graph and all its bodies, and a name made here
  // can end up in a body nested in another (a Const copied into the inner loop's body and, later,
  // into the outer one's): besides the scope, avoid every name this pass has made anywhere.
  std::string unique_name(OpId scope, const std::string& base) {
    std::string n = base;
    for (int k = 1; g_.find_op(scope, n) || made_names_.contains(n); ++k) n = fmt::format("{}_{}", base, k);
    made_names_.insert(n);
    return n;
  }
  std::set<std::string> made_names_;
  static std::string le32(int32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
  std::optional<int64_t> const_scalar(PortId out) const {
    if (!out) return std::nullopt;
    OpId op = g_.port_op(out);
    if (type(op) != "Const") return std::nullopt;
    const Value* v = g_.attr(op, g_.symbols().find("value"));
    if (!v || !v->is_tensor()) return std::nullopt;
    const ir::Tensor& t = v->as_tensor();
    if (t.element_count() != 1u) return std::nullopt;
    // (memcpy: a tensor may point into a mapped weights file at any byte offset)
    if (t.dtype == ir::DType::Int32 && t.size == 4) {
      int32_t x;
      std::memcpy(&x, t.data, 4);
      return x;
    }
    if (t.dtype == ir::DType::Int64 && t.size == 8) {
      int64_t x;
      std::memcpy(&x, t.data, 8);
      return x;
    }
    return std::nullopt;
  }
  static std::string onnx_type(const std::string& tf_dtype) {
    static const std::map<std::string, std::string> m = {{"float32", "float"}, {"float64", "double"}, {"int32", "int32"},
                                                         {"int64", "int64"}, {"uint8", "uint8"},  {"bool", "bool"},
                                                         {"int8", "int8"},   {"int16", "int16"},  {"float16", "float16"},
                                                         {"uint16", "uint16"}};
    auto it = m.find(tf_dtype);
    return it == m.end() ? std::string() : "tensor(" + it->second + ")";
  }

  void lower(const std::string& frame, const std::vector<OpId>& enters) {
    std::vector<LoopVar> vars;
    std::vector<OpId> const_enters;
    OpId loop_cond;
    for (OpId e : enters) {
      if (v_.is_constant(g_, e)) {
        const_enters.push_back(e);
        continue;
      }
      LoopVar v;
      v.enter = e;
      need(frame, e, 1, 1);
      v.init = g_.producer(g_.input(e, 0));
      v.dtype = v_.type_attr.empty() ? std::string() : str_attr(e, v_.type_attr);
      auto outs = g_.consumers(g_.output(e, 0));
      if (outs.size() != 1 || type(g_.port_op(outs[0])) != v_.merge)
        refuse(frame, fmt::format("Enter '{}' does not feed one Merge", g_.name_str(e)));
      v.merge = g_.port_op(outs[0]);
      need(frame, v.merge, 0, 1);
      for (PortId in : data_inputs(v.merge))
        if (OpId p = producer_op(in); p && type(p) == v_.next_iteration) v.next = p;
      for (PortId c : g_.consumers(g_.output(v.merge, 0)))
        if (type(g_.port_op(c)) == v_.switch_op) v.sw = g_.port_op(c);
      if (!v.next || !v.sw) refuse(frame, fmt::format("Merge '{}' has no NextIteration input or no Switch", g_.name_str(v.merge)));
      need(frame, v.sw, 2, 2);
      need(frame, v.next, 1, 0);
      OpId lc = producer_op(g_.input(v.sw, 1));
      if (!lc || type(lc) != v_.loop_cond) refuse(frame, fmt::format("Switch '{}' is not controlled by a LoopCond", g_.name_str(v.sw)));
      if (loop_cond && loop_cond != lc) refuse(frame, "two LoopConds");
      loop_cond = lc;
      need(frame, lc, 1, 0);
      for (PortId c : g_.consumers(data_outputs(v.sw)[0])) {
        OpId x = g_.port_op(c);
        if (type(x) != v_.exit) refuse(frame, fmt::format("Switch '{}''s false output feeds {} '{}', not an Exit", g_.name_str(v.sw), type(x), g_.name_str(x)));
        need(frame, x, 1, 1);
        v.exit = x;
      }
      vars.push_back(v);
    }
    if (!loop_cond) refuse(frame, "no LoopCond");
    lists(frame, vars);
    for (LoopVar& v : vars)
      v.invariant = !v.item && through_identity(g_.producer(g_.input(v.next, 0))) == data_outputs(v.sw)[1];
    extract(frame, vars, const_enters, loop_cond);
  }

  // ---- TensorLists (before the frame moves: they are ops of the root yet)
  void lists(const std::string& frame, std::vector<LoopVar>& vars) {
    for (LoopVar& v : vars) {
      if (v.dtype != "variant") continue;
      OpId src = v.init ? g_.port_op(v.init) : OpId();
      std::string_view st = src ? type(src) : "";
      PortId body_in = data_outputs(v.sw)[1];
      if (st == "TensorListFromTensor") {
        // Read only: every use in the body is GetItem (or the pass-through to NextIteration).
        std::vector<OpId> gets;
        for (PortId c : uses(body_in)) {
          OpId x = g_.port_op(c);
          if (type(x) == "TensorListGetItem" && g_.port_index(c) == 0) gets.push_back(x);
          else if (x != v.next) refuse(frame, fmt::format("the TensorList '{}' is used by {} '{}' in the loop", g_.name_str(src), type(x), g_.name_str(x)));
        }
        if (through_identity(g_.producer(g_.input(v.next, 0))) != body_in)
          refuse(frame, fmt::format("the TensorList '{}' is changed in the loop", g_.name_str(src)));
        if (v.exit && !g_.consumers(g_.output(v.exit, 0)).empty()) refuse(frame, fmt::format("the TensorList '{}' is read after the loop", g_.name_str(src)));
        std::string et = str_attr(src, "element_dtype");
        for (OpId x : gets) {
          // GatherV2(list, index, 0): the list is its tensor.
          std::string name(g_.name_str(x));
          PortId list = g_.producer(g_.input(x, 0)), idx = g_.producer(g_.input(x, 1));
          OpId axis = make_const(root_, name + "/axis", ir::DType::Int32, "int32", le32(0));
          OpId gat = g_.create_op(root_, g_.sym("GatherV2"), g_.sym(unique_name(root_, name + "/gather")));
          PortId pi = g_.add_input(gat, g_.sym("params")), ii = g_.add_input(gat, g_.sym("indices")), ai = g_.add_input(gat, g_.sym("axis"));
          PortId out = g_.add_output(gat, g_.sym("output"));
          g_.set_attr(gat, g_.sym("Tparams"), Value(et));
          g_.set_attr(gat, g_.sym("Tindices"), Value(std::string("int32")));
          g_.set_attr(gat, g_.sym("Taxis"), Value(std::string("int32")));
          g_.set_attr(gat, g_.sym("batch_dims"), Value(int64_t(0)));
          g_.connect(list, pi);
          g_.connect(idx, ii);
          g_.connect(g_.output(axis, 0), ai);
          g_.replace_all_uses(data_outputs(x)[0], out);
          g_.erase_op(x);
        }
        // The Enter now takes the tensor.
        PortId tensor = g_.producer(g_.input(src, 0));
        for (ir::EdgeId e : g_.in_edges(g_.input(v.enter, 0))) g_.disconnect(e);
        g_.connect(tensor, g_.input(v.enter, 0));
        v.init = tensor;
        v.dtype = et;
        if (g_.consumers(g_.output(src, 0)).empty()) g_.erase_op(src);
      } else if (st == "TensorListReserve") {
        // Written once per iteration at the iteration's index, stacked after the loop: a scan output.
        OpId set = producer_op(g_.input(v.next, 0));
        if (!set || type(set) != "TensorListSetItem" || through_identity(g_.producer(g_.input(set, 0))) != body_in)
          refuse(frame, fmt::format("the TensorList '{}' is not written by one TensorListSetItem per iteration", g_.name_str(src)));
        for (PortId c : uses(body_in))
          if (g_.port_op(c) != set) refuse(frame, fmt::format("the TensorList '{}' is used by {} '{}' in the loop", g_.name_str(src), type(g_.port_op(c)), g_.name_str(g_.port_op(c))));
        if (g_.consumers(data_outputs(set)[0]).size() != 1) refuse(frame, fmt::format("TensorListSetItem '{}' is read in the loop", g_.name_str(set)));
        if (!is_iteration_index(through_identity(g_.producer(g_.input(set, 1))), vars))
          refuse(frame, fmt::format("TensorListSetItem '{}' writes at an index that is not the iteration's number", g_.name_str(set)));
        if (!v.exit) refuse(frame, fmt::format("the TensorList '{}' is not read after the loop", g_.name_str(src)));
        for (PortId c : g_.consumers(g_.output(v.exit, 0))) {
          OpId x = g_.port_op(c);
          if (type(x) != "TensorListStack" || v.stack) refuse(frame, fmt::format("the TensorList '{}' is read by {} '{}' after the loop (only one TensorListStack is converted)", g_.name_str(src), type(x), g_.name_str(x)));
          v.stack = x;
        }
        v.item = g_.producer(g_.input(set, 2));
        v.item_dtype = str_attr(src, "element_dtype");
        // The list itself is gone from the body: the write, and the Identities that passed it on.
        PortId list = g_.producer(g_.input(set, 0));
        g_.erase_op(set);
        while (list != body_in && g_.consumers(list).empty()) {
          OpId id = g_.port_op(list);
          list = g_.producer(g_.input(id, 0));
          g_.erase_op(id);
        }
      } else {
        refuse(frame, fmt::format("a loop variable of type variant comes from {} '{}' (only TensorListFromTensor and TensorListReserve lists are converted)",
                                  src ? st : "nothing", src ? g_.name_str(src) : ""));
      }
    }
  }

  // v: a loop variable that starts at 0 and grows by 1 each iteration (read in the body).
  bool is_iteration_index(PortId p, const std::vector<LoopVar>& vars) const {
    for (const LoopVar& v : vars) {
      if (p != data_outputs(v.sw)[1]) continue;
      if (const_scalar(v.init) != 0) return false;
      PortId nx = through_identity(g_.producer(g_.input(v.next, 0)));
      if (!nx) return false;
      OpId add = g_.port_op(nx);
      if (type(add) != "AddV2" && type(add) != "Add") return false;
      PortId a = through_identity(g_.producer(g_.input(add, 0))), b = through_identity(g_.producer(g_.input(add, 1)));
      // (the 1 may come in through a constant Enter of a Const outside the frame)
      auto one = [&](PortId x) {
        if (x && type(g_.port_op(x)) == v_.enter && v_.is_constant(g_, g_.port_op(x))) x = g_.producer(g_.input(g_.port_op(x), 0));
        return const_scalar(x) == 1;
      };
      return (a == p && one(b)) || (b == p && one(a));
    }
    return false;
  }

  // The ops of a set, in an order where producers come first (the root's order is one).
  std::vector<OpId> ordered(const std::set<uint32_t>& s) const {
    std::vector<OpId> r;
    for (OpId op = g_.first_child(root_); op; op = g_.next_sibling(op))
      if (s.contains(op.value)) r.push_back(op);
    return r;
  }

  void extract(const std::string& frame, std::vector<LoopVar>& vars, const std::vector<OpId>& const_enters, OpId loop_cond) {
    // The frame's ops: forward from the Merges and the constant Enters, up to NextIteration/Exit.
    std::set<uint32_t> frame_ops, cond_ops, body_ops;
    std::set<uint32_t> machinery;  // Enter, Merge, Switch, NextIteration, Exit, LoopCond
    for (const LoopVar& v : vars)
      for (OpId o : {v.enter, v.merge, v.sw, v.next, v.exit})
        if (o) machinery.insert(o.value);
    for (OpId e : const_enters) machinery.insert(e.value);
    machinery.insert(loop_cond.value);
    {
      std::vector<OpId> work;
      for (const LoopVar& v : vars) work.push_back(v.merge);
      for (OpId e : const_enters) work.push_back(e);
      std::set<uint32_t> seen;
      while (!work.empty()) {
        OpId o = work.back();
        work.pop_back();
        if (!seen.insert(o.value).second) continue;
        if (!machinery.contains(o.value)) frame_ops.insert(o.value);
        if (type(o) == v_.exit || type(o) == v_.next_iteration) continue;
        for (PortId p : data_outputs(o))
          for (PortId c : g_.consumers(p)) {
            if (g_.is_graph(g_.port_op(c)))
              refuse(frame, fmt::format("'{}' ({}) inside the loop is a graph output (fetch the loop's results)", g_.name_str(o), type(o)));
            work.push_back(g_.port_op(c));
          }
      }
    }
    // cond: backward from LoopCond inside the frame; body: the rest.
    {
      std::vector<OpId> work{producer_op(g_.input(loop_cond, 0))};
      while (!work.empty()) {
        OpId o = work.back();
        work.pop_back();
        if (!o || !frame_ops.contains(o.value) || !cond_ops.insert(o.value).second) continue;
        for (PortId in : data_inputs(o)) work.push_back(producer_op(in));
      }
      for (uint32_t o : frame_ops)
        if (!cond_ops.contains(o)) body_ops.insert(o);
    }
    for (uint32_t o : frame_ops) {
      std::string_view t = type(OpId(o));
      if (t == v_.enter || t == v_.merge || t == v_.switch_op || t == v_.loop_cond || t == v_.exit || t == v_.next_iteration)
        refuse(frame, fmt::format("{} '{}' of another loop or cond inside it (nested control flow is not converted)", t, g_.name_str(OpId(o))));
      if (t.starts_with("TensorList")) refuse(frame, fmt::format("{} '{}' is not in a pattern that is converted", t, g_.name_str(OpId(o))));
    }
    std::string base = frame;
    std::replace(base.begin(), base.end(), ':', '_');
    // The Loop op: M (none), cond, the carried values; outputs: the carried values, then scans.
    std::vector<LoopVar*> carried, scans;
    std::vector<LoopVar*> invariants;
    for (LoopVar& v : vars) (v.item ? scans : v.invariant ? invariants : carried).push_back(&v);
    OpId loop = g_.create_op(root_, g_.sym("onnx::Loop"), g_.sym(unique_name(root_, base + "/Loop")));
    g_.add_input(loop, g_.sym("M"));
    PortId loop_cond_in = g_.add_input(loop, g_.sym("cond"));
    std::vector<PortId> loop_in, loop_out;
    for (size_t k = 0; k < carried.size(); ++k) loop_in.push_back(g_.add_input(loop, g_.sym(fmt::format("v_initial.{}", k))));
    for (size_t k = 0; k < carried.size() + scans.size(); ++k)
      loop_out.push_back(g_.add_output(loop, g_.sym(fmt::format("v_final_and_scan_outputs.{}", k))));
    OpId body = g_.create_attr_graph(loop, g_.sym(base + "/body"));
    g_.set_graph_namespace(body, g_.graph_namespace(root_));
    g_.mark_has_body(body);
    g_.set_attr(loop, g_.sym("body"), Value::graph(body));
    g_.set_attr(loop, g_.sym("@tf1_frame"), Value(frame));
    auto typed = [&](PortId p, const std::string& tf_dtype, std::vector<Value> shape, bool with_shape) {
      std::string t = onnx_type(tf_dtype);
      if (t.empty()) refuse(frame, fmt::format("a loop value of type {} has no ONNX type", tf_dtype));
      g_.set_attr(p, g_.sym("type"), Value(t));
      if (with_shape) g_.set_attr(p, g_.sym("shape"), Value(Value::List(std::move(shape))));
    };
    PortId b_iter = g_.add_port(body, ir::PortDir::In, g_.sym(base + "/iteration"));
    typed(b_iter, "int64", {}, true);
    g_.set_port_type(b_iter, g_.types().tensor(ir::DType::Int64, std::span<const ir::Dim>()));
    PortId b_cond = g_.add_port(body, ir::PortDir::In, g_.sym(base + "/cond_in"));
    typed(b_cond, "bool", {}, true);
    g_.set_port_type(b_cond, g_.types().tensor(ir::DType::Bool, std::span<const ir::Dim>()));
    std::vector<PortId> b_in;
    for (size_t k = 0; k < carried.size(); ++k) {
      // (untyped: ONNX's Loop inference gives the body's inputs the types of the Loop's inputs)
      b_in.push_back(g_.add_port(body, ir::PortDir::In, g_.sym(fmt::format("{}/{}", base, g_.name_str(carried[k]->merge)))));
    }
    // Values of the outside as the body sees them: Consts copied in, the rest captured.
    std::map<uint32_t, PortId> inner;  // outer port -> port in the body
    std::vector<OpId> outer_consts;  // Consts copied into the body (erased outside when nothing else reads them)
    std::function<PortId(PortId)> outer_value;  // a value for an op of the body, given its producer outside the frame
    outer_value = [&](PortId src) -> PortId {
      OpId op = g_.port_op(src);
      if (std::find(const_enters.begin(), const_enters.end(), op) != const_enters.end()) return outer_value(g_.producer(g_.input(op, 0)));
      if (auto it = inner.find(src.value); it != inner.end()) return it->second;
      if (frame_ops.contains(op.value) || machinery.contains(op.value))
        refuse(frame, fmt::format("'{}' ({}) is read where the loop's body cannot see it", g_.name_str(op), type(op)));
      PortId r;
      if (!v_.constant.empty() && type(op) == v_.constant) {
        OpId c = g_.clone_subgraph(std::span<const OpId>(&op, 1), body)[0];
        for (PortId cp : g_.inputs(c))
          for (ir::EdgeId e : g_.in_edges(cp)) g_.disconnect(e);
        // ONNX's value names are one namespace across a graph and its bodies: the copy needs its own.
        g_.set_name(c, g_.sym(unique_name(body, std::string(g_.name_str(op)) + "/in_loop")));
        outer_consts.push_back(op);
        r = g_.output(c, g_.port_index(src));
      } else {
        std::string pname = "@capture." + (g_.is_graph(op) ? std::string(g_.port_name_str(src))
                                                             : std::string(g_.name_str(op)) + ":" + std::to_string(g_.port_index(src)));
        r = g_.add_input(loop, g_.sym(pname));
        g_.set_port_role(r, ir::PortRole::Capture);
        g_.connect(src, r);
      }
      inner[src.value] = r;
      return r;
    };
    // Copies `ops` into `scope`; `value(p)` gives, for a producer p outside `ops`, the port to read.
    auto copy = [&](const std::vector<OpId>& ops, OpId scope, const std::function<PortId(PortId)>& value,
                    const std::string& suffix) {
      std::vector<OpId> made = g_.clone_subgraph(ops, scope);
      if (!suffix.empty())
        for (size_t i = 0; i < ops.size(); ++i) g_.set_name(made[i], g_.sym(unique_name(scope, std::string(g_.name_str(ops[i])) + suffix)));
      std::map<uint32_t, OpId> by_old;
      for (size_t i = 0; i < ops.size(); ++i) by_old[ops[i].value] = made[i];
      for (size_t i = 0; i < ops.size(); ++i) {
        auto oi = g_.inputs(ops[i]);
        auto ni = g_.inputs(made[i]);
        for (size_t j = 0; j < oi.size() && j < ni.size(); ++j) {
          if (g_.is_control(ni[j])) {
            for (ir::EdgeId e : g_.in_edges(ni[j])) g_.disconnect(e);
            continue;
          }
          if (g_.producer(ni[j])) continue;  // an edge among the copies
          PortId src = g_.producer(oi[j]);
          if (!src) continue;
          g_.connect(value(src), ni[j]);
        }
      }
      return by_old;
    };
    std::vector<OpId> cond_list = ordered(cond_ops), body_list = ordered(body_ops);
    PortId pred = g_.producer(g_.input(loop_cond, 0));
    // 1. The first test, outside: the cond ops on the Enters' inputs.
    {
      auto by_old = copy(cond_list, root_, [&](PortId src) -> PortId {
        OpId op = g_.port_op(src);
        for (const LoopVar& v : vars)
          if (op == v.merge) return v.init;
        if (std::find(const_enters.begin(), const_enters.end(), op) != const_enters.end()) return g_.producer(g_.input(op, 0));
        return src;
      }, "/first_test");
      PortId first = by_old.contains(g_.port_op(pred).value) ? g_.output(by_old[g_.port_op(pred).value], g_.port_index(pred))
                                                              : pred;
      g_.connect(first, loop_cond_in);
    }
    for (size_t k = 0; k < carried.size(); ++k) g_.connect(carried[k]->init, loop_in[k]);
    // 2. The body ops, reading the body's inputs for the Switches' true outputs.
    std::map<uint32_t, OpId> body_map = copy(body_list, body, [&](PortId src) -> PortId {
      OpId op = g_.port_op(src);
      for (size_t k = 0; k < carried.size(); ++k)
        if (op == carried[k]->sw) return b_in[k];
      for (LoopVar* s : scans)
        if (op == s->sw) refuse(frame, "a TensorList written in the loop is read there");
      for (LoopVar* v : invariants)
        if (op == v->sw) return outer_value(v->init);
      return outer_value(src);
    }, "");
    auto in_body = [&](PortId src) -> PortId {
      // A value computed by the body (or passed through), as the body graph sees it.
      OpId op = g_.port_op(src);
      if (auto it = body_map.find(op.value); it != body_map.end()) return g_.output(it->second, g_.port_index(src));
      for (size_t k = 0; k < carried.size(); ++k)
        if (op == carried[k]->sw) return b_in[k];
      for (LoopVar* v : invariants)
        if (op == v->sw) return outer_value(v->init);
      return outer_value(src);
    };
    std::vector<PortId> next_val;
    for (LoopVar* v : carried) next_val.push_back(in_body(g_.producer(g_.input(v->next, 0))));
    // 3. The next test, in the body: the cond ops on the values handed to NextIteration.
    auto cond_map = copy(cond_list, body, [&](PortId src) -> PortId {
      OpId op = g_.port_op(src);
      for (size_t k = 0; k < carried.size(); ++k)
        if (op == carried[k]->merge) return next_val[k];
      for (LoopVar* v : invariants)
        if (op == v->merge) return outer_value(v->init);
      return outer_value(src);
    }, "/next_test");
    PortId next_pred = cond_map.contains(g_.port_op(pred).value)
                           ? g_.output(cond_map[g_.port_op(pred).value], g_.port_index(pred))
                           : outer_value(pred);
    // Body outputs, each through an Identity of its own (a graph output is one value name).
    auto body_output = [&](PortId value, const std::string& name, const std::string& tf_dtype) {
      OpId id = g_.create_op(body, g_.sym(v_.identity), g_.sym(unique_name(body, name)));
      PortId in = g_.add_input(id, g_.sym(v_.identity_in)), out = g_.add_output(id, g_.sym(v_.identity_out));
      if (!v_.type_attr.empty() && !tf_dtype.empty()) g_.set_attr(id, g_.sym(v_.type_attr), Value(tf_dtype));
      g_.connect(value, in);
      PortId gp = g_.add_port(body, ir::PortDir::Out, g_.sym(name));
      g_.connect(out, gp);
    };
    body_output(next_pred, base + "/cond_out", "bool");
    for (size_t k = 0; k < carried.size(); ++k)
      body_output(next_val[k], fmt::format("{}/{}_out", base, g_.name_str(carried[k]->merge)), carried[k]->dtype);
    for (LoopVar* s : scans) body_output(in_body(s->item), fmt::format("{}/{}_scan", base, g_.name_str(s->merge)), s->item_dtype);
    // The Loop's outputs replace the Exits (and the TensorListStacks of the scans).
    for (size_t k = 0; k < carried.size(); ++k)
      if (carried[k]->exit) g_.replace_all_uses(g_.output(carried[k]->exit, 0), loop_out[k]);
    for (LoopVar* v : invariants)
      if (v->exit) g_.replace_all_uses(g_.output(v->exit, 0), v->init);
    for (size_t k = 0; k < scans.size(); ++k) {
      g_.replace_all_uses(data_outputs(scans[k]->stack)[0], loop_out[carried.size() + k]);
      g_.erase_op(scans[k]->stack);
    }
    // The frame goes.
    std::vector<OpId> gone;
    for (uint32_t o : frame_ops) gone.push_back(OpId(o));
    for (uint32_t o : machinery) gone.push_back(OpId(o));
    for (const LoopVar& v : vars)
      if (v.item) {
        OpId src = g_.port_op(v.init);
        if (type(src) == "TensorListReserve") gone.push_back(src);
      }
    for (OpId o : gone)
      if (g_.valid(o))
        for (PortId in : data_inputs(o))
          if (OpId p = producer_op(in); p && !v_.constant.empty() && type(p) == v_.constant && g_.parent(p) == root_) outer_consts.push_back(p);
    for (OpId o : gone)
      if (g_.valid(o)) g_.erase_op(o);
    for (OpId c : outer_consts)
      if (g_.valid(c) && g_.consumers(g_.output(c, 0)).empty()) g_.erase_op(c);
    // The Loop goes where its first consumer can read it: the root's order must stay topological.
    g_.move_before(loop, OpId());
    fix_order();
  }

  // Puts the root's ops in a topological order (the copies of the cond and the Loop were added at the end).
  // (Frames still to lower keep their back edges NextIteration -> Merge: those edges are left
  // out of the order; any other cycle is an error.)
  void fix_order() {
    std::vector<OpId> ops;
    for (OpId op = g_.first_child(root_); op; op = g_.next_sibling(op)) ops.push_back(op);
    absl::flat_hash_map<uint32_t, size_t> pending;
    absl::flat_hash_map<uint32_t, std::vector<OpId>> users;
    for (OpId op : ops) {
      size_t n = 0;
      for (PortId in : g_.inputs(op))
        for (ir::EdgeId e : g_.in_edges(in)) {
          OpId src = g_.port_op(g_.edge_src(e));
          if (g_.is_graph(src) || g_.parent(src) != root_ || type(src) == v_.next_iteration) continue;
          users[src.value].push_back(op);
          ++n;
        }
      pending[op.value] = n;
    }
    std::vector<OpId> ready, order;
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)
      if (pending[it->value] == 0) ready.push_back(*it);
    while (!ready.empty()) {
      OpId op = ready.back();
      ready.pop_back();
      order.push_back(op);
      auto& us = users[op.value];
      for (auto it = us.rbegin(); it != us.rend(); ++it)
        if (--pending[it->value] == 0) ready.push_back(*it);
    }
    if (order.size() != ops.size())
      throw Error("lowering a TF1 while loop left a cycle in the graph (a loop this pass does not understand)");
    for (OpId op : order) g_.move_before(op, OpId());
  }
};

}  // namespace

bool lower_tf1_loops(ir::Graph& g, const Tf1Vocabulary& v) { return Lowering(g, v).run(); }

}  // namespace amanda::tf_frontend
