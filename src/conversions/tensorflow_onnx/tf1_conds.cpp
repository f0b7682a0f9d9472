// TF1 conds (Switch/Merge outside any while loop's frame) as ONNX Ifs, before the TF -> ONNX
// tables run (see onnx_boundary.h, lower_tf1_conds; docs/tensorflow.md, "TF1 conds").
//
// TensorFlow's control_flow_ops.cond writes, for a predicate p: Switch(x, p) for each value the
// branches read (output 0 feeds the false branch, output 1 the true branch), the branches' ops,
// and Merge(false result, true result) for each result. Each Merge becomes an op `onnx::If` on p
// whose then/else graphs hold copies of the branch ops that its two inputs depend on: a Switch's
// output becomes the value the Switch passes (read from outside, as ONNX branches capture outer
// values), Consts are copied in. The branch ops are erased once no Merge needs them. Nested conds
// are lowered innermost first: the inner If is then an op of the outer branch. A Merge whose
// inputs are not the two sides of one predicate, or whose value_index output is in use, is left to
// the table, which refuses it by name.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "onnx_boundary.h"
#include "amanda/support/diagnostics.h"

namespace amanda::tf_frontend {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

class Conds {
 public:
  explicit Conds(ir::Graph& g) : g_(g), root_(g.root()) {}

  size_t run() {
    size_t n = 0;
    // Innermost first: a nested cond's Merge comes before its outer cond's in a topological order,
    // and becomes an If that the outer cond's branch then holds like any other op.
    std::vector<OpId> merges;
    ir::TopoResult topo = g_.topo_order(root_);
    std::vector<OpId> all = topo.ok() ? topo.order : g_.children(root_);
    for (OpId op : all)
      if (g_.type_str(op) == "Merge") merges.push_back(op);
    std::set<uint32_t> used;  // branch ops and Switches of converted Merges
    for (OpId m : merges)
      if (lower(m, used)) ++n;
    // Erase what the converted Merges needed and nothing reads any more (latest first), with the
    // ops that only hung on their Switches (a pivot Identity that fed control edges).
    {
      std::vector<OpId> work;
      for (uint32_t o : used)
        if (g_.type_str(OpId(o)) == "Switch") work.push_back(OpId(o));
      std::set<uint32_t> seen;
      while (!work.empty()) {
        OpId o = work.back();
        work.pop_back();
        if (!seen.insert(o.value).second) continue;
        used.insert(o.value);
        for (PortId p : data_outputs(o))
          for (PortId c : g_.consumers(p))
            if (!g_.is_graph(g_.port_op(c)) && g_.parent(g_.port_op(c)) == root_) work.push_back(g_.port_op(c));
      }
    }
    // (until nothing more goes: an inner cond's If, made after the ops that read it, comes late in
    // the root's order, so one pass from the end would meet it while its readers still stand)
    for (bool erased = true; erased;) {
      erased = false;
      std::vector<OpId> order;
      for (OpId op = g_.first_child(root_); op; op = g_.next_sibling(op))
        if (used.contains(op.value)) order.push_back(op);
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        bool read = false;
        for (PortId p : g_.outputs(*it))
          if (!g_.is_control(p) && g_.first_out_edge(p)) read = true;
        if (!read) {
          used.erase(it->value);
          g_.erase_op(*it);
          erased = true;
        }
      }
    }
    if (n) {
      ir::TopoResult t = g_.topo_order(root_);
      if (!t.ok()) throw Error("lowering a TF1 cond left a cycle in the graph");
      for (OpId op : t.order) g_.move_before(op, OpId());
    }
    return n;
  }

 private:
  ir::Graph& g_;
  OpId root_;

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
  std::string unique_name(OpId scope, const std::string& base) {
    std::string n = base;
    for (int k = 1; g_.find_op(scope, n); ++k) n = fmt::format("{}_{}", base, k);
    return n;
  }

  struct Side {
    std::set<uint32_t> ops;  // branch ops this input depends on
    int index = -1;          // the Switch output (0 false, 1 true) they read; -1: none
    PortId pred;
    bool bad = false;
  };

  // The branch ops behind `src` (a Merge input's producer): ops that depend on a Switch output.
  Side side(PortId src) {
    Side s;
    std::map<uint32_t, bool> memo;
    std::function<bool(PortId)> visit = [&](PortId p) -> bool {
      if (!p) return false;
      OpId op = g_.port_op(p);
      if (g_.is_graph(op)) return false;
      std::string_view t = g_.type_str(op);
      if (t == "Switch") {
        PortId pred = g_.producer(data_inputs(op)[1]);
        int idx = static_cast<int>(g_.port_index(p));
        if ((s.pred && s.pred != pred) || (s.index >= 0 && s.index != idx)) s.bad = true;
        s.pred = pred;
        s.index = idx;
        return true;
      }
      if (t == "Merge" || t == "Enter" || t == "Exit" || t == "NextIteration" || t == "LoopCond") {
        // a nested cond or a loop inside the branch: only a problem when the branch reads it
        bool dep = false;
        for (PortId in : data_inputs(op)) dep |= visit(g_.producer(in));
        if (dep) s.bad = true;
        return dep;
      }
      if (auto it = memo.find(op.value); it != memo.end()) return it->second;
      memo[op.value] = false;
      bool dep = false;
      for (PortId in : data_inputs(op)) dep |= visit(g_.producer(in));
      memo[op.value] = dep;
      if (dep) s.ops.insert(op.value);
      return dep;
    };
    visit(src);
    return s;
  }

