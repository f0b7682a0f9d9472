// torch's type promotion made explicit (promotion.h). One table entry per op family: which
// arguments take part in the promotion and whether the op computes in floating point (true
// division). The result type comes from promoted_type (torch.result_type's rules).
#include "frameworks/torchscript/promotion.h"
#include "frameworks/torchscript/promotion_table.h"

#include <unordered_map>
#include <vector>

namespace amanda::torchscript {

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
  PromotionOf po = promotion_of(op_type);
  if (!po.rule) return;
  const Promoted& p = *po.rule;
  bool in_place = po.in_place;
  std::vector<const Val*> ops;
  for (size_t k : p.operands)
    if (k < args.size() && args[k] && (args[k]->is_tensor() || args[k]->k == Val::K::Int || args[k]->k == Val::K::Float))
      ops.push_back(args[k].get());
  if (ops.empty() || (ops.size() < 2 && !p.true_division)) return;  // (one operand: an op that computes integers as floats)
  for (const Val* v : ops)
    if (v->is_tensor() && (!v->defined || !v->shape_known)) return;  // an untyped operand: nothing to go by
  ir::DType t = in_place && args[0]->is_tensor() ? args[0]->dtype : promoted_type(ops);
  if (p.true_division && !is_float_type(t) && !po.rounding_mode) t = ir::DType::Float32;
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
