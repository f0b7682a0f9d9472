#include "amanda/ir/graph.h"

#include <algorithm>
#include <bit>
#include <deque>

#include <absl/container/flat_hash_set.h>

#include "amanda/support/diagnostics.h"

namespace amanda::ir {

namespace {
const AttrList kNoAttrs;

uint32_t list_capacity(uint32_t size) { return size <= 1 ? size : std::bit_ceil(size); }

void collect_graphs(const Value& v, std::vector<OpId>& out) {
  switch (v.kind()) {
    case Value::Kind::Graph: out.push_back(v.as_graph()); break;
    case Value::Kind::List:
      for (const auto& x : v.as_list()) collect_graphs(x, out);
      break;
    case Value::Kind::Map:
      for (const auto& x : v.as_map()) collect_graphs(x.value, out);
      break;
    default: break;
  }
}
}  // namespace

Graph::Graph(RootKind kind) : symbols_(std::make_unique<SymbolTable>()), root_kind_(kind) {
  control_sym_ = symbols_->intern(kControlPort);
  ops_.resize(2);  // 0 = none, 1 = root
  ports_.resize(1);
  edges_.resize(1);
  attrs_.resize(1);
  // A root graph always has a body; a root op has one only when its document gives `ops`/`edges`.
  ops_[1].flags = kAlive | (kind == RootKind::Graph ? kGraphNode | kHasBody : 0);
  if (kind == RootKind::Op) live_ops_ = 1;
}

Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;

void Graph::reserve(size_t ops, size_t ports, size_t edges) {
  ops_.reserve(ops + 2);
  ports_.reserve(ports + 1);
  slots_.reserve(ports);
  edges_.reserve(edges + 1);
  names_.reserve(ops, key_of());
  symbols_->reserve(ops + 64, ops * 8);
}

// ---------------------------------------------------------------- names

void Graph::index_name(OpId op) {
  const OpData& d = ops_[op.value];
  if ((d.flags & kGraphNode) || d.name == 0) return;
  if (!names_.insert(name_key(d.parent, d.name), op, key_of())) ++shadowed_names_;
}

void Graph::unindex_name(OpId op) {
  const OpData& d = ops_[op.value];
  if ((d.flags & kGraphNode) || d.name == 0) return;
  if (!names_.erase(name_key(d.parent, d.name), op, key_of())) {
    // A duplicate the index did not point to (its first op may have gone with an erased body).
    --shadowed_names_;
    return;
  }
  // Another op of the same scope may carry the same name (an invalid graph the verifier will
  // report); keep it findable. Only scan when duplicates exist, so that erase_op stays O(degree).
  if (shadowed_names_ == 0) return;
  for (OpId c = d.parent ? ops_[d.parent.value].first_child : OpId(); c; c = ops_[c.value].next)
    if (c != op && ops_[c.value].name == d.name && !(ops_[c.value].flags & kGraphNode)) {
      names_.insert(name_key(d.parent, d.name), c, key_of());
      --shadowed_names_;
      break;
    }
}

void Graph::set_name(OpId op, Symbol name) {
  unindex_name(op);
  ops_[op.value].name = name;
  ops_[op.value].flags &= ~kNameGenerated;
  index_name(op);
}

Symbol Graph::unique_name(OpId scope, Symbol wanted) {
  if (wanted != 0 && !find_op(scope, wanted)) return wanted;
  if (wanted != 0) {
    std::string base(str(wanted));
    for (uint32_t k = 1;; ++k) {
      Symbol s = sym(base + "_" + std::to_string(k));
      if (!find_op(scope, s)) return s;
    }
  }
  uint32_t& k = generated_counter_[scope.value];
  for (;; ++k) {
    Symbol s = sym("_" + std::to_string(k));
    if (!find_op(scope, s)) {
      ++k;
      return s;
    }
  }
}

// ---------------------------------------------------------------- ops

OpId Graph::create_op(OpId scope, Symbol type, Symbol name, bool generate_name) {
  if (!valid(scope)) throw Error("create_op: invalid scope");
  bool generated = name == 0 && generate_name;
  if (generated) name = unique_name(scope, 0);
  OpId id(static_cast<uint32_t>(ops_.size()));
  OpData& d = ops_.emplace_back();
  d.name = name;
  d.type = type;
  d.parent = scope;
  d.flags = kAlive | (generated ? kNameGenerated : 0);
  OpData& s = ops_[scope.value];
  d.prev = s.last_child;
  if (s.last_child)
    ops_[s.last_child.value].next = id;
  else
    s.first_child = id;
  s.last_child = id;
  ++live_ops_;
  index_name(id);
  return id;
}

OpId Graph::create_op(OpId scope, std::string_view type, std::string_view name,
                      std::initializer_list<std::string_view> inputs, std::initializer_list<std::string_view> outputs) {
  OpId op = create_op(scope, sym(type), name.empty() ? 0 : sym(name));
  for (auto n : inputs) add_input(op, sym(n));
  for (auto n : outputs) add_output(op, sym(n));
  return op;
}

OpId Graph::create_attr_graph(OpId owner, Symbol name) {
  if (!valid(owner)) throw Error("create_attr_graph: invalid owner");
  OpId id(static_cast<uint32_t>(ops_.size()));
  OpData& d = ops_.emplace_back();
  d.name = name;
  d.parent = owner;
  d.flags = kAlive | kGraphNode | kHasBody;
  // Attribute graphs hang in the owner's child list (so erasing the owner erases them) but are
  // skipped by body iteration.
  OpData& s = ops_[owner.value];
  d.prev = s.last_child;
  if (s.last_child)
    ops_[s.last_child.value].next = id;
  else
    s.first_child = id;
  s.last_child = id;
  return id;
}

OpId Graph::first_child(OpId scope) const {
  OpId c = ops_[scope.value].first_child;
  while (c && (ops_[c.value].flags & kGraphNode)) c = ops_[c.value].next;
  return c;
}

OpId Graph::prev_sibling(OpId op) const {
  OpId c = ops_[op.value].prev;
  while (c && (ops_[c.value].flags & kGraphNode)) c = ops_[c.value].prev;
  return c;
}

OpId Graph::next_sibling(OpId op) const {
  OpId c = ops_[op.value].next;
  while (c && (ops_[c.value].flags & kGraphNode)) c = ops_[c.value].next;
  return c;
}

std::vector<OpId> Graph::children(OpId scope) const {
  std::vector<OpId> r;
  for (OpId c = first_child(scope); c; c = next_sibling(c)) r.push_back(c);
  return r;
}

size_t Graph::child_count(OpId scope) const {
  size_t n = 0;
  for (OpId c = first_child(scope); c; c = next_sibling(c)) ++n;
  return n;
}

std::vector<OpId> Graph::attr_graphs(OpId owner) const {
  std::vector<OpId> r;
  for (OpId c = ops_[owner.value].first_child; c; c = ops_[c.value].next)
    if (ops_[c.value].flags & kGraphNode) r.push_back(c);
  return r;
}

OpId Graph::find_op(OpId scope, Symbol name) const {
  return names_.find(name_key(scope, name), key_of());
}

OpId Graph::find_op(OpId scope, std::string_view name) const {
  Symbol s = symbols_->find(name);
  return s == SymbolTable::kNone ? OpId() : find_op(scope, s);
}

void Graph::move_before(OpId op, OpId before) {
  if (op == before) return;
  OpData& d = ops_[op.value];
  OpData& s = ops_[d.parent.value];
  // unlink
  if (d.prev) ops_[d.prev.value].next = d.next; else s.first_child = d.next;
  if (d.next) ops_[d.next.value].prev = d.prev; else s.last_child = d.prev;
  // link
  if (!before) {
    d.prev = s.last_child;
    d.next = OpId();
    if (s.last_child) ops_[s.last_child.value].next = op; else s.first_child = op;
    s.last_child = op;
  } else {
    OpData& b = ops_[before.value];
    d.next = before;
    d.prev = b.prev;
    if (b.prev) ops_[b.prev.value].next = op; else s.first_child = op;
    b.prev = op;
  }
}

std::vector<OpId> Graph::ops_of_type(Symbol type) const {
  std::vector<OpId> r;
  for_each_op([&](OpId op) {
    if (ops_[op.value].type == type) r.push_back(op);
  });
  return r;
}

std::vector<OpId> Graph::ops_of_type(std::string_view type) const {
  Symbol s = symbols_->find(type);
  if (s == SymbolTable::kNone) return {};
  return ops_of_type(s);
}

void Graph::erase_op(OpId op) {
  if (!valid(op)) throw Error("erase_op: invalid op");
  if (op == root()) throw Error("erase_op: the root cannot be erased");
  OpData& d = ops_[op.value];
  OpData& s = ops_[d.parent.value];
  if (d.prev) ops_[d.prev.value].next = d.next; else s.first_child = d.next;
  if (d.next) ops_[d.next.value].prev = d.prev; else s.last_child = d.prev;
  erase_op_rec(op);
}

void Graph::erase_op_rec(OpId op) {
  // Iterative over the body so that deep nesting cannot overflow the stack.
  std::vector<OpId> stack{op};
  while (!stack.empty()) {
    OpId cur = stack.back();
    stack.pop_back();
    OpData& d = ops_[cur.value];
    for (OpId c = d.first_child; c; c = ops_[c.value].next) stack.push_back(c);
    auto drop_ports = [&](PortList l) {
      for (uint32_t i = 0; i < l.size; ++i) {
        PortId p = slots_[l.off + i];
        while (EdgeId e = ports_[p.value].first_in) disconnect(e);
        while (EdgeId e = ports_[p.value].first_out) disconnect(e);
        release_attrs(ports_[p.value].attrs);
        ports_[p.value].meta &= ~kPortAlive;
      }
    };
    drop_ports(d.in);
    drop_ports(d.out);
    for (PortId p : {d.ctrl_in, d.ctrl_out}) {
      if (!p) continue;
      while (EdgeId e = ports_[p.value].first_in) disconnect(e);
      while (EdgeId e = ports_[p.value].first_out) disconnect(e);
      release_attrs(ports_[p.value].attrs);
      ports_[p.value].meta &= ~kPortAlive;
    }
    unindex_name(cur);
    if (d.attrs) {
      attrs_[d.attrs].clear();
      free_attrs_.push_back(d.attrs);
      d.attrs = 0;
    }
    if (!(d.flags & kGraphNode)) --live_ops_;
    d.flags &= ~kAlive;
    d.first_child = d.last_child = OpId();
  }
}

// ---------------------------------------------------------------- ports

void Graph::push_slot(PortList& l, PortId p) {
  uint32_t cap = list_capacity(l.size);
  if (l.size == cap) {
    uint32_t ncap = std::max<uint32_t>(1, list_capacity(l.size + 1));
    if (l.off + l.size == slots_.size()) {
      // The block ends the pool (the op being built): grow it in place instead of moving it.
      slots_.resize(slots_.size() + (ncap - cap));
      slots_[l.off + l.size] = p;
      ++l.size;
      return;
    }
    uint32_t off = static_cast<uint32_t>(slots_.size());
    slots_.resize(slots_.size() + ncap);
    std::copy_n(slots_.begin() + l.off, l.size, slots_.begin() + off);
    l.off = off;
  }
  slots_[l.off + l.size] = p;
  ++l.size;
}

PortId Graph::new_port(OpId op, PortDir dir, Symbol name, bool control) {
  PortId id(static_cast<uint32_t>(ports_.size()));
  PortData& p = ports_.emplace_back();
  p.name = name;
  p.op = op;
  p.meta = kPortAlive | (dir == PortDir::Out ? kPortOut : 0) | (control ? kPortControl : 0);
  return id;
}

PortId Graph::add_port(OpId op, PortDir dir, Symbol name) {
  if (!valid(op)) throw Error("add_port: invalid op");
  OpData& d = ops_[op.value];
  PortList& l = dir == PortDir::In ? d.in : d.out;
  PortId id = new_port(op, dir, name, false);
  ports_[id.value].meta |= l.size << kPortIndexShift;
  push_slot(l, id);
  return id;
}

PortId Graph::add_input(OpId op, Symbol name) { return add_port(op, PortDir::In, name); }
PortId Graph::add_output(OpId op, Symbol name) { return add_port(op, PortDir::Out, name); }

void Graph::erase_port(PortId port) {
  if (!valid(port)) throw Error("erase_port: invalid port");
  while (EdgeId e = ports_[port.value].first_in) disconnect(e);
  while (EdgeId e = ports_[port.value].first_out) disconnect(e);
  release_attrs(ports_[port.value].attrs);
  PortData& pd = ports_[port.value];
  OpData& d = ops_[pd.op.value];
  pd.meta &= ~kPortAlive;
  if (pd.meta & kPortControl) {
    if (d.ctrl_in == port) d.ctrl_in = PortId();
    if (d.ctrl_out == port) d.ctrl_out = PortId();
    return;
  }
  PortList& l = (pd.meta & kPortOut) ? d.out : d.in;
  uint32_t i = pd.meta >> kPortIndexShift;
  for (uint32_t j = i + 1; j < l.size; ++j) {
    PortId q = slots_[l.off + j];
    slots_[l.off + j - 1] = q;
    ports_[q.value].meta = (ports_[q.value].meta & ((1u << kPortIndexShift) - 1)) | ((j - 1) << kPortIndexShift);
  }
  --l.size;
  // The block keeps its capacity; push_slot only relies on it being at least list_capacity(size).
}

void Graph::revive_port(PortId port, uint32_t index) {
  if (port.value == 0 || port.value >= ports_.size() || (ports_[port.value].meta & kPortAlive))
    throw Error("revive_port: the port id is not an erased port");
  PortData& pd = ports_[port.value];
  OpData& d = ops_[pd.op.value];
  if (!(d.flags & kAlive)) throw Error("revive_port: its op is gone");
  pd.meta |= kPortAlive;
  if (pd.meta & kPortControl) {
    ((pd.meta & kPortOut) ? d.ctrl_out : d.ctrl_in) = port;
    return;
  }
  PortList& l = (pd.meta & kPortOut) ? d.out : d.in;
  if (index > l.size) throw Error("revive_port: index out of range");
  push_slot(l, port);
  for (uint32_t j = l.size - 1; j > index; --j) slots_[l.off + j] = slots_[l.off + j - 1];
  slots_[l.off + index] = port;
  for (uint32_t j = index; j < l.size; ++j) {
    PortId q = slots_[l.off + j];
    ports_[q.value].meta = (ports_[q.value].meta & ((1u << kPortIndexShift) - 1)) | (j << kPortIndexShift);
  }
}

PortId Graph::find_port(OpId op, PortDir dir, Symbol name) const {
  if (name == control_sym_) return find_control(op, dir);
  for (PortId p : ports(op, dir))
    if (ports_[p.value].name == name) return p;
  return PortId();
}

PortId Graph::control_in(OpId op) {
  if (!ops_[op.value].ctrl_in) {
    PortId p = new_port(op, PortDir::In, control_sym_, true);
    ops_[op.value].ctrl_in = p;
  }
  return ops_[op.value].ctrl_in;
}

PortId Graph::control_out(OpId op) {
  if (!ops_[op.value].ctrl_out) {
    PortId p = new_port(op, PortDir::Out, control_sym_, true);
    ops_[op.value].ctrl_out = p;
  }
  return ops_[op.value].ctrl_out;
}

void Graph::set_port_name(PortId p, Symbol name) {
  ports_[p.value].name = name;
  ports_[p.value].meta &= ~kPortNameGenerated;
}

// ---------------------------------------------------------------- edges

EdgeId Graph::connect(PortId src, PortId dst) {
  if (!valid(src) || !valid(dst)) throw Error("connect: invalid port");
  EdgeId id(static_cast<uint32_t>(edges_.size()));
  edges_.emplace_back();
  return link_edge(id, src, dst);
}

EdgeId Graph::revive_edge(EdgeId id, PortId src, PortId dst) {
  if (!valid(src) || !valid(dst)) throw Error("revive_edge: invalid port");
  if (id.value == 0 || id.value >= edges_.size() || edges_[id.value].src.value != 0)
    throw Error("revive_edge: the edge id is not an erased edge");
  edges_[id.value] = EdgeData{};
  return link_edge(id, src, dst);
}

AttrList Graph::exchange_attr_list(OpId op, AttrList l) {
  uint32_t& idx = ops_[op.value].attrs;
  AttrList old;
  if (idx) old = std::move(attrs_[idx]);
  put_list(idx, std::move(l));
  return old;
}

void Graph::set_attr_list(OpId op, AttrList l) { put_list(ops_[op.value].attrs, std::move(l)); }
void Graph::set_attr_list(PortId p, AttrList l) { put_list(ports_[p.value].attrs, std::move(l)); }
void Graph::set_attr_list(EdgeId e, AttrList l) { put_list(edges_[e.value].attrs, std::move(l)); }

void Graph::put_list(uint32_t& idx, AttrList l) {
  if (l.empty()) {
    release_attrs(idx);
    return;
  }
  if (!idx) {
    if (!free_attrs_.empty()) {
      idx = free_attrs_.back();
      free_attrs_.pop_back();
    } else {
      idx = static_cast<uint32_t>(attrs_.size());
      attrs_.emplace_back();
    }
  }
  attrs_[idx] = std::move(l);
}

EdgeId Graph::link_edge(EdgeId id, PortId src, PortId dst) {
  EdgeData& e = edges_[id.value];
  e.src = src;
  e.dst = dst;
  // append to src's out list
  PortData& s = ports_[src.value];
  if (!s.first_out) {
    s.first_out = id;
    e.prev_out = id;
  } else {
    EdgeId tail = edges_[s.first_out.value].prev_out;
    edges_[tail.value].next_out = id;
    e.prev_out = tail;
    edges_[s.first_out.value].prev_out = id;
  }
  PortData& d = ports_[dst.value];
  if (!d.first_in) {
    d.first_in = id;
    e.prev_in = id;
  } else {
    EdgeId tail = edges_[d.first_in.value].prev_in;
    edges_[tail.value].next_in = id;
    e.prev_in = tail;
    edges_[d.first_in.value].prev_in = id;
  }
  ++live_edges_;
  return id;
}

void Graph::unlink_out(EdgeId id) {
  EdgeData& e = edges_[id.value];
  PortData& s = ports_[e.src.value];
  if (s.first_out == id) {
    s.first_out = e.next_out;
    if (e.next_out) edges_[e.next_out.value].prev_out = e.prev_out;
  } else {
    edges_[e.prev_out.value].next_out = e.next_out;
    if (e.next_out)
      edges_[e.next_out.value].prev_out = e.prev_out;
    else
      edges_[s.first_out.value].prev_out = e.prev_out;
  }
}

void Graph::unlink_in(EdgeId id) {
  EdgeData& e = edges_[id.value];
  PortData& d = ports_[e.dst.value];
  if (d.first_in == id) {
    d.first_in = e.next_in;
    if (e.next_in) edges_[e.next_in.value].prev_in = e.prev_in;
  } else {
    edges_[e.prev_in.value].next_in = e.next_in;
    if (e.next_in)
      edges_[e.next_in.value].prev_in = e.prev_in;
    else
      edges_[d.first_in.value].prev_in = e.prev_in;
  }
}

void Graph::disconnect(EdgeId id) {
  if (!valid(id)) throw Error("disconnect: invalid edge");
  unlink_out(id);
  unlink_in(id);
  EdgeData& e = edges_[id.value];
  release_attrs(e.attrs);
  e = EdgeData{};
  --live_edges_;
}

OpId Graph::edge_scope(EdgeId e) const {
  PortId dst = edges_[e.value].dst;
  OpId op = ports_[dst.value].op;
  if (port_dir(dst) == PortDir::Out) return op;
  OpId p = ops_[op.value].parent;
  return p ? p : root();
}

std::vector<EdgeId> Graph::in_edges(PortId p) const {
  std::vector<EdgeId> r;
  for (EdgeId e = ports_[p.value].first_in; e; e = edges_[e.value].next_in) r.push_back(e);
  return r;
}

std::vector<EdgeId> Graph::out_edges(PortId p) const {
  std::vector<EdgeId> r;
  for (EdgeId e = ports_[p.value].first_out; e; e = edges_[e.value].next_out) r.push_back(e);
  return r;
}

size_t Graph::in_degree(PortId p) const {
  size_t n = 0;
  for (EdgeId e = ports_[p.value].first_in; e; e = edges_[e.value].next_in) ++n;
  return n;
}

size_t Graph::out_degree(PortId p) const {
  size_t n = 0;
  for (EdgeId e = ports_[p.value].first_out; e; e = edges_[e.value].next_out) ++n;
  return n;
}

std::vector<PortId> Graph::consumers(PortId out) const {
  std::vector<PortId> r;
  for (EdgeId e = ports_[out.value].first_out; e; e = edges_[e.value].next_out) r.push_back(edges_[e.value].dst);
  return r;
}

void Graph::replace_all_uses(PortId from, PortId to) {
  if (!valid(from) || !valid(to)) throw Error("replace_all_uses: invalid port");
  if (from == to) return;
  while (EdgeId e = ports_[from.value].first_out) {
    unlink_out(e);
    EdgeData& ed = edges_[e.value];
    ed.src = to;
    ed.next_out = EdgeId();
    PortData& t = ports_[to.value];
    if (!t.first_out) {
      t.first_out = e;
      ed.prev_out = e;
    } else {
      EdgeId tail = edges_[t.first_out.value].prev_out;
      edges_[tail.value].next_out = e;
      ed.prev_out = tail;
      edges_[t.first_out.value].prev_out = e;
    }
  }
}

OpId Graph::insert_op_on_edge(EdgeId e, Symbol type, Symbol name, Symbol in_port, Symbol out_port) {
  if (!valid(e)) throw Error("insert_op_on_edge: invalid edge");
  PortId src = edges_[e.value].src, dst = edges_[e.value].dst;
  OpId scope = edge_scope(e);
  OpId op = create_op(scope, type, name);
  PortId i = add_input(op, in_port);
  PortId o = add_output(op, out_port);
  uint32_t attrs = edges_[e.value].attrs;
  edges_[e.value].attrs = 0;
  disconnect(e);
  connect(src, i);
  EdgeId ne = connect(o, dst);
  edges_[ne.value].attrs = attrs;  // the edge's attributes stay with the edge that reaches dst
  return op;
}

// ---------------------------------------------------------------- attributes

const AttrList& Graph::attr_list(uint32_t idx) const { return idx ? attrs_[idx] : kNoAttrs; }

const Value* Graph::find_attr(uint32_t idx, Symbol key) const {
  if (!idx) return nullptr;
  for (const auto& [k, v] : attrs_[idx])
    if (k == key) return &v;
  return nullptr;
}

void Graph::put_attr(uint32_t& idx, Symbol key, Value v) {
  if (!idx) {
    if (!free_attrs_.empty()) {
      idx = free_attrs_.back();
      free_attrs_.pop_back();
    } else {
      idx = static_cast<uint32_t>(attrs_.size());
      attrs_.emplace_back();
    }
  }
  for (auto& [k, old] : attrs_[idx])
    if (k == key) {
      if (&old != &v) {
        Value prev = std::move(old);
        old = std::move(v);
        erase_dropped_graphs(prev, idx);
      }
      return;
    }
  attrs_[idx].emplace_back(key, std::move(v));
}

bool Graph::drop_attr(uint32_t& idx, Symbol key) {
  if (!idx) return false;
  auto& l = attrs_[idx];
  for (auto it = l.begin(); it != l.end(); ++it)
    if (it->first == key) {
      Value prev = std::move(it->second);
      l.erase(it);
      erase_dropped_graphs(prev, idx);
      return true;
    }
  return false;
}

bool Graph::erase_attr(OpId op, Symbol key) { return drop_attr(ops_[op.value].attrs, key); }

void Graph::release_attrs(uint32_t& idx) {
  if (!idx) return;
  attrs_[idx].clear();
  free_attrs_.push_back(idx);
  idx = 0;
}

// The graphs `old` held that no attribute of the same entity (list `kept`) still holds are
// erased: setting the same graph again, or shrinking a list of graphs, keeps the others alive.
void Graph::erase_dropped_graphs(const Value& old, uint32_t kept) {
  std::vector<OpId> dropped;
  collect_graphs(old, dropped);
  if (dropped.empty()) return;
  std::vector<OpId> still;
  for (const auto& [k, v] : attr_list(kept)) collect_graphs(v, still);
  for (OpId g : dropped)
    if (valid(g) && is_graph(g) && g != root() && std::find(still.begin(), still.end(), g) == still.end())
      erase_op(g);
}

// ---------------------------------------------------------------- topological order

TopoResult Graph::topo_order(OpId scope) const {
  TopoResult r;
  std::vector<OpId> kids = children(scope);
  std::vector<uint32_t> indeg(ops_.size(), 0);
  constexpr uint32_t kOutside = UINT32_MAX;
  // Mark children so that edges from the boundary or other scopes are ignored.
  std::vector<uint8_t> in_scope(ops_.size(), 0);
  for (OpId c : kids) in_scope[c.value] = 1;
  auto count_in = [&](PortId p, uint32_t& n) {
    for (EdgeId e = ports_[p.value].first_in; e; e = edges_[e.value].next_in) {
      const PortData& s = ports_[edges_[e.value].src.value];
      if (in_scope[s.op.value] && (s.meta & kPortOut)) ++n;
    }
  };
  for (OpId c : kids) {
    const OpData& d = ops_[c.value];
    uint32_t n = 0;
    for (PortId p : list(d.in)) count_in(p, n);
    if (d.ctrl_in) count_in(d.ctrl_in, n);
    indeg[c.value] = n;
  }
  (void)kOutside;
  r.order.reserve(kids.size());
  for (OpId c : kids)
    if (indeg[c.value] == 0) r.order.push_back(c);
  auto release = [&](PortId p) {
    for (EdgeId e = ports_[p.value].first_out; e; e = edges_[e.value].next_out) {
      const PortData& t = ports_[edges_[e.value].dst.value];
      if (in_scope[t.op.value] && !(t.meta & kPortOut) && --indeg[t.op.value] == 0) r.order.push_back(t.op);
    }
  };
  for (size_t i = 0; i < r.order.size(); ++i) {
    const OpData& d = ops_[r.order[i].value];
    for (PortId p : list(d.out)) release(p);
    if (d.ctrl_out) release(d.ctrl_out);
  }
  if (r.order.size() == kids.size()) return r;
  // A cycle: walk predecessors among the ops left until one repeats.
  std::vector<uint32_t> seen_at(ops_.size(), UINT32_MAX);
  OpId cur;
  for (OpId c : kids)
    if (indeg[c.value]) {
      cur = c;
      break;
    }
  std::vector<OpId> walk;
  while (seen_at[cur.value] == UINT32_MAX) {
    seen_at[cur.value] = static_cast<uint32_t>(walk.size());
    walk.push_back(cur);
    OpId next;
    const OpData& d = ops_[cur.value];
    auto pick = [&](PortId p) {
      for (EdgeId e = ports_[p.value].first_in; e && !next; e = edges_[e.value].next_in) {
        const PortData& s = ports_[edges_[e.value].src.value];
        if (in_scope[s.op.value] && (s.meta & kPortOut) && indeg[s.op.value]) next = s.op;
      }
    };
    for (PortId p : list(d.in)) pick(p);
    if (!next && d.ctrl_in) pick(d.ctrl_in);
    cur = next;  // always found: an op left over has a predecessor that is left over too
  }
  r.cycle.assign(walk.begin() + seen_at[cur.value], walk.end());
  std::reverse(r.cycle.begin(), r.cycle.end());  // predecessor walk -> forward order
  return r;
}

// ---------------------------------------------------------------- subgraphs

SubgraphBoundary Graph::boundary(std::span<const OpId> ops) const {
  absl::flat_hash_set<uint32_t> set;
  for (OpId op : ops) set.insert(op.value);
  SubgraphBoundary b;
  for (OpId op : ops) {
    for (PortId p : inputs(op)) {
      for (EdgeId e = ports_[p.value].first_in; e; e = edges_[e.value].next_in)
        if (!set.contains(ports_[edges_[e.value].src.value].op.value)) {
          b.inputs.push_back(p);
          break;
        }
    }
    for (PortId p : outputs(op)) {
      for (EdgeId e = ports_[p.value].first_out; e; e = edges_[e.value].next_out)
        if (!set.contains(ports_[edges_[e.value].dst.value].op.value)) {
          b.outputs.push_back(p);
          break;
        }
    }
  }
  return b;
}

OpId Graph::subgraph_scope(std::span<const OpId> ops) const {
  if (ops.empty()) throw Error("replace_subgraph: no ops given");
  OpId scope = valid(ops[0]) ? parent(ops[0]) : OpId();
  absl::flat_hash_set<uint32_t> seen;
  for (OpId op : ops) {
    if (!valid(op) || is_graph(op) || op == root() || parent(op) != scope)
      throw Error("replace_subgraph: the ops must be live ops of one scope");
    if (!seen.insert(op.value).second) throw Error("replace_subgraph: " + path(op) + " is given twice");
  }
  return scope;
}

// Moves edge e (its id changes, its attributes stay) to run from src to dst.
EdgeId Graph::move_edge(EdgeId e, PortId src, PortId dst) {
  uint32_t attrs = edges_[e.value].attrs;
  edges_[e.value].attrs = 0;
  disconnect(e);
  EdgeId ne = connect(src, dst);
  edges_[ne.value].attrs = attrs;
  return ne;
}

void Graph::replace_subgraph(std::span<const OpId> ops, OpId replacement,
                             std::span<const std::pair<PortId, PortId>> input_map,
                             std::span<const std::pair<PortId, PortId>> output_map) {
  OpId scope = subgraph_scope(ops);
  if (!valid(replacement) || parent(replacement) != scope) throw Error("replace_subgraph: the replacement must be in the same scope");
  absl::flat_hash_set<uint32_t> set;
  for (OpId op : ops) set.insert(op.value);
  if (set.contains(replacement.value)) throw Error("replace_subgraph: the replacement is one of the ops it replaces");
  SubgraphBoundary b = boundary(ops);
  auto mapped = [](std::span<const std::pair<PortId, PortId>> m, PortId p) {
    for (auto& [a, x] : m)
      if (a == p) return x;
    return PortId();
  };
  // Check every mapping before touching anything.
  auto check = [&](PortId p, PortId to, PortDir dir) {
    std::string side = dir == PortDir::In ? "input" : "output";
    if (!to) throw Error("replace_subgraph: boundary " + side + " " + path(p) + " is not mapped");
    if (!valid(to) || port_op(to) != replacement || port_dir(to) != dir || is_control(to))
      throw Error("replace_subgraph: boundary " + side + " " + path(p) + " is not mapped to a data " + side +
                  " port of " + path(replacement));
  };
  for (PortId p : b.inputs) check(p, mapped(input_map, p), PortDir::In);
  for (PortId p : b.outputs) check(p, mapped(output_map, p), PortDir::Out);
  for (PortId p : b.inputs) {
    PortId to = mapped(input_map, p);
    for (EdgeId e : in_edges(p))
      if (!set.contains(port_op(edge_src(e)).value)) move_edge(e, edge_src(e), to);
  }
  for (PortId p : b.outputs) {
    PortId to = mapped(output_map, p);
    for (EdgeId e : out_edges(p))
      if (!set.contains(port_op(edge_dst(e)).value)) move_edge(e, to, edge_dst(e));
  }
  // Control edges that cross the boundary move to the replacement.
  absl::flat_hash_set<uint32_t> ctrl_src, ctrl_dst;
  for (OpId op : ops) {
    if (PortId c = find_control(op, PortDir::In))
      for (EdgeId e : in_edges(c)) {
        PortId s = edge_src(e);
        if (!set.contains(port_op(s).value) && ctrl_src.insert(s.value).second) connect(s, control_in(replacement));
      }
    if (PortId c = find_control(op, PortDir::Out))
      for (EdgeId e : out_edges(c)) {
        PortId d = edge_dst(e);
        if (!set.contains(port_op(d).value) && ctrl_dst.insert(d.value).second) connect(control_out(replacement), d);
      }
  }
  for (OpId op : ops) erase_op(op);
}

std::vector<OpId> Graph::replace_subgraph(std::span<const OpId> ops, const Graph& g,
                                          std::span<const std::pair<PortId, size_t>> input_map,
                                          std::span<const std::pair<PortId, size_t>> output_map) {
  if (&g == this) throw Error("replace_subgraph: the replacement graph must be another graph");
  OpId scope = subgraph_scope(ops);
  SubgraphBoundary b = boundary(ops);
  auto find = [](std::span<const std::pair<PortId, size_t>> m, PortId p) -> const size_t* {
    for (auto& [a, i] : m)
      if (a == p) return &i;
    return nullptr;
  };
  // Check everything before touching anything: a failed call changes nothing.
  auto in_body = [&](OpId op) { return g.parent(op) == g.root() && !g.is_graph(op); };
  for (PortId p : b.inputs) {
    const size_t* i = find(input_map, p);
    if (!i || *i >= g.inputs(g.root()).size()) throw Error("replace_subgraph: boundary input " + path(p) + " is not mapped to an input of the graph");
    for (EdgeId ge = g.first_out_edge(g.input(g.root(), *i)); ge; ge = g.next_out_edge(ge)) {
      OpId d = g.port_op(g.edge_dst(ge));
      if (d != g.root() && !in_body(d))
        throw Error("replace_subgraph: input " + std::to_string(*i) + " of the graph feeds " + g.path(g.edge_dst(ge)) +
                    ", which is not an op of its body");
    }
  }
  for (PortId p : b.outputs) {
    const size_t* i = find(output_map, p);
    if (!i || *i >= g.outputs(g.root()).size()) throw Error("replace_subgraph: boundary output " + path(p) + " is not mapped to an output of the graph");
    PortId gsrc = g.producer(g.output(g.root(), *i));
    if (!gsrc) throw Error("replace_subgraph: output " + std::to_string(*i) + " of the graph has no producer");
    if (g.port_op(gsrc) == g.root()) throw Error("replace_subgraph: a graph output fed straight from a graph input is not supported");
    if (!in_body(g.port_op(gsrc)) || g.port_dir(gsrc) != PortDir::Out)
      throw Error("replace_subgraph: output " + std::to_string(*i) + " of the graph is fed by " + g.path(gsrc) +
                  ", which is not an output of an op of its body");
  }
  absl::flat_hash_set<uint32_t> set;
  for (OpId op : ops) set.insert(op.value);
  // Control edges that cross the boundary, gathered before the old ops go.
  std::vector<PortId> ctrl_srcs, ctrl_dsts;
  absl::flat_hash_set<uint32_t> seen_src, seen_dst;
  for (OpId op : ops) {
    if (PortId c = find_control(op, PortDir::In))
      for (EdgeId e = first_in_edge(c); e; e = next_in_edge(e))
        if (PortId s = edge_src(e); !set.contains(port_op(s).value) && seen_src.insert(s.value).second) ctrl_srcs.push_back(s);
    if (PortId c = find_control(op, PortDir::Out))
      for (EdgeId e = first_out_edge(c); e; e = next_out_edge(e))
        if (PortId d = edge_dst(e); !set.contains(port_op(d).value) && seen_dst.insert(d.value).second) ctrl_dsts.push_back(d);
  }

  std::vector<OpId> src_ops = g.children(g.root());
  std::vector<OpId> fresh = clone_ops(g, src_ops, scope);
  // Map g's op ids to the new ones, then port ids by op and index.
  absl::flat_hash_map<uint32_t, OpId> op_map;
  for (size_t i = 0; i < src_ops.size(); ++i) op_map[src_ops[i].value] = fresh[i];
  auto map_port = [&](PortId gp) -> PortId {
    OpId nop = op_map.at(g.port_op(gp).value);
    if (g.is_control(gp)) return g.port_dir(gp) == PortDir::In ? control_in(nop) : control_out(nop);
    return ports(nop, g.port_dir(gp))[g.port_index(gp)];
  };
  for (PortId p : b.inputs) {
    PortId root_in = g.input(g.root(), *find(input_map, p));
    std::vector<PortId> targets;
    for (EdgeId ge = g.first_out_edge(root_in); ge; ge = g.next_out_edge(ge))
      if (g.port_op(g.edge_dst(ge)) != g.root()) targets.push_back(map_port(g.edge_dst(ge)));
    for (EdgeId e : in_edges(p))
      if (!set.contains(port_op(edge_src(e)).value)) {
        AttrList attrs = this->attrs(e);  // a copy: set_attr may grow the arena it lives in
        for (PortId t : targets) {
          EdgeId ne = connect(edge_src(e), t);
          for (const auto& [k, v] : attrs) set_attr(ne, k, v);
        }
      }
  }
  for (PortId p : b.outputs) {
    PortId nsrc = map_port(g.producer(g.output(g.root(), *find(output_map, p))));
    for (EdgeId e : out_edges(p))
      if (!set.contains(port_op(edge_dst(e)).value)) move_edge(e, nsrc, edge_dst(e));
  }
  for (PortId s : ctrl_srcs)
    for (OpId n : fresh) connect(s, control_in(n));
  for (PortId d : ctrl_dsts)
    for (OpId n : fresh) connect(control_out(n), d);
  for (OpId op : ops) erase_op(op);
  return fresh;
}

std::vector<OpId> Graph::clone_ops(const Graph& src, std::span<const OpId> ops, OpId scope) {
  // Snapshot first: when src is *this, the arenas grow while we copy.
  absl::flat_hash_map<uint32_t, OpId> op_map;      // src op -> new op (all levels)
  absl::flat_hash_map<uint32_t, PortId> port_map;  // src port -> new port
  std::vector<OpId> result;
  struct Item {
    OpId from;
    OpId to_scope;
    bool attr_graph;
  };
  std::vector<Item> work;
  for (OpId op : ops) work.push_back({op, scope, false});
  std::vector<OpId> copied_src;  // every src node copied, for the edge pass
  auto value_copy = [&](auto&& self, const Value& v) -> Value {
    switch (v.kind()) {
      case Value::Kind::Graph: {
        auto it = op_map.find(v.as_graph().value);
        return it == op_map.end() ? Value() : Value::graph(it->second);
      }
      case Value::Kind::List: {
        Value::List l;
        for (const auto& x : v.as_list()) l.push_back(self(self, x));
        return Value(std::move(l));
      }
      case Value::Kind::Map: {
        Value::Map m;
        for (const auto& x : v.as_map()) m.push_back({x.key, self(self, x.value)});
        return Value(std::move(m));
      }
      default: return v;
    }
  };
  auto tr = [&](Symbol s) { return &src == this ? s : sym(src.str(s)); };
  // Pass 1: nodes and ports, breadth first (iterative: deep bodies cannot overflow the stack).
  for (size_t i = 0; i < work.size(); ++i) {
    Item it = work[i];
    const OpData& d = src.ops_[it.from.value];
    Symbol name = tr(d.name);
    bool generated = d.flags & kNameGenerated;
    OpId n;
    if (it.attr_graph) {
      n = create_attr_graph(it.to_scope, name);
      set_graph_namespace(n, tr(src.ops_[it.from.value].type));
    } else {
      Symbol type = tr(src.ops_[it.from.value].type);
      if (generated)
        n = create_op(it.to_scope, type, 0);  // a fresh generated name: it is never written out
      else if (name == 0)
        n = create_op(it.to_scope, type, 0, /*generate_name=*/false);  // stays unnamed, like the source
      else
        n = create_op(it.to_scope, type, unique_name(it.to_scope, name));
      if (src.ops_[it.from.value].flags & kHasBody) ops_[n.value].flags |= kHasBody;
    }
    if (it.to_scope == scope && !it.attr_graph) result.push_back(n);
    op_map[it.from.value] = n;
    copied_src.push_back(it.from);
    for (PortDir dir : {PortDir::In, PortDir::Out}) {
      // A copy of the list: add_port may grow the slot arena the source list lives in.
      auto span = src.ports(it.from, dir);
      std::vector<PortId> from_ports(span.begin(), span.end());
      for (PortId p : from_ports) {
        PortId q = add_port(n, dir, tr(src.ports_[p.value].name));
        ports_[q.value].meta |= src.ports_[p.value].meta & (kPortNameGenerated | (7u << kPortRoleShift));
        if (uint32_t t = src.ports_[p.value].type) ports_[q.value].type = (&src == this ? TypeId(t) : import_type(src, TypeId(t))).value;
        port_map[p.value] = q;
      }
    }
    if (PortId c = src.ops_[it.from.value].ctrl_in) port_map[c.value] = control_in(n);
    if (PortId c = src.ops_[it.from.value].ctrl_out) port_map[c.value] = control_out(n);
    for (OpId c = src.ops_[it.from.value].first_child; c; c = src.ops_[c.value].next)
      work.push_back({c, n, static_cast<bool>(src.ops_[c.value].flags & kGraphNode)});
  }
  // Pass 2: attributes (graph values now resolve) and edges among copied ports.
  auto copy_attrs = [&](const AttrList& from, auto setter) {
    // When src is *this, setting an attribute may grow the arena `from` lives in: copy it first.
    AttrList snapshot;
    const AttrList* l = &from;
    if (&src == this) l = &(snapshot = from);
    for (const auto& [k, v] : *l) setter(tr(k), value_copy(value_copy, v));
  };
  for (OpId from : copied_src) {
    OpId n = op_map[from.value];
    copy_attrs(src.attrs(from), [&](Symbol k, Value v) { set_attr(n, k, std::move(v)); });
    for (PortDir dir : {PortDir::In, PortDir::Out})
      for (PortId p : src.ports(from, dir)) {
        PortId q = port_map[p.value];
        copy_attrs(src.attrs(p), [&](Symbol k, Value v) { set_attr(q, k, std::move(v)); });
      }
    for (PortDir dir : {PortDir::In, PortDir::Out})
      if (PortId c = src.find_control(from, dir)) {
        PortId q = port_map[c.value];
        copy_attrs(src.attrs(c), [&](Symbol k, Value v) { set_attr(q, k, std::move(v)); });
      }
  }
  std::vector<std::pair<EdgeId, std::pair<PortId, PortId>>> new_edges;
  for (OpId from : copied_src) {
    auto visit = [&](PortId p) {
      for (EdgeId e = src.ports_[p.value].first_out; e; e = src.edges_[e.value].next_out) {
        auto d = port_map.find(src.edges_[e.value].dst.value);
        if (d == port_map.end()) continue;
        new_edges.push_back({e, {port_map[p.value], d->second}});
      }
    };
    for (PortDir dir : {PortDir::In, PortDir::Out})
      for (PortId p : src.ports(from, dir)) visit(p);
    if (PortId c = src.ops_[from.value].ctrl_out) visit(c);
    if (PortId c = src.ops_[from.value].ctrl_in) visit(c);
  }
  std::sort(new_edges.begin(), new_edges.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [old, ends] : new_edges) {
    EdgeId ne = connect(ends.first, ends.second);
    copy_attrs(src.attrs(old), [&](Symbol k, Value v) { set_attr(ne, k, std::move(v)); });
  }
  return result;
}

// ---------------------------------------------------------------- paths and sizes

std::string Graph::path(OpId op) const {
  std::vector<std::string_view> parts;
  for (OpId cur = op; cur && cur != root(); cur = ops_[cur.value].parent) {
    std::string_view n = str(ops_[cur.value].name);
    if (n.empty()) n = (ops_[cur.value].flags & kGraphNode) ? "<graph>" : "<op>";
    parts.push_back(n);
  }
  if (op == root()) {
    std::string_view n = str(ops_[op.value].name);
    return n.empty() ? std::string(root_kind_ == RootKind::Graph ? "<graph>" : "<op>") : std::string(n);
  }
  std::string s;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!s.empty()) s += '/';
    s += *it;
  }
  return s;
}

