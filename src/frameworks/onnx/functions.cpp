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
#include "proto_util.h"

namespace amanda::onnx_frontend {

namespace {

// The names of the expanded op's inputs and outputs in the function's model: unlike any a body
// (SequenceMap's, whose values share the function's scope once inlined) would use.
const std::string kIn = "__amanda_in", kOut = "__amanda_out";


bool data_port(const ir::Graph& g, ir::PortId p) { return !g.is_control(p) && !g.port_name_str(p).starts_with("@"); }

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

// Lowerings: ops with no ONNX function body that older ops still express, one entry per op. Each
// writes the body (nodes reading in0.., writing out0..) or says why it cannot.
using Lowering = std::function<std::string(const ir::Graph&, ir::OpId, const std::vector<ir::PortId>& ins,
                                           const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body)>;

// Einsum (new in 12): the equation parsed (ellipses given letters of their own, right-aligned across
// operands; the implicit output: the letters seen once, in alphabetical order, after the ellipsis');
// an operand's repeated letter (a diagonal) is taken with Gather on its two axes merged; letters of
// one operand that the output lacks are summed away (ReduceSum); one operand is then a Transpose;
// two are a MatMul of [batch, kept-of-A, contracted] by [batch, contracted, kept-of-B], reshaped
// and transposed to the output. Needs every input dimension known (the reshapes are constants).
struct EinsumBuilder {
  onnx::GraphProto& body;
  int counter = 0;  // names are "einsum_<what><counter>": nested bodies start at another counter
  std::string fresh(const std::string& what) { return "einsum_" + what + std::to_string(counter++); }
  std::string constant_i64(const std::vector<int64_t>& v, bool as_vector = true) {
    std::string out = fresh("c");
    auto* n = body.add_node();
    n->set_op_type("Constant");
    n->add_output(out);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    if (as_vector) t->add_dims(int64_t(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return out;
  }
  std::string op(const std::string& type, std::vector<std::string> ins, const std::string& out = "") {
    std::string o = out.empty() ? fresh("v") : out;
    auto* n = body.add_node();
    n->set_op_type(type);
    for (auto& i : ins) n->add_input(i);
    n->add_output(o);
    return o;
  }
  static void ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void one_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  std::string reshape(const std::string& x, const std::vector<int64_t>& shape) { return op("Reshape", {x, constant_i64(shape)}); }
  std::string transpose(const std::string& x, const std::vector<int64_t>& perm) {
    bool id = true;
    for (size_t k = 0; k < perm.size(); ++k) id &= perm[k] == int64_t(k);
    if (id) return x;
    std::string o = op("Transpose", {x});
    ints(*body.mutable_node(body.node_size() - 1), "perm", perm);
    return o;
  }
  std::string reduce_sum(const std::string& x, const std::vector<int64_t>& axes) {
    std::string o = op("ReduceSum", {x});
    ints(*body.mutable_node(body.node_size() - 1), "axes", axes);
    one_int(*body.mutable_node(body.node_size() - 1), "keepdims", 0);
    return o;
  }
};

std::string lower_einsum(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                         const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  const ir::Value* eqv = ir::get_attr(g, op, "equation");
  if (!eqv || !eqv->is_string()) return "the equation";
  std::string eq;
  for (char c : eqv->as_string())
    if (c != ' ') eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t b = 0;;) {
    size_t e = lhs.find(',', b);
    terms.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (terms.size() != ins.size()) return "as many operands as the equation has terms";
  if (terms.size() > 2) return "one or two operands (" + std::to_string(terms.size()) + " given)";
  std::vector<std::vector<int64_t>> dims(ins.size());
  for (size_t k = 0; k < ins.size(); ++k) {
    if (!types[k].has_tensor_type() || !types[k].tensor_type().has_shape()) return "every input's shape";
    for (const auto& d : types[k].tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return "every input's dimensions known";
      dims[k].push_back(d.dim_value());
    }
  }
  // Ellipsis letters: '0'.. (not letters of the equation), right-aligned.
  size_t ell = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t at = terms[k].find("...");
    size_t letters = terms[k].size() - (at == std::string::npos ? 0 : 3);
    if (at == std::string::npos) {
      if (letters != dims[k].size()) return "the equation's terms to match the inputs' ranks";
      continue;
    }
    if (dims[k].size() < letters) return "the equation's terms to match the inputs' ranks";
    ell = std::max(ell, dims[k].size() - letters);
  }
  if (ell > 10) return "at most 10 axes under an ellipsis";
  std::string ell_letters;
  for (size_t k = 0; k < ell; ++k) ell_letters += char('0' + k);
  std::vector<std::string> lt(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t at = terms[k].find("...");
    if (at == std::string::npos) {
      lt[k] = terms[k];
      continue;
    }
    size_t n = dims[k].size() - (terms[k].size() - 3);
    lt[k] = terms[k].substr(0, at) + ell_letters.substr(ell - n) + terms[k].substr(at + 3);
  }
  std::string out;
  if (arrow != std::string::npos) {
    std::string r = eq.substr(arrow + 2);
    size_t at = r.find("...");
    out = at == std::string::npos ? r : r.substr(0, at) + ell_letters + r.substr(at + 3);
  } else {
    std::map<char, int> count;
    for (const auto& t : lt)
      for (char c : t) count[c]++;
    out = ell_letters;
    for (auto [c, n] : count)
      if (n == 1 && !(c >= '0' && c <= '9')) out += c;
  }
  for (char c : out)
    if (!std::isalpha(static_cast<unsigned char>(c)) && !(c >= '0' && c <= '9')) return "an equation of letters, ',', '->' and '...'";
  // Each letter's dimension: equal wherever it appears (broadcasting a 1 is not lowered).
  std::map<char, int64_t> size;
  for (size_t k = 0; k < lt.size(); ++k)
    for (size_t a = 0; a < lt[k].size(); ++a) {
      char c = lt[k][a];
      if (!std::isalpha(static_cast<unsigned char>(c)) && !(c >= '0' && c <= '9')) return "an equation of letters, ',', '->' and '...'";
      auto [it, fresh] = size.insert({c, dims[k][a]});
      if (!fresh && it->second != dims[k][a]) return std::string("the same dimension wherever index '") + c + "' appears (broadcasting is not lowered)";
    }
  for (char c : out)
    if (!size.count(c)) return std::string("output index '") + c + "' among the inputs'";
  EinsumBuilder b{body};
  std::vector<std::string> val(ins.size());
  for (size_t k = 0; k < ins.size(); ++k) val[k] = kIn + std::to_string(k);
  auto prod = [&](const std::string& letters) {
    int64_t p = 1;
    for (char c : letters) p *= size[c];
    return p;
  };
  auto shape_of = [&](const std::string& letters) {
    std::vector<int64_t> v;
    for (char c : letters) v.push_back(size[c]);
    return v;
  };
  // Diagonals: a letter twice in one operand, its two axes moved last, merged, Gather at i * (n + 1).
  for (size_t k = 0; k < lt.size(); ++k) {
    for (;;) {
      size_t p = std::string::npos, q = std::string::npos;
      for (size_t a = 0; a < lt[k].size() && p == std::string::npos; ++a)
        for (size_t c = a + 1; c < lt[k].size(); ++c)
          if (lt[k][a] == lt[k][c]) {
            p = a;
            q = c;
            break;
          }
      if (p == std::string::npos) break;
      std::vector<int64_t> perm;
      std::string rest;
      for (size_t a = 0; a < lt[k].size(); ++a)
        if (a != p && a != q) {
          perm.push_back(int64_t(a));
          rest += lt[k][a];
        }
      perm.push_back(int64_t(p));
      perm.push_back(int64_t(q));
      char c = lt[k][p];
      int64_t n = size[c];
      std::string t = b.transpose(val[k], perm);
      std::vector<int64_t> sh = shape_of(rest);
      sh.push_back(n * n);
      std::string r = b.reshape(t, sh);
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < n; ++i) idx.push_back(i * (n + 1));
      std::string gi = b.op("Gather", {r, b.constant_i64(idx)});
      EinsumBuilder::one_int(*body.mutable_node(body.node_size() - 1), "axis", int64_t(rest.size()));
      val[k] = gi;
      lt[k] = rest + c;
    }
  }
  // Letters of one operand that neither the output nor the other operand has: summed away.
  for (size_t k = 0; k < lt.size(); ++k) {
    std::vector<int64_t> axes;
    std::string kept;
    for (size_t a = 0; a < lt[k].size(); ++a) {
      char c = lt[k][a];
      bool other = lt.size() == 2 && lt[1 - k].find(c) != std::string::npos;
      if (out.find(c) == std::string::npos && !other) axes.push_back(int64_t(a));
      else kept += c;
    }
    if (!axes.empty()) {
      val[k] = b.reduce_sum(val[k], axes);
      lt[k] = kept;
    }
  }
  auto perm_to = [&](const std::string& from, const std::string& to) {
    std::vector<int64_t> perm;
    for (char c : to) perm.push_back(int64_t(from.find(c)));
    return perm;
  };
  std::string res, res_letters;
  if (lt.size() == 1) {
    res = val[0];
    res_letters = lt[0];
  } else {
    std::string batch, a_only, b_only, contract;
    for (char c : lt[0]) {
      bool in_b = lt[1].find(c) != std::string::npos, in_out = out.find(c) != std::string::npos;
      if (in_b && in_out) batch += c;
      else if (in_b) contract += c;
      else a_only += c;
    }
    for (char c : lt[1])
      if (lt[0].find(c) == std::string::npos) b_only += c;
    std::string ta = b.transpose(val[0], perm_to(lt[0], batch + a_only + contract));
    std::string tb = b.transpose(val[1], perm_to(lt[1], batch + contract + b_only));
    std::vector<int64_t> sa = shape_of(batch), sb = shape_of(batch);
    sa.push_back(prod(a_only));
    sa.push_back(prod(contract));
    sb.push_back(prod(contract));
    sb.push_back(prod(b_only));
    std::string mm = b.op("MatMul", {b.reshape(ta, sa), b.reshape(tb, sb)});
    res = b.reshape(mm, shape_of(batch + a_only + b_only));
    res_letters = batch + a_only + b_only;
  }
  if (res_letters.size() != out.size()) return "every output index to come from the inputs once";
  std::string fin = b.transpose(res, perm_to(res_letters, out));
  b.op("Identity", {fin}, kOut + "0");
  return {};
}

// DFT (new in 17) as one product with a constant matrix, for a signal whose shape is known and a
// dft_length that is absent or constant: the signal axis moved last and the real and imaginary
// parts laid side by side ([rest, 1, C*L]), times W [C*L, 2K] whose columns are the real and the
// imaginary part of each of the K output frequencies (cos and sin of 2*pi*k*n/N, the sign of the
// sine and a 1/N for the inverse; rows n >= N zero: dft_length's truncation; N > L: zero padding
// adds nothing), then reshaped to [rest, 2, K] and transposed to the output's order. The matrix
// and the product are double (a float input is cast there and back). O(N^2) where an FFT is
// O(N log N): exact to rounding, and the opsets before 17 have nothing faster.
std::string lower_dft(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                      const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  auto int_attr = [&](const char* name, int64_t dflt) {
    const ir::Value* v = ir::get_attr(g, op, name);
    return v && v->is_int() ? v->as_int() : dflt;
  };
  if (ins.empty() || !types[0].has_tensor_type() || !types[0].tensor_type().has_shape()) return "the input's shape";
  int elem = types[0].tensor_type().elem_type();
  if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::DOUBLE) return "a float or double input";
  std::vector<int64_t> dims;
  for (const auto& d : types[0].tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return "every input dimension known";
    dims.push_back(d.dim_value());
  }
  int64_t r = int64_t(dims.size());
  if (r < 3) return "an input of rank 3 or more";
  int64_t C = dims.back();
  if (C != 1 && C != 2) return "a last dimension of 1 (real) or 2 (complex)";
  int64_t a = int_attr("axis", 1);
  if (a < 0) a += r;
  if (a < 1 || a > r - 2) return "an axis between the batch and the last dimension";
  bool inverse = int_attr("inverse", 0) != 0, onesided = int_attr("onesided", 0) != 0;
  if (onesided && C == 2) return "a real input when onesided (ONNX defines no onesided complex DFT)";
  int64_t L = dims[size_t(a)], N = L;
  if (ins.size() > 1 && g.producer(ins[1])) {
    const ir::Value* v = ir::constant_tensor(g, g.producer(ins[1]));
    if (!v || !v->is_tensor()) return "dft_length a constant";
    const ir::Tensor& t = v->as_tensor();
    if (t.dtype != ir::DType::Int64 && t.dtype != ir::DType::Int32) return "dft_length an int32 or int64 constant";
    if (t.size < ir::dtype_size(t.dtype)) return "dft_length a scalar";
    N = t.dtype == ir::DType::Int64 ? reinterpret_cast<const int64_t*>(t.data)[0] : reinterpret_cast<const int32_t*>(t.data)[0];
    if (N < 1) return "dft_length at least 1";
  }
  int64_t K = onesided ? N / 2 + 1 : N;
  if (C * L * 2 * K > (int64_t(1) << 26)) return "a signal short enough for a dense DFT matrix (2^26 entries)";
  EinsumBuilder b{body};
  std::vector<int64_t> perm, rest;
  for (int64_t d = 0; d < r; ++d)
    if (d != a) perm.push_back(d);
  perm.push_back(a);  // [rest..., C, L]
  for (int64_t d = 0; d < r - 1; ++d)
    if (d != a) rest.push_back(dims[size_t(d)]);
  std::string x = b.transpose(kIn + "0", perm);
  std::vector<int64_t> s1 = rest;
  s1.push_back(1);
  s1.push_back(C * L);
  x = b.reshape(x, s1);
  // The product in double: a float32 sum of N terms of the signal's size loses more than 1e-5 on
  // the outputs near zero, where the transforms of onnxruntime and numpy are exact to rounding.
  auto cast = [&](const std::string& v, int to) {
    std::string o = b.op("Cast", {v});
    EinsumBuilder::one_int(*body.mutable_node(body.node_size() - 1), "to", to);
    return o;
  };
  if (elem == onnx::TensorProto::FLOAT) x = cast(x, onnx::TensorProto::DOUBLE);
  // W[c*L + n][j*K + k]: c = input part (re, im), j = output part (re, im).
  std::vector<double> w(size_t(C * L * 2 * K), 0.0);
  const double pi = 3.14159265358979323846;
  for (int64_t n = 0; n < std::min(L, N); ++n)
    for (int64_t k = 0; k < K; ++k) {
      double th = 2 * pi * double((n * k) % N) / double(N), c = std::cos(th), sn = std::sin(th);
      double scale = inverse ? 1.0 / double(N) : 1.0, sg = inverse ? 1.0 : -1.0;  // e^{sg i th}
      auto at = [&](int64_t ci, int64_t j) -> double& { return w[size_t((ci * L + n) * 2 * K + j * K + k)]; };
      at(0, 0) = c * scale;        // re(x) -> re(y)
      at(0, 1) = sg * sn * scale;  // re(x) -> im(y)
      if (C == 2) {
        at(1, 0) = -sg * sn * scale;  // im(x) -> re(y)
        at(1, 1) = c * scale;         // im(x) -> im(y)
      }
    }
  std::string wname = b.fresh("w");
  {
    auto* n = body.add_node();
    n->set_op_type("Constant");
    n->add_output(wname);
    auto* at = n->add_attribute();
    at->set_name("value");
    at->set_type(onnx::AttributeProto::TENSOR);
    auto* t = at->mutable_t();
    t->set_data_type(onnx::TensorProto::DOUBLE);
    t->add_dims(C * L);
    t->add_dims(2 * K);
    for (double v : w) t->add_double_data(v);
  }
  std::string y = b.op("MatMul", {x, wname});
  if (elem == onnx::TensorProto::FLOAT) y = cast(y, onnx::TensorProto::FLOAT);
  std::vector<int64_t> s2 = rest;
  s2.push_back(2);
  s2.push_back(K);
  y = b.reshape(y, s2);  // [rest..., 2, K]
  std::vector<int64_t> back;
  for (int64_t p = 0, ri = 0; p < r; ++p) back.push_back(p == a ? r - 1 : p == r - 1 ? r - 2 : ri++);
  std::string out = b.transpose(y, back);
  b.op("Identity", {out}, kOut + "0");
  return {};
}

// The indices of the true elements of a flat bool `mask` of `n` elements (an int64 vector grown by
// a Loop of n iterations, an If each appending its index): what NonZero gives from opset 9 on.
std::string nonzero_loop(EinsumBuilder& b, const std::string& mask, const std::string& n) {
  onnx::GraphProto& body = b.body;
  auto scalar_const = [&](onnx::GraphProto& gp, const std::string& name, int type, double v) {
    auto* c = gp.add_node();
    c->set_op_type("Constant");
    c->add_output(name);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(type);
    if (type == onnx::TensorProto::BOOL) t->add_int32_data(v != 0);
    return name;
  };
  std::string yes = scalar_const(body, b.fresh("true"), onnx::TensorProto::BOOL, 1);
  std::string empty = b.fresh("empty");
  {
    auto* c = body.add_node();
    c->set_op_type("Constant");
    c->add_output(empty);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(0);
  }
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
  auto value_info = [](onnx::ValueInfoProto* vi, const std::string& name, int type, int rank) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* sh = tt->mutable_shape();
    for (int k = 0; k < rank; ++k) sh->add_dim();
    if (rank == 0) tt->mutable_shape();
  };
  value_info(lb.add_input(), it, onnx::TensorProto::INT64, 0);
  value_info(lb.add_input(), cin, onnx::TensorProto::BOOL, 0);
  value_info(lb.add_input(), acc, onnx::TensorProto::INT64, 1);
  value_info(lb.add_output(), cout, onnx::TensorProto::BOOL, 0);
  value_info(lb.add_output(), accout, onnx::TensorProto::INT64, 1);
  EinsumBuilder lbb{lb, 1000};
  lbb.op("Identity", {cin}, cout);
  std::string m = lbb.op("Gather", {mask, it});
  EinsumBuilder::one_int(*lb.mutable_node(lb.node_size() - 1), "axis", 0);
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
    value_info(bg.add_output(), o, onnx::TensorProto::INT64, 1);
    EinsumBuilder bb{bg, 2000 + (branch[0] == 't' ? 0 : 500)};
    if (branch[0] == 't') {
      std::string r = bb.reshape(it, {1});
      bb.op("Concat", {acc, r}, o);
      EinsumBuilder::one_int(*bg.mutable_node(bg.node_size() - 1), "axis", 0);
    } else {
      bb.op("Identity", {acc}, o);
    }
  }
  return found;
}

