// Data propagation in ONNX inference (InferOptions::data_propagation, data_prop.h): the values
// of shape tensors reach the shapes of Reshape, Expand and ConstantOfShape. The expected shapes
// are derived by hand from ONNX's operator definitions (x: [N, 3, 4]; Shape(x)[0] is N), and
// libonnx's Python inference (data_prop=True) gives the same for Expand and ConstantOfShape;
// for Reshape it gives none (its 1.12 inference function reads constant shapes only).
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <onnx/onnx_pb.h>

#include "amanda/frameworks/onnx/infer.h"
#include "amanda/frameworks/onnx/model.h"

namespace amanda {
namespace {

onnx::NodeProto* node(onnx::GraphProto& g, const char* type, std::vector<std::string> in, std::string out) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(type);
  for (auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void constant(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> v, bool scalar = false) {
  onnx::NodeProto* n = node(g, "Constant", {}, name);
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) a->mutable_t()->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) a->mutable_t()->add_int64_data(x);
}

void input(onnx::GraphProto& g, const char* name, std::vector<std::string> dims) {
  onnx::ValueInfoProto* vi = g.add_input();
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (auto& d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

// x: [N, 3, 4], w: [1, 1]; shp = Concat(Gather(Shape(x), [0]), k); y = Reshape(x, shp),
// z = ConstantOfShape(shp), e = Expand(w, shp). Output "name: shape" per graph output.
std::map<std::string, std::string> infer(std::vector<int64_t> k, bool data_prop, int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("g");
  input(g, "x", {"N", "3", "4"});
  input(g, "w", {"1", "1"});
  node(g, "Shape", {"x"}, "s");
  constant(g, "i0", {0});
  node(g, "Gather", {"s", "i0"}, "b");
  constant(g, "k", k);
  node(g, "Concat", {"b", "k"}, "shp")->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  node(g, "Reshape", {"x", "shp"}, "y");
  node(g, "ConstantOfShape", {"shp"}, "z");
  node(g, "Expand", {"w", "shp"}, "e");
  for (const char* o : {"y", "z", "e"}) g.add_output()->set_name(o);
  text::Document doc = onnx_frontend::import_model(m);
  onnx_frontend::InferOptions o;
  o.data_propagation = data_prop;
  auto r = onnx_frontend::infer_types(doc.graph, o);
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0]);
  std::map<std::string, std::string> out;
  ir::Graph& gr = doc.graph;
  for (ir::PortId p : gr.outputs(gr.root())) {
    const ir::Value* s = gr.attr(p, gr.sym("shape"));
    std::string text = "none";
    if (s && s->is_list()) {
      text = "[";
      for (const auto& d : s->as_list()) {
        if (text.size() > 1) text += ", ";
        text += d.is_int() ? std::to_string(d.as_int()) : d.is_string() ? "'" + d.as_string() + "'" : "?";
      }
      text += "]";
    }
    out[std::string(gr.port_name_str(p))] = text;
  }
  return out;
}

TEST(OnnxDataProp, ShapeTensorsReachReshapeExpandConstantOfShape) {
  auto r = infer({12}, true);
  EXPECT_EQ(r["y"], "['N', 12]");
  EXPECT_EQ(r["z"], "['N', 12]");
  EXPECT_EQ(r["e"], "['N', 12]");
}

TEST(OnnxDataProp, MinusOneCancelsSymbols) {
  // [N, 3, 4] -> [N, -1]: the -1 is 12 (N cancels); -> [N, 2, -1]: 6.
  EXPECT_EQ(infer({-1}, true)["y"], "['N', 12]");
  EXPECT_EQ(infer({2, -1}, true)["y"], "['N', 2, 6]");
}

TEST(OnnxDataProp, OffGivesWhatLibonnxGivesByDefault) {
  // Without propagation the computed shape is unknown: ranks only (libonnx's default).
  auto r = infer({12}, false);
  EXPECT_NE(r["y"], "['N', 12]");
  EXPECT_NE(r["z"], "['N', 12]");
  EXPECT_NE(r["e"], "['N', 12]");
}

}  // namespace
}  // namespace amanda
