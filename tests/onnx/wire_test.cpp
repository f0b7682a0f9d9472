// The byte paths of src/frameworks/onnx/wire.cpp: tensors borrowed on import, raw_data spliced on
// export, and the cases that leave the fast path (unusual field layouts) or reorder what the
// exporter writes (@initializer_order, @extra_attributes). Each model must come back as protobuf's
// own serialisation of it, through the borrowing path, the copying path and export_model.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/ir/equal.h"
#include "amanda/support/file.h"

using namespace amanda;

namespace {

using WFL = google::protobuf::internal::WireFormatLite;

onnx::ModelProto base_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("wire_test");
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

onnx::TensorProto* add_init(onnx::GraphProto* g, const std::string& name, size_t n, char fill) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(n));
  std::string bytes(n * 4, fill);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(fill + i * 7);
  t->set_raw_data(bytes);
  return t;
}

void add_node(onnx::GraphProto* g, const std::string& type, std::vector<std::string> in, std::string out) {
  auto* n = g->add_node();
  n->set_op_type(type);
  for (auto& i : in) n->add_input(i);
  n->add_output(out);
}

std::string canonical(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m.SerializeAsString();
}

// Round trip through every path; all must give protobuf's own serialisation of the input.
void expect_round_trip(const std::string& bytes) {
  std::string want = canonical(bytes);
  auto doc = onnx_frontend::import_model_bytes(bytes);
  EXPECT_EQ(onnx_frontend::export_model_bytes(doc), want) << "import_model_bytes";
  auto buf = make_buffer(bytes);
  auto doc2 = onnx_frontend::import_model_buffer(buf);
  EXPECT_EQ(onnx_frontend::export_model_bytes(doc2), want) << "import_model_buffer";
  onnx::ModelProto full;
  onnx_frontend::export_model(doc2, full);
  EXPECT_EQ(full.SerializeAsString(), want) << "export_model";
  EXPECT_EQ(ir::first_difference(doc.graph, doc2.graph), "");
  // Re-import of the export gives the same IR.
  auto doc3 = onnx_frontend::import_model_bytes(want);
  EXPECT_EQ(ir::first_difference(doc.graph, doc3.graph), "");
}

std::string tag_len(int field, size_t len) {
  std::string s;
  uint8_t buf[16];
  uint8_t* e = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(WFL::MakeTag(field, WFL::WIRETYPE_LENGTH_DELIMITED), buf);
  e = google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(len, e);
  s.assign(reinterpret_cast<char*>(buf), static_cast<size_t>(e - buf));
  return s;
}

// A model whose graph's only initializer is given as raw bytes (to write unusual layouts).
std::string with_initializer_bytes(const std::string& tensor_bytes) {
  onnx::ModelProto m = base_model();
  add_node(m.mutable_graph(), "Add", {"x", "w"}, "y");
  m.mutable_graph()->add_output()->set_name("y");
  std::string graph = m.graph().SerializeAsString() + tag_len(5, tensor_bytes.size()) + tensor_bytes;
  m.clear_graph();
  return m.SerializeAsString() + tag_len(7, graph.size()) + graph;
}

}  // namespace

TEST(OnnxWire, BorrowsRootInitializers) {
  onnx::ModelProto m = base_model();
  add_init(m.mutable_graph(), "w", 1000, 1);
  add_node(m.mutable_graph(), "Add", {"x", "w"}, "y");
  m.mutable_graph()->add_output()->set_name("y");
  std::string bytes = m.SerializeAsString();
  auto buf = make_buffer(bytes);
  auto doc = onnx_frontend::import_model_buffer(buf);
  const ir::Graph& g = doc.graph;
  const ir::Value* t = g.attr(g.find_input(g.root(), g.symbols().find("w")), g.symbols().find("initializer"));
  ASSERT_TRUE(t && t->is_tensor());
  const auto* b = buf->data();
  EXPECT_GE(t->as_tensor().data, b);
  EXPECT_LE(t->as_tensor().data + t->as_tensor().size, b + buf->size());  // borrowed, not copied
  EXPECT_EQ(t->as_tensor().size, 4000u);
  EXPECT_EQ(t->as_tensor().bytes(), m.graph().initializer(0).raw_data());
  EXPECT_EQ(onnx_frontend::export_model_bytes(doc), bytes);
  // From a string_view the bytes are copied (the caller's buffer may go away).
  auto doc2 = onnx_frontend::import_model_bytes(bytes);
  const ir::Value* t2 = doc2.graph.attr(doc2.graph.find_input(doc2.graph.root(), doc2.graph.symbols().find("w")),
                                        doc2.graph.symbols().find("initializer"));
  ASSERT_TRUE(t2 && t2->is_tensor());
  EXPECT_FALSE(t2->as_tensor().data >= reinterpret_cast<const uint8_t*>(bytes.data()) &&
               t2->as_tensor().data < reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size());
}

