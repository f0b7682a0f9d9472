// The graph abstraction of amanda-design.md, as one arena per document.
//
// Everything is a node of one ir::Graph: ops, the root graph, and graphs held in attribute values
// ("graph nodes"). A node may contain a body (child ops and the edges between them): the root
// graph does, a subgraph op does, an attribute graph does. Inside a body the owner's input ports
// act as sources and its output ports as sinks, as the seed explains; an attribute graph may also
// read its owning op's input ports (explicit captures).
//
// Costs: producer of an input port O(1); consumers of an output port O(uses) via an intrusive
// list; erase_op O(degree); every id is stable and never reused.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "amanda/ir/ids.h"
#include "amanda/ir/name_index.h"
#include "amanda/ir/types.h"
#include "amanda/ir/value.h"
#include "amanda/support/symbols.h"

namespace amanda::ir {

enum class PortDir : uint8_t { In, Out };

// What a port is, where that is more than "an op's input or output". Frameworks spell these
// differently (ONNX initializers and captured outer values, TorchScript's prim::Constant, a
// TensorFlow Const); the importers set the role so that later layers need no convention.
enum class PortRole : uint8_t {
  None,
  GraphInput,        // a graph's input that the caller supplies
  Initializer,       // a graph's input fixed by a stored tensor (not supplied by the caller)
  InputWithDefault,  // a graph input that also has an initializer (ONNX: the default value)
  Constant,          // the output of a constant op
  Capture,           // an op's input that makes an outer value visible to its attribute graph
};
std::string_view role_name(PortRole r);

inline constexpr std::string_view kControlPort = "^control";

using Attr = std::pair<Symbol, Value>;
using AttrList = std::vector<Attr>;

struct TopoResult {
  std::vector<OpId> order;  // every op of the scope when acyclic
  std::vector<OpId> cycle;  // non-empty when the scope has a cycle: the ops on one cycle, in order
  bool ok() const { return cycle.empty(); }
};

// The ops and boundary of a set of ops of one scope.
struct SubgraphBoundary {
  std::vector<PortId> inputs;   // input ports of the set fed by an edge from outside it
  std::vector<PortId> outputs;  // output ports of the set that feed something outside it
};

class Graph {
 public:
  enum class RootKind : uint8_t { Graph, Op };
  explicit Graph(RootKind kind = RootKind::Graph);
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  ~Graph();

  // ---- symbols
  Symbol sym(std::string_view s) { return symbols_->intern(s); }
  std::string_view str(Symbol s) const { return symbols_->str(s); }
  SymbolTable& symbols() { return *symbols_; }
  const SymbolTable& symbols() const { return *symbols_; }
  Symbol control_symbol() const { return control_sym_; }

  void reserve(size_t ops, size_t ports, size_t edges);

  // ---- nodes
  OpId root() const { return OpId(1); }
  RootKind root_kind() const { return root_kind_; }
  // Creates an op at the end of `scope`'s body. An empty name gives a unique generated name
  // ("_0", "_1", ...) that is not written back out, unless generate_name is false (the op stays
  // unnamed until set_name: readers name anonymous ops once a whole body is known).
  OpId create_op(OpId scope, Symbol type, Symbol name, bool generate_name = true);
  OpId create_op(OpId scope, std::string_view type, std::string_view name = {},
                 std::initializer_list<std::string_view> inputs = {}, std::initializer_list<std::string_view> outputs = {});
  // Creates a graph node owned by `owner`, to be held by a graph-valued attribute of it.
  OpId create_attr_graph(OpId owner, Symbol name);
  void erase_op(OpId op);  // erases its ports, edges, body and attribute graphs

