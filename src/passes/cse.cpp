// Common subexpressions (onnxoptimizer's eliminate_common_subexpression): two ops of one scope
// with the same type, attributes (annotations aside) and input values compute the same thing; the
// later one's uses move to the earlier one. Constant ops with equal tensors merge too. Never for
// random ops, ops with bodies, or ops with control edges. Any namespace.
#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>

#include "passes.h"
#include "util.h"

namespace amanda::passes::detail {

namespace {

size_t hash_value(const ir::Value& v) {
  using K = ir::Value::Kind;
  switch (v.kind()) {
    case K::Null: return 1;
    case K::Bool: return absl::HashOf(2, v.as_bool());
    case K::Int: return absl::HashOf(3, v.as_int());
    case K::Float: return absl::HashOf(4, v.as_float());
    case K::String: return absl::HashOf(5, v.as_string());
    case K::List: {
      size_t h = 6;
      for (const auto& e : v.as_list()) h = absl::HashOf(h, hash_value(e));
      return h;
    }
    case K::Map: {
      size_t h = 7;
      for (const auto& e : v.as_map()) h = absl::HashOf(h, e.key, hash_value(e.value));
      return h;
    }
    case K::Tensor: {
      // A big tensor is hashed by its size and evenly spaced windows of its bytes: two ops of one
      // bucket are compared whole anyway (same()), and hashing every byte of every Constant in
      // every round was 3% of optimizing a model whose weights are Constant nodes.
      const ir::Tensor& t = v.as_tensor();
      constexpr size_t kWhole = 4096, kWindow = 64, kWindows = 32;
      std::string_view b = t.bytes();
      size_t h = absl::HashOf(8, static_cast<int>(t.dtype), t.shape, b.size());
      if (b.size() <= kWhole) {
        h = absl::HashOf(h, b);
      } else {
        for (size_t i = 0; i < kWindows; ++i) h = absl::HashOf(h, b.substr((b.size() - kWindow) / (kWindows - 1) * i, kWindow));
        h = absl::HashOf(h, b.substr(b.size() - kWindow));
      }
      for (const auto& s : t.strings) h = absl::HashOf(h, s);
      return h;
    }
    case K::Graph: return absl::HashOf(9, v.as_graph().value);
  }
  return 0;
}

bool annotation(const ir::Graph& g, Symbol k) { return g.str(k).starts_with("@"); }

struct Key {
  size_t hash;
};

size_t op_hash(const ir::Graph& g, ir::OpId op) {
  size_t h = absl::HashOf(g.type(op));
  for (ir::PortId p : g.inputs(op)) {
    if (g.is_control(p)) continue;
    h = absl::HashOf(h, g.producer(p).value);
  }
  h = absl::HashOf(h, g.outputs(op).size());
  for (const auto& [k, v] : g.attrs(op))
    if (!annotation(g, k)) h = absl::HashOf(h, k, hash_value(v));
  return h;
}

bool same(const ir::Graph& g, ir::OpId a, ir::OpId b) {
  if (g.type(a) != g.type(b)) return false;
  auto ia = g.inputs(a), ib = g.inputs(b);
  if (ia.size() != ib.size() || g.outputs(a).size() != g.outputs(b).size()) return false;
  for (size_t i = 0; i < ia.size(); ++i)
    if (g.producer(ia[i]) != g.producer(ib[i])) return false;
  std::vector<const ir::Attr*> la, lb;
  for (const auto& x : g.attrs(a))
    if (!annotation(g, x.first)) la.push_back(&x);
  for (const auto& x : g.attrs(b))
    if (!annotation(g, x.first)) lb.push_back(&x);
  if (la.size() != lb.size()) return false;
  for (const ir::Attr* x : la) {
    bool found = false;
    for (const ir::Attr* y : lb)
      if (y->first == x->first) {
        found = y->second == x->second;
        break;
      }
    if (!found) return false;
  }
  return true;
}

PassResult eliminate_common_subexpression(ir::Graph& g, const PassOptions& o) {
  PassResult r;
  ir::Rewriter rw(g);
  for (ir::OpId scope : scopes(g, o)) {
    if (!g.valid(scope)) continue;
    auto order = topo(g, scope);
    if (!order) continue;
    absl::flat_hash_map<size_t, std::vector<ir::OpId>> seen;
    for (ir::OpId op : *order) {
      std::string_view type = g.type_str(op);
      if (nondeterministic(type) || has_graph_attr(g, op) || has_control_edges(g, op) || g.outputs(op).empty()) continue;
      if (type == "Constant" && g.inputs(op).empty() == false) continue;
      size_t h = op_hash(g, op);
      auto& bucket = seen[h];
      ir::OpId twin;
      for (ir::OpId c : bucket)
        if (same(g, c, op)) {
          twin = c;
          break;
        }
      if (!twin || o.excluded(g, op)) {
        bucket.push_back(op);
        continue;
      }
      auto mine = data_outputs(g, op), theirs = data_outputs(g, twin);
      bool ok = mine.size() == theirs.size();
      for (size_t i = 0; ok && i < mine.size(); ++i) ok = can_replace(g, mine[i], theirs[i]);
      if (!ok) {
        bucket.push_back(op);
        continue;
      }
      rw.begin();
      bool done = true;
      for (size_t i = 0; i < mine.size() && done; ++i) done = replace_value(rw, mine[i], theirs[i]);
      if (done) {
        rw.erase_op(op);
        rw.commit();
        ++r.rewrites;
        ++r.erased;
      } else {
        rw.rollback();
        bucket.push_back(op);
      }
    }
  }
  return r;
}

}  // namespace

void register_cse(PassRegistry& r) {
  r.add({"eliminate_common_subexpression", "merges ops of one scope with the same type, attributes and inputs",
         eliminate_common_subexpression, false, true});
}

}  // namespace amanda::passes::detail