TEST(OnnxWire, InitializerOrderAndTensorFields) {
  onnx::ModelProto m = base_model();
  auto* g = m.mutable_graph();
  // Initializers in an order unlike the ports', one of them also a graph input, one with a
  // doc_string (after raw_data in field order), one empty, one typed, one with a repeated name.
  add_init(g, "c", 3, 5);
  auto* b = add_init(g, "b", 2, 9);
  b->set_doc_string("b's doc");
  add_init(g, "x", 4, 2);
  auto* e = g->add_initializer();
  e->set_name("e");
  e->set_data_type(onnx::TensorProto::FLOAT);
  e->add_dims(0);
  e->set_raw_data("");
  auto* f = g->add_initializer();
  f->set_name("f");
  f->set_data_type(onnx::TensorProto::FLOAT);
  f->add_dims(2);
  f->add_float_data(1.5f);
  f->add_float_data(-2.0f);
  add_init(g, "c", 1, 3);
  add_node(g, "Sum", {"x", "b", "c", "e", "f"}, "y");
  g->add_output()->set_name("y");
  expect_round_trip(m.SerializeAsString());
}

TEST(OnnxWire, ExtraAttributesKeepTheirPositions) {
  onnx::ModelProto m = base_model();
  auto* g = m.mutable_graph();
  add_node(g, "Custom", {"x"}, "y");
  auto* n = g->mutable_node(0);
  n->set_domain("my.domain");
  auto attr = [&](const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  attr("", 0);       // empty name: kept whole at index 0
  attr("alpha", 1);
  attr("alpha", 2);  // repeated: kept whole at index 2
  attr("@beta", 3);  // annotation-like name: kept whole at index 3
  attr("gamma", 4);
  g->add_output()->set_name("y");
  auto* os = m.add_opset_import();
  os->set_domain("my.domain");
  os->set_version(1);
  expect_round_trip(m.SerializeAsString());
}

TEST(OnnxWire, UnusualTensorLayoutsLeaveTheFastPath) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  std::string head = t.SerializeAsString();
  std::string raw1(8, '\1'), raw2(8, '\2');
  // Two raw_data fields: protobuf keeps the last.
  expect_round_trip(with_initializer_bytes(head + tag_len(9, 8) + raw1 + tag_len(9, 8) + raw2));
  // raw_data before the other fields.
  expect_round_trip(with_initializer_bytes(tag_len(9, 8) + raw1 + head));
  // raw_data beside float_data, and an unknown field: kept whole.
  onnx::TensorProto u = t;
  u.add_float_data(3.0f);
  u.set_raw_data(raw1);
  std::string unknown = tag_len(100, 3) + "abc";
  expect_round_trip(with_initializer_bytes(u.SerializeAsString() + unknown));
  // An unknown element type with raw_data.
  onnx::TensorProto v = t;
  v.set_data_type(99);
  v.set_raw_data(raw2);
  expect_round_trip(with_initializer_bytes(v.SerializeAsString()));
  // A string tensor with raw_data (not a valid combination, but a lossless one).
  onnx::TensorProto s = t;
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_string_data("a");
  s.add_string_data("b");  // as many strings as the dims say (the importer checks that)
  s.set_raw_data(raw1);
  expect_round_trip(with_initializer_bytes(s.SerializeAsString()));
}

TEST(OnnxWire, TwoGraphFieldsMergeAsProtobufDoes) {
  onnx::ModelProto m = base_model();
  add_init(m.mutable_graph(), "w", 4, 1);
  onnx::GraphProto more;
  add_init(&more, "v", 2, 3);
  add_node(&more, "Add", {"x", "w"}, "y");
  more.add_output()->set_name("y");
  std::string g2 = more.SerializeAsString();
  expect_round_trip(m.SerializeAsString() + tag_len(7, g2.size()) + g2);
}

TEST(OnnxWire, MalformedInputIsRefusedAsBefore) {
  onnx::ModelProto m = base_model();
  add_init(m.mutable_graph(), "w", 100, 1);
  std::string bytes = m.SerializeAsString();
  for (size_t cut : {bytes.size() - 1, bytes.size() / 2, size_t(3)})
    EXPECT_THROW(onnx_frontend::import_model_bytes(bytes.substr(0, cut)), ParseError) << cut;
}

