// The scene as the JSON the HTML viewer reads: columns of numbers rather than an object per node,
// so a 100,000-op page stays small and parses fast.
#include <cmath>

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include "amanda/view/scene.h"
#include "describe.h"
#include "scene_build.h"

namespace amanda::view {

namespace {

class Json {
 public:
  std::string out;
  void str(std::string_view s) {
    out += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '<': out += "\\u003c"; break;  // never "</script>" inside the page
        default:
          if (c < 0x20) out += fmt::format("\\u{:04x}", c);
          else out += static_cast<char>(c);
      }
    }
    out += '"';
  }
  void num(double v) {
    if (!std::isfinite(v)) v = 0;
    if (v == std::floor(v) && std::fabs(v) < 1e15) fmt::format_to(std::back_inserter(out), "{}", static_cast<int64_t>(v));
    else fmt::format_to(std::back_inserter(out), "{:.1f}", v);
  }
  void key(std::string_view k) {
    str(k);
    out += ':';
  }
  template <class T, class F>
  void array(const std::vector<T>& v, F&& f) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      f(v[i]);
    }
    out += ']';
  }
};

void details(Json& j, const ir::Graph& g, const SceneNode& n) {
  j.out += '[';
  if (n.kind == NodeKind::Op) {
    j.str(g.path(n.op));
    j.out += ",[";
    bool first = true;
    // Attributes first, then the annotations that record how the file spelled things.
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& [k, v] : g.attrs(n.op)) {
        if (g.str(k).starts_with("@") != (pass == 1)) continue;
        if (!first) j.out += ',';
        first = false;
        j.out += '[';
        j.str(g.str(k));
        j.out += ',';
        j.str(value_summary(g, v));
        j.out += ']';
      }
    j.out += "],[";
    first = true;
    for (ir::PortId p : g.inputs(n.op)) {
      if (!first) j.out += ',';
      first = false;
      j.out += '[';
      j.str(g.port_name_str(p));
      j.out += ',';
      j.str(port_type(g, p));
      j.out += ',';
      j.str(port_source(g, p));
      j.out += ']';
    }
    j.out += "],[";
    first = true;
    for (ir::PortId p : g.outputs(n.op)) {
      if (!first) j.out += ',';
      first = false;
      j.out += '[';
      j.str(g.port_name_str(p));
      j.out += ',';
      j.str(port_type(g, p));
      j.out += ',';
      j.str(port_uses(g, p));
      j.out += ']';
    }
    j.out += "]]";
    return;
  }
  j.str(g.path(n.port));
  j.out += ",[";
  bool first = true;
  for (const auto& [k, v] : g.attrs(n.port)) {
    if (!first) j.out += ',';
    first = false;
    j.out += '[';
    j.str(g.str(k));
    j.out += ',';
    j.str(value_summary(g, v));
    j.out += ']';
  }
  j.out += "],[],[]]";
}

}  // namespace

