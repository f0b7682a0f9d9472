// In-place writes in a TorchScript graph that the libtorch reader's node-by-node import would
// lose: the import turns `aten::copy_(%view, %data)` into an op whose output nobody reads, and a
// traced graph reads the tensor the view was taken from (`x[1:3] = data; return x`: the graph
// returns %x). torch.onnx.export rewrites such writes into index_put on the base; until Amanda
// does, they are refused here (a wrong number silently written is worse than a refusal), and an
// in-place write to a tensor that is not a view whose old name is read afterwards (scripted
// graphs do not rename it as traced ones do) is rewired to the op's output, as torch's semantics
// say.
#include "writes_through_views.h"

#include <torch/csrc/jit/ir/ir.h>

#include <set>
#include <string>
#include <vector>

namespace amanda::torch_frontend {
namespace tj = torch::jit;

namespace {

bool is_in_place(const tj::Node* n) {
  std::string k = n->kind().toUnqualString();
  return n->kind().is_aten() && !k.empty() && k.back() == '_' && k.front() != '_' && !n->inputs().empty() &&
         n->inputs()[0]->type()->cast<c10::TensorType>();
}

// Ops whose tensor result may share its first input's memory.
bool is_view(const tj::Node* n) {
  static const std::set<std::string> views{
      "aten::slice", "aten::select", "aten::view", "aten::reshape", "aten::permute", "aten::transpose",
      "aten::unsqueeze", "aten::squeeze", "aten::expand", "aten::flatten", "aten::narrow", "aten::t",
      "aten::contiguous", "aten::detach", "aten::alias", "aten::view_as", "aten::expand_as", "aten::reshape_as",
      "aten::unflatten", "aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::diagonal",
      "aten::as_strided", "aten::unfold", "aten::numpy_T", "aten::movedim", "aten::swapaxes", "aten::mT",
      "aten::real", "aten::view_as_real"};
  if (n->inputs().empty() || n->outputs().size() != 1) return false;
  return views.count(n->kind().toQualString()) > 0;
}

// `a` comes after `b` in execution order (a node in a later block of an If still counts).
bool after(const tj::Node* a, const tj::Node* b) {
  // Bring both to the same block.
  while (a->owningBlock() != b->owningBlock()) {
    const tj::Node* pa = a->owningBlock()->owningNode();
    if (!pa) break;
    // b's block may be the deeper one
    bool b_inside_a = false;
    for (const tj::Node* x = b; x; x = x->owningBlock()->owningNode())
      if (x->owningBlock() == a->owningBlock()) {
        b = x;
        b_inside_a = true;
        break;
      }
    if (b_inside_a) break;
    a = pa;
  }
  if (a->owningBlock() != b->owningBlock()) {
    for (const tj::Node* x = b; x; x = x->owningBlock()->owningNode())
      if (x->owningBlock() == a->owningBlock()) {
        b = x;
        break;
      }
  }
  if (a->owningBlock() != b->owningBlock()) return true;  // be safe: treat as a later read
  if (a == b) return false;
  return a->isAfter(b);
}

// A read of v after node n other than by n itself (a block's return counts as a read).
bool read_after(const tj::Value* v, const tj::Node* n) {
  for (const tj::Use& u : v->uses())
    if (u.user != n && after(u.user, n)) return true;
  return false;
}

// Every value that may share memory with v: the chain of views it was taken from, and every view
// taken (transitively) from the start of that chain.
std::vector<tj::Value*> alias_set(tj::Value* v, tj::Value** root_out) {
  tj::Value* root = v;
  while (is_view(root->node())) root = root->node()->inputs()[0];
  *root_out = root;
  std::vector<tj::Value*> all{root};
  for (size_t k = 0; k < all.size(); ++k)
    for (const tj::Use& u : all[k]->uses())
      if (u.offset == 0 && is_view(u.user)) all.push_back(u.user->output());
  return all;
}

void check_block(tj::Block* b) {
  for (tj::Node* n : b->nodes()) {
    for (tj::Block* sub : n->blocks()) check_block(sub);
    if (!is_in_place(n)) continue;
    tj::Value* self = n->inputs()[0];
    tj::Value* root = nullptr;
    std::vector<tj::Value*> aliases = alias_set(self, &root);
    bool through_view = root != self;
    for (tj::Value* a : aliases) {
      if (a == self && !through_view) continue;
      if (read_after(a, n))
        throw std::runtime_error(
            "node " + std::string(n->kind().toQualString()) + " (%" + n->output(0)->debugName() + ") writes %" +
            self->debugName() + (through_view ? ", a view (" + std::string(self->node()->kind().toQualString()) + ") of %" + root->debugName() : "") +
            ", and %" + a->debugName() + " (sharing its memory) is read afterwards: an in-place write through a view "
            "is not supported by the libtorch reader (it would be lost)");
    }
    // Not a view: later reads of the old name read the op's result (scripted graphs).
    if (!through_view && read_after(self, n)) {
      if (n->outputs().size() != 1 || !n->output()->type()->cast<c10::TensorType>() ||
          self->node()->owningBlock() != n->owningBlock())
        throw std::runtime_error("node " + std::string(n->kind().toQualString()) + " writes %" + self->debugName() +
                                 " in place inside a block, and it is read afterwards (not supported by the libtorch reader)");
      self->replaceAllUsesAfterNodeWith(n, n->output());
    }
  }
}

}  // namespace

void check_writes_through_views(const std::shared_ptr<tj::Graph>& graph) { check_block(graph->block()); }

}  // namespace amanda::torch_frontend
