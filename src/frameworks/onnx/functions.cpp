#include "amanda/frameworks/onnx/functions.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/conventions.h"
#include "amanda/mapping/schema_step.h"
#include "amanda/schema/schema.h"
#include "lowerings/lowering.h"
#include "proto_util.h"
#include "schema_index.h"

namespace amanda::onnx_frontend {

namespace {

using lowering::add_shape;
using lowering::data_port;
using lowering::kIn;
using lowering::kOut;
using lowering::Lowering;
using lowering::lowerings;
using lowering::refusal_lowerings;

// Renames the values of a body (and of graphs nested in it, which may read outer values) and
// fills in attribute references. libonnx 1.12's FunctionExpandHelper does neither for nested graphs
// and reads its schema through the body's since_version, which built bodies do not carry.
class Inliner {
 public:
  Inliner(const onnx::NodeProto& call, const onnx::FunctionProto& fp, std::string prefix) : prefix_(std::move(prefix)) {
    for (int k = 0; k < fp.input_size(); ++k) names_[fp.input(k)] = k < call.input_size() ? call.input(k) : "";
    for (int k = 0; k < fp.output_size(); ++k) names_[fp.output(k)] = k < call.output_size() ? call.output(k) : "";
    for (const auto& a : call.attribute()) attrs_[a.name()] = &a;
  }

  void node(onnx::NodeProto& n) {
    for (auto& x : *n.mutable_input()) x = name(x);
    for (auto& x : *n.mutable_output()) x = name(x);
    if (!n.name().empty()) n.set_name(prefix_ + n.name());
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
    for (auto& a : *n.mutable_attribute()) {
      if (!a.ref_attr_name().empty()) {
        auto it = attrs_.find(a.ref_attr_name());
        if (it == attrs_.end()) continue;  // the op does not set it: the body op's own default
        std::string nm = a.name();
        a = *it->second;
        a.set_name(nm);
      }
      if (a.has_g()) graph(*a.mutable_g());
      for (auto& g : *a.mutable_graphs()) graph(g);
      *kept.Add() = a;
    }
    n.mutable_attribute()->Swap(&kept);
  }

 private:
  std::string prefix_;
  std::map<std::string, std::string> names_;
  std::map<std::string, const onnx::AttributeProto*> attrs_;
  std::vector<std::set<std::string>> local_;  // names a nested graph defines itself

  std::string name(const std::string& x) {
    if (x.empty()) return x;
    for (const auto& l : local_)
      if (l.contains(x)) return x;
    auto it = names_.find(x);
    if (it != names_.end()) return it->second;
    return prefix_ + x;
  }

