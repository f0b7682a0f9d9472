// In-place writes in a TorchScript graph that the libtorch reader's node-by-node import would
// lose: the import turns `aten::copy_(%view, %data)` into an op whose output nobody reads, and a
// traced graph reads the tensor the view was taken from (`x[1:3] = data; return x`: the graph
// returns %x). torch.onnx.export rewrites such writes into index_put on the base; here they become
// a scatter into the base: the positions of the view's elements in the base are found by running
// the view chain (slice, select, transpose, view, ...) on arange(numel(base)) with libtorch's own
// kernels, so whatever the chain selects, the scatter writes. Later reads of the base, and of
// views of it taken before the write, read the new value. A chain that is not that (an argument
// computed from the data, a step that copies instead of viewing, an element selected twice, a
// write inside a block) is refused naming the op and the view: a wrong number silently written is
// worse than a refusal. An in-place write to a tensor that is not a view whose old name is read
// afterwards (scripted graphs do not rename it as traced ones do) is rewired to the op's output,
// as torch's semantics say.
#include "writes_through_views.h"

#include <ATen/Functions.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
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

[[noreturn]] void refuse(const tj::Node* n, const tj::Value* self, const tj::Value* root, const tj::Value* read,
                         const std::string& why) {
  bool through_view = root != self;
  throw std::runtime_error(
      "node " + std::string(n->kind().toQualString()) + " (%" + n->output(0)->debugName() + ") writes %" + self->debugName() +
      (through_view ? ", a view (" + std::string(self->node()->kind().toQualString()) + ") of %" + root->debugName() : "") +
      ", and %" + read->debugName() + " (sharing its memory) is read afterwards: an in-place write through a view " +
      "is not supported by the libtorch reader here (" + why + ")");
}

std::optional<std::vector<int64_t>> sizes_of(const tj::Value* v) {
  if (auto iv = tj::toIValue(v); iv && iv->isTensor()) return iv->toTensor().sizes().vec();
  auto t = v->type()->cast<c10::TensorType>();
  if (!t || !t->scalarType()) return std::nullopt;
  auto s = t->sizes().concrete_sizes();
  if (!s) return std::nullopt;
  return *s;
}

c10::ScalarType dtype_of(const tj::Value* v) {
  if (auto iv = tj::toIValue(v); iv && iv->isTensor()) return iv->toTensor().scalar_type();
  return *v->type()->expect<c10::TensorType>()->scalarType();
}

c10::TypePtr typed(c10::ScalarType t, const std::vector<int64_t>& sizes) {
  return c10::TensorType::createContiguous(t, at::kCPU, sizes);
}

// The positions, in root's row-major order, of the elements of the view `self` (a flat int64
// tensor), found by running the chain root -> ... -> self on arange(numel(root)) with the
// chain's own kernels. Empty (and why) when a step takes an argument that is not a constant, is
// not a view of its input (reshape of a non-contiguous tensor copies), or when an element is
// selected twice (expand: torch refuses such writes).
std::optional<at::Tensor> view_positions(tj::Value* self, tj::Value* root, std::string* why) {
  auto rs = sizes_of(root);
  auto ss = sizes_of(self);
  if (!rs || !ss) {
    *why = "the shape of %" + (rs ? self : root)->debugName() + " is not known";
    return std::nullopt;
  }
  std::vector<tj::Node*> chain;
  for (tj::Value* v = self; v != root; v = v->node()->inputs()[0]) chain.push_back(v->node());
  int64_t numel = 1;
  for (int64_t d : *rs)
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel)) numel = -1;
  if (numel < 0 || numel > (int64_t{1} << 31)) {
    *why = "%" + root->debugName() + " is too large";
    return std::nullopt;
  }
  at::Tensor base = at::arange(numel, at::TensorOptions().dtype(at::kLong)).reshape(*rs);
  at::Tensor cur = base;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    tj::Node* step = *it;
    tj::Stack st{c10::IValue(cur)};
    for (size_t k = 1; k < step->inputs().size(); ++k) {
      auto iv = tj::toIValue(step->inputs()[k]);
      if (!iv) {
        *why = "the argument %" + step->inputs()[k]->debugName() + " of the view " + step->kind().toQualString() +
               " is computed";
        return std::nullopt;
      }
      st.push_back(*iv);
    }
    try {
      step->getOperation()(st);
    } catch (const std::exception& e) {
      *why = "the view " + std::string(step->kind().toQualString()) + " could not be replayed";
      return std::nullopt;
    }
    if (st.size() != 1 || !st[0].isTensor() || !st[0].toTensor().is_alias_of(base)) {
      *why = "the step " + std::string(step->kind().toQualString()) + " copies rather than views";
      return std::nullopt;
    }
    cur = st[0].toTensor();
  }
  if (cur.sizes().vec() != *ss) {
    *why = "the view's shape differs from its type";
    return std::nullopt;
  }
  at::Tensor pos = cur.reshape({-1}).contiguous().clone();
  if (std::get<0>(at::_unique(pos)).numel() != pos.numel()) {
    *why = "the view selects an element more than once";
    return std::nullopt;
  }
  return pos;
}

