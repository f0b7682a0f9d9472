// nd4j -> ONNX beyond the tables (docs/nd4j.md, "TF1 control flow and tensor arrays"). SameDiff
// graphs imported from TensorFlow 1 keep TF1's control flow as nd4j ops (`enter`, `merge`, `switch`,
// `loop_cond`, `next_iteration`, `exit`: frames, not ops with bodies) and TF1's TensorArrays
// (`tensorarrayv3` and its read/write/split/scatter ops). Before the tables run:
//
// - the loops and conds become ONNX Loop / If through the TensorFlow -> ONNX lowering itself
//   (src/conversions/tensorflow_onnx/tf1_loops.cpp, tf1_conds.cpp), given nd4j's spellings
//   (tf1_vocabulary.h): the frame name and isConstant of an `enter` are in its node's properties;
// - a TensorArray whose size, indices and lengths are constants and that no loop touches becomes the
//   tensors it holds (tensor_arrays.cpp);
// - the graph outputs a .fb file does not list but that the reader derived (every op output
//   nothing reads) lose those that are a `switch`'s untaken side: a switch's output is not a
//   result, and a lowered cond no longer has it.
//
// After the tables: the Loops' and Ifs' ONNX type and body output names, the loop bodies' ranks
// between rounds of ONNX's inference (tensorflow_onnx's name_onnx_outputs and type_loop_bodies),
// then every value's type (nd4j::finish_onnx).
#include <set>

#include "amanda/frameworks/onnx/infer.h"
#include "amanda/ir/conventions.h"
#include "amanda/pipeline/pipeline.h"
#include "conversions/nd4j_onnx/tensor_arrays.h"
#include "conversions/tensorflow_onnx/onnx_boundary.h"
#include "frameworks/nd4j/nd4j.h"
#include "frameworks/nd4j/records.h"