  bool valid(OpId op) const { return op.value > 0 && op.value < ops_.size() && (ops_[op.value].flags & kAlive); }
  bool is_graph(OpId op) const { return ops_[op.value].flags & kGraphNode; }
  // Attribute graphs hang in the owner's child list too, but they are not a body.
  bool has_body(OpId op) const { return (ops_[op.value].flags & kHasBody) || first_child(op); }
  void mark_has_body(OpId op) { ops_[op.value].flags |= kHasBody; }  // an op with an empty but present body
  OpId parent(OpId op) const { return ops_[op.value].parent; }
  Symbol name(OpId op) const { return ops_[op.value].name; }
  std::string_view name_str(OpId op) const { return str(ops_[op.value].name); }
  bool name_generated(OpId op) const { return ops_[op.value].flags & kNameGenerated; }
  void set_name(OpId op, Symbol name);
  void set_name_generated(OpId op, bool g) {
    if (g) ops_[op.value].flags |= kNameGenerated; else ops_[op.value].flags &= ~kNameGenerated;
  }
  // Op type; for a graph node this slot holds the graph's namespace.
  Symbol type(OpId op) const { return ops_[op.value].type; }
  std::string_view type_str(OpId op) const { return str(ops_[op.value].type); }
  void set_type(OpId op, Symbol t) { ops_[op.value].type = t; }
  Symbol graph_namespace(OpId g) const { return ops_[g.value].type; }
  void set_graph_namespace(OpId g, Symbol ns) { ops_[g.value].type = ns; }

  // Body iteration (child ops in order; attribute graphs are not children).
  OpId first_child(OpId scope) const;
  OpId next_sibling(OpId op) const;
  OpId prev_sibling(OpId op) const;
  std::vector<OpId> children(OpId scope) const;
  size_t child_count(OpId scope) const;
  OpId find_op(OpId scope, Symbol name) const;  // the first child with that name
  OpId find_op(OpId scope, std::string_view name) const;
  // Attribute graphs owned by an op, in creation order.
  std::vector<OpId> attr_graphs(OpId owner) const;
  // Moves op to just before `before` in the same scope (OpId() = to the end).
  void move_before(OpId op, OpId before);

  size_t op_count() const { return live_ops_; }  // live ops, graph nodes not counted
  size_t edge_count() const { return live_edges_; }
  size_t id_bound() const { return ops_.size(); }  // ids of ops are < id_bound()
  size_t port_id_bound() const { return ports_.size(); }
  size_t edge_id_bound() const { return edges_.size(); }

  // Every live op (not graph nodes) in id order, nested ones included.
  template <class F>
  void for_each_op(F&& f) const {
    for (uint32_t i = 2; i < ops_.size(); ++i)
      if ((ops_[i].flags & (kAlive | kGraphNode)) == kAlive) f(OpId(i));
  }
  std::vector<OpId> ops_of_type(Symbol type) const;
  std::vector<OpId> ops_of_type(std::string_view type) const;

  // ---- ports
  PortId add_input(OpId op, Symbol name);
  PortId add_output(OpId op, Symbol name);
  PortId add_port(OpId op, PortDir dir, Symbol name);
  void erase_port(PortId port);  // and its edges; later ports move down one index
  // Brings back a port erase_port took (its edges are not restored) at data index `index`; later
  // ports move up one index (the Rewriter's rollback: a port comes back where it was).
  void revive_port(PortId port, uint32_t index);
  std::span<const PortId> inputs(OpId op) const { return list(ops_[op.value].in); }
  std::span<const PortId> outputs(OpId op) const { return list(ops_[op.value].out); }
  std::span<const PortId> ports(OpId op, PortDir d) const { return d == PortDir::In ? inputs(op) : outputs(op); }
  PortId input(OpId op, size_t i) const { return inputs(op)[i]; }
  PortId output(OpId op, size_t i) const { return outputs(op)[i]; }
  PortId find_port(OpId op, PortDir dir, Symbol name) const;  // "^control" finds the control port
  PortId find_input(OpId op, Symbol name) const { return find_port(op, PortDir::In, name); }
  PortId find_output(OpId op, Symbol name) const { return find_port(op, PortDir::Out, name); }
  // The pre-defined control ports, created on first use.
  PortId control_in(OpId op);
  PortId control_out(OpId op);
  PortId find_control(OpId op, PortDir dir) const { return dir == PortDir::In ? ops_[op.value].ctrl_in : ops_[op.value].ctrl_out; }