bool writes_a_value(const tj::Node* n) {  // ops whose output is only "self, now holding the value"
  std::string k = n->kind().toQualString();
  return k == "aten::copy_" || k == "aten::fill_" || k == "aten::zero_";
}

// The value the view holds after the write n (self's shape and element type), built before `at`.
tj::Value* written_value(tj::Node* n, tj::Value* self, tj::Value* root, tj::Value* read) {
  tj::Graph* g = n->owningGraph();
  std::string k = n->kind().toQualString();
  auto ss = *sizes_of(self);
  c10::ScalarType t = dtype_of(self);
  if (k == "aten::zero_") return g->insertConstant(at::zeros(ss, at::TensorOptions().dtype(t)));
  tj::Value* src = n->inputs().size() > 1 ? n->inputs()[1] : nullptr;
  if (k == "aten::fill_" && src && !src->type()->cast<c10::TensorType>()) {
    auto iv = tj::toIValue(src);
    if (!iv || !iv->isScalar()) refuse(n, self, root, read, "the fill value is computed");
    return g->insertConstant(at::full(ss, iv->toScalar(), at::TensorOptions().dtype(t)));
  }
  if (!writes_a_value(n)) {
    if (!sizes_of(n->output()) || *sizes_of(n->output()) != ss || dtype_of(n->output()) != t)
      refuse(n, self, root, read, "the op's result is not typed as the view");
    return n->output();
  }
  auto src_sizes = src ? sizes_of(src) : std::nullopt;
  if (!src_sizes) refuse(n, self, root, read, "the shape of the written value is not known");
  tj::Value* v = src;
  if (dtype_of(v) != t) {
    tj::Node* cast = g->create(c10::aten::to, {v, g->insertConstant(static_cast<int64_t>(t)), g->insertConstant(false),
                                               g->insertConstant(false), g->insertConstant(c10::IValue())});
    cast->output()->setType(typed(t, *src_sizes));
    v = g->insertNode(cast)->output();
  }
  if (*src_sizes != ss) {
    tj::Node* ex = g->create(c10::aten::expand, {v, g->insertConstant(ss), g->insertConstant(false)});
    ex->output()->setType(typed(t, ss));
    v = g->insertNode(ex)->output();
  }
  return v;
}

struct LaterUses {
  tj::Value* value;
  std::vector<tj::Use> uses;
};

std::vector<tj::Use> uses_after(tj::Value* v, const tj::Node* n) {
  std::vector<tj::Use> out;
  for (const tj::Use& u : v->uses())
    if (u.user != n && after(u.user, n)) out.push_back(u);
  return out;
}