namespace amanda::conversions {

namespace {

using ir::OpId;
using ir::PortId;
using ir::Value;

// A property of a SameDiff node (FlatNode.properties, kept in the @nd4j.node record), or the
// argument of the same name when a conversion made the op.
const Value* nd4j_property(const ir::Graph& g, OpId op, std::string_view name, std::string_view list) {
  if (Symbol s = g.symbols().find(name); s != SymbolTable::kNone)
    if (const Value* v = g.attr(op, s)) return v;
  Symbol rec = g.symbols().find(nd4j::kNodeRecord);
  const Value* r = rec == SymbolTable::kNone ? nullptr : g.attr(op, rec);
  const Value* props = r && r->is_map() ? r->find("properties") : nullptr;
  if (!props || !props->is_list()) return nullptr;
  for (const Value& p : props->as_list()) {
    if (!p.is_map()) continue;
    const Value* n = p.find("name");
    if (!n || !n->is_string() || n->as_string() != name) continue;
    const Value* l = p.find(list);
    if (l && l->is_list() && !l->as_list().empty()) return &l->as_list()[0];
  }
  return nullptr;
}

const tf_frontend::Tf1Vocabulary& nd4j_vocabulary() {
  static const tf_frontend::Tf1Vocabulary v = [] {
    tf_frontend::Tf1Vocabulary t;
    t.enter = "enter";
    t.exit = "exit";
    t.merge = "merge";
    t.switch_op = "switch";
    t.loop_cond = "loop_cond";
    t.next_iteration = "next_iteration";
    t.identity = "identity";
    t.identity_in = "input";
    t.identity_out = "outputs";
    t.type_attr = "";  // nd4j's identity takes its type from its input
    t.constant = std::string(nd4j::kConstantOp);
    t.tensor_lists = false;
    t.frame_name = [](const ir::Graph& g, OpId op) {
      const Value* x = nd4j_property(g, op, "frameName", "s");
      return x && x->is_string() ? x->as_string() : std::string();
    };
    t.is_constant = [](const ir::Graph& g, OpId op) {
      const Value* x = nd4j_property(g, op, "isConstant", "b");
      return x && x->is_bool() && x->as_bool();
    };
    return t;
  }();
  return v;
}

// Derived graph outputs (not in the file's FlatGraph.outputs) that are a switch's output.
size_t drop_switch_outputs(ir::Graph& g) {
  Symbol derived = g.symbols().find("@nd4j.derived");
  if (derived == SymbolTable::kNone) return 0;
  std::vector<PortId> gone;
  for (PortId p : g.outputs(g.root())) {
    const Value* d = g.attr(p, derived);
    PortId src = g.producer(p);
    if (d && d->is_bool() && d->as_bool() && src && !g.is_graph(g.port_op(src)) && g.type_str(g.port_op(src)) == "switch")
      gone.push_back(p);
  }
  for (auto it = gone.rbegin(); it != gone.rend(); ++it) g.erase_port(*it);
  return gone.size();
}

// The lowerings copy ops (a loop's condition outside and in the body, a cond's branch ops), and
// each copy keeps its output's SameDiff variable name (`@value`): ONNX's value names are one
// namespace across a graph and its bodies, so every copy after the first is named by its op.
void unique_value_names(ir::Graph& g) {
  Symbol key = g.symbols().find("@value");
  if (key == SymbolTable::kNone) return;
  std::set<std::string> seen;
  for (PortId p : g.inputs(g.root())) {
    const Value* v = g.attr(p, key);
    seen.insert(v && v->is_string() ? v->as_string() : std::string(g.port_name_str(p)));
  }
  std::vector<std::pair<PortId, std::string>> renames;
  g.for_each_op([&](OpId op) {
    for (PortId p : g.outputs(op)) {
      const Value* v = g.attr(p, key);
      if (!v || !v->is_string()) continue;
      if (seen.insert(v->as_string()).second) continue;
      std::string base = std::string(g.name_str(op)) + (p == g.outputs(op)[0] ? "" : ":" + std::to_string(g.port_index(p)));
      std::string n = base;
      for (int k = 1; seen.contains(n); ++k) n = base + "_" + std::to_string(k);
      seen.insert(n);
      renames.push_back({p, n});
    }
  });
  for (auto& [p, n] : renames) g.set_attr(p, g.sym("@value"), Value(n));
}

void boundary(ir::Graph& g) {
  drop_switch_outputs(g);
  size_t arrays = rewrite_static_tensor_arrays(g);
  const auto& v = nd4j_vocabulary();
  bool loops = tf_frontend::lower_tf1_loops(g, v);
  if (tf_frontend::lower_tf1_conds(g, v) || loops || arrays) {
    // onnx::Loop / onnx::If: ops of an imported namespace, which the table keeps (converting their bodies).
    Value::Map imports;
    imports.push_back({"onnx", Value(std::string("amanda/onnx/13"))});
    g.set_attr(g.root(), g.sym("imports"), Value(std::move(imports)));
    unique_value_names(g);
  }
}

void finish(ir::Graph& g) {
  // The ONNX ops the boundary made (the tensor arrays' Identity, Slice, Gather) take ONNX's spelling.
  std::vector<OpId> made;
  g.for_each_op([&](OpId op) {
    std::string_view t = g.type_str(op);
    if (t.starts_with("onnx::") && t != "onnx::Loop" && t != "onnx::If") made.push_back(op);
  });
  for (OpId op : made) {
    std::string t(g.type_str(op).substr(6));  // (a copy: interning may move the symbol table)
    g.set_type(op, g.sym(t));
  }
  if (g.ops_of_type("onnx::Loop").empty() && g.ops_of_type("onnx::If").empty()) {
    if (Symbol s = g.symbols().find("imports"); s != SymbolTable::kNone) g.erase_attr(g.root(), s);
  } else {
    tf_frontend::name_onnx_outputs(g);
    for (PortId p : g.inputs(g.root()))
      if (g.port_type(p)) ir::write_type_attrs(g, p, g.port_type(p));
    onnx_frontend::InferOptions first;
    first.write_attrs = false;
    for (int round = 0; round < 4; ++round) {
      try {
        onnx_frontend::infer_types(g, first);
      } catch (const std::exception&) {
      }
      if (!tf_frontend::type_loop_bodies(g)) break;
    }
  }
  nd4j::finish_onnx(g);
}

class Nd4jToOnnx final : public pipeline::ConversionExtension {
 public:
  std::string_view name() const override { return "nd4j-onnx"; }
  bool applies(std::string_view from, std::string_view to) const override {
    return from.starts_with("amanda/nd4j/") && to.starts_with("amanda/onnx/");
  }
  std::string handles_before_tables(std::string_view type) const override {
    static const std::pair<std::string_view, std::string_view> kBoundary[] = {
        {"enter", "TF1 while loops become ONNX Loops (tensorflow_onnx/tf1_loops.cpp with nd4j's spellings)"},
        {"exit", "TF1 while loops become ONNX Loops"},
        {"next_iteration", "TF1 while loops become ONNX Loops"},
        {"loop_cond", "TF1 while loops become ONNX Loops"},
        {"switch", "TF1 loops and conds become ONNX Loop / If (tensorflow_onnx/tf1_conds.cpp)"},
        {"merge", "TF1 loops and conds become ONNX Loop / If"},
        {"tensorarrayv3", "a TensorArray of constant size, indices and lengths: the tensors it holds"},
        {"tensorarraywritev3", "at a constant index: the element read back"},
        {"tensorarrayreadv3", "at a constant index: the element written, split or scattered there"},
        {"tensorarraysplitv3", "with constant lengths: slices of the value"},
        {"tensorarrayscatterv3", "at indices 0..n-1: gathers of the value"},
    };
    for (auto [op, how] : kBoundary)
      if (op == type) return std::string(how);
    return {};
  }
  void contribute_passes(pipeline::PassList& passes, const pipeline::ConversionInfo&) const override {
    passes.add({"nd4j-onnx.control-flow", pipeline::Stage::Boundary,
                "TF1 loops and conds (enter/merge/switch/...) become Loop and If; constant TensorArrays their tensors",
                [](pipeline::PassContext& c) { boundary(c.doc.graph); }});
    passes.add({"nd4j-onnx.finish", pipeline::Stage::Finish,
                "Loop/If bodies named and typed; every value typed by ONNX's inference",
                [](pipeline::PassContext& c) { finish(c.doc.graph); }});
  }
};

}  // namespace

std::unique_ptr<pipeline::ConversionExtension> make_nd4j_to_onnx() { return std::make_unique<Nd4jToOnnx>(); }

}  // namespace amanda::conversions
