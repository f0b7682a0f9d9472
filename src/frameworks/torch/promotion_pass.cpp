// torch's type promotion made explicit in the libtorch reader's graph (promotion_pass.h): ONNX's
// Add, Div, Equal, Where, ... take one element type for their operands, torch promotes them
// (int tensor / int tensor divides as float; a float32 tensor times a float64 0-d tensor stays
// float32; a bool tensor plus a Python int is int64). Before the import, every op of the shared
// promotion table (src/frameworks/torchscript/promotion_table.h, the libtorch-free reader's
// too) whose tensor operands differ from the type torch computes in gets aten::to casts, the
// type from torch's own ResultTypeState (torch.result_type's rules: dimensioned tensors, then
// 0-d tensors, then Python numbers).
#include "promotion_pass.h"

#include <ATen/Functions.h>
#include <ATen/native/TypeProperties.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include "frameworks/torchscript/promotion_table.h"

namespace amanda::torch_frontend {
namespace tj = torch::jit;

namespace {

// The operand as result_type sees it: a tensor of its dtype (0-d or not), or a Python number.
bool add_operand(const tj::Value* v, at::native::ResultTypeState& st) {
  if (auto t = v->type()->cast<c10::TensorType>()) {
    // A constant (a Python number the tracer recorded as a 0-d tensor): the tensor itself.
    if (auto iv = tj::toIValue(v); iv && iv->isTensor()) {
      st = at::native::update_result_type_state(iv->toTensor(), st);
      return true;
    }
    auto dt = t->scalarType();
    auto dim = t->dim();
    if (!dt || !dim) return false;
    at::Tensor e = *dim == 0 ? at::empty({}, at::TensorOptions().dtype(*dt).device(at::kMeta))
                             : at::empty({1}, at::TensorOptions().dtype(*dt).device(at::kMeta));
    st = at::native::update_result_type_state(e, st);
    return true;
  }
  if (v->type()->kind() == c10::TypeKind::IntType) {
    st = at::native::update_result_type_state(at::Scalar(int64_t(1)), st);
    return true;
  }
  if (v->type()->kind() == c10::TypeKind::FloatType) {
    st = at::native::update_result_type_state(at::Scalar(1.0), st);
    return true;
  }
  if (v->type()->kind() == c10::TypeKind::BoolType) {
    st = at::native::update_result_type_state(at::Scalar(true), st);
    return true;
  }
  return false;
}

void promote_node(tj::Node* n) {
  if (!n->maybeSchema()) return;
  std::string type = n->kind().toQualString();
  const std::string& overload = n->schema().overload_name();
  if (!overload.empty()) type += "." + overload;
  torchscript::PromotionOf po = torchscript::promotion_of(type);
  if (!po.rule) return;
  at::native::ResultTypeState st{};
  size_t count = 0;
  for (size_t k : po.rule->operands) {
    if (k >= n->inputs().size()) continue;
    if (!add_operand(n->inputs()[k], st)) return;  // an untyped operand: nothing to go by
    ++count;
  }
  if (count == 0 || (count < 2 && !po.rule->true_division)) return;  // (one operand: an op that computes integers as floats)
  c10::ScalarType t = at::native::result_type(st);
  if (po.in_place) {
    auto self = n->inputs()[0]->type()->cast<c10::TensorType>();
    if (!self || !self->scalarType()) return;
    t = *self->scalarType();
  }
  if (po.rule->true_division && !po.rounding_mode && !c10::isFloatingType(t)) t = c10::typeMetaToScalarType(c10::get_default_dtype());
  tj::Graph* g = n->owningGraph();
  for (size_t k : po.rule->operands) {
    if (k >= n->inputs().size()) continue;
    tj::Value* v = n->inputs()[k];
    auto tt = v->type()->cast<c10::TensorType>();
    if (!tt || tt->scalarType() == t) continue;
    tj::WithInsertPoint guard(n);
    tj::Node* cast = g->create(c10::aten::to, {v, g->insertConstant(static_cast<int64_t>(t)), g->insertConstant(false),
                                               g->insertConstant(false), g->insertConstant(c10::IValue())});
    cast->output()->setType(tt->withScalarType(t));
    g->insertNode(cast);
    n->replaceInput(k, cast->output());
  }
}

void promote_block(tj::Block* b) {
  for (tj::Node* n : b->nodes()) {
    for (tj::Block* sub : n->blocks()) promote_block(sub);
    promote_node(n);
  }
}

}  // namespace

void make_promotion_explicit(const std::shared_ptr<tj::Graph>& graph) { promote_block(graph->block()); }

}  // namespace amanda::torch_frontend
