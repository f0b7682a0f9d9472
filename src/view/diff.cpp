#include "amanda/view/diff.h"

#include <algorithm>
#include <numeric>

#include <absl/container/flat_hash_map.h>

namespace amanda::view {

std::string_view mark_name(Mark m) {
  switch (m) {
    case Mark::Same: return "same";
    case Mark::Modified: return "modified";
    case Mark::Retyped: return "retyped";
    case Mark::Added: return "added";
  }
  return "same";
}

namespace {

// Attributes that say what an op does (annotations "@..." only record how a file spelled it; graph
// values are compared by their kind, since ids differ between the two graphs).
bool same_attrs(const ir::Graph& a, ir::OpId x, const ir::Graph& b, ir::OpId y) {
  auto meaningful = [](const ir::Graph& g, ir::OpId op) {
    std::vector<std::pair<std::string_view, const ir::Value*>> r;
    for (const auto& [k, v] : g.attrs(op))
      if (!g.str(k).starts_with("@")) r.push_back({g.str(k), &v});
    std::sort(r.begin(), r.end(), [](auto& p, auto& q) { return p.first < q.first; });
    return r;
  };
  auto ra = meaningful(a, x), rb = meaningful(b, y);
  if (ra.size() != rb.size()) return false;
  for (size_t i = 0; i < ra.size(); ++i) {
    if (ra[i].first != rb[i].first) return false;
    const ir::Value &va = *ra[i].second, &vb = *rb[i].second;
    if (va.is_graph() || vb.is_graph() ? va.kind() != vb.kind() : va != vb) return false;
  }
  auto data_inputs = [](const ir::Graph& g, ir::OpId op) {
    size_t n = 0;
    for (ir::PortId p : g.inputs(op))
      if (!g.is_control(p) && g.first_in_edge(p)) ++n;
    return n;
  };
  return data_inputs(a, x) == data_inputs(b, y) && a.outputs(x).size() == b.outputs(y).size();
}

struct UnionFind {
  std::vector<uint32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  uint32_t find(uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(uint32_t x, uint32_t y) { parent[find(x)] = find(y); }
};

// Ops whose data ports connect to op's (both directions), in the same graph.
template <class F>
void neighbours(const ir::Graph& g, ir::OpId op, F&& f) {
  for (ir::PortId p : g.inputs(op))
    if (ir::PortId s = g.producer(p)) f(g.port_op(s));
  for (ir::PortId p : g.outputs(op))
    for (ir::EdgeId e = g.first_out_edge(p); e; e = g.next_out_edge(e)) f(g.port_op(g.edge_dst(e)));
}

// The key an op is matched by: its path; for an op without a name of its own (named by position,
// which shifts when a rule adds or removes ops) the value name its first output carries (ONNX keeps
// value names through a conversion), in its scope.
std::string match_key(const ir::Graph& g, ir::OpId op) {
  if (!g.name_generated(op)) return g.path(op);
  Symbol value = g.symbols().find("@value");
  if (value != SymbolTable::kNone)
    for (ir::PortId p : g.outputs(op))
      if (const ir::Value* v = g.attr(p, value); v && v->is_string()) {
        ir::OpId scope = g.parent(op);
        return (scope == g.root() ? std::string() : g.path(scope) + "/") + "@value:" + v->as_string();
      }
  return g.path(op);
}

}  // namespace

Diff diff_graphs(const ir::Graph& a, const ir::Graph& b) {
  Diff d;
  d.mark.assign(b.id_bound(), Mark::Same);
  absl::flat_hash_map<std::string, ir::OpId> in_a;
  a.for_each_op([&](ir::OpId op) { in_a.emplace(match_key(a, op), op); });
  // Union-find over A's ops (ids) and B's ops (offset by A's id bound).
  const uint32_t off = static_cast<uint32_t>(a.id_bound());
  UnionFind uf(off + b.id_bound());
  std::vector<uint8_t> removed(a.id_bound(), 0), counterpart_changed(a.id_bound(), 0);
  std::vector<ir::OpId> b_of_a(a.id_bound());
  b.for_each_op([&](ir::OpId y) {
    auto it = in_a.find(match_key(b, y));
    if (it == in_a.end()) {
      d.mark[y.value] = Mark::Added;
      ++d.added;
      return;
    }
    ir::OpId x = it->second;
    b_of_a[x.value] = y;
    if (a.type_str(x) != b.type_str(y)) d.mark[y.value] = Mark::Retyped, ++d.retyped;
    else if (!same_attrs(a, x, b, y)) d.mark[y.value] = Mark::Modified, ++d.modified;
    else ++d.same;
    if (d.mark[y.value] != Mark::Same) {
      counterpart_changed[x.value] = 1;
      uf.join(x.value, off + y.value);
    }
  });
  a.for_each_op([&](ir::OpId x) {
    if (!b_of_a[x.value]) removed[x.value] = 1, ++d.removed;
  });
  // A removed op belongs with its removed or changed neighbours; an added op with its changed
  // neighbours, and with the op whose name it extends (NAME/Type, NAME_port).
  a.for_each_op([&](ir::OpId x) {
    if (!removed[x.value]) return;
    neighbours(a, x, [&](ir::OpId y) {
      if (a.is_graph(y) || a.parent(y) != a.parent(x)) return;
      if (removed[y.value] || counterpart_changed[y.value]) uf.join(x.value, y.value);
    });
  });
  b.for_each_op([&](ir::OpId y) {
    if (d.mark[y.value] != Mark::Added) return;
    neighbours(b, y, [&](ir::OpId z) {
      if (!b.is_graph(z) && b.parent(z) == b.parent(y) && d.mark[z.value] != Mark::Same) uf.join(off + y.value, off + z.value);
    });
    std::string p = b.path(y);
    for (size_t cut = p.size(); cut-- > 0;) {
      if (p[cut] != '/' && p[cut] != '_') continue;
      auto it = in_a.find(p.substr(0, cut));
      if (it != in_a.end()) {
        uf.join(off + y.value, it->second.value);
        break;
      }
    }
  });
  absl::flat_hash_map<uint32_t, size_t> group;
  auto change_of = [&](uint32_t member) -> Change& {
    auto [it, fresh] = group.try_emplace(uf.find(member), d.changes.size());
    if (fresh) d.changes.emplace_back();
    return d.changes[it->second];
  };
  a.for_each_op([&](ir::OpId x) {
    if (removed[x.value] || counterpart_changed[x.value])
      change_of(x.value).before.push_back({a.path(x), std::string(a.type_str(x))});
  });
  b.for_each_op([&](ir::OpId y) {
    if (d.mark[y.value] != Mark::Same) change_of(off + y.value).after.push_back(y);
  });
  return d;
}

}  // namespace amanda::view