  bool valid(PortId p) const { return p.value > 0 && p.value < ports_.size() && (ports_[p.value].meta & kPortAlive); }
  OpId port_op(PortId p) const { return ports_[p.value].op; }
  PortDir port_dir(PortId p) const { return (ports_[p.value].meta & kPortOut) ? PortDir::Out : PortDir::In; }
  bool is_control(PortId p) const { return ports_[p.value].meta & kPortControl; }
  uint32_t port_index(PortId p) const { return ports_[p.value].meta >> kPortIndexShift; }
  Symbol port_name(PortId p) const { return ports_[p.value].name; }
  std::string_view port_name_str(PortId p) const { return str(ports_[p.value].name); }
  bool port_name_generated(PortId p) const { return ports_[p.value].meta & kPortNameGenerated; }
  void set_port_name(PortId p, Symbol name);
  void set_port_name_generated(PortId p, bool g) {
    if (g) ports_[p.value].meta |= kPortNameGenerated; else ports_[p.value].meta &= ~kPortNameGenerated;
  }

  // ---- value types and roles (types.h)
  TypeTable& types() { return types_; }
  const TypeTable& types() const { return types_; }
  TypeId port_type(PortId p) const { return TypeId(ports_[p.value].type); }
  void set_port_type(PortId p, TypeId t) { ports_[p.value].type = t.value; }
  const TypeData& port_type_data(PortId p) const { return types_.get(port_type(p)); }
  PortRole port_role(PortId p) const { return static_cast<PortRole>((ports_[p.value].meta >> kPortRoleShift) & 7u); }
  void set_port_role(PortId p, PortRole r) {
    ports_[p.value].meta = (ports_[p.value].meta & ~(7u << kPortRoleShift)) | (static_cast<uint32_t>(r) << kPortRoleShift);
  }
  // A type of graph `src` (symbols and inner types translated) as a type of this graph.
  TypeId import_type(const Graph& src, TypeId t);

  // ---- edges
  EdgeId connect(PortId src, PortId dst);
  // Reconnects an erased edge under its old id (the Rewriter's rollback: the text forms write
  // edges in id order, so an undone disconnect must not get a new id).
  EdgeId revive_edge(EdgeId id, PortId src, PortId dst);
  void disconnect(EdgeId e);
  bool valid(EdgeId e) const { return e.value > 0 && e.value < edges_.size() && edges_[e.value].src.value != 0; }
  PortId edge_src(EdgeId e) const { return edges_[e.value].src; }
  PortId edge_dst(EdgeId e) const { return edges_[e.value].dst; }
  bool is_control(EdgeId e) const { return is_control(edge_src(e)) || is_control(edge_dst(e)); }
  // The body in which an edge lives: the op whose body holds it.
  OpId edge_scope(EdgeId e) const;

  // Edges arriving at a port (as the edge's destination) and leaving it (as the edge's source).
  EdgeId first_in_edge(PortId p) const { return ports_[p.value].first_in; }
  EdgeId next_in_edge(EdgeId e) const { return edges_[e.value].next_in; }
  EdgeId first_out_edge(PortId p) const { return ports_[p.value].first_out; }
  EdgeId next_out_edge(EdgeId e) const { return edges_[e.value].next_out; }
  std::vector<EdgeId> in_edges(PortId p) const;
  std::vector<EdgeId> out_edges(PortId p) const;
  size_t in_degree(PortId p) const;
  size_t out_degree(PortId p) const;

  PortId producer(PortId in) const {
    EdgeId e = ports_[in.value].first_in;
    return e ? edges_[e.value].src : PortId();
  }
  std::vector<PortId> consumers(PortId out) const;
  // Every edge leaving `from` now leaves `to` instead (MLIR's replaceAllUsesWith).
  void replace_all_uses(PortId from, PortId to);
  // Splits edge src->dst into src->op.in[in_index] and op.out[out_index]->dst, for a new op of
  // `type` created in the edge's scope, with one input and one output port.
  OpId insert_op_on_edge(EdgeId e, Symbol type, Symbol name, Symbol in_port, Symbol out_port);