// NonZero (new in 9) below 9: no op before it makes a tensor whose length is a count of values,
// but Loop (opset 1: a trip count at run time) can grow one: over the flattened input, an If per
// element appends its index (Concat) to a loop-carried int64 vector when the element is not zero
// (a floating-point x counts as non-zero when x > 0, x < 0 or NaN: not (x > 0 or x < 1); integers
// compare as float64, exact in sign). The flat indices become coordinates with integer Div and
// x - (x / d) * d (Mod is new in 10), one row per axis (strides from the input's known shape).
// One iteration per element: slow on big tensors, exact.
std::string lower_nonzero(const ir::Graph&, ir::OpId, const std::vector<ir::PortId>& ins,
                          const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  if (ins.empty() || !types[0].has_tensor_type() || !types[0].tensor_type().has_shape()) return "the input's shape";
  int elem = types[0].tensor_type().elem_type();
  std::vector<int64_t> dims;  // -1: known at run time only (Shape)
  for (const auto& d : types[0].tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  if (dims.empty()) return "an input of rank 1 or more";
  EinsumBuilder b{body};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto scalar_const = [&](onnx::GraphProto& gp, const std::string& name, int type, double v) {
    auto* n = gp.add_node();
    n->set_op_type("Constant");
    n->add_output(name);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(type);
    if (type == onnx::TensorProto::BOOL || type == onnx::TensorProto::INT64) t->add_int64_data(int64_t(v));
    if (type == onnx::TensorProto::BOOL) {
      t->clear_int64_data();
      t->add_int32_data(v != 0);
    }
    if (type == onnx::TensorProto::DOUBLE) t->add_double_data(v);
    if (type == onnx::TensorProto::FLOAT) t->add_float_data(float(v));
    return name;
  };
  std::string x = kIn + "0";
  std::string flat = b.reshape(x, {-1});
  std::string mask;
  if (elem == onnx::TensorProto::BOOL) {
    mask = flat;
  } else {
    std::string f = flat;
    int ct = elem;
    if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::DOUBLE) {
      f = b.op("Cast", {flat});
      EinsumBuilder::one_int(last(), "to", onnx::TensorProto::DOUBLE);
      ct = onnx::TensorProto::DOUBLE;
    }
    std::string zero = scalar_const(body, b.fresh("zero"), ct, 0.0), one = scalar_const(body, b.fresh("one"), ct, 1.0);
    std::string gt = b.op("Greater", {f, zero}), lt = b.op("Less", {f, zero}), lt1 = b.op("Less", {f, one});
    std::string nonzero = b.op("Or", {gt, lt});
    std::string num = b.op("Or", {gt, lt1});
    std::string nan = b.op("Not", {num});
    mask = b.op("Or", {nonzero, nan});
  }
  std::string found = nonzero_loop(b, mask, b.op("Size", {x}));
  // Flat indices -> one row of coordinates per axis.
  std::vector<std::string> rows;
  // Each axis' size and stride as a 0-D int64: a constant where the shape says it, else from Shape.
  std::string shape;
  auto dim = [&](size_t k) {
    if (dims[k] >= 0) return b.constant_i64({dims[k]}, false);
    if (shape.empty()) shape = b.op("Shape", {x});
    std::string d = b.op("Gather", {shape, b.constant_i64({int64_t(k)}, false)});
    EinsumBuilder::one_int(last(), "axis", 0);
    return d;
  };
  std::vector<std::string> strides(dims.size());
  std::string stride;
  int64_t known_stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    strides[k] = stride.empty() ? b.constant_i64({known_stride}, false) : stride;
    if (k == 0) break;
    if (stride.empty() && dims[k] >= 0) {
      known_stride *= dims[k];
    } else {
      if (stride.empty()) stride = b.constant_i64({known_stride}, false);
      stride = b.op("Mul", {stride, dim(k)});
    }
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    std::string q = dims.size() == 1 ? found : b.op("Div", {found, strides[k]});
    if (k > 0) {
      std::string d = dim(k);
      std::string qd = b.op("Div", {q, d});
      std::string back = b.op("Mul", {qd, d});
      q = b.op("Sub", {q, back});
    }
    std::string u = b.op("Unsqueeze", {q});
    EinsumBuilder::ints(last(), "axes", {0});
    rows.push_back(u);
  }
  std::string out = rows.size() == 1 ? rows[0] : b.op("Concat", rows);
  if (rows.size() > 1) EinsumBuilder::one_int(last(), "axis", 0);
  b.op("Identity", {out}, kOut + "0");
  return {};
}

// Compress (new in 9) below 9: Gather at the indices of the true conditions (the NonZero loop
// above), along `axis`, or of the flattened input without one. A condition shorter than the axis
// selects among its first elements, as Compress does.
std::string lower_compress(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                           const std::vector<onnx::TypeProto>&, onnx::GraphProto& body) {
  if (ins.size() < 2) return "the condition input";
  const ir::Value* axis = ir::get_attr(g, op, "axis");
  EinsumBuilder b{body};
  std::string cond = b.reshape(kIn + "1", {-1});
  std::string found = nonzero_loop(b, cond, b.op("Size", {cond}));
  std::string data = kIn + "0";
  if (!axis || !axis->is_int()) data = b.reshape(data, {-1});
  b.op("Gather", {data, found}, kOut + "0");
  EinsumBuilder::one_int(*body.mutable_node(body.node_size() - 1), "axis", axis && axis->is_int() ? axis->as_int() : 0);
  return {};
}

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
  EinsumBuilder b{body};
  auto last = [](onnx::GraphProto& gp) -> onnx::NodeProto& { return *gp.mutable_node(gp.node_size() - 1); };
  auto bool_true = [](onnx::GraphProto& gp, const std::string& name) {
    auto* c = gp.add_node();
    c->set_op_type("Constant");
    c->add_output(name);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
    a->mutable_t()->add_int32_data(1);
    return name;
  };
  // The batch size: axis 0 of the first scan input.
  std::string shape0 = b.op("Shape", {in_name(N)});
  std::string batch = b.op("Gather", {shape0, b.constant_i64({0}, false)});
  EinsumBuilder::one_int(last(body), "axis", 0);
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
  EinsumBuilder obb{ob, 3000};
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
    EinsumBuilder::one_int(last(ob), "axis", 0);
  }
  std::string xs = obb.op("Shape", {per[N]});
  std::string steps = obb.op("Gather", {xs, obb.constant_i64({0}, false)});
  EinsumBuilder::one_int(last(ob), "axis", 0);
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
  EinsumBuilder ibb{ib, 4000};
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
      EinsumBuilder::one_int(last(ib), "axis", 0);
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

