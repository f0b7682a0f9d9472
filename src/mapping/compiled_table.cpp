// Compiling a table: each rule's match plans (one per start op of its pattern), the schemas of its
// ops, and a dispatch map from op type to candidates in the order they are tried (bigger patterns,
// then priority, then declaration), so that applying a table costs O(graph), not O(graph x rules).
#include <algorithm>
#include <deque>

#include "compiled.h"

namespace amanda::mapping {

namespace engine {

// By default the dst op of the matched type takes over, unless another dst op reads its outputs
// (Softmax between Transposes, Shape before a Slice): the op that makes the rule's result takes
// over then, so the matched op's ports are not linked to an inner value.
size_t primary_of(const Rule& r, const Pattern& dst) {
  if (dst.ops.empty()) return 0;
  size_t primary = dst.ops.size() - 1;
  bool explicit_primary = false;
  for (size_t i = 0; i < dst.ops.size(); ++i)
    if (dst.ops[i].primary) primary = i, explicit_primary = true;
  if (!explicit_primary && r.src.ops.size() == 1)
    for (size_t i = 0; i < dst.ops.size(); ++i)
      if (dst.ops[i].type == r.src.ops[0].type &&
          std::none_of(dst.edges.begin(), dst.edges.end(), [&](const EdgeSpec& e) { return e.src_op == i; }))
        return i;
  return primary;
}

namespace {

bool pattern_connected_plan(const Pattern& p, size_t start, std::vector<Step>& plan) {
  std::vector<bool> seen(p.ops.size(), false);
  seen[start] = true;
  std::deque<size_t> q{start};
  while (!q.empty()) {
    size_t s = q.front();
    q.pop_front();
    for (size_t e = 0; e < p.edges.size(); ++e) {
      const EdgeSpec& es = p.edges[e];
      if (es.src_op == s && !seen[es.dst_op]) {
        seen[es.dst_op] = true;
        plan.push_back({es.dst_op, e, true});
        q.push_back(es.dst_op);
      } else if (es.dst_op == s && !seen[es.src_op]) {
        seen[es.src_op] = true;
        plan.push_back({es.src_op, e, false});
        q.push_back(es.src_op);
      }
    }
  }
  return std::all_of(seen.begin(), seen.end(), [](bool b) { return b; });
}

}  // namespace

}  // namespace engine

using namespace engine;

CompiledTable::CompiledTable(const Table& t, schema::Registry& reg, const std::vector<std::string>& tags)
    : impl_(std::make_unique<Impl>(t, reg)) {
  auto& rules = impl_->rules;
  // (A big table names the same few op types thousands of times: each resolved once.)
  absl::flat_hash_map<std::string, const schema::OpSchema*> src_schemas, dst_schemas;
  auto resolve = [&reg, &t](absl::flat_hash_map<std::string, const schema::OpSchema*>& cache, const std::string& ns,
                            const std::string& type) {
    auto it = cache.find(type);
    if (it == cache.end()) it = cache.emplace(type, resolve_op(reg, t, ns, type)).first;
    return it->second;
  };
  for (const Rule& r : t.rules) {
    if (!r.tags.empty() &&
        std::none_of(r.tags.begin(), r.tags.end(), [&](const std::string& x) { return std::find(tags.begin(), tags.end(), x) != tags.end(); }))
      continue;
    CRule c;
    c.rule = &r;
    for (size_t s = 0; s < r.src.ops.size(); ++s) {
      std::vector<Step> plan;
      if (!pattern_connected_plan(r.src, s, plan))
        throw ParseError(r.loc, "rule '" + r.name + "': the src ops are not all connected by edges");
      c.plans.push_back(std::move(plan));
      c.src_schema.push_back(resolve(src_schemas, t.src, r.src.ops[s].type));
      std::vector<std::string> inner;
      for (const EdgeSpec& e : r.src.edges)
        if (e.src_op == s) inner.push_back(e.src_port);
      c.inner_outputs.push_back(std::move(inner));
    }
    c.dst.pattern = &r.dst;
    for (const OpSpec& o : r.dst.ops) c.dst.schema.push_back(resolve(dst_schemas, t.dst, o.type));
    c.dst.primary = primary_of(r, r.dst);
    rules.push_back(std::move(c));
  }
  for (const CRule& c : rules)
    for (size_t s = 0; s < c.rule->src.ops.size(); ++s) impl_->by_type[c.rule->src.ops[s].type].push_back({&c, s});
  // Bigger patterns first, then priority, then declaration order.
  for (auto& [type, list] : impl_->by_type)
    std::stable_sort(list.begin(), list.end(), [](const Candidate& a, const Candidate& b) {
      const Rule &x = *a.rule->rule, &y = *b.rule->rule;
      if (x.src.ops.size() != y.src.ops.size()) return x.src.ops.size() > y.src.ops.size();
      if (x.priority != y.priority) return x.priority > y.priority;
      return x.order < y.order;
    });
}

CompiledTable::~CompiledTable() = default;
const Table& CompiledTable::table() const { return impl_->table; }

}  // namespace amanda::mapping