  // ---- attributes (ordered; set_attr replaces an existing key in place)
  const AttrList& attrs(OpId op) const { return attr_list(ops_[op.value].attrs); }
  const AttrList& attrs(PortId p) const { return attr_list(ports_[p.value].attrs); }
  const AttrList& attrs(EdgeId e) const { return attr_list(edges_[e.value].attrs); }
  const Value* attr(OpId op, Symbol key) const { return find_attr(ops_[op.value].attrs, key); }
  const Value* attr(PortId p, Symbol key) const { return find_attr(ports_[p.value].attrs, key); }
  const Value* attr(EdgeId e, Symbol key) const { return find_attr(edges_[e.value].attrs, key); }
  void set_attr(OpId op, Symbol key, Value v) { put_attr(ops_[op.value].attrs, key, std::move(v)); }
  void set_attr(PortId p, Symbol key, Value v) { put_attr(ports_[p.value].attrs, key, std::move(v)); }
  void set_attr(EdgeId e, Symbol key, Value v) { put_attr(edges_[e.value].attrs, key, std::move(v)); }
  bool erase_attr(OpId op, Symbol key);  // erases attribute graphs it held
  // Replaces a whole attribute list (order included); attribute graphs are not touched.
  void set_attr_list(OpId op, AttrList l);
  void set_attr_list(PortId p, AttrList l);
  void set_attr_list(EdgeId e, AttrList l);
  // The Rewriter's journal: the op's list in place (nullptr when it has none), and an exchange of
  // the whole list that hands back the old one (attribute graphs are not touched by either).
  AttrList* mutable_attrs(OpId op) { return ops_[op.value].attrs ? &attrs_[ops_[op.value].attrs] : nullptr; }
  AttrList exchange_attr_list(OpId op, AttrList l);
  bool erase_attr(PortId p, Symbol key) { return drop_attr(ports_[p.value].attrs, key); }
  bool erase_attr(EdgeId e, Symbol key) { return drop_attr(edges_[e.value].attrs, key); }

  // ---- whole-graph operations
  // Topological order of a scope's children by data and control edges between them.
  TopoResult topo_order(OpId scope) const;
  SubgraphBoundary boundary(std::span<const OpId> ops) const;
  // Replaces a set of ops of one scope by `replacement` (already created in that scope). Each
  // boundary input port must be mapped to an input port of the replacement and each boundary
  // output port to an output port; the rewired edges keep their attributes; control edges that
  // cross the boundary move to the replacement's control ports. Throws amanda::Error, changing
  // nothing, if a boundary port is unmapped or mapped to a port that is not the replacement's.
  void replace_subgraph(std::span<const OpId> ops, OpId replacement,
                        std::span<const std::pair<PortId, PortId>> input_map,
                        std::span<const std::pair<PortId, PortId>> output_map);
  // Replaces a set of ops by a copy of the body of `g`'s root: boundary input port p mapped to
  // root input i feeds whatever i feeds inside g; consumers of boundary output port p mapped to
  // root output j read whatever feeds j inside g. A control edge that crosses the boundary is
  // kept on every new op. Returns the new ops. Throws amanda::Error, changing nothing, if a
  // boundary port is unmapped or a mapped root output is not fed by an op of g.
  std::vector<OpId> replace_subgraph(std::span<const OpId> ops, const Graph& g,
                                     std::span<const std::pair<PortId, size_t>> input_map,
                                     std::span<const std::pair<PortId, size_t>> output_map);
  // Copies ops (of `src`, which may be *this) with their ports, attributes, bodies and the edges
  // among them into `scope`. A name already taken there gets a suffix. Returns new ids in order.
  std::vector<OpId> clone_ops(const Graph& src, std::span<const OpId> ops, OpId scope);
  std::vector<OpId> clone_subgraph(std::span<const OpId> ops, OpId scope) { return clone_ops(*this, ops, scope); }