// Det (new in 11) below 11, for square matrices of a known size n (any batch shape): Gaussian
// elimination with partial pivoting, unrolled over the n - 1 columns, as the LU factorization
// onnxruntime (Eigen) computes. Column k: the row of the largest |a| among rows k.. (ArgMax, the
// first of equals) is swapped with row k (Where with one-hot masks per matrix: exact), the sign
// flips where a swap happened; rows below k lose f * row k with f = a[r][k] / pivot (0 where the
// pivot is 0: nothing to eliminate, the determinant is then 0). The determinant is the sign times
// the product of the diagonal (ReduceProd). n = 1 is the element itself.
std::string lower_det(const ir::Graph&, ir::OpId, const std::vector<ir::PortId>& ins,
                      const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  if (ins.empty() || !types[0].has_tensor_type() || !types[0].tensor_type().has_shape()) return "the input's shape";
  const auto& tt = types[0].tensor_type();
  int elem = tt.elem_type();
  if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::DOUBLE && elem != onnx::TensorProto::FLOAT16)
    return "a float16, float or double input";
  int rank = tt.shape().dim_size();
  if (rank < 2) return "an input of rank 2 or more";
  const auto& dn = tt.shape().dim(rank - 1);
  const auto& dm = tt.shape().dim(rank - 2);
  if (!dn.has_dim_value() || !dm.has_dim_value() || dn.dim_value() != dm.dim_value() || dn.dim_value() < 1)
    return "square matrices of a known size";
  const int64_t n = dn.dim_value();
  EinsumBuilder b{body};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto typed = [&](double v) {
    std::string out = b.fresh("c");
    auto* c = body.add_node();
    c->set_op_type("Constant");
    c->add_output(out);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(elem);
    if (elem == onnx::TensorProto::DOUBLE) t->add_double_data(v);
    else if (elem == onnx::TensorProto::FLOAT) t->add_float_data(float(v));
    else t->add_int32_data(v == 0 ? 0 : v == 1 ? 0x3C00 : 0xBC00);  // float16 0, 1, -1
    return out;
  };
  auto bools = [&](const std::vector<int64_t>& shape, const std::vector<bool>& v) {
    std::string out = b.fresh("m");
    auto* c = body.add_node();
    c->set_op_type("Constant");
    c->add_output(out);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::BOOL);
    for (int64_t d : shape) t->add_dims(d);
    for (bool x : v) t->add_int32_data(x);
    return out;
  };
  auto gather = [&](const std::string& x, const std::string& idx, int64_t axis) {
    std::string o = b.op("Gather", {x, idx});
    EinsumBuilder::one_int(last(), "axis", axis);
    return o;
  };
  std::string x = kIn + "0";
  std::string a = b.reshape(x, {-1, n, n});
  std::string det;
  if (n == 1) {
    det = b.reshape(a, {-1});
  } else {
    std::string zero = typed(0), one = typed(1), minus = typed(-1);
    std::string sign;
    std::vector<int64_t> rows(n);
    for (int64_t r = 0; r < n; ++r) rows[r] = r;
    std::string row_ids = b.constant_i64(std::vector<int64_t>{rows});
    std::string row_ids2 = b.reshape(row_ids, {1, n});
    for (int64_t k = 0; k + 1 < n; ++k) {
      std::string kk = b.constant_i64({k}, false);
      std::string col = gather(a, kk, 2);  // [B, n]
      std::string mag = b.op("Abs", {col});
      std::vector<bool> ge(n), gt(n), is_k(n);
      for (int64_t r = 0; r < n; ++r) ge[r] = r >= k, gt[r] = r > k, is_k[r] = r == k;
      std::string cand = b.op("Where", {bools({1, n}, ge), mag, minus});
      std::string p = b.op("ArgMax", {cand});  // [B, 1]
      EinsumBuilder::one_int(last(), "axis", 1);
      EinsumBuilder::one_int(last(), "keepdims", 1);
      std::string hot = b.op("Equal", {p, row_ids2});  // [B, n]
      std::string hot3 = b.op("Unsqueeze", {hot});
      EinsumBuilder::ints(last(), "axes", {2});
      std::string picked = b.op("Where", {hot3, a, zero});
      std::string rowp = b.op("ReduceSum", {picked});  // [B, 1, n]
      EinsumBuilder::ints(last(), "axes", {1});
      EinsumBuilder::one_int(last(), "keepdims", 1);
      std::string rowk = gather(a, b.constant_i64({k}), 1);  // [B, 1, n]
      std::string swapped_rows = b.op("Where", {hot3, rowk, a});
      std::string sw = b.op("Where", {bools({1, n, 1}, is_k), rowp, swapped_rows});
      std::string same = b.op("Equal", {p, b.constant_i64({k}, false)});  // [B, 1]
      std::string flip = b.op("Where", {same, one, minus});
      sign = sign.empty() ? flip : b.op("Mul", {sign, flip});
      std::string pivot = gather(rowp, kk, 2);  // [B, 1]
      std::string col2 = gather(sw, kk, 2);     // [B, n]
      std::string f = b.op("Div", {col2, pivot});
      std::string pz = b.op("Equal", {pivot, zero});
      std::string pnz = b.op("Not", {pz});
      std::string below = b.op("And", {bools({1, n}, gt), pnz});  // [B, n]
      std::string f0 = b.op("Where", {below, f, zero});
      std::string f3 = b.op("Unsqueeze", {f0});
      EinsumBuilder::ints(last(), "axes", {2});
      std::string prod = b.op("Mul", {f3, rowp});
      std::string sub = b.op("Sub", {sw, prod});
      std::string below3 = b.op("Unsqueeze", {below});
      EinsumBuilder::ints(last(), "axes", {2});
      a = b.op("Where", {below3, sub, sw});
    }
    std::vector<int64_t> diag(n);
    for (int64_t r = 0; r < n; ++r) diag[r] = r * (n + 1);
    std::string flat = b.reshape(a, {-1, n * n});
    std::string d = gather(flat, b.constant_i64(diag), 1);
    std::string pr = b.op("ReduceProd", {d});
    EinsumBuilder::ints(last(), "axes", {1});
    EinsumBuilder::one_int(last(), "keepdims", 1);
    det = b.reshape(b.op("Mul", {pr, sign}), {-1});
  }
  // The batch shape: the input's without its last two axes.
  std::vector<int64_t> batch;
  bool known = true;
  for (int k = 0; k + 2 < rank; ++k) {
    if (!tt.shape().dim(k).has_dim_value()) known = false;
    else batch.push_back(tt.shape().dim(k).dim_value());
  }
  if (known) {
    b.op("Reshape", {det, b.constant_i64(batch)}, kOut + "0");
  } else {
    std::string sh = b.op("Shape", {x});
    std::string bs = b.op("Slice", {sh, b.constant_i64({0}), b.constant_i64({rank - 2})});
    b.op("Reshape", {det, bs}, kOut + "0");
  }
  return {};
}

// Unique (new in 11) below 11: slices along `axis` (or the elements, without one) compared pairwise.
// R = the input as [d, m] (the axis first); E[i][j]: slices i and j equal in every element
// (ReduceMin of Equal); a slice is the first of its kind when no earlier one equals it; NonZero of
// those gives the unique ones in order of first occurrence. Sorted: slice i < slice j when at the
// first position where they differ (no difference before it: a MatMul of the differences with a
// strictly upper 0/1 matrix) i's element is smaller; the rank of a unique slice is the count of
// unique slices below it, and the order is the inverse of the ranks (Equal with 0..u-1, ArgMax).
// Y gathers the input along the axis; inverse_indices and counts compare every element's first
// occurrence with the order. 0..k-1 of a length known at run time: NonZero of ConstantOfShape(k, 1).
// Sizes of d^2 m: for modest inputs; exact for any values but NaN (Equal never holds for NaN).
std::string lower_unique(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                         const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  if (ins.empty() || !types[0].has_tensor_type()) return "the input's type";
  const ir::Value* av = ir::get_attr(g, op, "axis");
  const ir::Value* sv = ir::get_attr(g, op, "sorted");
  bool sorted = !sv || !sv->is_int() || sv->as_int() != 0;
  bool has_axis = av && av->is_int();
  int rank = types[0].tensor_type().has_shape() ? types[0].tensor_type().shape().dim_size() : -1;
  int64_t axis = 0;
  if (has_axis) {
    if (rank < 1) return "the input's rank (an axis is given)";
    axis = av->as_int() < 0 ? av->as_int() + rank : av->as_int();
    if (axis < 0 || axis >= rank) return "an axis within the input's rank";
  }
  EinsumBuilder b{body};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto cast = [&](const std::string& x, int to) {
    std::string o = b.op("Cast", {x});
    EinsumBuilder::one_int(last(), "to", to);
    return o;
  };
  auto unsq = [&](const std::string& x, int64_t a) {
    std::string o = b.op("Unsqueeze", {x});
    EinsumBuilder::ints(last(), "axes", {a});
    return o;
  };
  auto reduce = [&](const std::string& type, const std::string& x, int64_t a) {
    std::string o = b.op(type, {x});
    EinsumBuilder::ints(last(), "axes", {a});
    EinsumBuilder::one_int(last(), "keepdims", 0);
    return o;
  };
  auto argmax = [&](const std::string& x, int64_t a) {
    std::string o = b.op("ArgMax", {x});
    EinsumBuilder::one_int(last(), "axis", a);
    EinsumBuilder::one_int(last(), "keepdims", 0);
    return o;
  };
  // 0..k-1 for a 1-D int64 shape-like [k]
  auto iota = [&](const std::string& len1d) {
    std::string ones = b.op("ConstantOfShape", {len1d});
    auto* a = last().add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(1);
    return b.reshape(b.op("NonZero", {ones}), {-1});
  };
  std::string x = kIn + "0";
  std::string r;
  if (!has_axis) {
    r = b.reshape(x, {-1, 1});
  } else {
    std::vector<int64_t> perm{axis};
    for (int k = 0; k < rank; ++k)
      if (k != axis) perm.push_back(k);
    r = b.reshape(b.transpose(x, perm), {0, -1});
  }
  std::string a3 = unsq(r, 1), b3 = unsq(r, 0);  // [d, 1, m], [1, d, m]
  std::string eq = b.op("Equal", {a3, b3});       // [d, d, m]
  std::string eqf = cast(eq, onnx::TensorProto::FLOAT);
  std::string same = reduce("ReduceMin", eqf, 2);  // [d, d]: 1 where slices i and j are equal
  std::string shape_r = b.op("Shape", {r});
  std::string dlen = b.op("Slice", {shape_r, b.constant_i64({0}), b.constant_i64({1})});
  std::string mlen = b.op("Slice", {shape_r, b.constant_i64({1}), b.constant_i64({2})});
  std::string id = iota(dlen);  // [d]
  std::string idf = cast(id, onnx::TensorProto::FLOAT);  // (Less takes floats only before 9)
  std::string earlier = b.op("Less", {unsq(idf, 1), unsq(idf, 0)});  // [i, j]: i < j
  std::string prior = reduce("ReduceMax", b.op("Mul", {same, cast(earlier, onnx::TensorProto::FLOAT)}), 0);  // [d]
  std::string half_f = b.fresh("half");
  {
    auto* c = body.add_node();
    c->set_op_type("Constant");
    c->add_output(half_f);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(0.5f);
  }
  std::string first = b.op("Less", {prior, half_f});           // [d] bool
  std::string uidx = b.reshape(b.op("NonZero", {first}), {-1});  // [u]
  std::string order = uidx;
  if (sorted) {
    // x_i[k] < x_j[k]; integers compared as float64 (Less takes floats only before 9; exact up to 2^53)
    int elem = types[0].tensor_type().elem_type();
    bool is_float = elem == onnx::TensorProto::FLOAT || elem == onnx::TensorProto::DOUBLE || elem == onnx::TensorProto::FLOAT16;
    std::string lt = is_float ? b.op("Less", {a3, b3})
                              : b.op("Less", {cast(a3, onnx::TensorProto::DOUBLE), cast(b3, onnx::TensorProto::DOUBLE)});  // [d, d, m]
    std::string ne = cast(b.op("Not", {eq}), onnx::TensorProto::FLOAT);
    std::string mi = iota(mlen);  // [m]
    std::string mif = cast(mi, onnx::TensorProto::FLOAT);
    std::string upper = cast(b.op("Less", {unsq(mif, 1), unsq(mif, 0)}), onnx::TensorProto::FLOAT);  // [k', k]: k' < k
    std::string before = b.op("MatMul", {ne, upper});  // [d, d, m]: differences before k
    std::string clean = b.op("Less", {before, half_f});
    std::string decisive = b.op("And", {lt, clean});
    std::string less = reduce("ReduceMax", cast(decisive, onnx::TensorProto::FLOAT), 2);  // [i, j]: slice i < slice j
    std::string firstf = unsq(cast(first, onnx::TensorProto::FLOAT), 0);                  // [1, d]
    std::string rank_all = b.reshape(b.op("MatMul", {firstf, less}), {-1});               // [d]
    std::string ranks = b.op("Gather", {rank_all, uidx});                                 // [u]
    EinsumBuilder::one_int(last(), "axis", 0);
    std::string ui = iota(b.op("Shape", {uidx}));
    std::string pos = b.op("Equal", {unsq(cast(ui, onnx::TensorProto::FLOAT), 1), unsq(ranks, 0)});  // [q, k]
    std::string k = argmax(cast(pos, onnx::TensorProto::FLOAT), 1);
    order = b.op("Gather", {uidx, k});
    EinsumBuilder::one_int(last(), "axis", 0);
  }
  if (has_axis) {
    b.op("Gather", {x, order}, kOut + "0");
    EinsumBuilder::one_int(last(), "axis", axis);
  } else {
    b.op("Gather", {b.reshape(x, {-1}), order}, kOut + "0");
    EinsumBuilder::one_int(last(), "axis", 0);
  }
  b.op("Identity", {order}, kOut + "1");
  std::string rep = argmax(same, 0);  // [d]: the first slice equal to each
  std::string hit = cast(b.op("Equal", {unsq(order, 1), unsq(rep, 0)}), onnx::TensorProto::FLOAT);  // [u, d]
  b.op("Identity", {argmax(hit, 0)}, kOut + "2");
  std::string cnt = reduce("ReduceSum", hit, 1);
  b.op("Cast", {cnt}, kOut + "3");
  EinsumBuilder::one_int(last(), "to", onnx::TensorProto::INT64);
  return {};
}

