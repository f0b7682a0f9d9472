// Element types an ONNX op does not accept, made legal before the checker runs (write_model, with
// ExportOptions::check): a uint8 Add, a bool Mul, Relu on int32, Where with a uint8 condition,
// Celu on float64. torch computes these; ONNX opset 13 declares no kernel for the type. Driven
// by the op schema's type constraints (which types a type parameter allows), not by a list of
// ops and types:
//
//  * an operand whose type the constraint refuses is cast to the first type the constraint allows
//    among the candidates its exactness class gives, and the outputs of that type parameter are
//    cast back. The class says when the result is exact: `wrap` ops (Add, Sub, Mul, Neg, Abs, Div,
//    Mod, ReduceSum, ReduceProd, CumSum, MatMul, Einsum) compute integers mod 2^k, so a wider
//    two's-complement integer then a cast back (which truncates) gives torch's wrap-around, and
//    bool as 0/1 gives torch's logical result; `order` ops (Relu, Max, Min, comparisons,
//    ReduceMax/Min, ArgMax/Min, Clip, Sign, Floor/Ceil/Round, Where's values) return one of their
//    inputs' values or a comparison, so any type that holds every value exactly will do (double
//    for integers up to 32 bits; never a narrower type); `truth` (Where's condition) is a bool of
//    "non-zero", as torch reads a uint8 mask; `float` ops (the elementwise math) widen float16 and
//    bfloat16 to float32 only.
//  * an op with no exact cast whose schema has a function body (Celu) is replaced by the body,
//    whose ops may accept the type (Celu's Elu takes float64).
//  * anything else is left alone: the checker then refuses the model, naming the op and type.
#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "amanda/frameworks/onnx/model.h"

namespace amanda::onnx_frontend {

onnx::ModelProto checkable_copy(const onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred);

namespace {

using TP = onnx::TensorProto;

enum class Exact { Wrap, Order, Truth, Float };

// (op type, type parameter) -> class; "" stands for every type parameter of the op.
const std::map<std::pair<std::string, std::string>, Exact>& classes() {
  static const std::map<std::pair<std::string, std::string>, Exact> t = [] {
    std::map<std::pair<std::string, std::string>, Exact> m;
    for (const char* op : {"Add", "Sub", "Mul", "Neg", "Abs", "Div", "Mod", "Sum", "ReduceSum", "ReduceProd", "CumSum", "MatMul", "Einsum"})
      m[{op, ""}] = Exact::Wrap;
    for (const char* op : {"Relu", "Max", "Min", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal", "ReduceMax", "ReduceMin",
                           "ArgMax", "ArgMin", "Clip", "Sign", "Floor", "Ceil", "Round", "TopK"})
      m[{op, ""}] = Exact::Order;
    m[{"Where", "T"}] = Exact::Order;
    m[{"Where", "B"}] = Exact::Truth;
    for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Sigmoid", "Tanh", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
                           "Cosh", "Asinh", "Acosh", "Atanh", "Erf", "Softplus", "Softsign", "Elu", "Selu", "Celu", "LeakyRelu",
                           "HardSigmoid", "Softmax", "LogSoftmax", "ReduceMean", "ReduceLogSumExp", "Pow"})
      m[{op, ""}] = Exact::Float;
    return m;
  }();
  return t;
}

bool is_int(int t) {
  return t == TP::INT8 || t == TP::UINT8 || t == TP::INT16 || t == TP::UINT16 || t == TP::INT32 || t == TP::UINT32 ||
         t == TP::INT64 || t == TP::UINT64 || t == TP::BOOL;
}
int bits(int t) {
  switch (t) {
    case TP::BOOL: return 1;
    case TP::INT8: case TP::UINT8: return 8;
    case TP::INT16: case TP::UINT16: return 16;
    case TP::INT32: case TP::UINT32: return 32;
    default: return 64;
  }
}

// The types an operand of type t may be computed in, best first, for an op of class c.
std::vector<int> candidates(Exact c, int t) {
  std::vector<int> out;
  bool uns = t == TP::UINT8 || t == TP::UINT16 || t == TP::UINT32 || t == TP::BOOL;
  switch (c) {
    case Exact::Wrap:
    case Exact::Order:
      if (is_int(t)) {
        // a signed integer that holds every value (an unsigned one needs a bit more)
        if (bits(t) + (uns ? 1 : 0) <= 32 && t != TP::INT32) out.push_back(TP::INT32);
        if (bits(t) + (uns ? 1 : 0) <= 64 && t != TP::INT64) out.push_back(TP::INT64);
        if (c == Exact::Order && bits(t) <= 32) out.push_back(TP::DOUBLE);  // (exact up to 2^53)
      } else if (c == Exact::Order) {
        if (t == TP::FLOAT16 || t == TP::BFLOAT16) out.push_back(TP::FLOAT);
        if (t == TP::FLOAT16 || t == TP::BFLOAT16 || t == TP::FLOAT) out.push_back(TP::DOUBLE);
      } else if (t == TP::FLOAT16 || t == TP::BFLOAT16) {
        out.push_back(TP::FLOAT);  // (torch's CPU kernels compute half in float too)
      }
      break;
    case Exact::Truth:
      if (is_int(t) || t == TP::FLOAT || t == TP::DOUBLE || t == TP::FLOAT16) out.push_back(TP::BOOL);
      break;
    case Exact::Float:
      if (t == TP::FLOAT16 || t == TP::BFLOAT16) out.push_back(TP::FLOAT);
      break;
  }
  return out;
}

std::string type_str(int t) { return "tensor(" + onnx::Utils::DataTypeUtils::ToDataTypeString(t) + ")"; }