namespace {

void add_constant(onnx::GraphProto* g, const std::string& out, size_t n, char fill) {
  add_node(g, "Constant", {}, out);
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = add_init(g, "tmp", n, fill);  // made as an initializer, moved into the attribute
  a->mutable_t()->Swap(t);
  a->mutable_t()->clear_name();
  g->mutable_initializer()->RemoveLast();
}

// A branch of an If: an initializer and a Constant of its own, and (depth > 0) an If inside
// whose then branch is depth - 1 deep, and its else branch too when `full` (else 0).
onnx::GraphProto branch(const std::string& tag, int depth, bool full) {
  onnx::GraphProto b;
  b.set_name(tag);
  add_init(&b, tag + "_w", 50, 4);
  add_constant(&b, tag + "_c", 100, 6);  // 400 bytes: borrowed (wire.cpp's kBorrowFrom)
  std::string out = tag + "_y";
  if (depth > 0) {
    add_node(&b, "Add", {tag + "_w", tag + "_c"}, tag + "_s");
    add_node(&b, "If", {"cond"}, out);
    auto* n = b.mutable_node(b.node_size() - 1);
    for (const char* side : {"then_branch", "else_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(side);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = branch(tag + side[0], full || side[0] == 't' ? depth - 1 : 0, full);
    }
  } else {
    add_node(&b, "Add", {tag + "_w", tag + "_c"}, out);
  }
  b.add_output()->set_name(out);
  return b;
}

// cond (bool) ? then : else, each branch `depth` Ifs deep (all of them when full, else the then
// branches alone).
onnx::ModelProto nested_if_model(int depth, bool full = true) {
  onnx::ModelProto m = base_model();
  auto* g = m.mutable_graph();
  auto* c = g->add_input();
  c->set_name("cond");
  c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  add_node(g, "If", {"cond"}, "y");
  for (const char* side : {"then_branch", "else_branch"}) {
    auto* a = g->mutable_node(0)->add_attribute();
    a->set_name(side);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch(std::string(1, side[0]), depth, full);
  }
  g->add_output()->set_name("y");
  return m;
}

// Every tensor of the IR (op attributes, initializers): how many, and how many point into [b, b + n).
std::pair<int, int> tensors_in(const ir::Graph& g, const void* b, size_t n) {
  const auto* lo = static_cast<const uint8_t*>(b);
  int all = 0, inside = 0;
  auto count = [&](const ir::Value* v) {
    if (!v || !v->is_tensor() || v->as_tensor().size == 0) return;
    ++all;
    const uint8_t* d = v->as_tensor().data;
    inside += d >= lo && d + v->as_tensor().size <= lo + n;
  };
  Symbol value = g.symbols().find("value"), init = g.symbols().find("initializer");
  g.for_each_op([&](ir::OpId op) {
    if (value != SymbolTable::kNone) count(g.attr(op, value));
  });
  for (uint32_t i = 1; i < g.port_id_bound(); ++i)
    if (g.valid(ir::PortId(i)) && init != SymbolTable::kNone) count(g.attr(ir::PortId(i), init));
  return {all, inside};
}

}  // namespace

TEST(OnnxWire, BorrowsConstantsAndSubgraphTensors) {
  onnx::ModelProto m = nested_if_model(2);
  add_constant(m.mutable_graph(), "k", 120, 8);  // a root Constant too
  add_constant(m.mutable_graph(), "small", 4, 1);  // 16 bytes: copied by protobuf, not borrowed
  std::string bytes = m.SerializeAsString();
  auto buf = make_buffer(bytes);
  auto doc = onnx_frontend::import_model_buffer(buf);
  // 2 root Constants; each branch an initializer and a Constant: 2 + 4 + 8 branches.
  auto [all, inside] = tensors_in(doc.graph, buf->data(), buf->size());
  EXPECT_EQ(all, 2 + 2 * 14);
  EXPECT_EQ(inside, all - 1);  // every one borrowed but the small Constant
  expect_round_trip(bytes);
  // The copying path holds no pointer into the caller's bytes.
  auto doc2 = onnx_frontend::import_model_bytes(bytes);
  EXPECT_EQ(tensors_in(doc2.graph, bytes.data(), bytes.size()), std::make_pair(all, 0));
}

TEST(OnnxWire, TensorAttributesKeptWholeKeepTheirBytes) {
  // Attributes the importer keeps as serialised bytes (a second attribute of one name, a tensor
  // attribute with a doc_string, a list of tensors, a graph attribute with an extra tensor) must
  // carry their borrowed raw_data.
  onnx::ModelProto m = nested_if_model(0);
  auto* g = m.mutable_graph();
  add_constant(g, "k", 100, 2);
  auto* k = g->mutable_node(g->node_size() - 1);
  *k->add_attribute() = k->attribute(0);  // "value" twice
  k->mutable_attribute(0)->set_doc_string("first");
  add_node(g, "Custom", {"x"}, "z");
  auto* n = g->mutable_node(g->node_size() - 1);
  n->set_domain("my.domain");
  auto* ts = n->add_attribute();
  ts->set_name("many");
  ts->set_type(onnx::AttributeProto::TENSORS);
  for (int i = 0; i < 3; ++i) {
    add_constant(g, "tmp", 70 + i, static_cast<char>(i));
    *ts->add_tensors() = g->node(g->node_size() - 1).attribute(0).t();
    g->mutable_node()->RemoveLast();
  }
  auto* gt = g->mutable_node(0)->mutable_attribute(0);
  *gt->mutable_t() = ts->tensors(1);  // a graph attribute with a tensor beside its graph
  auto* os = m.add_opset_import();
  os->set_domain("my.domain");
  os->set_version(1);
  g->add_output()->set_name("z");
  expect_round_trip(m.SerializeAsString());
}

TEST(OnnxWire, UnusualAttributeLayoutsLeaveTheFastPath) {
  onnx::ModelProto m = base_model();
  add_constant(m.mutable_graph(), "y", 100, 1);  // big enough to be borrowed
  m.mutable_graph()->add_output()->set_name("y");
  const onnx::AttributeProto& a = m.graph().node(0).attribute(0);
  std::string t = a.t().SerializeAsString();
  onnx::AttributeProto head = a;
  head.clear_t();
  auto model_with_attr = [&](const std::string& attr_bytes) {
    onnx::ModelProto c = m;
    onnx::NodeProto* node = c.mutable_graph()->mutable_node(0);
    node->clear_attribute();
    std::string nb = node->SerializeAsString() + tag_len(5, attr_bytes.size()) + attr_bytes;
    c.mutable_graph()->clear_node();
    std::string gb = tag_len(1, nb.size()) + nb + c.graph().SerializeAsString();
    c.clear_graph();
    return c.SerializeAsString() + tag_len(7, gb.size()) + gb;
  };
  // The tensor in two fields (its dims and type, then its raw_data): protobuf merges the two.
  onnx::TensorProto dims_only = a.t(), raw_only;
  dims_only.clear_raw_data();
  raw_only.set_raw_data(a.t().raw_data());
  std::string t1 = dims_only.SerializeAsString(), t2 = raw_only.SerializeAsString();
  expect_round_trip(model_with_attr(head.SerializeAsString() + tag_len(5, t1.size()) + t1 + tag_len(5, t2.size()) + t2));
  // The tensor before the name.
  expect_round_trip(model_with_attr(tag_len(5, t.size()) + t + head.SerializeAsString()));
  // The tensor field with a varint wire type: protobuf keeps it as an unknown field.
  std::string odd = head.SerializeAsString();
  odd.push_back(static_cast<char>(WFL::MakeTag(5, WFL::WIRETYPE_VARINT)));
  odd.push_back(1);
  std::string bytes = model_with_attr(odd);
  onnx::ModelProto pm;
  ASSERT_TRUE(pm.ParseFromString(bytes));
  EXPECT_NO_THROW(onnx_frontend::import_model_bytes(bytes));
}

TEST(OnnxWire, NestingIsLimitedAsProtobufLimitsIt) {
  // Ifs 20 and 31 levels deep (3 messages a level: within protobuf's limit of 100, the second
  // near it) read as protobuf reads them; 34 levels (beyond) refused as protobuf refuses them.
  for (int depth : {20, 31, 34}) {
    std::string bytes = nested_if_model(depth, false).SerializeAsString();
    onnx::ModelProto pm;
    bool parses = pm.ParseFromString(bytes);
    EXPECT_EQ(parses, depth != 34) << depth;
    if (!parses) {
      EXPECT_THROW(onnx_frontend::import_model_bytes(bytes), ParseError) << depth;
      continue;
    }
    // The same IR (or the same refusal of the importer's own depth limit) as from protobuf's parse.
    std::string want, got;
    text::Document a, b;
    try {
      a = onnx_frontend::import_model(pm);
    } catch (const Error& e) {
      want = e.what();
    }
    try {
      b = onnx_frontend::import_model_buffer(make_buffer(bytes));
    } catch (const Error& e) {
      got = e.what();
    }
    EXPECT_EQ(got, want) << depth;
    if (want.empty()) EXPECT_EQ(ir::first_difference(a.graph, b.graph), "") << depth;
  }
}