// NonMaxSuppression (new in 10) below 10: onnxruntime's greedy selection as one Loop over every
// (batch, class, k) in order, k the k-th box by score (higher first, the lower index among equal
// scores: its rank is the count of boxes before it, the order the inverse of the ranks). Whether a
// box suppresses another is computed beforehand for every pair of boxes of a batch, as onnxruntime's
// SuppressByIOU does (the intersection and both areas positive, IoU > iou_threshold). The loop
// carries the boxes selected in the current (batch, class) as a 0/1 vector, their count and the
// output rows: a box is kept when its score is above score_threshold (when given), fewer than
// max_output_boxes_per_class are kept, and no kept box suppresses it; an If appends its row.
std::string lower_nms(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                      const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  if (ins.size() < 2) return "boxes and scores";
  for (int k = 0; k < 2; ++k)
    if (!types[k].has_tensor_type() || types[k].tensor_type().elem_type() != onnx::TensorProto::FLOAT)
      return "float boxes and scores";
  const ir::Value* cv = ir::get_attr(g, op, "center_point_box");
  bool center = cv && cv->is_int() && cv->as_int() != 0;
  auto present = [&](size_t k) { return k < ins.size() && g.producer(ins[k]); };
  EinsumBuilder b{body};
  auto last = [&](onnx::GraphProto& gp) -> onnx::NodeProto& { return *gp.mutable_node(gp.node_size() - 1); };
  auto cast = [&](EinsumBuilder& e, const std::string& x, int to) {
    std::string o = e.op("Cast", {x});
    EinsumBuilder::one_int(last(e.body), "to", to);
    return o;
  };
  auto unsq = [&](EinsumBuilder& e, const std::string& x, int64_t a) {
    std::string o = e.op("Unsqueeze", {x});
    EinsumBuilder::ints(last(e.body), "axes", {a});
    return o;
  };
  auto gather = [&](EinsumBuilder& e, const std::string& x, const std::string& i, int64_t axis) {
    std::string o = e.op("Gather", {x, i});
    EinsumBuilder::one_int(last(e.body), "axis", axis);
    return o;
  };
  auto fconst = [&](onnx::GraphProto& gp, EinsumBuilder& e, float v) {
    std::string out = e.fresh("f");
    auto* c = gp.add_node();
    c->set_op_type("Constant");
    c->add_output(out);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
    return out;
  };
  std::string boxes = kIn + "0", scores = kIn + "1";
  // Corners of every box: [B, N] each.
  std::vector<std::string> comp;
  for (int64_t k = 0; k < 4; ++k) comp.push_back(gather(b, boxes, b.constant_i64({k}, false), 2));
  std::string xmin, xmax, ymin, ymax;
  if (!center) {
    xmin = b.op("Min", {comp[1], comp[3]});
    xmax = b.op("Max", {comp[1], comp[3]});
    ymin = b.op("Min", {comp[0], comp[2]});
    ymax = b.op("Max", {comp[0], comp[2]});
  } else {
    std::string two = fconst(body, b, 2.0f);
    std::string wh = b.op("Div", {comp[2], two}), hh = b.op("Div", {comp[3], two});
    xmin = b.op("Sub", {comp[0], wh});
    xmax = b.op("Add", {comp[0], wh});
    ymin = b.op("Sub", {comp[1], hh});
    ymax = b.op("Add", {comp[1], hh});
  }
  auto pair = [&](const std::string& v, bool first) { return unsq(b, v, first ? 2 : 1); };  // [B, N, 1] / [B, 1, N]
  std::string ixmin = b.op("Max", {pair(xmin, true), pair(xmin, false)});
  std::string ixmax = b.op("Min", {pair(xmax, true), pair(xmax, false)});
  std::string iymin = b.op("Max", {pair(ymin, true), pair(ymin, false)});
  std::string iymax = b.op("Min", {pair(ymax, true), pair(ymax, false)});
  std::string zero = fconst(body, b, 0.0f);
  std::string okx = b.op("Greater", {ixmax, ixmin}), oky = b.op("Greater", {iymax, iymin});
  std::string inter = b.op("Mul", {b.op("Sub", {ixmax, ixmin}), b.op("Sub", {iymax, iymin})});
  std::string area = b.op("Mul", {b.op("Sub", {xmax, xmin}), b.op("Sub", {ymax, ymin})});  // [B, N]
  std::string a1 = pair(area, true), a2 = pair(area, false);
  std::string uni = b.op("Sub", {b.op("Add", {a1, a2}), inter});
  std::string valid = b.op("And", {okx, oky});
  valid = b.op("And", {valid, b.op("Greater", {inter, zero})});
  valid = b.op("And", {valid, b.op("Greater", {a1, zero})});
  valid = b.op("And", {valid, b.op("Greater", {a2, zero})});
  valid = b.op("And", {valid, b.op("Greater", {uni, zero})});
  std::string iou = b.op("Div", {inter, uni});
  std::string thr = present(3) ? b.reshape(kIn + "3", {}) : zero;
  std::string sup = b.op("And", {valid, b.op("Greater", {iou, thr})});
  std::string supf = cast(b, sup, onnx::TensorProto::FLOAT);  // [B, N, N]
  std::string shp = b.op("Shape", {scores});  // [B, C, N]
  std::string nlen = b.op("Slice", {shp, b.constant_i64({2}), b.constant_i64({3})});
  std::string clen = b.op("Slice", {shp, b.constant_i64({1}), b.constant_i64({2})});
  std::string rows_shape = b.op("Concat", {b.constant_i64({-1}), nlen});
  EinsumBuilder::one_int(last(body), "axis", 0);
  std::string sup_rows = b.op("Reshape", {supf, rows_shape});  // [B * N, N]
  // Ranks: box j before box i when s_j > s_i, or equal and j < i.
  std::string ones = b.op("ConstantOfShape", {nlen});
  {
    auto* a = last(body).add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(1);
  }
  std::string iota = b.reshape(b.op("NonZero", {ones}), {-1});  // [N] int64
  std::string iotaf = cast(b, iota, onnx::TensorProto::FLOAT);
  std::string si = unsq(b, scores, 3), sj = unsq(b, scores, 2);  // [B, C, N, 1] (i), [B, C, 1, N] (j)
  std::string higher = b.op("Greater", {sj, si});
  std::string tie = b.op("And", {b.op("Not", {b.op("Greater", {si, sj})}), b.op("Not", {higher})});
  std::string lower_idx = b.op("Less", {unsq(b, iotaf, 0), unsq(b, iotaf, 1)});  // [i, j]: j < i
  std::string before = b.op("Or", {higher, b.op("And", {tie, lower_idx})});
  std::string rank = b.op("ReduceSum", {cast(b, before, onnx::TensorProto::FLOAT)});  // [B, C, N]
  EinsumBuilder::ints(last(body), "axes", {3});
  EinsumBuilder::one_int(last(body), "keepdims", 0);
  std::string at = b.op("Equal", {cast(b, unsq(b, rank, 2), onnx::TensorProto::INT64), unsq(b, iota, 1)});  // [B, C, q, i]
  std::string order = b.op("ArgMax", {cast(b, at, onnx::TensorProto::FLOAT)});  // [B, C, q]
  EinsumBuilder::one_int(last(body), "axis", 3);
  EinsumBuilder::one_int(last(body), "keepdims", 0);
  std::string order_flat = b.reshape(order, {-1});
  std::string scores_flat = b.reshape(scores, {-1});
  std::string nscal = b.reshape(nlen, {}), cscal = b.reshape(clen, {});
  std::string total = b.op("Size", {scores});
  // (compared as floats: Less takes floats only before 9)
  std::string maxo = cast(b, present(2) ? b.reshape(kIn + "2", {}) : b.constant_i64({0}, false), onnx::TensorProto::FLOAT);
  std::string sthr = present(4) ? b.reshape(kIn + "4", {}) : "";
  std::string yes = b.fresh("true");
  {
    auto* c = body.add_node();
    c->set_op_type("Constant");
    c->add_output(yes);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
    a->mutable_t()->add_int32_data(1);
  }
  std::string empty = b.fresh("empty");
  {
    auto* c = body.add_node();
    c->set_op_type("Constant");
    c->add_output(empty);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(0);
    a->mutable_t()->add_dims(3);
  }
  std::string sel0 = b.op("Mul", {iotaf, zero});  // [N] zeros
  std::string cnt0 = b.constant_i64({0}, false);
  auto* loop = body.add_node();
  loop->set_op_type("Loop");
  loop->add_input(total);
  loop->add_input(yes);
  loop->add_input(sel0);
  loop->add_input(cnt0);
  loop->add_input(empty);
  loop->add_output(b.fresh("sel_final"));
  loop->add_output(b.fresh("cnt_final"));
  loop->add_output(kOut + "0");
  auto* la = loop->add_attribute();
  la->set_name("body");
  la->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& lb = *la->mutable_g();
  lb.set_name(b.fresh("nms_loop"));
  EinsumBuilder e{lb, 5000};
  auto vinfo = [](onnx::ValueInfoProto* vi, const std::string& name, int type, int rank) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* sh = tt->mutable_shape();
    for (int k = 0; k < rank; ++k) sh->add_dim();
  };
  std::string t = e.fresh("t"), cin = e.fresh("cond"), sel = e.fresh("sel"), cnt = e.fresh("cnt"), rows = e.fresh("rows");
  vinfo(lb.add_input(), t, onnx::TensorProto::INT64, 0);
  vinfo(lb.add_input(), cin, onnx::TensorProto::BOOL, 0);
  vinfo(lb.add_input(), sel, onnx::TensorProto::FLOAT, 1);
  vinfo(lb.add_input(), cnt, onnx::TensorProto::INT64, 0);
  vinfo(lb.add_input(), rows, onnx::TensorProto::INT64, 2);
  std::string cout = e.op("Identity", {cin});
  std::string bc = e.op("Div", {t, nscal});   // b * C + c
  std::string kq = e.op("Sub", {t, e.op("Mul", {bc, nscal})});
  std::string bb = e.op("Div", {bc, cscal});
  std::string cc = e.op("Sub", {bc, e.op("Mul", {bb, cscal})});
  std::string i = gather(e, order_flat, t, 0);
  std::string score = gather(e, scores_flat, e.op("Add", {e.op("Sub", {t, kq}), i}), 0);
  std::string fresh_set = e.op("Equal", {kq, e.constant_i64({0}, false)});
  std::string keepf = cast(e, e.op("Not", {fresh_set}), onnx::TensorProto::FLOAT);
  std::string keepi = cast(e, e.op("Not", {fresh_set}), onnx::TensorProto::INT64);
  std::string sel_now = e.op("Mul", {sel, keepf});
  std::string cnt_now = e.op("Mul", {cnt, keepi});
  std::string srow = gather(e, sup_rows, e.op("Add", {e.op("Mul", {bb, nscal}), i}), 0);  // [N]
  std::string hit = e.op("ReduceMax", {e.op("Mul", {sel_now, srow})});
  EinsumBuilder::one_int(last(lb), "keepdims", 0);
  std::string half = fconst(lb, e, 0.5f);
  std::string ok = e.op("Not", {e.op("Greater", {hit, half})});
  ok = e.op("And", {ok, e.op("Less", {cast(e, cnt_now, onnx::TensorProto::FLOAT), maxo})});
  if (!sthr.empty()) ok = e.op("And", {ok, e.op("Greater", {score, sthr})});
  std::string okf = cast(e, ok, onnx::TensorProto::FLOAT);
  std::string onehot = cast(e, e.op("Equal", {iota, i}), onnx::TensorProto::FLOAT);
  std::string sel_out = e.op("Add", {sel_now, e.op("Mul", {onehot, okf})});
  std::string cnt_out = e.op("Add", {cnt_now, cast(e, ok, onnx::TensorProto::INT64)});
  std::string rows_out = e.fresh("rows_out");
  auto* iff = lb.add_node();
  iff->set_op_type("If");
  iff->add_input(ok);
  iff->add_output(rows_out);
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* ba = iff->add_attribute();
    ba->set_name(branch);
    ba->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& bg = *ba->mutable_g();
    bg.set_name(e.fresh(branch));
    EinsumBuilder f{bg, branch[0] == 't' ? 6000 : 6500};
    std::string o = f.fresh("o");
    vinfo(bg.add_output(), o, onnx::TensorProto::INT64, 2);
    if (branch[0] == 't') {
      std::string row = f.op("Concat", {f.reshape(bb, {1}), f.reshape(cc, {1}), f.reshape(i, {1})});
      EinsumBuilder::one_int(last(bg), "axis", 0);
      f.op("Concat", {rows, f.reshape(row, {1, 3})}, o);
      EinsumBuilder::one_int(last(bg), "axis", 0);
    } else {
      f.op("Identity", {rows}, o);
    }
  }
  vinfo(lb.add_output(), cout, onnx::TensorProto::BOOL, 0);
  vinfo(lb.add_output(), sel_out, onnx::TensorProto::FLOAT, 1);
  vinfo(lb.add_output(), cnt_out, onnx::TensorProto::INT64, 0);
  vinfo(lb.add_output(), rows_out, onnx::TensorProto::INT64, 2);
  return {};
}

