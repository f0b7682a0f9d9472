#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/conventions.h"
#include "lowering.h"

namespace amanda::onnx_frontend::lowering {

bool data_port(const ir::Graph& g, ir::PortId p) { return !g.is_control(p) && !g.port_name_str(p).starts_with("@"); }

// The input's shape, where the model's value info or the IR's inferred type gives it: the body's
// ops then get shapes from ONNX's shape inference (rules that lower them, such as GatherElements',
// need them).
void add_shape(const ir::Graph& g, ir::PortId in, onnx::TypeProto::Tensor& t) {
  ir::PortId src = g.producer(in);
  if (!src) return;
  const ir::Value* s = ir::get_attr(g, src, "@shape");
  if (!s) s = ir::get_attr(g, src, "shape");
  auto* shape = t.mutable_shape();
  if (s && s->is_list()) {
    for (const auto& d : s->as_list()) {
      auto* x = shape->add_dim();
      if (d.is_int() && d.as_int() >= 0) x->set_dim_value(d.as_int());
      else if (d.is_string()) x->set_dim_param(d.as_string());
    }
    return;
  }
  if (!g.port_type(src)) {
    t.clear_shape();
    return;
  }
  const ir::TypeData& td = g.port_type_data(src);
  if (td.kind != ir::TypeKind::Tensor || !td.ranked) {
    t.clear_shape();
    return;
  }
  for (const ir::Dim& d : td.dims) {
    auto* x = shape->add_dim();
    if (d.is_known()) x->set_dim_value(d.value());
    else if (d.is_symbol()) x->set_dim_param(std::string(g.str(d.sym())));
  }
}

// The indices of the true elements of a flat bool `mask` of `n` elements (an int64 vector grown by
// a Loop of n iterations, an If each appending its index): what NonZero gives from opset 9 on.
std::string nonzero_loop(BodyBuilder& b, const std::string& mask, const std::string& n) {
  onnx::GraphProto& body = b.g;
  std::string yes = b.constant(b.fresh("true"), onnx::TensorProto::BOOL, {}, {1});
  std::string empty = b.constant(b.fresh("empty"), onnx::TensorProto::INT64, {0}, {});
  // The loop body: (i, cond, acc) -> (cond, acc with i appended when mask[i]).
  std::string found = b.fresh("found");
  auto* loop = body.add_node();
  loop->set_op_type("Loop");
  loop->add_input(n);
  loop->add_input(yes);
  loop->add_input(empty);
  loop->add_output(found);
  auto* la = loop->add_attribute();
  la->set_name("body");
  la->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& lb = *la->mutable_g();
  lb.set_name(b.fresh("nonzero_loop"));
  std::string it = b.fresh("i"), cin = b.fresh("cond_in"), acc = b.fresh("acc"), cout = b.fresh("cond_out"), accout = b.fresh("acc_out");
  BodyBuilder::vi(lb.add_input(), it, onnx::TensorProto::INT64, 0);
  BodyBuilder::vi(lb.add_input(), cin, onnx::TensorProto::BOOL, 0);
  BodyBuilder::vi(lb.add_input(), acc, onnx::TensorProto::INT64, 1);
  BodyBuilder::vi(lb.add_output(), cout, onnx::TensorProto::BOOL, 0);
  BodyBuilder::vi(lb.add_output(), accout, onnx::TensorProto::INT64, 1);
  BodyBuilder lbb{lb, kExpansionNames, 1000};
  lbb.op("Identity", {cin}, cout);
  std::string m = lbb.gather(mask, it, 0);
  auto* iff = lb.add_node();
  iff->set_op_type("If");
  iff->add_input(m);
  iff->add_output(accout);
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* ba = iff->add_attribute();
    ba->set_name(branch);
    ba->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& bg = *ba->mutable_g();
    bg.set_name(lbb.fresh(branch));
    std::string o = lbb.fresh("o");
    BodyBuilder::vi(bg.add_output(), o, onnx::TensorProto::INT64, 1);
    BodyBuilder bb{bg, kExpansionNames, 2000 + (branch[0] == 't' ? 0 : 500)};
    if (branch[0] == 't') {
      std::string r = bb.reshape(it, {1});
      bb.op("Concat", {acc, r}, o);
      BodyBuilder::one_int(*bg.mutable_node(bg.node_size() - 1), "axis", 0);
    } else {
      bb.op("Identity", {acc}, o);
    }
  }
  return found;
}

int64_t int_attr(const ir::Graph& g, ir::OpId op, const char* name, int64_t dflt) {
  const ir::Value* v = ir::get_attr(g, op, name);
  return v && v->is_int() ? v->as_int() : dflt;
}
// The input's rank, or -1.
int known_rank(const std::vector<onnx::TypeProto>& types, size_t k) {
  if (k >= types.size() || !types[k].has_tensor_type() || !types[k].tensor_type().has_shape()) return -1;
  return types[k].tensor_type().shape().dim_size();
}
int elem_of(const std::vector<onnx::TypeProto>& types, size_t k) {
  return k < types.size() && types[k].has_tensor_type() ? types[k].tensor_type().elem_type() : 0;
}
bool present(const ir::Graph& g, const std::vector<ir::PortId>& ins, size_t k) { return k < ins.size() && g.producer(ins[k]); }

// The known lengths of an op's output (or input source) port, or nullopt when any is unknown.
std::optional<std::vector<int64_t>> known_dims(const ir::Graph& g, ir::PortId src) {
  onnx::TypeProto::Tensor t;
  // add_shape reads the producer of an input port: give it the output port through a consumer
  for (ir::EdgeId e = g.first_out_edge(src); e; e = g.next_out_edge(e)) {
    add_shape(g, g.edge_dst(e), t);
    break;
  }
  if (!t.has_shape()) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& d : t.shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    out.push_back(d.dim_value());
  }
  return out;
}

}  // namespace amanda::onnx_frontend::lowering
