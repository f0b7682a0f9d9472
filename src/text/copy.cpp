// A copy of a whole document. Graph::clone_ops copies ops with everything inside them; what it
// does not know is the scope itself: the root's (or an attribute graph's) own ports, attributes,
// attribute graphs (ONNX functions) and the edges between its ports and its ops. Those are
// copied here, scope by scope.
#include <absl/container/flat_hash_map.h>

#include "amanda/text/document.h"
#include "amanda/support/diagnostics.h"

namespace amanda::text {

namespace {

using ir::OpId;
using ir::PortDir;
using ir::PortId;

struct ScopeCopier {
  const ir::Graph& a;
  ir::Graph& b;
  absl::flat_hash_map<uint32_t, OpId> graphs;  // attribute graph of a -> its copy in b

  ir::Value value(const ir::Value& v) {
    switch (v.kind()) {
      case ir::Value::Kind::Graph: {
        auto it = graphs.find(v.as_graph().value);
        if (it == graphs.end()) throw Error("copy: a graph value names a graph the scope does not own");
        return ir::Value::graph(it->second);
      }
      case ir::Value::Kind::List: {
        ir::Value::List l;
        for (const auto& x : v.as_list()) l.push_back(value(x));
        return ir::Value(std::move(l));
      }
      case ir::Value::Kind::Map: {
        ir::Value::Map m;
        for (const auto& e : v.as_map()) m.push_back({e.key, value(e.value)});
        return ir::Value(std::move(m));
      }
      default: return v;
    }
  }

  void copy(OpId from, OpId to) {
    if (from == a.root()) {
      b.set_name(to, b.sym(a.name_str(from)));
      b.set_name_generated(to, a.name_generated(from));
    }
    b.set_graph_namespace(to, b.sym(a.str(a.graph_namespace(from))));
    absl::flat_hash_map<uint32_t, PortId> ports;
    for (PortDir dir : {PortDir::In, PortDir::Out}) {
      for (PortId p : a.ports(from, dir)) {
        PortId q = b.add_port(to, dir, b.sym(a.port_name_str(p)));
        b.set_port_name_generated(q, a.port_name_generated(p));
        b.set_port_role(q, a.port_role(p));  // (a graph input, an initializer, ...)
        if (ir::TypeId t = a.port_type(p)) b.set_port_type(q, b.import_type(a, t));
        for (const auto& [k, v] : a.attrs(p)) b.set_attr(q, b.sym(a.str(k)), v);
        ports[p.value] = q;
      }
      if (PortId c = a.find_control(from, dir)) ports[c.value] = dir == PortDir::In ? b.control_in(to) : b.control_out(to);
    }
    std::vector<OpId> ops, attr_graphs;
    for (OpId c = a.first_child(from); c; c = a.next_sibling(c)) ops.push_back(c);
    attr_graphs = a.attr_graphs(from);
    std::vector<OpId> copies = b.clone_ops(a, ops, to);
    if (ops.empty() && a.has_body(from)) b.mark_has_body(to);
    for (size_t i = 0; i < ops.size(); ++i) {
      for (PortDir dir : {PortDir::In, PortDir::Out}) {
        auto pa = a.ports(ops[i], dir);
        auto pb = b.ports(copies[i], dir);
        for (size_t k = 0; k < pa.size(); ++k) ports[pa[k].value] = pb[k];
        if (PortId c = a.find_control(ops[i], dir)) ports[c.value] = dir == PortDir::In ? b.control_in(copies[i]) : b.control_out(copies[i]);
      }
    }
    for (OpId g : attr_graphs) {
      OpId n = b.create_attr_graph(to, b.sym(a.name_str(g)));
      graphs[g.value] = n;
      ScopeCopier inner{a, b, {}};
      inner.copy(g, n);
    }
    // The edges that start or end at the scope's own ports (those among its ops came with clone_ops).
    auto port_of = [&](PortId p) {
      auto it = ports.find(p.value);
      if (it == ports.end()) throw Error("copy: an edge of " + a.path(from) + " leaves its scope at " + a.path(p));
      return it->second;
    };
    auto link = [&](ir::EdgeId e) {
      ir::EdgeId n = b.connect(port_of(a.edge_src(e)), port_of(a.edge_dst(e)));
      for (const auto& [k, v] : a.attrs(e)) b.set_attr(n, b.sym(a.str(k)), v);
    };
    for (PortDir dir : {PortDir::In, PortDir::Out}) {
      std::vector<PortId> own(a.ports(from, dir).begin(), a.ports(from, dir).end());
      if (PortId c = a.find_control(from, dir)) own.push_back(c);
      for (PortId p : own) {
        if (dir == PortDir::In) {
          for (ir::EdgeId e : a.out_edges(p))
            if (a.edge_scope(e) == from) link(e);
        } else {
          for (ir::EdgeId e : a.in_edges(p))  // from an op of the scope (input -> output edges came above)
            if (a.edge_scope(e) == from && a.port_op(a.edge_src(e)) != from) link(e);
        }
      }
    }
    for (const auto& [k, v] : a.attrs(from)) b.set_attr(to, b.sym(a.str(k)), value(v));
  }
};

}  // namespace

Document copy_document(const Document& src) {
  Document out(src.kind);
  out.edge = src.edge;
  const ir::Graph& a = src.graph;
  out.graph.reserve(a.id_bound(), a.port_id_bound(), a.edge_id_bound());
  ScopeCopier c{a, out.graph, {}};
  c.copy(a.root(), out.graph.root());
  return out;
}

}  // namespace amanda::text