// Lowers the write n through the view self of root (read afterwards): root's new value is
// root with the view's positions scattered; later reads of root, of views of root taken before n
// and of n's own result read the new value (the views taken again from it).
void lower_write(tj::Node* n, tj::Value* self, tj::Value* root, const std::vector<tj::Value*>& aliases, tj::Value* read) {
  tj::Graph* g = n->owningGraph();
  if (n->owningBlock() != g->block() || n->outputs().size() != 1 || !n->output()->type()->cast<c10::TensorType>())
    refuse(n, self, root, read, "the write is inside a block");
  std::string why;
  std::optional<at::Tensor> pos;
  if (root != self) {
    pos = view_positions(self, root, &why);
    if (!pos) refuse(n, self, root, read, why);
  }
  std::vector<LaterUses> later;
  for (tj::Value* a : aliases) {
    if (a != root && a->node()->kind() != c10::prim::Param && !n->isAfter(a->node())) continue;  // a view taken after n
    auto u = uses_after(a, n);
    if (!u.empty() && a != root && a->node()->owningBlock() != g->block())
      refuse(n, self, root, read, "the view %" + a->debugName() + " is taken inside a block");
    if (!u.empty()) later.push_back({a, std::move(u)});
  }
  auto out_uses = uses_after(n->output(), n);
  tj::WithInsertPoint guard(n->next());
  tj::Value* new_root = nullptr;
  if (root == self) {
    new_root = n->output();
  } else {
    tj::Value* val = written_value(n, self, root, read);
    auto rs = *sizes_of(root);
    c10::ScalarType t = dtype_of(root);
    auto reshape = [&](tj::Value* x, std::vector<int64_t> to) {
      tj::Node* r = g->create(c10::aten::reshape, {x, g->insertConstant(to)});
      r->output()->setType(typed(t, to));
      return g->insertNode(r)->output();
    };
    int64_t total = 1;
    for (int64_t d : rs) total *= d;
    tj::Value* flat = reshape(root, {total});
    tj::Value* vflat = reshape(val, {pos->numel()});
    tj::Node* sc = g->create(c10::aten::scatter, {flat, g->insertConstant(int64_t{0}), g->insertConstant(*pos), vflat});
    sc->output()->setType(typed(t, {total}));
    tj::Value* scattered = g->insertNode(sc)->output();
    new_root = reshape(scattered, rs);
  }
  std::map<tj::Value*, tj::Value*> remap{{root, new_root}};
  std::function<tj::Value*(tj::Value*)> again = [&](tj::Value* v) -> tj::Value* {
    auto it = remap.find(v);
    if (it != remap.end()) return it->second;
    tj::Node* vn = v->node();
    tj::Value* parent = again(vn->inputs()[0]);
    tj::Node* c = g->createClone(vn, [&](tj::Value* x) { return x == vn->inputs()[0] ? parent : x; });
    c->output()->setType(v->type());
    tj::Value* nv = g->insertNode(c)->output();
    remap[v] = nv;
    return nv;
  };
  for (auto& l : later) {
    tj::Value* nv = again(l.value);
    for (const tj::Use& u : l.uses) u.user->replaceInput(u.offset, nv);
  }
  if (root != self && !out_uses.empty()) {
    tj::Value* nv = again(self);
    for (const tj::Use& u : out_uses) u.user->replaceInput(u.offset, nv);
  }
  if (root != self && writes_a_value(n) && !n->output()->hasUses()) n->destroy();
}

void lower_block(tj::Block* b, tj::Block* top) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    tj::Node* n = *it;
    ++it;
    for (tj::Block* sub : n->blocks()) lower_block(sub, top);
    if (!is_in_place(n)) continue;
    tj::Value* self = n->inputs()[0];
    tj::Value* root = nullptr;
    std::vector<tj::Value*> aliases = alias_set(self, &root);
    bool through_view = root != self;
    tj::Value* read = nullptr;
    for (tj::Value* a : aliases) {
      if (a == self && !through_view) continue;
      if (read_after(a, n)) {
        read = a;
        break;
      }
    }
    if (read) {
      if (n->owningBlock() != top) refuse(n, self, root, read, "the write is inside a block");
      lower_write(n, self, root, aliases, read);
      continue;
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

void lower_writes_through_views(const std::shared_ptr<tj::Graph>& graph) { lower_block(graph->block(), graph->block()); }

}  // namespace amanda::torch_frontend