std::string Graph::path(PortId p) const {
  std::string s = path(ports_[p.value].op);
  s += port_dir(p) == PortDir::In ? ":input " : ":output ";
  s += str(ports_[p.value].name);
  return s;
}

std::string Graph::path(EdgeId e) const {
  return "edge " + path(edges_[e.value].src) + " -> " + path(edges_[e.value].dst);
}

size_t Graph::memory_bytes() const {
  size_t n = sizeof(*this) + symbols_->memory_bytes();
  n += ops_.capacity() * sizeof(OpData) + ports_.capacity() * sizeof(PortData) + edges_.capacity() * sizeof(EdgeData);
  n += slots_.capacity() * sizeof(PortId) + attrs_.capacity() * sizeof(AttrList);
  n += names_.memory_bytes() + types_.memory_bytes();
  for (const auto& a : attrs_) n += a.capacity() * sizeof(Attr);
  return n;
}

TypeId Graph::import_type(const Graph& src, TypeId t) {
  if (!t) return t;
  TypeData d = src.types_.get(t);
  for (Dim& x : d.dims)
    if (x.is_symbol()) x = Dim::symbol(sym(src.str(x.sym())));
  if (d.inner) d.inner = import_type(src, d.inner);
  return types_.intern(d);
}

std::string_view role_name(PortRole r) {
  switch (r) {
    case PortRole::None: return "none";
    case PortRole::GraphInput: return "graph input";
    case PortRole::Initializer: return "initializer";
    case PortRole::InputWithDefault: return "graph input with an initializer";
    case PortRole::Constant: return "constant";
    case PortRole::Capture: return "capture";
  }
  return "?";
}

}  // namespace amanda::ir