std::string scene_json(const ir::Graph& g, const SceneOptions& o) {
  Scene s = build_scene(g);
  Json j;
  j.out.reserve(s.nodes.size() * 200 + s.edges.size() * 40);
  j.out += '{';
  j.key("title");
  j.str(o.title);
  j.out += ',';
  j.key("namespace");
  j.str(g.str(g.graph_namespace(g.root())));
  j.out += ',';
  j.key("ops");
  j.num(static_cast<double>(g.op_count()));
  j.out += ',';
  j.key("layout_ms");
  j.num(std::round(s.layout_seconds * 1000));
  j.out += ',';
  j.key("scopes");
  j.array(s.scopes, [&](const SceneScope& sc) {
    j.out += '[';
    j.num(static_cast<double>(sc.owner));
    j.out += ',';
    j.str(sc.title);
    for (double v : {double(sc.first_node), double(sc.node_count), double(sc.first_edge), double(sc.edge_count),
                     std::ceil(double(sc.w)), std::ceil(double(sc.h))}) {
      j.out += ',';
      j.num(v);
    }
    j.out += ']';
  });
  // Node columns; op types as indices into a table of the distinct ones.
  std::vector<std::string> types;
  absl::flat_hash_map<std::string, uint32_t> type_index;
  std::vector<uint32_t> type_of(s.nodes.size(), 0);
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    if (s.nodes[i].kind != NodeKind::Op) continue;
    auto [it, fresh] = type_index.try_emplace(s.nodes[i].label, static_cast<uint32_t>(types.size()));
    if (fresh) types.push_back(s.nodes[i].label);
    type_of[i] = it->second;
  }
  j.out += ',';
  j.key("types");
  j.array(types, [&](const std::string& t) { j.str(t); });
  auto column = [&](std::string_view name, auto&& f) {
    j.out += ',';
    j.key(name);
    j.out += '[';
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      if (i) j.out += ',';
      f(i, s.nodes[i]);
    }
    j.out += ']';
  };
  column("kind", [&](size_t, const SceneNode& n) { j.num(static_cast<int>(n.kind)); });
  column("type", [&](size_t i, const SceneNode&) { j.num(type_of[i]); });
  column("label", [&](size_t, const SceneNode& n) { j.str(n.kind == NodeKind::Op ? n.sublabel : n.label); });
  column("x", [&](size_t, const SceneNode& n) { j.num(std::round(n.x)); });
  column("y", [&](size_t, const SceneNode& n) { j.num(std::round(n.y)); });
  column("w", [&](size_t, const SceneNode& n) { j.num(std::round(n.w)); });
  column("h", [&](size_t, const SceneNode& n) { j.num(std::round(n.h)); });
  if (o.diff)
    column("mark", [&](size_t, const SceneNode& n) {
      j.num(n.kind == NodeKind::Op ? static_cast<int>(o.diff->of(n.op)) : 0);
    });
  j.out += ',';
  j.key("bodies");
  j.out += '[';
  bool first = true;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    if (s.nodes[i].bodies.empty()) continue;
    if (!first) j.out += ',';
    first = false;
    j.out += '[';
    j.num(static_cast<double>(i));
    j.out += ',';
    j.array(s.nodes[i].bodies, [&](uint32_t b) { j.num(b); });
    j.out += ']';
  }
  j.out += ']';
  j.out += ',';
  j.key("edges");
  j.array(s.edges, [&](const SceneEdge& e) {
    j.out += '[';
    j.num(e.src);
    j.out += ',';
    j.num(e.dst);
    j.out += ',';
    j.num((e.control ? 1 : 0) | (e.reversed ? 2 : 0));
    for (float p : e.points) {
      j.out += ',';
      j.num(std::round(p));
    }
    j.out += ']';
  });
  j.out += ',';
  j.key("details");
  j.array(s.nodes, [&](const SceneNode& n) { details(j, g, n); });
  if (o.diff) {
    absl::flat_hash_map<uint32_t, uint32_t> node_of;
    for (size_t i = 0; i < s.nodes.size(); ++i)
      if (s.nodes[i].kind == NodeKind::Op) node_of[s.nodes[i].op.value] = static_cast<uint32_t>(i);
    j.out += ',';
    j.key("diff");
    j.out += fmt::format("{{\"same\":{},\"modified\":{},\"retyped\":{},\"added\":{},\"removed\":{},\"changes\":", o.diff->same,
                         o.diff->modified, o.diff->retyped, o.diff->added, o.diff->removed);
    j.array(o.diff->changes, [&](const Change& c) {
      j.out += "[[";
      for (size_t i = 0; i < c.before.size(); ++i) {
        if (i) j.out += ',';
        j.out += '[';
        j.str(c.before[i].path);
        j.out += ',';
        j.str(c.before[i].type);
        j.out += ']';
      }
      j.out += "],";
      j.array(c.after, [&](ir::OpId op) { j.num(node_of.count(op.value) ? node_of[op.value] : -1); });
      j.out += ']';
    });
    j.out += '}';
  }
  j.out += '}';
  return std::move(j.out);
}

}  // namespace amanda::view