// MelWeightMatrix (new in 17) below 17: onnxruntime's computation in float32 written with Range:
// the num_mel_bins + 2 points evenly spaced in mel (2595 log10(1 + hz / 700): Log / ln 10) turned
// back into hertz (700 (10^(m / 2595) - 1), Pow) and into spectrogram bins floor((dft_length + 1)
// hz / sample_rate); filter i rises from bin[i] to bin[i + 1] ((j - lower) / (center - lower), or 1
// at the center when they are equal) and falls to bin[i + 2] ((higher - j) / (higher - center),
// written last); rows 0 .. dft_length / 2 (0/1 masks over [bins, filters]).
std::string lower_melweightmatrix(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                                  const std::vector<onnx::TypeProto>&, onnx::GraphProto& body) {
  if (ins.size() < 5) return "its five inputs";
  const ir::Value* dv = ir::get_attr(g, op, "output_datatype");
  int out_type = dv && dv->is_int() ? int(dv->as_int()) : onnx::TensorProto::FLOAT;
  EinsumBuilder b{body};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto cast = [&](const std::string& x, int to) {
    std::string o = b.op("Cast", {x});
    EinsumBuilder::one_int(last(), "to", to);
    return o;
  };
  auto f = [&](float v) {
    std::string out = b.fresh("f");
    auto* c = body.add_node();
    c->set_op_type("Constant");
    c->add_output(out);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
    return out;
  };
  auto i64 = [&](int64_t v) { return b.constant_i64({v}, false); };
  auto scalar = [&](int k, int to) { return cast(b.reshape(kIn + std::to_string(k), {}), to); };
  std::string nmb = scalar(0, onnx::TensorProto::INT64), dft = scalar(1, onnx::TensorProto::INT64);
  std::string sr = scalar(2, onnx::TensorProto::FLOAT);
  std::string lo = scalar(3, onnx::TensorProto::FLOAT), hi = scalar(4, onnx::TensorProto::FLOAT);
  auto mel = [&](const std::string& hz) {
    std::string v = b.op("Add", {f(1.0f), b.op("Div", {hz, f(700.0f)})});
    std::string l10 = b.op("Div", {b.op("Log", {v}), f(std::log(10.0f))});
    return b.op("Mul", {f(2595.0f), l10});
  };
  std::string lmel = mel(lo), hmel = mel(hi);
  std::string npts = b.op("Add", {nmb, i64(2)});
  std::string step = b.op("Div", {b.op("Sub", {hmel, lmel}), cast(npts, onnx::TensorProto::FLOAT)});
  std::string idx = cast(b.op("Range", {i64(0), npts, i64(1)}), onnx::TensorProto::FLOAT);
  std::string m = b.op("Add", {lmel, b.op("Mul", {step, idx})});
  std::string hz = b.op("Mul", {f(700.0f), b.op("Sub", {b.op("Pow", {f(10.0f), b.op("Div", {m, f(2595.0f)})}), f(1.0f)})});
  std::string dft1 = cast(b.op("Add", {dft, i64(1)}), onnx::TensorProto::FLOAT);
  std::string bins = cast(b.op("Floor", {b.op("Div", {b.op("Mul", {dft1, hz}), sr})}), onnx::TensorProto::INT64);  // [K]
  auto part = [&](int64_t from) {  // bins[from .. from + nmb) (Gather at a Range: no Slice bounds at run time before 10)
    std::string at = b.op("Range", {i64(from), b.op("Add", {nmb, i64(from)}), i64(1)});
    std::string o = b.op("Gather", {bins, at});
    EinsumBuilder::one_int(last(), "axis", 0);
    return b.reshape(o, {1, -1});  // [1, nmb]
  };
  std::string lower = part(0), centre = part(1), higher = part(2);
  std::string nspec = b.op("Add", {b.op("Div", {dft, i64(2)}), i64(1)});
  std::string j = b.reshape(b.op("Range", {i64(0), nspec, i64(1)}), {-1, 1});  // [S, 1]
  // Bins compared as float (exact: small integers; Less/Greater take floats only before 9), the
  // weights blended with 0/1 masks (exact: every term is finite, the divisors not 0; Where
  // before 9 needs the output's shape).
  auto fl = [&](const std::string& x) { return cast(x, onnx::TensorProto::FLOAT); };
  std::string jf = fl(j), lowf = fl(lower), cenf = fl(centre), higf = fl(higher);
  std::string ltc = b.op("Sub", {cenf, lowf}), cth = b.op("Sub", {higf, cenf});
  std::string zf = f(0.0f), one = f(1.0f);
  std::string ge_l = b.op("Not", {b.op("Less", {jf, lowf})});
  std::string le_c = b.op("Not", {b.op("Greater", {jf, cenf})});
  std::string rising = fl(b.op("And", {b.op("And", {ge_l, le_c}), b.op("Greater", {ltc, zf})}));
  std::string at_c = b.op("And", {b.op("Not", {b.op("Less", {jf, cenf})}), b.op("Not", {b.op("Greater", {jf, cenf})})});
  std::string flat = b.op("Not", {b.op("Greater", {ltc, zf})});
  std::string peak = fl(b.op("And", {at_c, flat}));
  std::string half = f(0.5f);
  auto at_least_1 = [&](const std::string& d) { return b.op("Add", {d, fl(b.op("Less", {d, half}))}); };  // (no broadcasting Max before 8)
  std::string up = b.op("Div", {b.op("Sub", {jf, lowf}), at_least_1(ltc)});
  std::string ge_c = b.op("Not", {b.op("Less", {jf, cenf})});
  std::string lt_h = b.op("Less", {jf, higf});
  std::string falling = fl(b.op("And", {ge_c, lt_h}));
  std::string down = b.op("Div", {b.op("Sub", {higf, jf}), at_least_1(cth)});
  auto blend = [&](const std::string& mask, const std::string& a, const std::string& rest) {
    return b.op("Add", {b.op("Mul", {mask, a}), b.op("Mul", {b.op("Sub", {one, mask}), rest})});
  };
  std::string w = b.op("Mul", {rising, up});
  w = blend(peak, one, w);
  w = blend(falling, down, w);
  b.op("Cast", {w}, kOut + "0");
  EinsumBuilder::one_int(last(), "to", out_type);
  return {};
}

// TfIdfVectorizer (new in 9) below 9, for an integer input of known shape: every n-gram length n in
// [min_gram_length, max_gram_length] and skip s (0 only for unigrams, else 0..max_skip_count) is a
// set of constant positions; the n shifted copies of the input (Gather at constant indices, one row
// at a time: n-grams do not cross rows) are compared with each pool n-gram's tokens (Equal, And),
// and the matches counted (ReduceSum). A constant 0/1 matrix puts each pool entry's count at its
// ngram_indexes column (MatMul: exact for counts below 2^24); IDF keeps 1 where the count is
// positive, IDF and TFIDF multiply by the weights. String pools: no op before 9 compares strings.
std::string lower_tfidf(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                        const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  auto ints = [&](const char* name) {
    std::vector<int64_t> v;
    if (const ir::Value* a = ir::get_attr(g, op, name); a && a->is_list())
      for (const auto& x : a->as_list())
        if (x.is_int()) v.push_back(x.as_int());
    return v;
  };
  auto one = [&](const char* name, int64_t d) {
    const ir::Value* a = ir::get_attr(g, op, name);
    return a && a->is_int() ? a->as_int() : d;
  };
  std::vector<int64_t> pool = ints("pool_int64s"), counts = ints("ngram_counts"), indexes = ints("ngram_indexes");
  if (pool.empty()) return "pool_int64s (a string pool: no op before 9 compares strings)";
  if (ins.empty() || !types[0].has_tensor_type() || !types[0].tensor_type().has_shape()) return "the input's shape";
  const auto& sh = types[0].tensor_type().shape();
  int rank = sh.dim_size();
  if (rank < 1 || rank > 2 || !sh.dim(rank - 1).has_dim_value()) return "a 1-D or 2-D input whose rows' length is known";
  int elem = types[0].tensor_type().elem_type();
  if (elem != onnx::TensorProto::INT64 && elem != onnx::TensorProto::INT32) return "an int32 or int64 input";
  const int64_t L = sh.dim(rank - 1).dim_value();
  const int64_t lo = one("min_gram_length", 1), hi = one("max_gram_length", 1), skips = one("max_skip_count", 0);
  std::string mode = "TF";
  if (const ir::Value* m = ir::get_attr(g, op, "mode"); m && m->is_string()) mode = m->as_string();
  std::vector<double> weights;
  if (const ir::Value* w = ir::get_attr(g, op, "weights"); w && w->is_list())
    for (const auto& x : w->as_list()) weights.push_back(x.is_float() ? x.as_float() : x.is_int() ? double(x.as_int()) : 1.0);
  // Pool entries: (n, first token offset) in pool order.
  std::vector<std::pair<int64_t, int64_t>> entries;
  for (size_t k = 0; k < counts.size(); ++k) {
    int64_t n = int64_t(k) + 1, from = counts[k], to = k + 1 < counts.size() ? counts[k + 1] : int64_t(pool.size());
    if (from < 0 || to > int64_t(pool.size()) || (to - from) % n) return "ngram_counts consistent with pool_int64s";
    for (int64_t at = from; at < to; at += n) entries.push_back({n, at});
  }
  if (entries.size() != indexes.size()) return "one ngram_indexes entry per pool n-gram";
  int64_t width = 0;
  for (int64_t x : indexes) width = std::max(width, x + 1);
  EinsumBuilder b{body};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto tensor_const = [&](int type, const std::vector<int64_t>& dims, const std::vector<double>& v) {
    std::string out = b.fresh("k");
    auto* c = body.add_node();
    c->set_op_type("Constant");
    c->add_output(out);
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    for (double x : v) {
      if (type == onnx::TensorProto::FLOAT) t->add_float_data(float(x));
      else if (type == onnx::TensorProto::INT32) t->add_int32_data(int32_t(x));
      else t->add_int64_data(int64_t(x));
    }
    return out;
  };
  std::string x = b.reshape(kIn + "0", {-1, L});  // [B, L]
  std::vector<std::string> per_entry_counts(entries.size());
  for (int64_t n = lo; n <= hi; ++n) {
    std::vector<size_t> of_n;
    for (size_t k = 0; k < entries.size(); ++k)
      if (entries[k].first == n) of_n.push_back(k);
    if (of_n.empty()) continue;
    const int64_t G = int64_t(of_n.size());
    std::string total;
    for (int64_t s = 0; s <= (n == 1 ? 0 : skips); ++s) {
      const int64_t dist = s + 1, npos = L - (n - 1) * dist;
      if (npos <= 0) continue;
      std::string match;
      for (int64_t m = 0; m < n; ++m) {
        std::vector<int64_t> at(npos);
        for (int64_t i = 0; i < npos; ++i) at[i] = i + m * dist;
        std::string xm = b.op("Gather", {x, b.constant_i64(at)});  // [B, npos]
        EinsumBuilder::one_int(last(), "axis", 1);
        std::string xm3 = b.op("Unsqueeze", {xm});  // [B, 1, npos]
        EinsumBuilder::ints(last(), "axes", {1});
        std::vector<double> tok(G);
        for (int64_t k = 0; k < G; ++k) tok[k] = double(pool[entries[of_n[k]].second + m]);
        std::string eq = b.op("Equal", {xm3, tensor_const(elem, {1, G, 1}, tok)});  // [B, G, npos]
        match = match.empty() ? eq : b.op("And", {match, eq});
      }
      std::string c = b.op("ReduceSum", {b.op("Cast", {match})});
      EinsumBuilder::one_int(*body.mutable_node(body.node_size() - 2), "to", onnx::TensorProto::FLOAT);
      EinsumBuilder::ints(last(), "axes", {2});
      EinsumBuilder::one_int(last(), "keepdims", 0);  // [B, G]
      total = total.empty() ? c : b.op("Add", {total, c});
    }
    if (total.empty()) continue;
    // Place the G counts at their columns: [B, G] x [G, width].
    std::vector<double> place(size_t(G * width), 0.0);
    for (int64_t k = 0; k < G; ++k) {
      size_t e = of_n[k];
      double w = e < weights.size() ? weights[e] : 1.0;
      place[size_t(k * width + indexes[e])] = mode == "TF" ? 1.0 : w;
    }
    std::string cnt = total;
    if (mode == "IDF") {
      std::string pos = b.op("Greater", {cnt, tensor_const(onnx::TensorProto::FLOAT, {}, {0.0})});
      cnt = b.op("Cast", {pos});
      EinsumBuilder::one_int(last(), "to", onnx::TensorProto::FLOAT);
    }
    per_entry_counts[of_n[0]] = b.op("MatMul", {cnt, tensor_const(onnx::TensorProto::FLOAT, {G, width}, place)});
  }
  std::string out;
  for (const auto& c : per_entry_counts)
    if (!c.empty()) out = out.empty() ? c : b.op("Add", {out, c});
  if (out.empty()) {  // no n-gram length in range: zeros
    std::string xf = b.op("Cast", {x});
    EinsumBuilder::one_int(last(), "to", onnx::TensorProto::FLOAT);
    out = b.op("MatMul", {xf, tensor_const(onnx::TensorProto::FLOAT, {L, width}, std::vector<double>(size_t(L * width), 0.0))});
  }
  if (rank == 1) out = b.reshape(out, {width});
  b.op("Identity", {out}, kOut + "0");
  return {};
}

