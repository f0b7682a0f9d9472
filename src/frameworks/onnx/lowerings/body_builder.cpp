#include "body_builder.h"

namespace amanda::onnx_frontend::lowering {

std::string BodyBuilder::op(const std::string& type, const std::vector<std::string>& ins, const std::string& out) {
  std::string o = out.empty() ? fresh(names_.unnamed ? names_.unnamed : type) : out;
  last = g.add_node();
  last->set_op_type(type);
  for (auto& x : ins) last->add_input(x);
  last->add_output(o);
  return o;
}

BodyBuilder& BodyBuilder::f(const char* name, float v) {
  auto* a = last->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
  return *this;
}

BodyBuilder& BodyBuilder::s(const char* name, const std::string& v) {
  auto* a = last->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
  return *this;
}

void BodyBuilder::ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void BodyBuilder::one_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

namespace {
onnx::TensorProto* constant_node(onnx::GraphProto& g, const std::string& out) {
  auto* nd = g.add_node();
  nd->set_op_type("Constant");
  nd->add_output(out);
  auto* a = nd->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  return a->mutable_t();
}
}  // namespace

std::string BodyBuilder::c(int type, const std::vector<int64_t>& dims, const std::vector<double>& v) {
  return constant(fresh("c"), type, dims, v);
}

std::string BodyBuilder::constant_in(onnx::GraphProto& g, const std::string& out, int type, const std::vector<int64_t>& dims,
                                     const std::vector<double>& v) {
  auto* t = constant_node(g, out);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (double x : v) {
    switch (type) {
      case onnx::TensorProto::FLOAT: t->add_float_data(float(x)); break;
      case onnx::TensorProto::DOUBLE: t->add_double_data(x); break;
      case onnx::TensorProto::INT64: t->add_int64_data(int64_t(x)); break;
      case onnx::TensorProto::UINT64: t->add_uint64_data(uint64_t(x)); break;
      case onnx::TensorProto::UINT32: t->add_uint64_data(uint64_t(x)); break;
      default: t->add_int32_data(int32_t(x)); break;  // int32, int16, int8, uint16, uint8, bool, float16 bits
    }
  }
  return out;
}

std::string BodyBuilder::constant_i64(const std::vector<int64_t>& v, bool as_vector) {
  std::string out = fresh("c");
  auto* t = constant_node(g, out);
  t->set_data_type(onnx::TensorProto::INT64);
  if (as_vector) t->add_dims(int64_t(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
  return out;
}

std::string BodyBuilder::transpose(const std::string& x, const std::vector<int64_t>& perm) {
  bool id = true;
  for (size_t k = 0; k < perm.size(); ++k) id &= perm[k] == int64_t(k);
  if (id) return x;
  std::string o = op("Transpose", {x});
  ints(*last, "perm", perm);
  return o;
}

std::string BodyBuilder::reduce_sum(const std::string& x, const std::vector<int64_t>& axes) {
  std::string o = op("ReduceSum", {x});
  ints(*last, "axes", axes);
  one_int(*last, "keepdims", 0);
  return o;
}

void BodyBuilder::vi(onnx::ValueInfoProto* v, const std::string& name, int type, int rank) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  if (rank >= 0) {
    auto* sh = tt->mutable_shape();
    for (int k = 0; k < rank; ++k) sh->add_dim();
  }
}

std::vector<std::string> BodyBuilder::if_(const std::string& cond, const std::vector<int>& types, const Branch& then_b, const Branch& else_b) {
  onnx::NodeProto* nd = g.add_node();
  nd->set_op_type("If");
  nd->add_input(cond);
  std::vector<std::string> outs;
  for (size_t k = 0; k < types.size(); ++k) outs.push_back(fresh("if"));
  for (auto& o : outs) nd->add_output(o);
  for (int k = 0; k < 2; ++k) {
    auto* a = nd->add_attribute();
    a->set_name(k == 0 ? "then_branch" : "else_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& bg = *a->mutable_g();
    bg.set_name(fresh(k == 0 ? "then" : "else"));
    BodyBuilder bb(bg, names_, n_);
    std::vector<std::string> r = (k == 0 ? then_b : else_b)(bb);
    for (size_t j = 0; j < r.size(); ++j) {
      std::string o = bb.op("Identity", {r[j]});  // a branch output is a value the branch makes
      vi(bg.add_output(), o, types[j]);
    }
  }
  last = nd;
  return outs;
}

std::vector<std::string> BodyBuilder::loop(const std::string& trip, const std::vector<std::string>& inits, const std::vector<int>& carried_types,
                                           const std::vector<int>& scan_types, const LoopBody& body) {
  if (carried_types.empty()) {  // a Loop carries one value at least (amanda's schema): a dummy
    std::vector<std::string> r = loop(trip, {si(0)}, {onnx::TensorProto::INT64}, scan_types,
                                      [&](BodyBuilder& bb, const std::string& it, const std::vector<std::string>& v) {
                                        std::vector<std::string> o = body(bb, it, {});
                                        o.insert(o.begin(), v[0]);
                                        return o;
                                      });
    r.erase(r.begin());
    return r;
  }
  std::string cond = c(onnx::TensorProto::BOOL, {}, {1});
  onnx::NodeProto* nd = g.add_node();
  nd->set_op_type("Loop");
  nd->add_input(trip);
  nd->add_input(cond);
  for (auto& x : inits) nd->add_input(x);
  std::vector<std::string> outs;
  for (size_t k = 0; k < carried_types.size() + scan_types.size(); ++k) outs.push_back(fresh("loop"));
  for (auto& o : outs) nd->add_output(o);
  auto* a = nd->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& bg = *a->mutable_g();
  bg.set_name(fresh("body"));
  BodyBuilder bb(bg, names_, n_);
  std::string it = bb.fresh("i"), cin = bb.fresh("cond_in");
  vi(bg.add_input(), it, onnx::TensorProto::INT64, 0);
  vi(bg.add_input(), cin, onnx::TensorProto::BOOL, 0);
  std::vector<std::string> carried;
  for (int t : carried_types) {
    carried.push_back(bb.fresh("v"));
    vi(bg.add_input(), carried.back(), t);
  }
  std::vector<std::string> r = body(bb, it, carried);
  std::string cout = bb.op("Identity", {cin});
  vi(bg.add_output(), cout, onnx::TensorProto::BOOL, 0);
  for (size_t j = 0; j < r.size(); ++j) {
    std::string o = bb.op("Identity", {r[j]});
    vi(bg.add_output(), o, j < carried_types.size() ? carried_types[j] : scan_types[j - carried_types.size()]);
  }
  last = nd;
  return outs;
}

}  // namespace amanda::onnx_frontend::lowering