  // "h/f", "h/f:input x", "h/f:output m", "h/f:input ^control" — the paths diagnostics use. The
  // root is never part of the path of what it holds.
  std::string path(OpId op) const;
  std::string path(PortId p) const;
  std::string path(EdgeId e) const;

  // Bytes this graph holds (arena capacities, symbols, attribute lists).
  size_t memory_bytes() const;

 private:
  static constexpr uint32_t kAlive = 1, kGraphNode = 2, kNameGenerated = 4, kHasBody = 8;
  static constexpr uint32_t kPortAlive = 1, kPortOut = 2, kPortControl = 4, kPortNameGenerated = 8;
  static constexpr uint32_t kPortRoleShift = 4;  // 3 bits of PortRole
  static constexpr uint32_t kPortIndexShift = 8;

  struct PortList {
    uint32_t off = 0;
    uint32_t size = 0;
  };
  struct OpData {
    Symbol name = 0;
    Symbol type = 0;
    OpId parent, prev, next;
    OpId first_child, last_child;
    PortList in, out;
    PortId ctrl_in, ctrl_out;
    uint32_t attrs = 0;
    uint32_t flags = 0;
  };
  struct PortData {
    Symbol name = 0;
    OpId op;
    uint32_t meta = 0;
    EdgeId first_in, first_out;  // heads of circular-prev lists: head.prev is the tail
    uint32_t attrs = 0;
    uint32_t type = 0;  // TypeId
  };
  struct EdgeData {
    PortId src, dst;  // src == 0: erased
    EdgeId prev_out, next_out, prev_in, next_in;
    uint32_t attrs = 0;
  };

  std::span<const PortId> list(PortList l) const { return {slots_.data() + l.off, l.size}; }
  const AttrList& attr_list(uint32_t idx) const;
  const Value* find_attr(uint32_t idx, Symbol key) const;
  void put_attr(uint32_t& idx, Symbol key, Value v);
  bool drop_attr(uint32_t& idx, Symbol key);
  void release_attrs(uint32_t& idx);
  void put_list(uint32_t& idx, AttrList l);
  EdgeId link_edge(EdgeId id, PortId src, PortId dst);
  void erase_dropped_graphs(const Value& old, uint32_t kept);
  OpId subgraph_scope(std::span<const OpId> ops) const;
  EdgeId move_edge(EdgeId e, PortId src, PortId dst);
  static uint64_t name_key(OpId scope, Symbol name) { return (uint64_t(scope.value) << 32) | name; }
  // Reads an indexed op's key back from the op (the index stores ids only).
  auto key_of() const {
    return [this](OpId op) { return name_key(ops_[op.value].parent, ops_[op.value].name); };
  }
  void index_name(OpId op);
  void unindex_name(OpId op);
  Symbol unique_name(OpId scope, Symbol wanted);
  PortId new_port(OpId op, PortDir dir, Symbol name, bool control);
  void push_slot(PortList& l, PortId p);
  void unlink_out(EdgeId e);
  void unlink_in(EdgeId e);
  void erase_op_rec(OpId op);

  std::unique_ptr<SymbolTable> symbols_;
  TypeTable types_;
  RootKind root_kind_;
  Symbol control_sym_ = 0;
  std::vector<OpData> ops_;
  std::vector<PortData> ports_;
  std::vector<EdgeData> edges_;
  std::vector<PortId> slots_;
  std::vector<AttrList> attrs_;
  std::vector<uint32_t> free_attrs_;
  NameIndex names_;  // (scope, name) -> first op of that name
  size_t shadowed_names_ = 0;                   // named ops that names_ does not point to (duplicates)
  size_t live_ops_ = 0;
  size_t live_edges_ = 0;
  absl::flat_hash_map<uint32_t, uint32_t> generated_counter_;  // scope -> next "_k" to try
};

}  // namespace amanda::ir
