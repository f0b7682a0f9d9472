// torch's type promotion made explicit (promotion.h). One table entry per op family: which
// arguments take part in the promotion and whether the op computes in floating point (true
// division). The result type comes from promoted_type (torch.result_type's rules).
#include "frameworks/torchscript/promotion.h"

#include <unordered_map>
#include <vector>

namespace amanda::torchscript {

namespace {

struct Promoted {
  std::vector<size_t> operands;  // argument positions that share ONNX's type parameter
  bool true_division = false;    // integers divide as floats (torch.div without rounding_mode)
  bool compare = false;          // the result is bool; the operands still promote together
};

const std::unordered_map<std::string, Promoted>& table() {
  static const std::unordered_map<std::string, Promoted> t = [] {
    std::unordered_map<std::string, Promoted> m;
    for (const char* b : {"add", "sub", "mul", "rsub", "remainder", "fmod", "floor_divide", "maximum", "minimum", "atan2",
                          "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor", "__and__", "__or__", "__xor__",
                          "logical_and", "logical_or", "logical_xor"})
      m[b] = {{0, 1}};
    for (const char* b : {"div", "true_divide"}) m[b] = {{0, 1}, true};
    for (const char* b : {"eq", "ne", "lt", "le", "gt", "ge"}) m[b] = {{0, 1}, false, true};
    m["where"] = {{1, 2}};
    m["lerp"] = {{0, 1, 2}};
    m["addcmul"] = {{0, 1, 2}};
    m["addcdiv"] = {{0, 1, 2}};
    return m;
  }();
  return t;
}

}  // namespace

int64_t scalar_type_code(ir::DType t) {
  switch (t) {
    case ir::DType::UInt8: return 0;
    case ir::DType::Int8: return 1;
    case ir::DType::Int16: return 2;
    case ir::DType::Int32: return 3;
    case ir::DType::Int64: return 4;
    case ir::DType::Float16: return 5;
    case ir::DType::Float32: return 6;
    case ir::DType::Float64: return 7;
    case ir::DType::Bool: return 11;
    case ir::DType::BFloat16: return 15;
    default: throw Unsupported(std::string("element type ") + std::string(ir::dtype_name(t)) + " has no torch ScalarType here");
  }
}

void make_promotion_explicit(const std::string& op_type, Args& args, const std::function<VRef(const VRef&, ir::DType)>& cast) {
  std::string base = op_type.substr(0, op_type.find('.'));
  if (base.rfind("aten::", 0) != 0) return;
  base = base.substr(6);
  bool in_place = !base.empty() && base.back() == '_' && base.find("__") == std::string::npos;
  if (in_place) base.pop_back();
  auto it = table().find(base);
  if (it == table().end()) return;
  const Promoted& p = it->second;
  std::vector<const Val*> ops;
  for (size_t k : p.operands)
    if (k < args.size() && args[k] && (args[k]->is_tensor() || args[k]->k == Val::K::Int || args[k]->k == Val::K::Float))
      ops.push_back(args[k].get());
  if (ops.size() < 2) return;
  for (const Val* v : ops)
    if (v->is_tensor() && (!v->defined || !v->shape_known)) return;  // an untyped operand: nothing to go by
  ir::DType t = in_place && args[0]->is_tensor() ? args[0]->dtype : promoted_type(ops);
  if (p.true_division && !is_float_type(t) && (op_type.find("Tensor_mode") == std::string::npos)) t = ir::DType::Float32;
  for (size_t k : p.operands) {
    if (k >= args.size() || !args[k] || !args[k]->is_tensor() || args[k]->dtype == t) continue;
    const Val& v = *args[k];
    if (v.known) {
      VRef c = make_known(t, v.shape, elements(v));
      if (t == ir::DType::Bool)
        for (double& x : c->known->st->mutable_values()) x = x != 0;
      c->name = v.name;
      args[k] = c;
    } else {
      args[k] = cast(args[k], t);
    }
  }
}

}  // namespace amanda::torchscript