  bool lower(OpId merge, std::set<uint32_t>& used) {
    auto ins = data_inputs(merge);
    auto outs = data_outputs(merge);
    if (ins.size() != 2 || outs.size() < 1) return false;
    if (outs.size() > 1 && g_.first_out_edge(outs[1])) return false;  // value_index in use
    PortId src[2] = {g_.producer(ins[0]), g_.producer(ins[1])};
    Side s[2] = {side(src[0]), side(src[1])};
    if (s[0].bad || s[1].bad) return false;
    if (s[0].index < 0 && s[1].index < 0) return false;
    if (s[0].index >= 0 && s[1].index >= 0 && (s[0].index == s[1].index || s[0].pred != s[1].pred)) return false;
    PortId pred = s[0].index >= 0 ? s[0].pred : s[1].pred;
    // which input is the true branch
    int true_in = s[0].index == 1 || (s[0].index < 0 && s[1].index == 0) ? 0 : 1;
    std::string base(g_.name_str(merge));
    OpId iff = g_.create_op(root_, g_.sym("onnx::If"), g_.sym(unique_name(root_, base + "/If")));
    PortId cond = g_.add_input(iff, g_.sym("cond"));
    g_.connect(pred, cond);
    PortId out = g_.add_output(iff, g_.sym("outputs.0"));
    g_.set_attr(iff, g_.sym("@tf1_cond"), Value(base));
    for (int branch = 1; branch >= 0; --branch) {
      int k = branch == 1 ? true_in : 1 - true_in;
      const char* attr = branch == 1 ? "then_branch" : "else_branch";
      OpId gr = g_.create_attr_graph(iff, g_.sym(base + "/" + (branch == 1 ? "then" : "else")));
      g_.set_graph_namespace(gr, g_.graph_namespace(root_));
      g_.mark_has_body(gr);
      g_.set_attr(iff, g_.sym(attr), Value::graph(gr));
      std::vector<OpId> ops;
      for (OpId op = g_.first_child(root_); op; op = g_.next_sibling(op))
        if (s[k].ops.contains(op.value)) ops.push_back(op);
      for (OpId op : ops) used.insert(op.value);
      std::map<uint32_t, PortId> inner;
      std::map<uint32_t, OpId> made;
      std::vector<OpId> copies = ops.empty() ? std::vector<OpId>{} : g_.clone_subgraph(ops, gr);
      for (size_t i = 0; i < ops.size(); ++i) made[ops[i].value] = copies[i];
      std::string suffix = branch == 1 ? "/then" : "/else";
      for (OpId c : copies) g_.set_name(c, g_.sym(unique_name(gr, std::string(g_.name_str(c)) + suffix)));
      // An outside value as the branch reads it: Consts copied, Switch outputs the value they pass.
      std::function<PortId(PortId)> value = [&](PortId p) -> PortId {
        OpId op = g_.port_op(p);
        if (!g_.is_graph(op) && g_.type_str(op) == "Switch") {
          used.insert(op.value);
          return value(g_.producer(data_inputs(op)[0]));
        }
        if (auto it = made.find(op.value); it != made.end()) return g_.output(it->second, g_.port_index(p));
        if (auto it = inner.find(p.value); it != inner.end()) return it->second;
        PortId r = p;  // read from the outer scope (an ONNX branch sees outer values)
        if (!g_.is_graph(op) && g_.type_str(op) == "Const") {
          OpId c = g_.clone_subgraph(std::span<const OpId>(&op, 1), gr)[0];
          for (PortId cp : g_.inputs(c))
            for (ir::EdgeId e : g_.in_edges(cp)) g_.disconnect(e);
          g_.set_name(c, g_.sym(unique_name(gr, std::string(g_.name_str(op)) + suffix)));
          r = g_.output(c, 0);
        } else {
          std::string pname = "@capture." + (g_.is_graph(op) ? std::string(g_.port_name_str(p))
                                                               : std::string(g_.name_str(op)) + ":" + std::to_string(g_.port_index(p)));
          r = g_.find_input(iff, g_.sym(pname));
          if (!r) {
            r = g_.add_input(iff, g_.sym(pname));
            g_.set_port_role(r, ir::PortRole::Capture);
            g_.connect(p, r);
          }
        }
        inner[p.value] = r;
        return r;
      };
      for (size_t i = 0; i < ops.size(); ++i) {
        auto oi = g_.inputs(ops[i]);
        auto ni = g_.inputs(copies[i]);
        for (size_t j = 0; j < oi.size() && j < ni.size(); ++j) {
          if (g_.is_control(ni[j])) {
            for (ir::EdgeId e : g_.in_edges(ni[j])) g_.disconnect(e);
            continue;
          }
          if (g_.producer(ni[j])) continue;
          if (PortId p = g_.producer(oi[j])) g_.connect(value(p), ni[j]);
        }
      }
      // The branch's result through an Identity of its own (a graph output is one value name).
      OpId id = g_.create_op(gr, g_.sym("Identity"), g_.sym(unique_name(gr, base + suffix + "_out")));
      PortId idin = g_.add_input(id, g_.sym("input")), idout = g_.add_output(id, g_.sym("output"));
      if (const Value* t = g_.attr(merge, g_.sym("T"))) g_.set_attr(id, g_.sym("T"), *t);
      g_.connect(value(src[k]), idin);
      PortId gp = g_.add_port(gr, ir::PortDir::Out, g_.sym(base + suffix + "_out"));
      g_.connect(idout, gp);
    }
    g_.replace_all_uses(outs[0], out);
    g_.erase_op(merge);
    return true;
  }
};

}  // namespace

size_t lower_tf1_conds(ir::Graph& g) { return Conds(g).run(); }

}  // namespace amanda::tf_frontend
