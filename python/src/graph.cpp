// The graph API in Python: Graph (a root, an op's body, or a graph held in an attribute), Op,
// Port, Edge, and the views over their ports and attributes. Every method checks that its
// entities still exist and belong to one document before calling the IR, so misuse raises a
// Python exception naming the entity's path instead of crashing.
#include <pybind11/stl.h>

#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"
#include "handles.h"

namespace amanda::python {

ir::Graph& live(const PyGraph& g) {
  ir::Graph& x = g.d->g();
  if (!x.valid(g.scope)) throw GraphError("", "this graph no longer exists (its op was erased)");
  return x;
}
ir::Graph& live(const PyOp& o) {
  ir::Graph& x = o.d->g();
  if (!x.valid(o.id) || x.is_graph(o.id)) throw GraphError("", "op #" + std::to_string(o.id.value) + " was erased");
  return x;
}
ir::Graph& live(const PyPort& p) {
  ir::Graph& x = p.d->g();
  if (!x.valid(p.id)) throw GraphError("", "port #" + std::to_string(p.id.value) + " was erased");
  return x;
}
ir::Graph& live(const PyEdge& e) {
  ir::Graph& x = e.d->g();
  if (!x.valid(e.id)) throw GraphError("", "edge #" + std::to_string(e.id.value) + " was disconnected");
  return x;
}

namespace {

using ir::OpId;
using ir::PortDir;
using ir::PortId;

// An op-like node as Python sees it: a graph node (root or attribute graph) is a Graph, anything
// else an Op.
py::object node_object(const DocPtr& d, OpId id) {
  if (id == d->g().root() || d->g().is_graph(id)) return py::cast(PyGraph{d, id});
  return py::cast(PyOp{d, id});
}

template <class A, class B>
void same_document(const A& a, const B& b, const std::string& where) {
  if (a.d != b.d) throw GraphError(where, "the entities belong to different graphs");
}

// ---- views: ports of one side of a node, attributes of one entity
struct PortList {
  DocPtr d;
  OpId node;
  PortDir dir;
};

struct AttrMap {
  DocPtr d;
  enum class Of { Op, Port, Edge } of;
  uint32_t id;
  const ir::AttrList& list() const {
    ir::Graph& g = d->g();
    switch (of) {
      case Of::Op: return g.attrs(OpId(id));
      case Of::Port: return g.attrs(PortId(id));
      default: return g.attrs(ir::EdgeId(id));
    }
  }
  std::string path() const {
    ir::Graph& g = d->g();
    switch (of) {
      case Of::Op: return g.path(OpId(id));
      case Of::Port: return g.path(PortId(id));
      default: return g.path(ir::EdgeId(id));
    }
  }
  void check() const {
    ir::Graph& g = d->g();
    bool ok = of == Of::Op ? g.valid(OpId(id)) : of == Of::Port ? g.valid(PortId(id)) : g.valid(ir::EdgeId(id));
    if (!ok) throw GraphError("", "the entity of these attributes no longer exists");
  }
  const ir::Value* find(const std::string& k) const {
    check();
    ir::Graph& g = d->g();
    Symbol s = g.symbols().find(k);
    if (!s) return nullptr;
    switch (of) {
      case Of::Op: return g.attr(OpId(id), s);
      case Of::Port: return g.attr(PortId(id), s);
      default: return g.attr(ir::EdgeId(id), s);
    }
  }
  // A graph value must be a graph this op owns (Op.add_graph), never another op's or a body.
  void check_graphs(const ir::Value& v, const std::string& where) const {
    ir::Graph& g = d->g();
    if (v.is_graph()) {
      OpId x = v.as_graph();
      if (of != Of::Op || !g.valid(x) || !g.is_graph(x) || x == g.root() || g.parent(x) != OpId(id))
        throw GraphError(where, "a graph value must be a graph made by this op's add_graph()");
    } else if (v.is_list()) {
      for (const auto& e : v.as_list()) check_graphs(e, where);
    } else if (v.is_map()) {
      for (const auto& e : v.as_map()) check_graphs(e.value, where);
    }
  }
  void set(const std::string& k, py::handle v) {
    check();
    ir::Graph& g = d->g();
    ir::Value val = from_python(d, v, path() + " attribute " + k);
    check_graphs(val, path() + " attribute " + k);
    Symbol s = g.sym(k);
    switch (of) {
      case Of::Op: g.set_attr(OpId(id), s, std::move(val)); break;
      case Of::Port: g.set_attr(PortId(id), s, std::move(val)); break;
      default: g.set_attr(ir::EdgeId(id), s, std::move(val)); break;
    }
  }
  bool erase(const std::string& k) {
    check();
    ir::Graph& g = d->g();
    Symbol s = g.symbols().find(k);
    if (!s) return false;
    switch (of) {
      case Of::Op: return g.erase_attr(OpId(id), s);
      case Of::Port: return g.erase_attr(PortId(id), s);
      default: return g.erase_attr(ir::EdgeId(id), s);
    }
  }
  std::vector<std::string> keys() const {
    check();
    std::vector<std::string> out;
    for (const auto& [k, v] : list()) out.emplace_back(d->g().str(k));
    return out;
  }
};

PyPort port_at(const PortList& l, py::handle key) {
  ir::Graph& g = l.d->g();
  if (!g.valid(l.node)) throw GraphError("", "the op of these ports was erased");
  auto ports = g.ports(l.node, l.dir);
  const char* side = l.dir == PortDir::In ? "input" : "output";
  if (py::isinstance<py::str>(key)) {
    std::string name = key.cast<std::string>();
    Symbol s = g.symbols().find(name);
    PortId p = s ? g.find_port(l.node, l.dir, s) : PortId();
    if (!p) throw py::key_error(g.path(l.node) + " has no " + side + " port '" + name + "'");
    return {l.d, p};
  }
  auto i = key.cast<py::ssize_t>();
  py::ssize_t n = static_cast<py::ssize_t>(ports.size());
  if (i < 0) i += n;
  if (i < 0 || i >= n) throw py::index_error(g.path(l.node) + " has " + std::to_string(n) + " " + side + " ports");
  return {l.d, ports[static_cast<size_t>(i)]};
}

std::vector<PyPort> ports_of(const PortList& l) {
  ir::Graph& g = l.d->g();
  if (!g.valid(l.node)) throw GraphError("", "the op of these ports was erased");
  std::vector<PyPort> out;
  for (PortId p : g.ports(l.node, l.dir)) out.push_back({l.d, p});
  return out;
}

std::vector<PyOp> children(const PyGraph& gr) {
  ir::Graph& g = live(gr);
  std::vector<PyOp> out;
  for (OpId c = g.first_child(gr.scope); c; c = g.next_sibling(c))
    if (!g.is_graph(c)) out.push_back({gr.d, c});
  return out;
}

// Every op under a scope, bodies and attribute graphs included, parents before their children.
void walk(const DocPtr& d, OpId scope, std::vector<PyOp>& out) {
  ir::Graph& g = d->g();
  std::vector<OpId> stack;
  auto push_children = [&](OpId s) {
    std::vector<OpId> cs;
    for (OpId c = g.first_child(s); c; c = g.next_sibling(c)) cs.push_back(c);
    for (OpId c : g.attr_graphs(s)) cs.push_back(c);
    for (auto it = cs.rbegin(); it != cs.rend(); ++it) stack.push_back(*it);
  };
  push_children(scope);
  while (!stack.empty()) {
    OpId c = stack.back();
    stack.pop_back();
    if (!g.is_graph(c)) out.push_back({d, c});
    push_children(c);
  }
}

PyOp op_named(const PyGraph& gr, const std::string& name) {
  ir::Graph& g = live(gr);
  Symbol s = g.symbols().find(name);
  OpId op = s ? g.find_op(gr.scope, s) : OpId();
  if (!op || g.is_graph(op)) throw py::key_error("no op named '" + name + "' in " + g.path(gr.scope));
  return {gr.d, op};
}

std::vector<OpId> op_ids(const DocPtr& d, const std::vector<PyOp>& ops) {
  std::vector<OpId> ids;
  for (const auto& o : ops) {
    same_document(o, PyOp{d, {}}, "ops");
    live(o);
    ids.push_back(o.id);
  }
  return ids;
}

// Where a port can be an edge's source or destination: an op's output (source) and input
// (destination) live in the op's enclosing graph; an op's or graph's own input (source) and output
// (destination) live in its body.
OpId source_scope(const ir::Graph& g, PortId p) {
  return g.port_dir(p) == PortDir::Out ? g.parent(g.port_op(p)) : g.port_op(p);
}
OpId destination_scope(const ir::Graph& g, PortId p) {
  return g.port_dir(p) == PortDir::In ? g.parent(g.port_op(p)) : g.port_op(p);
}

PyEdge connect(const PyPort& src, const PyPort& dst) {
  same_document(src, dst, "connect");
  ir::Graph& g = live(src);
  live(dst);
  std::string what = g.path(src.id) + " -> " + g.path(dst.id);
  if (g.is_control(src.id) != g.is_control(dst.id))
    throw GraphError(what, "an edge joins two control ports or two data ports");
  OpId s = source_scope(g, src.id), t = destination_scope(g, dst.id);
  // An attribute graph may also read its owner's inputs (explicit captures).
  bool capture = t && g.is_graph(t) && t != g.root() && g.parent(t) == s && g.port_dir(src.id) == PortDir::In;
  if (!s || !t || (s != t && !capture))
    throw GraphError(what, "the ports are not in one graph (an edge goes from an output, or the enclosing graph's "
                           "input, to an input, or the enclosing graph's output, of the same graph)");
  if (!g.is_control(dst.id) && g.producer(dst.id))
    throw GraphError(g.path(dst.id), "already fed by " + g.path(g.producer(dst.id)) + " (a data port has one producer)");
  return {src.d, g.connect(src.id, dst.id)};
}

PyOp insert_on_edge(const PyEdge& e, const std::string& type, const std::string& name, const std::string& in,
                    const std::string& out) {
  ir::Graph& g = live(e);
  if (g.is_control(e.id)) throw GraphError(g.path(e.id), "an op goes on a data edge, not a control edge");
  return {e.d, g.insert_op_on_edge(e.id, g.sym(type), g.sym(name), g.sym(in), g.sym(out))};
}

PyOp create_op(const PyGraph& gr, const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
               const std::vector<std::string>& outputs, const py::object& attrs) {
  ir::Graph& g = live(gr);
  if (!name.empty()) {
    Symbol s = g.symbols().find(name);
    if (s && g.find_op(gr.scope, s)) throw GraphError(g.path(gr.scope), "an op named '" + name + "' already exists here");
  }
  OpId op = g.create_op(gr.scope, g.sym(type), g.sym(name));
  for (const auto& i : inputs) g.add_input(op, g.sym(i));
  for (const auto& o : outputs) g.add_output(op, g.sym(o));
  if (!attrs.is_none()) {
    AttrMap m{gr.d, AttrMap::Of::Op, op.value};
    for (auto [k, v] : attrs.cast<py::dict>()) m.set(k.cast<std::string>(), v);
  }
  return {gr.d, op};
}

// Replacement port maps: {boundary port: replacement port}.
std::vector<std::pair<PortId, PortId>> port_map(const DocPtr& d, const py::dict& m) {
  std::vector<std::pair<PortId, PortId>> out;
  for (auto [k, v] : m) {
    auto a = k.cast<PyPort>(), b = v.cast<PyPort>();
    same_document(a, PyPort{d, {}}, "replace");
    same_document(b, PyPort{d, {}}, "replace");
    live(a), live(b);
    out.push_back({a.id, b.id});
  }
  return out;
}

// {boundary port: index or name of the replacement graph's input/output}.
std::vector<std::pair<PortId, size_t>> index_map(const DocPtr& d, const py::dict& m, const ir::Graph& rg, PortDir dir) {
  std::vector<std::pair<PortId, size_t>> out;
  auto ports = rg.ports(rg.root(), dir);
  for (auto [k, v] : m) {
    auto a = k.cast<PyPort>();
    same_document(a, PyPort{d, {}}, "replace");
    live(a);
    size_t i;
    if (py::isinstance<py::str>(v)) {
      std::string name = v.cast<std::string>();
      auto it = std::find_if(ports.begin(), ports.end(), [&](PortId p) { return rg.port_name_str(p) == name; });
      if (it == ports.end()) throw py::key_error("the replacement graph has no " + std::string(dir == PortDir::In ? "input" : "output") + " '" + name + "'");
      i = static_cast<size_t>(it - ports.begin());
    } else if (py::isinstance<PyPort>(v)) {
      auto p = v.cast<PyPort>();
      if (&p.d->g() != &rg) throw GraphError("", "map to ports of the replacement graph's own inputs and outputs");
      i = rg.port_index(p.id);
    } else {
      i = v.cast<size_t>();
    }
    out.push_back({a.id, i});
  }
  return out;
}

std::vector<PyOp> ops_list(const DocPtr& d, const std::vector<OpId>& ids) {
  std::vector<PyOp> out;
  for (OpId i : ids) out.push_back({d, i});
  return out;
}

// The value type of a port: `type`/`shape` (graph ports) or the `@type`/`@shape` annotations (op outputs).
py::object port_attr(const PyPort& p, const char* key) {
  AttrMap m{p.d, AttrMap::Of::Port, p.id.value};
  if (const ir::Value* v = m.find(key)) return to_python(p.d, *v);
  if (const ir::Value* v = m.find(std::string("@") + key)) return to_python(p.d, *v);
  return py::none();
}

std::vector<PyEdge> scope_edges(const PyGraph& gr) {
  ir::Graph& g = live(gr);
  std::vector<PyEdge> out;
  auto from_ports = [&](OpId n) {
    for (PortDir dir : {PortDir::In, PortDir::Out}) {
      std::vector<PortId> ps(g.ports(n, dir).begin(), g.ports(n, dir).end());
      if (PortId c = g.find_control(n, dir)) ps.push_back(c);
      for (PortId p : ps)
        for (ir::EdgeId e : g.out_edges(p))
          if (g.edge_scope(e) == gr.scope) out.push_back({gr.d, e});
    }
  };
  from_ports(gr.scope);
  for (OpId c = g.first_child(gr.scope); c; c = g.next_sibling(c))
    if (!g.is_graph(c)) from_ports(c);
  return out;
}

template <class T>
size_t id_hash(const T& x) {
  return std::hash<const void*>{}(x.d.get()) ^ (std::hash<uint32_t>{}(x.id.value) * 31);
}

}  // namespace

void register_graph(py::module_& m) {
  py::class_<PortList>(m, "PortList", "The input or output ports of an op or graph: index by position or name")
      .def("__len__", [](const PortList& l) { return ports_of(l).size(); })
      .def("__getitem__", &port_at)
      .def("__iter__", [](const PortList& l) { return py::iter(py::cast(ports_of(l))); })
      .def("__contains__", [](const PortList& l, const std::string& name) {
        for (const auto& p : ports_of(l))
          if (l.d->g().port_name_str(p.id) == name) return true;
        return false;
      })
      .def("names", [](const PortList& l) {
        std::vector<std::string> out;
        for (const auto& p : ports_of(l)) out.emplace_back(l.d->g().port_name_str(p.id));
        return out;
      }, "The port names, in order")
      .def("__repr__", [](const PortList& l) {
        std::string s = "[";
        for (const auto& p : ports_of(l)) s += (s.size() > 1 ? ", " : "") + std::string(l.d->g().port_name_str(p.id));
        return s + "]";
      });

  py::class_<AttrMap>(m, "Attributes", "The ordered attributes of an op, port or edge: a mutable mapping")
      .def("__len__", [](const AttrMap& a) { return a.keys().size(); })
      .def("__getitem__", [](const AttrMap& a, const std::string& k) {
        const ir::Value* v = a.find(k);
        if (!v) throw py::key_error(a.path() + " has no attribute '" + k + "'");
        return to_python(a.d, *v);
      })
      .def("__setitem__", [](AttrMap& a, const std::string& k, py::handle v) { a.set(k, v); })
      .def("__delitem__", [](AttrMap& a, const std::string& k) {
        if (!a.erase(k)) throw py::key_error(a.path() + " has no attribute '" + k + "'");
      })
      .def("__contains__", [](const AttrMap& a, const std::string& k) { return a.find(k) != nullptr; })
      .def("__iter__", [](const AttrMap& a) { return py::iter(py::cast(a.keys())); })
      .def("keys", &AttrMap::keys)
      .def("items", [](const AttrMap& a) {
        py::list l;
        for (const auto& [k, v] : a.list()) l.append(py::make_tuple(std::string(a.d->g().str(k)), to_python(a.d, v)));
        return l;
      })
      .def("get", [](const AttrMap& a, const std::string& k, py::object dflt) {
        const ir::Value* v = a.find(k);
        return v ? to_python(a.d, *v) : dflt;
      }, py::arg("key"), py::arg("default") = py::none())
      .def("to_dict", [](const AttrMap& a) {
        py::dict out;
        for (const auto& [k, v] : a.list()) out[py::str(std::string(a.d->g().str(k)))] = to_python(a.d, v);
        return out;
      })
      .def("__repr__", [](const AttrMap& a) { return "Attributes(" + py::repr(py::cast(a.keys())).cast<std::string>() + ")"; });

  py::class_<PyGraph> graph(m, "Graph", "A graph: the root of a document, an op's body, or a graph held in an attribute");
  py::class_<PyOp> op(m, "Op", "An op of a graph");
  py::class_<PyPort> port(m, "Port", "A named input or output port of an op or graph");
  py::class_<PyEdge> edge(m, "Edge", "A data or control edge from an output port to an input port");

  graph
      .def(py::init([](const std::string& ns, const std::string& name) {
             auto d = std::make_shared<DocHolder>(text::Document());
             if (!ns.empty()) d->g().set_graph_namespace(d->g().root(), d->g().sym(ns));
             if (!name.empty()) d->g().set_name(d->g().root(), d->g().sym(name));
             return PyGraph{d, d->g().root()};
           }),
           py::arg("namespace") = "", py::arg("name") = "", "A new empty graph (a document of its own)")
      .def_property("namespace",
                    [](const PyGraph& g) { return std::string(live(g).str(live(g).graph_namespace(g.scope))); },
                    [](PyGraph& g, const std::string& ns) { live(g).set_graph_namespace(g.scope, live(g).sym(ns)); })
      .def_property("name", [](const PyGraph& g) { return std::string(live(g).name_str(g.scope)); },
                    [](PyGraph& g, const std::string& n) { live(g).set_name(g.scope, live(g).sym(n)); })
      .def_property_readonly("path", [](const PyGraph& g) { return g.scope == live(g).root() ? std::string() : live(g).path(g.scope); })
      .def_property_readonly("kind", [](const PyGraph& g) { return std::string(text::kind_name(g.d->doc.kind)); },
                             "What the document holds: graph, op or edge")
      .def_property_readonly("is_root", [](const PyGraph& g) { return g.scope == live(g).root(); })
      .def_property_readonly("owner", [](const PyGraph& g) -> py::object {
        ir::Graph& x = live(g);
        if (g.scope == x.root()) return py::none();
        if (!x.is_graph(g.scope)) return py::cast(PyOp{g.d, g.scope});  // an op's body
        return node_object(g.d, x.parent(g.scope));                       // an attribute graph's owner
      }, "The op whose body this is, or that holds this graph in an attribute; None for the root")
      .def_property_readonly("root", [](const PyGraph& g) { return PyGraph{g.d, live(g).root()}; })
      .def_property_readonly("ops", [](const PyGraph& g) { return children(g); }, "The ops of this graph's body, in order")
      .def("__iter__", [](const PyGraph& g) { return py::iter(py::cast(children(g))); })
      .def("__len__", [](const PyGraph& g) { return children(g).size(); })
      .def("__getitem__", &op_named, "The op of this name")
      .def("__contains__", [](const PyGraph& g, const std::string& name) {
        ir::Graph& x = live(g);
        Symbol s = x.symbols().find(name);
        return s && x.find_op(g.scope, s);
      })
      .def("op", &op_named, py::arg("name"), "The op of this name in this graph's body (KeyError if none)")
      .def("walk", [](const PyGraph& g) {
        live(g);
        std::vector<PyOp> out;
        walk(g.d, g.scope, out);
        return out;
      }, "Every op of this graph, nested bodies and attribute graphs included, parents first")
      .def("ops_of_type", [](const PyGraph& g, const std::string& type) {
        live(g);
        std::vector<PyOp> all, out;
        walk(g.d, g.scope, all);
        for (auto& o : all)
          if (g.d->g().type_str(o.id) == type) out.push_back(o);
        return out;
      }, py::arg("type"), "The ops of this type, nested ones included")
      .def_property_readonly("inputs", [](const PyGraph& g) { return PortList{g.d, (live(g), g.scope), PortDir::In}; })
      .def_property_readonly("outputs", [](const PyGraph& g) { return PortList{g.d, (live(g), g.scope), PortDir::Out}; })
      .def_property_readonly("attrs", [](const PyGraph& g) { return AttrMap{g.d, AttrMap::Of::Op, (live(g), g.scope.value)}; })
      .def("add_input", [](PyGraph& g, const std::string& n) { return PyPort{g.d, live(g).add_input(g.scope, live(g).sym(n))}; },
           py::arg("name"))
      .def("add_output", [](PyGraph& g, const std::string& n) { return PyPort{g.d, live(g).add_output(g.scope, live(g).sym(n))}; },
           py::arg("name"))
      .def("create_op", &create_op, py::arg("type"), py::arg("name") = "", py::arg("inputs") = std::vector<std::string>{},
           py::arg("outputs") = std::vector<std::string>{}, py::arg("attrs") = py::none(),
           "Creates an op at the end of this graph's body (an empty name: a generated one)")
      .def("connect", [](PyGraph& g, const PyPort& src, const PyPort& dst) { live(g); return connect(src, dst); },
           py::arg("src"), py::arg("dst"), "An edge from an output port (or this graph's input) to an input port")
      .def_property_readonly("edges", &scope_edges, "The edges of this graph's body (data and control)")
      .def("erase", [](PyGraph& g, py::handle ops) {
        std::vector<PyOp> list;
        if (py::isinstance<PyOp>(ops)) list.push_back(ops.cast<PyOp>());
        else list = ops.cast<std::vector<PyOp>>();
        for (OpId id : op_ids(g.d, list)) live(g).erase_op(id);
      }, py::arg("ops"), "Erases an op (or a list of ops) with its ports, edges, body and attribute graphs")
      .def("topological_order", [](const PyGraph& g) {
        ir::Graph& x = live(g);
        ir::TopoResult r = x.topo_order(g.scope);
        if (!r.ok()) {
          std::string s;
          for (OpId o : r.cycle) s += (s.empty() ? "" : " -> ") + x.path(o);
          throw GraphError(x.path(r.cycle.front()), "the graph has a cycle: " + s);
        }
        return ops_list(g.d, r.order);
      }, "The ops of this body in an order where producers come first; GraphError naming a cycle if there is one")
      .def("boundary", [](const PyGraph& g, const std::vector<PyOp>& ops) {
        auto ids = op_ids(g.d, ops);
        ir::SubgraphBoundary b = live(g).boundary(ids);
        std::vector<PyPort> in, out;
        for (PortId p : b.inputs) in.push_back({g.d, p});
        for (PortId p : b.outputs) out.push_back({g.d, p});
        return py::make_tuple(in, out);
      }, py::arg("ops"), "(inputs, outputs): the ports of these ops that edges from or to outside them reach")
      .def("replace", [](PyGraph& g, const std::vector<PyOp>& ops, py::object replacement, py::dict inputs, py::dict outputs) -> py::object {
        auto ids = op_ids(g.d, ops);
        ir::Graph& x = live(g);
        if (py::isinstance<PyOp>(replacement)) {
          auto r = replacement.cast<PyOp>();
          same_document(r, g, "replace");
          live(r);
          x.replace_subgraph(ids, r.id, port_map(g.d, inputs), port_map(g.d, outputs));
          return replacement;
        }
        auto rg = replacement.cast<PyGraph>();
        if (rg.d == g.d) throw GraphError(x.path(g.scope), "the replacement graph must belong to another document (amanda.Graph())");
        const ir::Graph& src = live(rg);
        auto im = index_map(g.d, inputs, src, PortDir::In), om = index_map(g.d, outputs, src, PortDir::Out);
        return py::cast(ops_list(g.d, x.replace_subgraph(ids, src, im, om)));
      }, py::arg("ops"), py::arg("replacement"), py::arg("inputs"), py::arg("outputs"),
         "Replaces ops of this body by an op (created here; maps: boundary port -> its port) or by a copy of "
         "another graph's body (maps: boundary port -> index or name of that graph's input/output). Returns the "
         "new op(s); changes nothing and raises if a boundary port is unmapped")
      .def("clone", [](PyGraph& g, const std::vector<PyOp>& ops, py::object into) {
        PyGraph dst = into.is_none() ? g : into.cast<PyGraph>();
        auto ids = op_ids(g.d, ops);
        ir::Graph& to = live(dst);
        return ops_list(dst.d, to.clone_ops(live(g), ids, dst.scope));
      }, py::arg("ops"), py::arg("into") = py::none(),
         "Copies ops with their ports, attributes, bodies and the edges among them into `into` (default: here)")
      .def("copy", [](const PyGraph& g) {
        auto d = std::make_shared<DocHolder>(copy_document(g.d->doc));
        d->source = g.d->source;
        return PyGraph{d, d->g().root()};
      }, "A copy of the whole document (tensors shared: they are read-only)")
      .def("verify", [](const PyGraph& g) {
        Diagnostics diags;
        ir::verify(live(g), diags);
        return diags.items();
      }, "Structural problems of the whole document (every one, with its path); empty when sound")
      .def("difference", [](const PyGraph& a, const PyGraph& b) -> py::object {
        std::string s = ir::first_difference(live(a), live(b));
        if (s.empty()) return py::none();
        return py::str(s);
      }, py::arg("other"), "None when the two documents are structurally equal, else the first difference with its path")
      .def_property_readonly("op_count", [](const PyGraph& g) { return live(g).op_count(); }, "Live ops of the whole document")
      .def_property_readonly("edge_count", [](const PyGraph& g) { return live(g).edge_count(); })
      .def_property_readonly("report", [](const PyGraph& g) -> py::object {
        if (!g.d->report) return py::none();
        return py::cast(*g.d->report);
      }, "The report of the conversion that made this graph (amanda.convert), else None")
      .def("__eq__", [](const PyGraph& a, const PyGraph& b) { return a.d == b.d && a.scope == b.scope; })
      .def("__hash__", [](const PyGraph& g) { return std::hash<const void*>{}(g.d.get()) ^ g.scope.value; })
      .def("__repr__", [](const PyGraph& g) {
        ir::Graph& x = live(g);
        std::string where = g.scope == x.root() ? std::string(x.name_str(g.scope)) : x.path(g.scope);
        return "<amanda.Graph " + where + " (" + std::string(x.str(x.graph_namespace(g.scope))) + "), " +
               std::to_string(children(g).size()) + " ops>";
      });

  op.def_property("name", [](const PyOp& o) { return std::string(live(o).name_str(o.id)); },
                  [](PyOp& o, const std::string& n) {
                    ir::Graph& g = live(o);
                    Symbol s = g.sym(n);
                    OpId other = g.find_op(g.parent(o.id), s);
                    if (other && other != o.id) throw GraphError(g.path(o.id), "another op of this graph is named '" + n + "'");
                    g.set_name(o.id, s);
                    g.set_name_generated(o.id, false);
                  })
      .def_property("type", [](const PyOp& o) { return std::string(live(o).type_str(o.id)); },
                    [](PyOp& o, const std::string& t) { live(o).set_type(o.id, live(o).sym(t)); })
      .def_property_readonly("path", [](const PyOp& o) { return live(o).path(o.id); })
      .def_property_readonly("id", [](const PyOp& o) { return o.id.value; }, "Stable while the document lives")
      .def_property_readonly("alive", [](const PyOp& o) { return o.d->g().valid(o.id) && !o.d->g().is_graph(o.id); })
      .def_property_readonly("graph", [](const PyOp& o) { return PyGraph{o.d, live(o).parent(o.id)}; }, "The graph whose body holds this op")
      .def_property_readonly("inputs", [](const PyOp& o) { return PortList{o.d, (live(o), o.id), PortDir::In}; })
      .def_property_readonly("outputs", [](const PyOp& o) { return PortList{o.d, (live(o), o.id), PortDir::Out}; })
      .def_property_readonly("attrs", [](const PyOp& o) { return AttrMap{o.d, AttrMap::Of::Op, (live(o), o.id.value)}; })
      .def("add_input", [](PyOp& o, const std::string& n) { return PyPort{o.d, live(o).add_input(o.id, live(o).sym(n))}; }, py::arg("name"))
      .def("add_output", [](PyOp& o, const std::string& n) { return PyPort{o.d, live(o).add_output(o.id, live(o).sym(n))}; }, py::arg("name"))
      .def_property_readonly("control_input", [](PyOp& o) { return PyPort{o.d, live(o).control_in(o.id)}; }, "The ^control input port")
      .def_property_readonly("control_output", [](PyOp& o) { return PyPort{o.d, live(o).control_out(o.id)}; }, "The ^control output port")
      .def_property_readonly("body", [](const PyOp& o) -> py::object {
        ir::Graph& g = live(o);
        if (!g.has_body(o.id)) return py::none();
        return py::cast(PyGraph{o.d, o.id});
      }, "The graph this op contains (a subgraph op), else None")
      .def("add_body", [](PyOp& o) {
        live(o).mark_has_body(o.id);
        return PyGraph{o.d, o.id};
      }, "Makes this op a subgraph op (an empty body) and returns the body")
      .def_property_readonly("graphs", [](const PyOp& o) {
        std::vector<PyGraph> out;
        for (OpId g : live(o).attr_graphs(o.id)) out.push_back({o.d, g});
        return out;
      }, "The graphs this op holds in attributes (If's branches, Loop's body, ...)")
      .def("add_graph", [](PyOp& o, const std::string& name) {
        ir::Graph& g = live(o);
        return PyGraph{o.d, g.create_attr_graph(o.id, g.sym(name))};
      }, py::arg("name"), "A new empty graph owned by this op, to be stored in one of its attributes")
      .def("producers", [](const PyOp& o) {
        ir::Graph& g = live(o);
        std::vector<py::object> out;
        std::vector<OpId> seen;
        for (PortId p : g.inputs(o.id))
          if (PortId src = g.producer(p)) {
            OpId n = g.port_op(src);
            if (std::find(seen.begin(), seen.end(), n) == seen.end()) {
              seen.push_back(n);
              out.push_back(node_object(o.d, n));
            }
          }
        return out;
      }, "The ops (or the enclosing graph, for its inputs) feeding this op's data inputs, each once, in input order")
      .def("consumers", [](const PyOp& o) {
        ir::Graph& g = live(o);
        std::vector<py::object> out;
        std::vector<OpId> seen;
        for (PortId p : g.outputs(o.id))
          for (PortId c : g.consumers(p)) {
            OpId n = g.port_op(c);
            if (std::find(seen.begin(), seen.end(), n) == seen.end()) {
              seen.push_back(n);
              out.push_back(node_object(o.d, n));
            }
          }
        return out;
      }, "The ops (or the enclosing graph, for its outputs) reading this op's data outputs, each once")
      .def("erase", [](PyOp& o) { live(o).erase_op(o.id); }, "Erases this op with its ports, edges, body and attribute graphs")
      .def("__eq__", [](const PyOp& a, const PyOp& b) { return a.d == b.d && a.id == b.id; })
      .def("__hash__", &id_hash<PyOp>)
      .def("__repr__", [](const PyOp& o) {
        ir::Graph& g = o.d->g();
        if (!g.valid(o.id)) return std::string("<amanda.Op (erased)>");
        return "<amanda.Op " + g.path(o.id) + ": " + std::string(g.type_str(o.id)) + ">";
      });

  port.def_property("name", [](const PyPort& p) { return std::string(live(p).port_name_str(p.id)); },
                    [](PyPort& p, const std::string& n) { live(p).set_port_name(p.id, live(p).sym(n)); })
      .def_property_readonly("path", [](const PyPort& p) { return live(p).path(p.id); })
      .def_property_readonly("op", [](const PyPort& p) { return node_object(p.d, live(p).port_op(p.id)); },
                             "The op (or graph) this port belongs to")
      .def_property_readonly("direction", [](const PyPort& p) { return live(p).port_dir(p.id) == PortDir::In ? "in" : "out"; })
      .def_property_readonly("index", [](const PyPort& p) { return live(p).port_index(p.id); })
      .def_property_readonly("is_control", [](const PyPort& p) { return live(p).is_control(p.id); })
      .def_property_readonly("attrs", [](const PyPort& p) { return AttrMap{p.d, AttrMap::Of::Port, (live(p), p.id.value)}; })
      .def_property_readonly("type", [](const PyPort& p) { live(p); return port_attr(p, "type"); },
                             "The value type as the document spells it (e.g. 'tensor(float)'), or None")
      .def_property_readonly("shape", [](const PyPort& p) { live(p); return port_attr(p, "shape"); },
                             "The shape: ints, str for symbolic dims, None for unknown ones; None when the rank is unknown")
      .def_property_readonly("producer", [](const PyPort& p) -> py::object {
        PortId s = live(p).producer(p.id);
        if (!s) return py::none();
        return py::cast(PyPort{p.d, s});
      }, "The port whose edge feeds this one, or None")
      .def_property_readonly("consumers", [](const PyPort& p) {
        std::vector<PyPort> out;
        for (PortId c : live(p).consumers(p.id)) out.push_back({p.d, c});
        return out;
      }, "The ports this one feeds")
      .def_property_readonly("in_edges", [](const PyPort& p) {
        std::vector<PyEdge> out;
        for (ir::EdgeId e : live(p).in_edges(p.id)) out.push_back({p.d, e});
        return out;
      })
      .def_property_readonly("out_edges", [](const PyPort& p) {
        std::vector<PyEdge> out;
        for (ir::EdgeId e : live(p).out_edges(p.id)) out.push_back({p.d, e});
        return out;
      })
      .def("connect", [](const PyPort& self, const PyPort& dst) { return connect(self, dst); }, py::arg("dst"),
           "An edge from this port to dst")
      .def("replace_all_uses", [](PyPort& p, const PyPort& with) {
        same_document(p, with, "replace_all_uses");
        live(p).replace_all_uses(p.id, (live(with), with.id));
      }, py::arg("with_port"), "Every edge leaving this port leaves with_port instead")
      .def("__eq__", [](const PyPort& a, const PyPort& b) { return a.d == b.d && a.id == b.id; })
      .def("__hash__", &id_hash<PyPort>)
      .def("__repr__", [](const PyPort& p) {
        if (!p.d->g().valid(p.id)) return std::string("<amanda.Port (erased)>");
        return "<amanda.Port " + p.d->g().path(p.id) + ">";
      });

  edge.def_property_readonly("src", [](const PyEdge& e) { return PyPort{e.d, live(e).edge_src(e.id)}; })
      .def_property_readonly("dst", [](const PyEdge& e) { return PyPort{e.d, live(e).edge_dst(e.id)}; })
      .def_property_readonly("path", [](const PyEdge& e) { return live(e).path(e.id); })
      .def_property_readonly("is_control", [](const PyEdge& e) { return live(e).is_control(e.id); })
      .def_property_readonly("graph", [](const PyEdge& e) { return PyGraph{e.d, live(e).edge_scope(e.id)}; }, "The graph whose body holds this edge")
      .def_property_readonly("attrs", [](const PyEdge& e) { return AttrMap{e.d, AttrMap::Of::Edge, (live(e), e.id.value)}; })
      .def("disconnect", [](PyEdge& e) { live(e).disconnect(e.id); })
      .def("insert_op", &insert_on_edge, py::arg("type"), py::arg("name") = "", py::arg("input") = "input",
           py::arg("output") = "output",
           "Splits this edge src->dst into src->op.input and op.output->dst for a new op of `type` (with one input "
           "and one output port of these names); the edge's attributes move to the new edge into dst. Returns the op")
      .def("__eq__", [](const PyEdge& a, const PyEdge& b) { return a.d == b.d && a.id == b.id; })
      .def("__hash__", &id_hash<PyEdge>)
      .def("__repr__", [](const PyEdge& e) {
        if (!e.d->g().valid(e.id)) return std::string("<amanda.Edge (disconnected)>");
        return "<amanda.Edge " + e.d->g().path(e.id) + ">";
      });
}

}  // namespace amanda::python