// ---------------------------------------------------------------- lowerings of refused cases
// A small builder for the bodies below: ops with attributes, constants, If and Loop whose branches
// and bodies are written by callbacks. Names share one counter (a nested graph may not reuse an
// outer value's name).
struct GB {
  onnx::GraphProto& g;
  int* n;
  onnx::NodeProto* last = nullptr;
  std::string fresh(const std::string& w) { return "lw_" + w + std::to_string((*n)++); }
  std::string op(const std::string& type, const std::vector<std::string>& ins, const std::string& out = "") {
    std::string o = out.empty() ? fresh(type) : out;
    last = g.add_node();
    last->set_op_type(type);
    for (auto& x : ins) last->add_input(x);
    last->add_output(o);
    return o;
  }
  GB& i(const char* name, int64_t v) {
    EinsumBuilder::one_int(*last, name, v);
    return *this;
  }
  GB& is(const char* name, const std::vector<int64_t>& v) {
    EinsumBuilder::ints(*last, name, v);
    return *this;
  }
  GB& f(const char* name, float v) {
    auto* a = last->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
    return *this;
  }
  GB& s(const char* name, const std::string& v) {
    auto* a = last->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }
  // A constant of `type` (ONNX's element type code); dims {} is a scalar.
  std::string c(int type, const std::vector<int64_t>& dims, const std::vector<double>& v) {
    std::string out = fresh("c");
    auto* nd = g.add_node();
    nd->set_op_type("Constant");
    nd->add_output(out);
    auto* a = nd->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
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
  std::string ci(const std::vector<int64_t>& v) { return c(onnx::TensorProto::INT64, {int64_t(v.size())}, std::vector<double>(v.begin(), v.end())); }
  std::string si(int64_t v) { return c(onnx::TensorProto::INT64, {}, {double(v)}); }
  static void vi(onnx::ValueInfoProto* v, const std::string& name, int type, int rank = -1) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    if (rank >= 0) {
      auto* sh = tt->mutable_shape();
      for (int k = 0; k < rank; ++k) sh->add_dim();
    }
  }
  using Branch = std::function<std::vector<std::string>(GB&)>;
  // If(cond): outputs of the given element types (shapes left to the branches).
  std::vector<std::string> if_(const std::string& cond, const std::vector<int>& types, const Branch& then_b, const Branch& else_b) {
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
      GB bb{bg, n};
      std::vector<std::string> r = (k == 0 ? then_b : else_b)(bb);
      for (size_t j = 0; j < r.size(); ++j) {
        std::string o = bb.op("Identity", {r[j]});  // a branch output is a value the branch makes
        vi(bg.add_output(), o, types[j]);
      }
    }
    last = nd;
    return outs;
  }
  // Loop(trip, cond) with carried values (inits, types) and scan outputs (types): the body gets
  // (iteration, carried...) and returns (carried..., scans...); its condition stays true.
  std::vector<std::string> loop(const std::string& trip, const std::vector<std::string>& inits, const std::vector<int>& carried_types,
                                const std::vector<int>& scan_types,
                                const std::function<std::vector<std::string>(GB&, const std::string&, const std::vector<std::string>&)>& body) {
    if (carried_types.empty()) {  // a Loop carries one value at least (amanda's schema): a dummy
      std::vector<std::string> r = loop(trip, {si(0)}, {onnx::TensorProto::INT64}, scan_types,
                                        [&](GB& bb, const std::string& it, const std::vector<std::string>& v) {
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
    GB bb{bg, n};
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
};

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

// ReduceSum (13 takes axes as an input) with axes at run time, below 13 (axes an attribute): for
// each axis a of the input (rank known), from the last to the first, If(a is among the axes: one
// of them equals a or a - rank) then ReduceSum over [a] (a constant: the table makes it the
// attribute) else Identity. Reducing the last axes first keeps the numbers of the others. Empty axes:
// every axis, or none with noop_with_empty_axes (a count of the axes equal to 0 joins the test).
// keepdims 0: the reduced input (keepdims 1) reshaped to the kept axes' lengths.
std::string lower_reducesum_axes(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                                 const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  int r = known_rank(types, 0);
  if (r < 0) return "the rank of the input (one If per axis)";
  int elem = elem_of(types, 0);
  if (!elem) return "the input's element type";
  int64_t keep = int_attr(g, op, "keepdims", 1), noop = int_attr(g, op, "noop_with_empty_axes", 0);
  int counter = 0;
  GB b{body, &counter};
  std::string x = kIn + "0";
  if (!present(g, ins, 1)) {  // no axes: every axis, or none
    if (noop) b.op("Identity", {x}, kOut + "0");
    else b.op("ReduceSum", {x}, kOut + "0"), b.i("keepdims", keep);
    return {};
  }
  std::string axes = b.op("Concat", {kIn + "1", b.ci({r})});  // r matches no axis: never empty
  b.i("axis", 0);
  std::string empty;
  if (!noop) {
    std::string n = b.op("Size", {kIn + "1"});
    empty = b.op("Cast", {b.op("Equal", {n, b.si(0)})});
    b.i("to", onnx::TensorProto::INT64);
  }
  // Each branch's output goes through Reshape(v, Shape(v) * one), one a 1 computed from the axes:
  // its lengths unknown to shape inference (onnxruntime's propagates Shape), which before opset 11
  // refuses to merge two branches of different known lengths.
  std::string one;
  {
    std::string ai = b.op("Cast", {b.op("ReduceMax", {b.op("Cast", {axes})})});
    b.i("to", onnx::TensorProto::INT64);
    body.mutable_node(body.node_size() - 2)->clear_attribute();
    EinsumBuilder::one_int(*body.mutable_node(body.node_size() - 2), "keepdims", 0);
    EinsumBuilder::one_int(*body.mutable_node(body.node_size() - 3), "to", onnx::TensorProto::INT64);
    one = b.op("Add", {b.op("Mul", {ai, b.si(0)}), b.si(1)});
  }
  auto opaque = [&](GB& t, const std::string& v) { return t.op("Reshape", {v, t.op("Mul", {t.op("Shape", {v}), one})}); };
  std::string cur = x;
  std::vector<std::string> conds(static_cast<size_t>(r));
  for (int a = r - 1; a >= 0; --a) {
    std::string e = b.op("Or", {b.op("Equal", {axes, b.ci({a})}), b.op("Equal", {axes, b.ci({a - r})})});
    std::string ei = b.op("Cast", {e});  // ReduceMax takes no bools
    b.i("to", onnx::TensorProto::INT64);
    std::string m = b.op("ReduceMax", {ei});
    b.i("keepdims", 0);
    if (!empty.empty()) m = b.op("Add", {m, empty});
    std::string cond = b.op("Cast", {m});
    b.i("to", onnx::TensorProto::BOOL);
    conds[size_t(a)] = cond;
    std::string in = cur;
    cur = b.if_(cond, {elem},
                [&](GB& t) {
                  std::string y = t.op("ReduceSum", {in, t.ci({a})});
                  t.i("keepdims", 1);
                  return std::vector<std::string>{opaque(t, y)};
                },
                [&](GB& e2) { return std::vector<std::string>{opaque(e2, in)}; })[0];
  }
  if (!keep) {
    // The reduced axes dropped: the input's lengths of the kept axes (an If per axis gives its
    // length or nothing), concatenated, are the output's shape. (Reshape before 14 reads a 0 as
    // "copy the input's length there": a kept axis of length 0 after a reduced one would take
    // another length; an empty tensor's shape may then be wrong.)
    std::string sh = b.op("Shape", {x});
    std::vector<std::string> pieces;
    for (int a = 0; a < r; ++a) {
      pieces.push_back(b.if_(conds[size_t(a)], {onnx::TensorProto::INT64},
                             [&](GB& t) { return std::vector<std::string>{opaque(t, t.c(onnx::TensorProto::INT64, {0}, {}))}; },
                             [&](GB& e2) {
                               std::string p = e2.op("Slice", {sh, e2.ci({a}), e2.ci({a + 1}), e2.ci({0})});
                               return std::vector<std::string>{opaque(e2, p)};
                             })[0]);
    }
    std::string target = pieces.size() == 1 ? pieces[0] : b.op("Concat", pieces);
    if (pieces.size() > 1) b.i("axis", 0);
    cur = b.op("Reshape", {cur, target});
  }
  b.op("Identity", {cur}, kOut + "0");
  return {};
}

// The int64 values of a constant input (int32 or int64), or nullopt.
std::optional<std::vector<int64_t>> const_ints(const ir::Graph& g, const std::vector<ir::PortId>& ins, size_t k) {
  if (!present(g, ins, k)) return std::nullopt;
  const ir::Value* v = ir::constant_tensor(g, g.producer(ins[k]));
  if (!v || !v->is_tensor()) return std::nullopt;
  const ir::Tensor& t = v->as_tensor();
  std::vector<int64_t> out;
  if (t.dtype == ir::DType::Int64) {
    out.resize(t.size / 8);
    if (!out.empty()) std::memcpy(out.data(), t.data, out.size() * 8);
  } else if (t.dtype == ir::DType::Int32) {
    std::vector<int32_t> w(t.size / 4);
    if (!w.empty()) std::memcpy(w.data(), t.data, w.size() * 4);
    out.assign(w.begin(), w.end());
  } else {
    return std::nullopt;
  }
  return out;
}

// One axis of a Slice with bounds at run time, in ops every opset from 7 has, on float64 scalars
// s, e, st (exact below 2^53; a bound beyond the axis, INT64_MAX included, clamps either way):
// start and end counted from the end when negative, clamped as ONNX's Slice does ([0, d] for a
// positive step; [0, d-1] and [-1, d-1] for a negative one), n = max(0, ceil((end - start) / step))
// positions start + i*step made by a Loop of n iterations (no op before Range, 11, makes a length
// known at run time only), then Gather on the axis.
std::string slice_axis_by_loop(GB& b, const std::string& x, int64_t axis, const std::string& s, const std::string& e,
                               const std::string& st) {
  const int D = onnx::TensorProto::DOUBLE, I = onnx::TensorProto::INT64;
  auto cast = [&](const std::string& v, int to) {
    std::string r = b.op("Cast", {v});
    b.i("to", to);
    return r;
  };
  std::string d = b.op("Gather", {b.op("Shape", {x}), b.si(axis)});
  b.i("axis", 0);
  d = cast(d, D);
  auto wrap = [&](const std::string& v) {  // v + d * (v < 0)
    std::string neg = cast(b.op("Less", {v, b.c(D, {}, {0.0})}), D);
    return b.op("Add", {v, b.op("Mul", {neg, d})});
  };
  std::string pos = cast(b.op("Greater", {st, b.c(D, {}, {0.0})}), D);  // 1: a positive step
  std::string negf = b.op("Sub", {b.c(D, {}, {1.0}), pos});
  std::string hi = b.op("Sub", {d, negf});  // d, or d - 1
  std::string lo_e = b.op("Neg", {negf});   // 0, or -1
  // Max and Min as selections (onnxruntime has no float64 Max/Min at opset 7): p*c + q*(1-c), c
  // 0 or 1, exact for finite values.
  auto sel = [&](const std::string& c, const std::string& p, const std::string& q) {
    std::string cf = cast(c, D);
    std::string nc = b.op("Sub", {b.c(D, {}, {1.0}), cf});
    return b.op("Add", {b.op("Mul", {p, cf}), b.op("Mul", {q, nc})});
  };
  auto max2 = [&](const std::string& p, const std::string& q) { return sel(b.op("Less", {p, q}), q, p); };
  auto min2 = [&](const std::string& p, const std::string& q) { return sel(b.op("Less", {q, p}), q, p); };
  std::string s1 = min2(max2(wrap(s), b.c(D, {}, {0.0})), hi);
  std::string e1 = min2(max2(wrap(e), lo_e), hi);
  std::string n = max2(b.op("Ceil", {b.op("Div", {b.op("Sub", {e1, s1}), st})}), b.c(D, {}, {0.0}));
  std::string si = cast(s1, I), sti = cast(st, I), ni = cast(n, I);
  std::string idx = b.loop(ni, {}, {}, {I}, [&](GB& lb, const std::string& it, const std::vector<std::string>&) {
    return std::vector<std::string>{lb.op("Add", {si, lb.op("Mul", {it, sti})})};
  })[0];
  std::string y = b.op("Gather", {x, idx});
  b.i("axis", axis);
  return y;
}

// Slice (10 takes starts/ends/axes/steps as inputs) below 10, when the table's rules refuse it
// (bounds or steps at run time, several axes, axes at run time): slice_axis_by_loop on each axis.
// Constant axes (or none: 0..n-1 for n starts, n known): the k-th entries of starts/ends/steps
// (Gather) on axis k. Axes at run time: every axis a of the input (its rank known) is sliced, with
// the entries whose axis is a or a - rank picked by a 0/1 mask (sum of mask * entry), and 0, d, 1
// (the whole axis) when none is.
std::string lower_slice_runtime(const ir::Graph& g, ir::OpId, const std::vector<ir::PortId>& ins,
                                const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  const int D = onnx::TensorProto::DOUBLE;
  int r = known_rank(types, 0);
  if (r < 0) return "the rank of the input";
  int counter = 0;
  GB b{body, &counter};
  auto cast = [&](const std::string& v, int to) {
    std::string o = b.op("Cast", {v});
    b.i("to", to);
    return o;
  };
  std::string cur = kIn + "0";
  std::string sd = cast(kIn + "1", D), ed = cast(kIn + "2", D);
  std::string std_ = present(g, ins, 4) ? cast(kIn + "4", D) : "";
  std::optional<std::vector<int64_t>> axes;
  if (present(g, ins, 3)) {
    axes = const_ints(g, ins, 3);
  } else {
    int n = known_rank(types, 1) == 1 && types[1].tensor_type().shape().dim(0).has_dim_value() ? int(types[1].tensor_type().shape().dim(0).dim_value()) : -1;
    if (n < 0) return "the number of starts (no axes given)";
    axes.emplace();
    for (int k = 0; k < n; ++k) axes->push_back(k);
  }
  if (axes) {
    auto pick = [&](const std::string& v, int64_t k) {
      std::string o = b.op("Gather", {v, b.si(k)});
      b.i("axis", 0);
      return o;
    };
    for (size_t k = 0; k < axes->size(); ++k) {
      int64_t a = (*axes)[k] < 0 ? (*axes)[k] + r : (*axes)[k];
      if (a < 0 || a >= r) return "axes within the input's rank";
      cur = slice_axis_by_loop(b, cur, a, pick(sd, int64_t(k)), pick(ed, int64_t(k)), std_.empty() ? b.c(D, {}, {1.0}) : pick(std_, int64_t(k)));
    }
  } else {
    std::string ax = kIn + "3";
    for (int a = 0; a < r; ++a) {
      std::string m = cast(b.op("Or", {b.op("Equal", {ax, b.c(elem_of(types, 3), {}, {double(a)})}), b.op("Equal", {ax, b.c(elem_of(types, 3), {}, {double(a - r)})})}), D);
      auto sum = [&](const std::string& v) {
        std::string o = b.op("ReduceSum", {v});
        b.i("keepdims", 0);
        return o;
      };
      std::string any = sum(m), none = b.op("Sub", {b.c(D, {}, {1.0}), any});
      std::string d = b.op("Gather", {b.op("Shape", {cur}), b.si(a)});
      b.i("axis", 0);
      d = cast(d, D);
      std::string s = sum(b.op("Mul", {m, sd}));
      std::string e = b.op("Add", {sum(b.op("Mul", {m, ed})), b.op("Mul", {none, d})});
      std::string st = std_.empty() ? b.c(D, {}, {1.0}) : b.op("Add", {sum(b.op("Mul", {m, std_})), none});
      cur = slice_axis_by_loop(b, cur, a, s, e, st);
    }
  }
  b.op("Identity", {cur}, kOut + "0");
  return {};
}

// 0, 1, ..., n-1 (n an int64 scalar at run time) as float64: a Loop's scan output (Range is new in 11).
std::string arange_by_loop(GB& b, const std::string& n) {
  std::string r = b.loop(n, {}, {}, {onnx::TensorProto::INT64}, [&](GB& lb, const std::string& it, const std::vector<std::string>&) {
    return std::vector<std::string>{lb.op("Identity", {it})};
  })[0];
  std::string d = b.op("Cast", {r});
  b.i("to", onnx::TensorProto::DOUBLE);
  return d;
}

// Pad (11 takes pads and constant_value as inputs) below 11 with them at run time: along each axis
// a (rank known) the output's positions j = 0 .. d + begin + end - 1 (a Loop makes them) read the
// input at i = j - begin: constant mode, the input with one slice of the value appended (Tile of
// the value: exact for every value) and i where 0 <= i < d, else that slice; edge, i clamped to
// [0, d-1]; reflect, i mirrored (i mod 2(d-1), then 2(d-1) - i past the end). Gather on the axis.
// Index arithmetic in float64 scalars and vectors (exact below 2^53); negative pads crop.
std::string lower_pad_runtime(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                              const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  const int D = onnx::TensorProto::DOUBLE, I = onnx::TensorProto::INT64;
  int r = known_rank(types, 0);
  if (r < 0) return "the rank of the input";
  int elem = elem_of(types, 0);
  if (!elem) return "the input's element type";
  const ir::Value* mv = ir::get_attr(g, op, "mode");
  std::string mode = mv && mv->is_string() ? mv->as_string() : "constant";
  if (mode != "constant" && mode != "edge" && mode != "reflect") return "a mode of constant, edge or reflect";
  int counter = 0;
  GB b{body, &counter};
  auto cast = [&](const std::string& v, int to) {
    std::string o = b.op("Cast", {v});
    b.i("to", to);
    return o;
  };
  auto sel = [&](const std::string& c, const std::string& p, const std::string& q) {  // c ? p : q
    std::string cf = cast(c, D);
    std::string nc = b.op("Sub", {b.c(D, {}, {1.0}), cf});
    return b.op("Add", {b.op("Mul", {p, cf}), b.op("Mul", {q, nc})});
  };
  auto maxv = [&](const std::string& p, const std::string& q) { return sel(b.op("Less", {p, q}), q, p); };
  auto minv = [&](const std::string& p, const std::string& q) { return sel(b.op("Less", {q, p}), q, p); };
  auto zero = [&] { return b.c(D, {}, {0.0}); };
  std::string pads = cast(kIn + "1", D);
  std::string value;
  if (mode == "constant") {
    if (present(g, ins, 2)) value = b.op("Reshape", {kIn + "2", b.ci(std::vector<int64_t>(size_t(r), 1))});
    else value = b.c(elem, std::vector<int64_t>(size_t(r), 1), {0.0});
  }
  std::string cur = kIn + "0";
  for (int a = 0; a < r; ++a) {
    std::string shape = b.op("Shape", {cur});
    std::string di = b.op("Gather", {shape, b.si(a)});
    b.i("axis", 0);
    std::string d = cast(di, D);
    std::string pb = b.op("Gather", {pads, b.si(a)});
    b.i("axis", 0);
    std::string pe = b.op("Gather", {pads, b.si(a + r)});
    b.i("axis", 0);
    std::string len = maxv(b.op("Add", {b.op("Add", {d, pb}), pe}), zero());
    std::string j = arange_by_loop(b, cast(len, I));
    std::string i = b.op("Sub", {j, pb});
    std::string idx, src = cur;
    if (mode == "constant") {
      // one slice of the value appended along the axis: its index is d
      std::vector<int64_t> keep(size_t(r), 1), one_at(size_t(r), 0);
      keep[size_t(a)] = 0;
      one_at[size_t(a)] = 1;
      std::string reps = b.op("Add", {b.op("Mul", {shape, b.ci(keep)}), b.ci(one_at)});  // the shape with 1 at a
      src = b.op("Concat", {cur, b.op("Tile", {value, reps})});
      b.i("axis", a);
      std::string inside = b.op("And", {b.op("Not", {b.op("Less", {i, zero()})}), b.op("Less", {i, d})});
      idx = sel(inside, i, d);
    } else if (mode == "edge") {
      idx = minv(maxv(i, zero()), b.op("Sub", {d, b.c(D, {}, {1.0})}));
    } else {
      std::string m = maxv(b.op("Mul", {b.op("Sub", {d, b.c(D, {}, {1.0})}), b.c(D, {}, {2.0})}), b.c(D, {}, {1.0}));
      std::string k = b.op("Sub", {i, b.op("Mul", {m, b.op("Floor", {b.op("Div", {i, m})})})});
      idx = sel(b.op("Less", {k, d}), k, b.op("Sub", {m, k}));
    }
    cur = b.op("Gather", {src, cast(idx, I)});
    b.i("axis", a);
  }
  b.op("Identity", {cur}, kOut + "0");
  return {};
}

// TopK (10 takes K as an input) below 10 with K at run time: TopK with k the whole axis (its length
// known: k is an attribute there), then the first K of both outputs (Gather at 0..K-1, a Loop
// makes them). The full sort's first K are TopK's K (sorted, the same tie order).
std::string lower_topk_runtime(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                               const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  int r = known_rank(types, 0);
  if (r < 0) return "the rank of the input";
  int64_t axis = int_attr(g, op, "axis", -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return "an axis within the input's rank";
  const auto& dim = types[0].tensor_type().shape().dim(int(axis));
  if (!dim.has_dim_value()) return "the input's length along the axis (opset 9's TopK takes k as an attribute)";
  int counter = 0;
  GB b{body, &counter};
  std::string top = b.op("TopK", {kIn + "0", b.ci({dim.dim_value()})});
  onnx::NodeProto* t = b.last;
  t->set_output(0, b.fresh("values"));
  t->add_output(b.fresh("indices"));
  EinsumBuilder::one_int(*t, "axis", axis);
  // largest/sorted (TopK 11): passed on when not their defaults (the table converts or refuses them)
  for (const char* a : {"largest", "sorted"})
    if (int_attr(g, op, a, 1) != 1) EinsumBuilder::one_int(*t, a, 0);
  std::string vals = t->output(0), idxs = t->output(1);
  std::string k = b.op("Reshape", {kIn + "1", b.ci({})});  // K: [1] -> a scalar trip count
  std::string ar = b.loop(k, {}, {}, {onnx::TensorProto::INT64}, [&](GB& lb, const std::string& it, const std::vector<std::string>&) {
    return std::vector<std::string>{lb.op("Identity", {it})};
  })[0];
  b.op("Gather", {vals, ar}, kOut + "0");
  b.i("axis", axis);
  b.op("Gather", {idxs, ar}, kOut + "1");
  b.i("axis", axis);
  (void)top;
  return {};
}

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

// Resize with coordinate_transformation_mode tf_crop_and_resize (roi may be given at run time)
// and mode linear, below 11: along each axis, the output's position j reads the input at
// c = start*(in-1) + j*(end-start)*(in-1)/(out-1) (out 1: (start+end)/2*(in-1)), start and end
// from roi, in onnxruntime's order of operations (float32); positions with c outside [0, in-1]
// read a slice of extrapolation_value appended to the axis (Tile of it: exact); else the two
// neighbours floor(c) and floor(c)+1 (clamped), weighted 1-w and w (w = c - floor(c)). The input's
// and output's shapes known (any rank), float32.
std::string lower_resize_crop(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                              const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  auto str_attr = [&](const char* n, const std::string& d) {
    const ir::Value* v = ir::get_attr(g, op, n);
    return v && v->is_string() ? v->as_string() : d;
  };
  if (str_attr("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize") return "coordinate_transformation_mode tf_crop_and_resize (the other modes are the table's)";
  if (str_attr("mode", "nearest") != "linear") return "mode linear (tf_crop_and_resize's nearest and cubic are not lowered)";
  if (elem_of(types, 0) != onnx::TensorProto::FLOAT) return "a float32 input";
  if (!present(g, ins, 1)) return "roi";
  std::vector<int64_t> in;
  if (!types[0].tensor_type().has_shape()) return "the input's shape";
  for (const auto& d : types[0].tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return "the input's shape";
    in.push_back(d.dim_value());
  }
  ir::PortId out_port;
  for (ir::PortId p : g.outputs(op))
    if (data_port(g, p)) {
      out_port = p;
      break;
    }
  auto outd = out_port ? known_dims(g, out_port) : std::nullopt;
  if (!outd || outd->size() != in.size()) return "the output's shape";
  const ir::Value* ev = ir::get_attr(g, op, "extrapolation_value");
  double ext = ev && ev->is_float() ? ev->as_float() : (ev && ev->is_int() ? double(ev->as_int()) : 0.0);
  const int F = onnx::TensorProto::FLOAT, I = onnx::TensorProto::INT64;
  const int64_t r = int64_t(in.size());
  int counter = 0;
  GB b{body, &counter};
  auto cast = [&](const std::string& v, int to) {
    std::string o = b.op("Cast", {v});
    b.i("to", to);
    return o;
  };
  auto f = [&](double v) { return b.c(F, {}, {v}); };
  std::string roi = cast(kIn + "1", F);
  std::string ext1 = b.c(F, std::vector<int64_t>(size_t(r), 1), {ext});
  std::string cur = kIn + "0";
  std::vector<int64_t> shape = in;
  for (int64_t a = 0; a < r; ++a) {
    int64_t L = in[size_t(a)], O = (*outd)[size_t(a)];
    std::vector<int64_t> reps = shape;
    reps[size_t(a)] = 1;
    std::string src = b.op("Concat", {cur, b.op("Tile", {ext1, b.ci(reps)})});
    b.i("axis", a);
    std::string st = b.op("Gather", {roi, b.si(a)});
    b.i("axis", 0);
    std::string en = b.op("Gather", {roi, b.si(a + r)});
    b.i("axis", 0);
    std::string c;
    if (O > 1) {
      std::vector<double> j(static_cast<size_t>(O));
      for (int64_t k = 0; k < O; ++k) j[size_t(k)] = double(k);
      std::string t = b.op("Mul", {b.c(F, {O}, j), b.op("Sub", {en, st})});
      t = b.op("Div", {b.op("Mul", {t, f(double(L - 1))}), f(double(O - 1))});
      c = b.op("Add", {b.op("Mul", {st, f(double(L - 1))}), t});
    } else {
      std::string m = b.op("Mul", {b.op("Mul", {f(0.5), b.op("Add", {st, en})}), f(double(L - 1))});
      c = b.op("Reshape", {m, b.ci({1})});
    }
    std::string inside = cast(b.op("And", {b.op("Not", {b.op("Less", {c, f(0.0)})}), b.op("Not", {b.op("Greater", {c, f(double(L - 1))})})}), F);
    std::string outside = b.op("Sub", {f(1.0), inside});
    std::string fl = b.op("Floor", {c});
    std::string w = b.op("Mul", {b.op("Sub", {c, fl}), inside});
    // clamp, then (outside) the appended slice at index L: i*inside + L*outside
    std::string lo = b.op("Clip", {fl, f(0.0), f(double(L - 1))});
    std::string hi = b.op("Clip", {b.op("Add", {fl, f(1.0)}), f(0.0), f(double(L - 1))});
    auto pick = [&](const std::string& i) { return cast(b.op("Add", {b.op("Mul", {i, inside}), b.op("Mul", {outside, f(double(L))})}), I); };
    std::string g1 = b.op("Gather", {src, pick(lo)});
    b.i("axis", a);
    std::string g2 = b.op("Gather", {src, pick(hi)});
    b.i("axis", a);
    std::vector<int64_t> wshape(size_t(r - a), 1);
    wshape[0] = O;
    std::string wr = b.op("Reshape", {w, b.ci(wshape)});
    std::string vr = b.op("Reshape", {b.op("Sub", {f(1.0), w}), b.ci(wshape)});
    cur = b.op("Add", {b.op("Mul", {g1, vr}), b.op("Mul", {g2, wr})});
    shape[size_t(a)] = O;
  }
  b.op("Identity", {cur}, kOut + "0");
  return {};
}

// MaxPool below 10 with what its opset lacks (dilations, ceil_mode: new in 10; the Indices output,
// new in 8; storage_order, new in 8): the input padded with -inf (Pad, the attribute form of
// opsets 2..10; begin pads as given, end pads grown to cover the last window: ceil_mode and
// auto_pad come out of the output's known shape), then for each kernel offset the cells o*stride +
// offset*dilation of each spatial axis (Gather of constant positions), and the maximum of these
// (Max; a padded cell is never the maximum). Indices: the flat index of the first maximum in
// window order (later offsets replace it only when strictly greater, as onnxruntime scans), row-
// or (storage_order 1, 2-D) column-major over the unpadded input. Float input, the input's and
// output's shapes known.
std::string lower_maxpool(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>&,
                          const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  int elem = elem_of(types, 0);
  if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::DOUBLE) return "a float32 or float64 input (Max before 12 takes floating point)";
  std::vector<int64_t> in;
  if (!types[0].tensor_type().has_shape()) return "the input's shape";
  for (const auto& d : types[0].tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return "the input's shape";
    in.push_back(d.dim_value());
  }
  const int64_t r = int64_t(in.size()), sp = r - 2;
  if (sp < 1) return "a spatial axis";
  std::vector<ir::PortId> outs;
  for (ir::PortId p : g.outputs(op))
    if (data_port(g, p)) outs.push_back(p);
  auto outd = outs.empty() ? std::nullopt : known_dims(g, outs[0]);
  if (!outd && outs.size() > 1 && g.first_out_edge(outs[1])) outd = known_dims(g, outs[1]);
  if (!outd || int64_t(outd->size()) != r) return "the output's shape";
  auto ints = [&](const char* n, int64_t dflt) {
    std::vector<int64_t> v(size_t(sp), dflt);
    const ir::Value* a = ir::get_attr(g, op, n);
    if (a && a->is_list() && int64_t(a->as_list().size()) >= sp)
      for (int64_t k = 0; k < sp; ++k) v[size_t(k)] = a->as_list()[size_t(k)].as_int();
    return v;
  };
  std::vector<int64_t> kern = ints("kernel_shape", 1), st = ints("strides", 1), dil = ints("dilations", 1);
  std::vector<int64_t> pads(size_t(2 * sp), 0);
  const ir::Value* pv = ir::get_attr(g, op, "pads");
  if (pv && pv->is_list() && int64_t(pv->as_list().size()) == 2 * sp)
    for (int64_t k = 0; k < 2 * sp; ++k) pads[size_t(k)] = pv->as_list()[size_t(k)].as_int();
  const ir::Value* apv = ir::get_attr(g, op, "auto_pad");
  std::string auto_pad = apv && apv->is_string() ? apv->as_string() : "NOTSET";
  int64_t storage = int_attr(g, op, "storage_order", 0);
  if (storage != 0 && sp != 2) return "storage_order 1 on a 2-D input only";
  std::vector<int64_t> pb(static_cast<size_t>(sp)), pe(static_cast<size_t>(sp));
  for (int64_t a = 0; a < sp; ++a) {
    int64_t L = in[size_t(a + 2)], O = (*outd)[size_t(a + 2)];
    int64_t need = (O - 1) * st[size_t(a)] + (kern[size_t(a)] - 1) * dil[size_t(a)] + 1 - L;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, need);
      pb[size_t(a)] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "VALID") {
      pb[size_t(a)] = 0;
    } else {
      pb[size_t(a)] = pads[size_t(a)];
    }
    pe[size_t(a)] = std::max<int64_t>(0, need - pb[size_t(a)]);
  }
  int counter = 0;
  GB b{body, &counter};
  std::vector<int64_t> allpads(size_t(2 * r), 0);
  for (int64_t a = 0; a < sp; ++a) allpads[size_t(a + 2)] = pb[size_t(a)], allpads[size_t(r + a + 2)] = pe[size_t(a)];
  std::string x = b.op("Pad", {kIn + "0"});
  b.is("pads", allpads).f("value", -std::numeric_limits<float>::infinity());
  bool want_idx = outs.size() > 1 && g.first_out_edge(outs[1]);
  // the flat index of spatial position q (unpadded coordinates) for storage order 0 / 1
  std::vector<int64_t> sstride(size_t(sp), 1);
  if (storage == 0) {
    for (int64_t a = sp - 2; a >= 0; --a) sstride[size_t(a)] = sstride[size_t(a + 1)] * in[size_t(a + 3)];
  } else {
    sstride[0] = 1;
    sstride[1] = in[2];
  }
  int64_t plane = 1;
  for (int64_t a = 0; a < sp; ++a) plane *= in[size_t(a + 2)];
  std::vector<int64_t> kidx(size_t(sp), 0);
  std::string best, bi;
  int64_t K = 1;
  for (int64_t k : kern) K *= k;
  for (int64_t n = 0; n < K; ++n) {
    std::string v = x;
    for (int64_t a = 0; a < sp; ++a) {
      const size_t npos = size_t((*outd)[size_t(a + 2)]);
      std::vector<int64_t> pos(npos);
      for (size_t o = 0; o < pos.size(); ++o) pos[o] = int64_t(o) * st[size_t(a)] + kidx[size_t(a)] * dil[size_t(a)];
      v = b.op("Gather", {v, b.ci(pos)});
      b.i("axis", a + 2);
    }
    std::string idx;
    if (want_idx) {
      std::vector<int64_t> odims((*outd).begin() + 2, (*outd).end());
      int64_t cnt = 1;
      for (int64_t d : odims) cnt *= d;
      std::vector<double> vals(static_cast<size_t>(cnt));
      for (int64_t f = 0; f < cnt; ++f) {
        int64_t rem = f, flat = 0;
        for (int64_t a = sp - 1; a >= 0; --a) {
          int64_t o = rem % odims[size_t(a)];
          rem /= odims[size_t(a)];
          flat += (o * st[size_t(a)] + kidx[size_t(a)] * dil[size_t(a)] - pb[size_t(a)]) * sstride[size_t(a)];
        }
        vals[size_t(f)] = double(flat);
      }
      idx = b.c(onnx::TensorProto::INT64, odims, vals);
    }
    if (n == 0) {
      best = v;
      bi = idx;
    } else {
      if (want_idx) {
        std::string gt = b.op("Cast", {b.op("Greater", {v, best})});
        b.i("to", onnx::TensorProto::INT64);
        bi = b.op("Add", {bi, b.op("Mul", {b.op("Sub", {idx, bi}), gt})});
      }
      best = b.op("Max", {best, v});
    }
    for (int64_t a = sp - 1; a >= 0; --a) {  // next offset, last axis fastest
      if (++kidx[size_t(a)] < kern[size_t(a)]) break;
      kidx[size_t(a)] = 0;
    }
  }
  b.op("Identity", {best}, kOut + "0");
  if (want_idx) {
    std::vector<int64_t> bdims(size_t(r), 1);
    bdims[0] = in[0];
    bdims[1] = in[1];
    std::vector<double> base(size_t(in[0] * in[1]));
    for (size_t k = 0; k < base.size(); ++k) base[k] = double(int64_t(k) * plane);
    b.op("Add", {bi, b.c(onnx::TensorProto::INT64, bdims, base)}, kOut + "1");
  }
  return {};
}

const std::map<std::string, Lowering>& lowerings() {
  // The other lowerings are rules of the opset tables (Trilu, GatherElements, Range, ... in
  // tables/onnx/hand/), which the engine tries before this expander. An entry here is for an op
  // whose lowering a table cannot write: Einsum's equation is a string to parse; DFT's matrix of
  // sines and cosines is computed.
  static const std::map<std::string, Lowering> m = {{"Einsum", lower_einsum}, {"DFT", lower_dft}, {"NonZero", lower_nonzero}, {"Compress", lower_compress}, {"Scan", lower_scan8}, {"Det", lower_det}, {"Unique", lower_unique}, {"NonMaxSuppression", lower_nms}, {"MelWeightMatrix", lower_melweightmatrix}, {"TfIdfVectorizer", lower_tfidf}};
  return m;
}

// Lowerings of ops the target has, tried only when the table's rule for the op refuses it
// (ConvertOptions::lowers_refused): each writes ops of the source opset that the table converts.
const std::map<std::string, Lowering>& refusal_lowerings() {
  static const std::map<std::string, Lowering> m = {{"ReduceSum", lower_reducesum_axes}, {"Slice", lower_slice_runtime}, {"Pad", lower_pad_runtime}, {"TopK", lower_topk_runtime}, {"Resize", lower_resize_crop}, {"MaxPool", lower_maxpool}};
  return m;
}

}  // namespace

std::string expand_function(ir::Graph& g, ir::OpId op, const std::string& ns) {
  auto [family, version] = schema::split_version(ns);
  if (family != "amanda/onnx" || version.empty()) return "not a namespace of the default ONNX domain";
  int opset = std::stoi(version);
  std::string type(g.type_str(op));
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(type, opset, "");
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
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(type, std::stoi(version), "");
  return s && (s->HasFunction() || s->HasContextDependentFunction() || lowerings().count(type));
}
bool lowers_refused(const std::string& type, const std::string& ns) {
  auto [family, version] = schema::split_version(ns);
  if (family != "amanda/onnx" || version.empty()) return false;
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(type, std::stoi(version), "");
  return s && !s->HasFunction() && !s->HasContextDependentFunction() && refusal_lowerings().count(type);
}
}  // namespace amanda::onnx_frontend