  void graph(onnx::GraphProto& g) {
    std::set<std::string> own;
    for (const auto& v : g.input()) own.insert(v.name());
    for (const auto& v : g.initializer()) own.insert(v.name());
    for (const auto& n : g.node())
      for (const auto& o : n.output()) own.insert(o);
    local_.push_back(std::move(own));
    for (auto& n : *g.mutable_node()) node(n);
    local_.pop_back();
  }
};

void inline_body(const onnx::NodeProto& call, const onnx::FunctionProto& fp, onnx::GraphProto& g, const std::string& prefix) {
  Inliner in(call, fp, prefix);
  for (const auto& n : fp.node()) {
    onnx::NodeProto* x = g.add_node();
    *x = n;
    in.node(*x);
  }
}

}  // namespace

std::string expand_function(ir::Graph& g, ir::OpId op, const std::string& ns) {
  auto [family, version] = schema::split_version(ns);
  if (family != "amanda/onnx" || version.empty()) return "not a namespace of the default ONNX domain";
  int opset = std::stoi(version);
  std::string type(g.type_str(op));
  const onnx::OpSchema* s = detail::schema(type, opset, "");
  if (!s) return "libonnx has no schema for it";
  auto lowering = lowerings().find(type);
  if (lowering == lowerings().end()) {
    lowering = refusal_lowerings().find(type);
    if (lowering == refusal_lowerings().end()) lowering = lowerings().end();
  }
  if (!s->HasFunction() && !s->HasContextDependentFunction() && lowering == lowerings().end())
    return "ONNX defines no function body for it";
  // Attribute graphs (a body) are written into the NodeProto below.

  // The op as a NodeProto: inputs in0.., outputs out0.. ("" for an absent optional input).
  onnx::NodeProto node;
  node.set_op_type(type);
  std::vector<ir::PortId> ins, outs;
  std::vector<onnx::TypeProto> in_types;
  for (ir::PortId p : g.inputs(op)) {
    if (!data_port(g, p)) continue;
    std::string name = g.producer(p) ? kIn + std::to_string(ins.size()) : "";
    node.add_input(name);
    ins.push_back(p);
    onnx::TypeProto tp;
    std::string t = mapping::port_value_type(g, p);
    if (!t.empty()) {
      try {
        tp = onnx::Utils::DataTypeUtils::ToTypeProto(onnx::Utils::DataTypeUtils::ToType(t));
      } catch (const std::exception&) {
      }
    }
    if (tp.has_tensor_type()) add_shape(g, p, *tp.mutable_tensor_type());
    // No type attribute (a value made inside the graph): the type inference gave its port.
    if (!tp.has_tensor_type() && g.producer(p) && g.port_type(g.producer(p)))
      detail::type_to_proto(g, g.port_type(g.producer(p)), tp);
    in_types.push_back(tp);
  }
  for (ir::PortId p : g.outputs(op)) {
    if (!data_port(g, p)) continue;
    node.add_output(g.first_out_edge(p) ? kOut + std::to_string(outs.size()) : "");
    outs.push_back(p);
  }
  for (const auto& [k, v] : g.attrs(op)) {
    std::string key(g.str(k));
    if (key.starts_with("@")) continue;
    if (v.is_graph()) {
      // A body (SequenceMap's): written as the GraphProto the exporter makes. One that reads values
      // of the enclosing graph (captures) would name values the function's model does not have.
      ir::OpId body = v.as_graph();
      for (ir::PortId p : g.inputs(body))
        if (g.port_name_str(p).starts_with("@capture.")) return "attribute '" + key + "' is a graph that reads values around it";
      auto* a = node.add_attribute();
      a->set_name(key);
      a->set_type(onnx::AttributeProto::GRAPH);
      detail::export_graph_proto(g, body, *a->mutable_g());
      continue;
    }
    const ir::Value* meta = g.attr(op, g.sym("@attr." + key));
    ir::Value::Map none;
    try {
      detail::attr_to_proto(key, v, meta && meta->is_map() ? meta->as_map() : none, *node.add_attribute());
    } catch (const std::exception& e) {
      return std::string("attribute '") + key + "': " + e.what();
    }
  }
  // Attributes left at their defaults: the body refers to them too.
  for (const auto& [name, a] : s->attributes()) {
    bool given = false;
    for (const auto& x : node.attribute()) given |= x.name() == name;
    if (!given && a.default_value.has_type()) *node.add_attribute() = a.default_value;
  }

  onnx::FunctionProto fp;
  onnx::GraphProto lowered;
  if (!s->HasFunction() && !s->HasContextDependentFunction()) {
    std::string why = lowering->second(g, op, ins, in_types, lowered);
    if (!why.empty()) return "no ONNX function body, and its lowering needs what is missing: " + why;
    for (int k = 0; k < node.input_size(); ++k) fp.add_input(node.input(k).empty() ? "absent" + std::to_string(k) : node.input(k));
    for (int k = 0; k < node.output_size(); ++k) fp.add_output(kOut + std::to_string(k));
    for (const auto& n : lowered.node()) *fp.add_node() = n;
  } else if (s->HasContextDependentFunction()) {
    onnx::FunctionBodyBuildContextImpl ctx(node, in_types);
    try {
      if (!s->BuildContextDependentFunction(ctx, fp)) return "ONNX's function builder declines these attributes or input types";
    } catch (const std::exception& e) {
      return std::string("ONNX's function builder fails: ") + e.what();
    }
  } else {
    fp = *s->GetFunction();
  }

  // libonnx's inliner reads as many actual inputs and outputs as the body declares: an output the
  // op does not have becomes an unused value, an input it does not have an absent one.
  onnx::NodeProto call = node;
  while (call.input_size() < fp.input_size()) call.add_input("");
  for (int k = 0; k < call.output_size(); ++k)
    if (call.output(k).empty()) call.set_output(k, "unused" + std::to_string(k));
  while (call.output_size() < fp.output_size()) call.add_output("unused" + std::to_string(call.output_size()));
  // A body holding a graph (Range's Loop) reads outer values from inside it: those captures do not
  // survive the move into the model's graph yet.
  onnx::ModelProto m;
  m.set_ir_version(8);
  bool has_default = false;
  for (const auto& o : fp.opset_import()) {
    *m.add_opset_import() = o;
    has_default |= o.domain().empty() || o.domain() == "ai.onnx";
  }
  if (!has_default) {
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }
  onnx::GraphProto* gp = m.mutable_graph();
  gp->set_name(type + "_function");
  for (size_t k = 0; k < ins.size(); ++k) {
    if (node.input(int(k)).empty()) continue;
    auto* vi = gp->add_input();
    vi->set_name(node.input(int(k)));
    if (in_types[k].value_case() != onnx::TypeProto::VALUE_NOT_SET) *vi->mutable_type() = in_types[k];
  }
  for (size_t k = 0; k < outs.size(); ++k)
    if (!node.output(int(k)).empty()) gp->add_output()->set_name(node.output(int(k)));
  try {
    inline_body(call, fp, *gp, std::string(g.name_str(op)) + "/" + type + "/");
  } catch (const std::exception& e) {
    return std::string("inlining the body fails: ") + e.what();
  }
  // The body's values get their types (ONNX's shape inference): a body op that is itself expanded
  // later (SoftmaxCrossEntropyLoss's NegativeLogLikelihoodLoss) has a builder that reads them.
  try {
    onnx::shape_inference::InferShapes(m);
  } catch (const std::exception&) {
  }
  // ONNX's inference names the sizes it cannot tell "unk__0", "unk__1", ... afresh in every body:
  // in the model's graph, equal names would say equal sizes (onnxruntime then shares buffers between
  // values of different lengths). Such a dimension stays unknown.
  auto forget_generated = [](onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_param() && d.dim_param().starts_with("unk__")) d.clear_dim_param();
  };
  for (auto& vi : *m.mutable_graph()->mutable_value_info()) forget_generated(vi);
  for (auto& vi : *m.mutable_graph()->mutable_output()) forget_generated(vi);
  text::Document body;
  try {
    body = import_model(m);
  } catch (const std::exception& e) {
    return std::string("the body does not import: ") + e.what();
  }
  std::vector<std::pair<ir::PortId, size_t>> in_map, out_map;
  size_t k = 0;
  for (ir::PortId p : ins)
    if (g.producer(p)) in_map.push_back({p, k++});
  k = 0;
  for (ir::PortId p : outs)
    if (g.first_out_edge(p)) out_map.push_back({p, k++});
  // The op's output values keep their names (a graph output is found by its value's name) and
  // their value info: remembered through one consumer of each, then put on the new producers.
  std::vector<std::pair<ir::PortId, ir::AttrList>> keep;
  for (auto [p, k] : out_map) {
    ir::AttrList a;
    for (const auto& e : g.attrs(p))
      if (g.str(e.first).starts_with("@")) a.push_back(e);
    keep.push_back({g.edge_dst(g.first_out_edge(p)), std::move(a)});
  }
  ir::OpId ops[] = {op};
  try {
    g.replace_subgraph(ops, body.graph, in_map, out_map);
  } catch (const std::exception& e) {
    return std::string("the body does not fit: ") + e.what();
  }
  auto value_key = g.sym("@value");
  for (auto& [consumer, attrs] : keep)
    if (ir::PortId np = g.producer(consumer)) {
      // An output that had no value name (an op a rule made) does not take the body's
      // placeholder name: two expanded ops would both write "__amanda_out0".
      bool named = false;
      for (const auto& e : attrs) named |= e.first == value_key;
      if (!named) g.erase_attr(np, value_key);
      for (const auto& e : attrs) g.set_attr(np, e.first, e.second);
    }
  return {};
}

}  // namespace amanda::onnx_frontend

namespace amanda::onnx_frontend {
bool has_function_body(const std::string& type, const std::string& ns) {
  auto [family, version] = schema::split_version(ns);
  if (family != "amanda/onnx" || version.empty()) return false;
  const onnx::OpSchema* s = detail::schema(type, std::stoi(version), "");
  return s && (s->HasFunction() || s->HasContextDependentFunction() || lowerings().count(type));
}
bool lowers_refused(const std::string& type, const std::string& ns) {
  auto [family, version] = schema::split_version(ns);
  if (family != "amanda/onnx" || version.empty()) return false;
  const onnx::OpSchema* s = detail::schema(type, std::stoi(version), "");
  return s && !s->HasFunction() && !s->HasContextDependentFunction() && refusal_lowerings().count(type);
}
}  // namespace amanda::onnx_frontend