// Element types of every value the inference knows (inputs, initializers, value_info, outputs).
std::unordered_map<std::string, int> value_types(const onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred) {
  onnx::ModelProto c = checkable_copy(m, deferred);
  try {
    onnx::shape_inference::InferShapes(c, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 0, false));
  } catch (const std::exception&) {
  }
  std::unordered_map<std::string, int> out;
  const auto& g = c.graph();
  for (const auto& t : g.initializer()) out[t.name()] = t.data_type();
  auto add = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0) out[v.name()] = v.type().tensor_type().elem_type();
  };
  for (const auto& v : g.input()) add(v);
  for (const auto& v : g.value_info()) add(v);
  for (const auto& v : g.output()) add(v);
  for (const auto& n : g.node())  // constants the inference may not list
    if (n.op_type() == "Constant" && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) out[n.output(0)] = a.t().data_type();
  return out;
}

onnx::NodeProto cast(const std::string& in, const std::string& out, int to) {
  onnx::NodeProto n;
  n.set_op_type("Cast");
  n.add_input(in);
  n.add_output(out);
  auto* a = n.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(to);
  return n;
}

// The type parameter of formal parameter i (variadic: the last one repeats).
const std::string* param_of(const std::vector<onnx::OpSchema::FormalParameter>& formals, int i) {
  if (formals.empty()) return nullptr;
  size_t k = static_cast<size_t>(i) < formals.size() ? static_cast<size_t>(i) : formals.size() - 1;
  if (static_cast<size_t>(i) >= formals.size() && formals.back().GetOption() != onnx::OpSchema::Variadic) return nullptr;
  return &formals[k].GetTypeStr();
}

// One pass over the root graph's nodes; returns how many were rewritten.
int legalize_once(onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred, int& fresh) {
  int opset = 0;
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  if (!opset || !m.has_graph()) return 0;
  std::unordered_map<std::string, int> types = value_types(m, deferred);
  auto* g = m.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
  int changed = 0;
  auto name = [&](const std::string& base) { return base + "__legal" + std::to_string(fresh++); };
  for (const auto& n : g->node()) {
    const onnx::OpSchema* s = (n.domain().empty() || n.domain() == "ai.onnx")
                                  ? onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "") : nullptr;
    if (!s) {
      *out.Add() = n;
      continue;
    }
    // type parameter -> (allowed, the operands' types)
    std::map<std::string, std::set<std::string>> allowed;
    for (const auto& c : s->typeConstraintParams())
      allowed[c.type_param_str] = std::set<std::string>(c.allowed_type_strs.begin(), c.allowed_type_strs.end());
    std::map<std::string, std::set<int>> actual;
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i).empty()) continue;
      const std::string* p = param_of(s->inputs(), i);
      auto it = types.find(n.input(i));
      if (!p || !allowed.count(*p) || it == types.end()) continue;
      actual[*p].insert(it->second);
    }
    std::map<std::string, int> to;    // type parameter -> the type to compute in
    std::map<std::string, int> from;  // its operands' type
    bool refused = false, needs = false;
    for (const auto& [p, ts] : actual) {
      bool ok = true;
      for (int t : ts) ok &= allowed[p].count(type_str(t)) > 0;
      if (ok) continue;
      needs = true;
      if (ts.size() != 1) {
        refused = true;
        break;
      }
      int t = *ts.begin();
      auto cls = classes().find({n.op_type(), p});
      if (cls == classes().end()) cls = classes().find({n.op_type(), ""});
      int pick = 0;
      if (cls != classes().end())
        for (int u : candidates(cls->second, t))
          if (allowed[p].count(type_str(u))) {
            pick = u;
            break;
          }
      if (!pick) {
        refused = true;
        break;
      }
      to[p] = pick;
      from[p] = t;
    }
    if (!needs) {
      *out.Add() = n;
      continue;
    }
    if (refused) {
      // no exact cast: the op's function body, when it has one (its ops may take the type)
      if (s->HasFunction() && s->GetFunction()) {
        onnx::GraphProto body;
        onnx::FunctionExpandHelper(n, *s->GetFunction(), body, name(n.name().empty() ? n.op_type() : n.name()) + "_");
        for (const auto& b : body.node()) *out.Add() = b;
        ++changed;
      } else {
        *out.Add() = n;  // the checker names it
      }
      continue;
    }
    onnx::NodeProto r = n;
    for (int i = 0; i < r.input_size(); ++i) {
      const std::string* p = r.input(i).empty() ? nullptr : param_of(s->inputs(), i);
      if (!p || !to.count(*p)) continue;
      std::string c = name(r.input(i));
      *out.Add() = cast(r.input(i), c, to[*p]);
      r.set_input(i, c);
    }
    std::vector<onnx::NodeProto> after;
    for (int i = 0; i < r.output_size(); ++i) {
      const std::string* p = r.output(i).empty() ? nullptr : param_of(s->outputs(), i);
      if (!p || !to.count(*p)) continue;
      std::string c = name(r.output(i));
      after.push_back(cast(c, r.output(i), from[*p]));
      r.set_output(i, c);
    }
    *out.Add() = r;
    for (auto& a : after) *out.Add() = std::move(a);
    ++changed;
  }
  if (changed) g->mutable_node()->Swap(&out);
  return changed;
}

}  // namespace

int legalize_types(onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred) {
  int fresh = 0, total = 0;
  for (int round = 0; round < 4; ++round) {  // a function body's ops may need a cast in turn
    int n = legalize_once(m, deferred, fresh);
    if (!n) break;
    total += n;
  }
  return total;
}

}  // namespace amanda::onnx_frontend
