#include "scene_build.h"

#include <algorithm>
#include <chrono>

#include <absl/container/flat_hash_map.h>

#include "amanda/support/progress.h"
#include "amanda/view/layout.h"
#include "describe.h"

namespace amanda::view {

namespace {

// Rough text widths of the viewer's fonts (12 px bold type, 10 px name), so boxes fit labels.
constexpr float kTypeChar = 8.0f, kNameChar = 6.2f, kPad = 24;
constexpr size_t kMaxName = 32;

void size_node(SceneNode& n) {
  if (n.kind == NodeKind::Op) {
    float w = n.label.size() * kTypeChar;
    if (!n.sublabel.empty()) w = std::max(w, std::min(n.sublabel.size(), kMaxName) * kNameChar);
    n.w = std::clamp(w + kPad + (n.bodies.empty() ? 0 : 14), 48.0f, 320.0f);
    n.h = n.sublabel.empty() ? 24 : 36;
  } else {
    n.w = std::clamp(std::min(n.label.size(), kMaxName) * kNameChar + kPad, 40.0f, 260.0f);
    n.h = 20;
  }
}

class Builder {
 public:
  Builder(const ir::Graph& g, Scene& s) : g_(g), s_(s) {}

  void run(bool layout) {
    // Edges by the scope they live in.
    std::vector<uint32_t> count(g_.id_bound() + 1, 0);
    for (uint32_t i = 1; i < g_.edge_id_bound(); ++i)
      if (g_.valid(ir::EdgeId(i))) ++count[g_.edge_scope(ir::EdgeId(i)).value + 1];
    for (size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
    edge_off_ = count;
    edges_by_scope_.resize(count.back());
    for (uint32_t i = 1; i < g_.edge_id_bound(); ++i)
      if (g_.valid(ir::EdgeId(i))) edges_by_scope_[count[g_.edge_scope(ir::EdgeId(i)).value]++] = ir::EdgeId(i);

    std::string title = g_.name_str(g_.root()).empty() ? "graph" : std::string(g_.name_str(g_.root()));
    if (g_.root_kind() == ir::Graph::RootKind::Op) {
      // An op document: the op itself is drawn (and counted), its body and graphs inside it.
      add_scope(ir::OpId(), -1, title);
    } else {
      add_scope(g_.root(), -1, title);
      for (ir::OpId ag : g_.attr_graphs(g_.root())) add_scope(ag, -1, body_title(g_, g_.root(), ag));
    }
    Progress progress("laying out", g_.op_count());
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < pending_.size(); ++i) {
      size_t ops_before = s_.ops;
      fill_scope(static_cast<uint32_t>(i));
      if (layout) lay_out(s_.scopes[i]);
      progress.advance(s_.ops - ops_before);
    }
    s_.layout_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  uint32_t add_scope(ir::OpId gn, int64_t owner, std::string title) {
    SceneScope sc;
    sc.owner = owner;
    sc.title = std::move(title);
    s_.scopes.push_back(std::move(sc));
    pending_.push_back(gn);
    return static_cast<uint32_t>(s_.scopes.size() - 1);
  }

  uint32_t add_node(SceneNode n) {
    s_.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(s_.nodes.size() - 1);
  }

  uint32_t port_node(uint32_t scope, ir::PortId p, NodeKind kind) {
    auto [it, fresh] = port_nodes_.try_emplace(p.value, 0);
    if (!fresh) return it->second;
    SceneNode n{kind, ir::OpId(), p, scope, {}, {}};
    ir::OpId op = g_.port_op(p);
    ir::OpId sc = pending_[scope];
    n.label = op == sc || op == g_.parent(sc) ? std::string(g_.port_name_str(p))
                                               : std::string(g_.name_str(op)) + ":" + std::string(g_.port_name_str(p));
    size_node(n);
    it->second = add_node(std::move(n));
    return it->second;
  }

  void fill_scope(uint32_t si) {
    ir::OpId sg = pending_[si];
    port_nodes_.clear();
    s_.scopes[si].first_node = static_cast<uint32_t>(s_.nodes.size());
    s_.scopes[si].first_edge = static_cast<uint32_t>(s_.edges.size());
    if (!sg) {  // the scope holding an op document's root op
      add_op_node(si, g_.root());
      s_.scopes[si].node_count = 1;
      size_node(s_.nodes.back());
      return;
    }
    // The scope's own ports: inside, its inputs are sources and its outputs sinks.
    for (ir::PortId p : g_.inputs(sg))
      if (!is_initializer(g_, p)) port_node(si, p, NodeKind::Input);
    for (ir::OpId c = g_.first_child(sg); c; c = g_.next_sibling(c))
      if (!g_.is_graph(c)) add_op_node(si, c);
    for (ir::PortId p : g_.outputs(sg)) port_node(si, p, NodeKind::Output);
    // Edges; their endpoints outside the scope's ops (an owner's input read inside, a capture)
    // get port nodes of their own.
    for (uint32_t k = edge_off_[sg.value]; k < edge_off_[sg.value + 1]; ++k) {
      ir::EdgeId e = edges_by_scope_[k];
      ir::PortId src = g_.edge_src(e), dst = g_.edge_dst(e);
      if (is_initializer(g_, src)) continue;
      uint32_t a = endpoint(si, sg, src, NodeKind::Input), b = endpoint(si, sg, dst, NodeKind::Output);
      s_.edges.push_back({a, b, g_.is_control(e), {}});
    }
    s_.scopes[si].node_count = static_cast<uint32_t>(s_.nodes.size()) - s_.scopes[si].first_node;
    s_.scopes[si].edge_count = static_cast<uint32_t>(s_.edges.size()) - s_.scopes[si].first_edge;
    for (uint32_t i = s_.scopes[si].first_node; i < s_.nodes.size(); ++i) size_node(s_.nodes[i]);
  }

  void add_op_node(uint32_t si, ir::OpId c) {
    SceneNode n{NodeKind::Op, c, ir::PortId(), si, std::string(g_.type_str(c)), {}};
    if (!g_.name_generated(c)) {
      n.sublabel = std::string(g_.name_str(c));
      if (n.sublabel.size() > kMaxName) n.sublabel = n.sublabel.substr(0, kMaxName - 1) + "…";
    }
    uint32_t idx = add_node(std::move(n));
    if (op_node_.size() < g_.id_bound()) op_node_.resize(g_.id_bound(), UINT32_MAX);
    op_node_[c.value] = idx;
    ++s_.ops;
    if (g_.first_child(c) && has_op_child(c)) s_.nodes[idx].bodies.push_back(add_scope(c, idx, "body"));
    for (ir::OpId ag : g_.attr_graphs(c)) s_.nodes[idx].bodies.push_back(add_scope(ag, idx, body_title(g_, c, ag)));
  }

  bool has_op_child(ir::OpId op) const {
    for (ir::OpId c = g_.first_child(op); c; c = g_.next_sibling(c))
      if (!g_.is_graph(c)) return true;
    return false;
  }

  uint32_t endpoint(uint32_t si, ir::OpId sg, ir::PortId p, NodeKind kind) {
    ir::OpId op = g_.port_op(p);
    if (op != sg && !g_.is_graph(op) && g_.parent(op) == sg && op.value < op_node_.size() && op_node_[op.value] != UINT32_MAX)
      return op_node_[op.value];
    return port_node(si, p, kind);
  }

  void lay_out(SceneScope& sc) {
    LayoutGraph lg;
    lg.width.reserve(sc.node_count);
    for (uint32_t i = 0; i < sc.node_count; ++i) {
      lg.width.push_back(s_.nodes[sc.first_node + i].w);
      lg.height.push_back(s_.nodes[sc.first_node + i].h);
    }
    for (uint32_t i = 0; i < sc.edge_count; ++i) {
      const SceneEdge& e = s_.edges[sc.first_edge + i];
      lg.edges.push_back({e.src - sc.first_node, e.dst - sc.first_node});
    }
    Layout l = layered_layout(lg);
    for (uint32_t i = 0; i < sc.node_count; ++i) {
      s_.nodes[sc.first_node + i].x = l.x[i];
      s_.nodes[sc.first_node + i].y = l.y[i];
    }
    for (uint32_t i = 0; i < sc.edge_count; ++i) {
      s_.edges[sc.first_edge + i].points = std::move(l.points[i]);
      s_.edges[sc.first_edge + i].reversed = l.reversed[i];
    }
    sc.w = l.width;
    sc.h = l.height;
  }

  const ir::Graph& g_;
  Scene& s_;
  std::vector<ir::OpId> pending_;  // the graph node or op of each scope
  std::vector<uint32_t> edge_off_;
  std::vector<ir::EdgeId> edges_by_scope_;
  std::vector<uint32_t> op_node_;
  absl::flat_hash_map<uint32_t, uint32_t> port_nodes_;
};

}  // namespace

Scene build_scene(const ir::Graph& g, bool layout) {
  Scene s;
  Builder(g, s).run(layout);
  return s;
}

}  // namespace amanda::view
