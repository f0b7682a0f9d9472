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
#include "../proto_util.h"
#include "lowering.h"

namespace amanda::onnx_frontend::lowering {

// Scan-8 (a batch axis on every input and output, optional sequence_lens) below 8: a Loop over the
// batch whose body takes batch element b of every input (Gather) and runs a Loop over the sequence:
// its body reads element t of each scan input (T - 1 - t where `directions` says reverse), then
// runs the Scan's body (its nodes copied, its inputs fed by Identity), carrying the states; the
// sequence Loop's scan outputs are the Scan's, stacked in iteration order as Scan-8 stacks them; the
// batch Loop stacks the final states and scan outputs over the batch (its scan outputs).
// sequence_lens (lengths per batch element) given at run time is not lowered; a body that reads
// values of the graph around it neither (the expander refuses such bodies).
std::string lower_scan8(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                        const std::vector<onnx::TypeProto>&, onnx::GraphProto& body) {
  const ir::Value* bv = ir::get_attr(g, op, "body");
  const ir::Value* nv = ir::get_attr(g, op, "num_scan_inputs");
  if (!bv || !bv->is_graph() || !nv || !nv->is_int()) return "the body and num_scan_inputs";
  for (ir::PortId p : g.inputs(bv->as_graph()))
    if (g.port_name_str(p).starts_with("@capture.")) return "a body that reads no value around it";
  onnx::GraphProto sb;
  detail::export_graph_proto(g, bv->as_graph(), sb);
  const int M = int(nv->as_int());
  const int N = sb.input_size() - M;
  const int K = sb.output_size() - N;
  if (M < 1 || N < 0 || K < 0) return "a body whose inputs and outputs agree with num_scan_inputs";
  int off = int(ins.size()) - (N + M);
  if (off != 0 && off != 1) return "as many inputs as the body's";
  if (off == 1 && g.producer(ins[0])) return "no sequence_lens (lengths per batch element at run time are not lowered)";
  std::vector<int64_t> dirs(M, 0);
  if (const ir::Value* dv = ir::get_attr(g, op, "directions"); dv && dv->is_list()) {
    const auto& l = dv->as_list();
    for (size_t k = 0; k < l.size() && k < size_t(M); ++k)
      if (l[k].is_int()) dirs[k] = l[k].as_int();
  }
  auto in_name = [&](int k) { return kIn + std::to_string(k + off); };
  auto scalar_vi = [](onnx::ValueInfoProto* vi, const std::string& name, int type) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    tt->mutable_shape();
  };
  auto elem_vi = [](onnx::ValueInfoProto* vi, const std::string& name, const onnx::ValueInfoProto& like) {
    vi->set_name(name);
    if (like.type().has_tensor_type()) vi->mutable_type()->mutable_tensor_type()->set_elem_type(like.type().tensor_type().elem_type());
  };
  BodyBuilder b{body, kExpansionNames};
  auto last = [](onnx::GraphProto& gp) -> onnx::NodeProto& { return *gp.mutable_node(gp.node_size() - 1); };
  auto bool_true = [](onnx::GraphProto& gp, const std::string& name) { return BodyBuilder::constant_in(gp, name, onnx::TensorProto::BOOL, {}, {1}); };
  // The batch size: axis 0 of the first scan input.
  std::string shape0 = b.op("Shape", {in_name(N)});
  std::string batch = b.op("Gather", {shape0, b.constant_i64({0}, false)});
  BodyBuilder::one_int(last(body), "axis", 0);
  std::string yes = bool_true(body, b.fresh("true"));
  auto* outer = body.add_node();
  outer->set_op_type("Loop");
  outer->add_input(batch);
  outer->add_input(yes);
  outer->add_input(batch);  // a carried value nobody reads (Loop-1 carries at least one)
  outer->add_output(b.fresh("unused"));
  for (int k = 0; k < N + K; ++k) outer->add_output(kOut + std::to_string(k));
  auto* oa = outer->add_attribute();
  oa->set_name("body");
  oa->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& ob = *oa->mutable_g();
  ob.set_name(b.fresh("scan_batch"));
  BodyBuilder obb{ob, kExpansionNames, 3000};
  std::string bi = obb.fresh("b"), bc = obb.fresh("cond");
  scalar_vi(ob.add_input(), bi, onnx::TensorProto::INT64);
  scalar_vi(ob.add_input(), bc, onnx::TensorProto::BOOL);
  std::string bdummy = obb.fresh("dummy");
  scalar_vi(ob.add_input(), bdummy, onnx::TensorProto::INT64);
  std::string bco = obb.op("Identity", {bc});
  scalar_vi(ob.add_output(), bco, onnx::TensorProto::BOOL);
  std::string bdo = obb.op("Identity", {bdummy});
  scalar_vi(ob.add_output(), bdo, onnx::TensorProto::INT64);
  std::vector<std::string> per;  // batch element b of every input
  for (int k = 0; k < N + M; ++k) {
    per.push_back(obb.op("Gather", {in_name(k), bi}));
    BodyBuilder::one_int(last(ob), "axis", 0);
  }
  std::string xs = obb.op("Shape", {per[N]});
  std::string steps = obb.op("Gather", {xs, obb.constant_i64({0}, false)});
  BodyBuilder::one_int(last(ob), "axis", 0);
  std::string last_step = obb.op("Sub", {steps, obb.constant_i64({1}, false)});
  std::string yes2 = bool_true(ob, obb.fresh("true"));
  auto* inner = ob.add_node();
  inner->set_op_type("Loop");
  inner->add_input(steps);
  inner->add_input(yes2);
  inner->add_input(steps);  // a carried value nobody reads (Loop-1 carries at least one)
  for (int k = 0; k < N; ++k) inner->add_input(per[k]);
  inner->add_output(obb.fresh("unused"));
  std::vector<std::string> results;
  for (int k = 0; k < N + K; ++k) {
    results.push_back(obb.fresh("r"));
    inner->add_output(results.back());
    elem_vi(ob.add_output(), results.back(), sb.output(k));
  }
  auto* ia = inner->add_attribute();
  ia->set_name("body");
  ia->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& ib = *ia->mutable_g();
  ib.set_name(b.fresh("scan_steps"));
  BodyBuilder ibb{ib, kExpansionNames, 4000};
  std::string ti = ibb.fresh("t"), tc = ibb.fresh("cond");
  scalar_vi(ib.add_input(), ti, onnx::TensorProto::INT64);
  scalar_vi(ib.add_input(), tc, onnx::TensorProto::BOOL);
  std::string tdummy = ibb.fresh("dummy");
  scalar_vi(ib.add_input(), tdummy, onnx::TensorProto::INT64);
  std::vector<std::string> states;
  for (int k = 0; k < N; ++k) {
    states.push_back(ibb.fresh("s"));
    auto* vi = ib.add_input();
    *vi = sb.input(k);
    vi->set_name(states.back());
  }
  std::string ico = ibb.op("Identity", {tc});
  scalar_vi(ib.add_output(), ico, onnx::TensorProto::BOOL);
  std::string tdo = ibb.op("Identity", {tdummy});
  scalar_vi(ib.add_output(), tdo, onnx::TensorProto::INT64);
  std::string rev;
  for (int k = 0; k < N + M; ++k) {
    std::string src = k < N ? states[k] : "";
    if (k >= N) {
      std::string idx = ti;
      if (dirs[k - N] != 0) {
        if (rev.empty()) rev = ibb.op("Sub", {last_step, ti});
        idx = rev;
      }
      src = ibb.op("Gather", {per[k], idx});
      BodyBuilder::one_int(last(ib), "axis", 0);
    }
    ibb.op("Identity", {src}, sb.input(k).name());
  }
  for (const auto& init : sb.initializer()) *ib.add_initializer() = init;
  for (const auto& n : sb.node()) *ib.add_node() = n;
  for (const auto& vi : sb.value_info()) *ib.add_value_info() = vi;
  for (int k = 0; k < N + K; ++k) {
    // A body output that is one of its inputs or another output still gets a value of its own.
    std::string o = ibb.op("Identity", {sb.output(k).name()});
    auto* vi = ib.add_output();
    *vi = sb.output(k);
    vi->set_name(o);
  }
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
