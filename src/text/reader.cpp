// One recursive-descent builder over parse events turns YAML or JSON into the IR.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "amanda/support/gate.h"
#include "amanda/support/base64.h"
#include "amanda/support/file.h"
#include "amanda/support/progress.h"
#include "amanda/support/path_policy.h"
#include "amanda/text/document.h"
#include "scalars.h"

namespace amanda::text {

using ir::OpId;
using ir::PortDir;
using ir::PortId;
using ir::Value;

namespace {

// A position in the document: cheap to copy (the file name is shared), made into a SourceLoc only
// when a problem is reported. Locations are taken for every key, so this is a hot path.
struct Pos {
  const std::string* file = nullptr;
  uint32_t line = 0, column = 0;
  operator SourceLoc() const { return {file ? *file : std::string(), line, column}; }
  std::string str() const { return SourceLoc(*this).str(); }
};

enum class NodeKind { Graph, Op };

struct Endpoint {
  std::string op, port;
  Pos loc;
  bool present = false;
};

struct PendingEdge {
  OpId scope;
  Endpoint out, in;
  Pos loc;
  ir::AttrList attrs;
};

class Builder {
 public:
  Builder(EventSource& src, Diagnostics& diags, const ReadOptions& opt) : src_(src), diags_(diags), opt_(opt) {}

  Document run() {
    next();
    if (ev_.type == Event::End)
      throw ParseError(here(), "empty document: expected a top-level 'graph:', 'op:' or 'edge:'");
    if (ev_.type != Event::MapStart)
      throw ParseError(here(), "expected a mapping with one key, 'graph', 'op' or 'edge', at the top level");
    next();
    if (ev_.type == Event::MapEnd) throw ParseError(here(), "empty mapping: expected 'graph:', 'op:' or 'edge:'");
    std::string key = key_text();
    Pos key_loc = here();
    next();
    Document doc;
    if (key == "graph") {
      doc = Document(Document::Kind::Graph);
      g_ = &doc.graph;
      parse_node(g_->root(), NodeKind::Graph);
    } else if (key == "op") {
      doc = Document(Document::Kind::Op);
      g_ = &doc.graph;
      parse_node(g_->root(), NodeKind::Op);
    } else if (key == "edge") {
      doc = Document(Document::Kind::Edge);
      g_ = &doc.graph;
      PendingEdge pe = parse_edge(g_->root());
      doc.edge.src_op = pe.out.op;
      doc.edge.src_port = pe.out.port;
      doc.edge.dst_op = pe.in.op;
      doc.edge.dst_port = pe.in.port;
      for (auto& [k, v] : pe.attrs) doc.edge.attrs.emplace_back(std::string(g_->str(k)), std::move(v));
    } else {
      throw ParseError(key_loc, "unknown top-level key '" + key + "': expected 'graph', 'op' or 'edge'");
    }
    if (ev_.type != Event::MapEnd)
      throw ParseError(here(), "a document has exactly one top-level key ('" + key + "' was already given)");
    next();
    if (ev_.type != Event::End) throw ParseError(here(), "unexpected content after the document");
    resolve_edges();
    report_problems();
    ir::derive_port_types(doc.graph);  // the type attributes, interned on the ports
    return doc;
  }

 private:
  // ------------------------------------------------------------ event helpers
  void next() { src_.next(ev_); }
  Pos here() const { return {&src_.file(), ev_.line, ev_.column}; }
  // "_0", "_1", ...: the names the seed gives anonymous ops and ports.
  static std::string generated_name(uint32_t k) {
    std::string s = std::to_string(k);
    s.insert(s.begin(), '_');
    return s;
  }
  static std::string line_col(const Pos& l) {
    return "line " + std::to_string(l.line) + ", column " + std::to_string(l.column);
  }
  [[noreturn]] void fail(const std::string& msg) const { throw ParseError(here(), msg); }

  static const char* event_name(const Event& e) {
    switch (e.type) {
      case Event::MapStart: return "a mapping";
      case Event::MapEnd: return "the end of a mapping";
      case Event::SeqStart: return "a sequence";
      case Event::SeqEnd: return "the end of a sequence";
      case Event::Scalar: return "a scalar";
      case Event::End: return "the end of the file";
    }
    return "?";
  }
  void expect(Event::Type t, const std::string& what) {
    if (ev_.type != t) fail("expected " + what + ", found " + event_name(ev_));
  }
  std::string key_text() {
    if (ev_.type != Event::Scalar) fail(std::string("expected a key, found ") + event_name(ev_));
    return ev_.text;
  }
  // A scalar used as text (names, types): any scalar, taken as written.
  std::string text_value(const std::string& what) {
    if (ev_.type != Event::Scalar) fail("expected " + what + " (a string), found " + event_name(ev_));
    std::string s = std::move(ev_.text);
    next();
    return s;
  }
  void skip_value() {
    int depth = 0;
    do {
      if (ev_.type == Event::MapStart || ev_.type == Event::SeqStart) ++depth;
      if (ev_.type == Event::MapEnd || ev_.type == Event::SeqEnd) --depth;
      if (ev_.type == Event::End) fail("unexpected end of file");
      next();
    } while (depth > 0);
  }

  // Keys seen in one mapping. Most mappings have a handful of keys: a linear scan of a small
  // vector beats building a hash set per mapping; large ones switch to a set.
  struct KeySet {
    std::vector<std::string> few;
    absl::flat_hash_set<std::string> many;
    void add(const Builder& b, const std::string& k) {
      if (many.empty()) {
        for (const auto& x : few)
          if (x == k) b.fail("duplicate key '" + k + "'");
        few.push_back(k);
        if (few.size() > 16) many.insert(few.begin(), few.end());
        return;
      }
      if (!many.insert(k).second) b.fail("duplicate key '" + k + "'");
    }
  };

  // ------------------------------------------------------------ ops and graphs
  // ev_ is at the node's MapStart; leaves ev_ after its MapEnd. Returns where the node is named
  // (its opening when it has no name), for diagnostics about the name.
  Pos parse_node(OpId node, NodeKind kind) {
    expect(Event::MapStart, kind == NodeKind::Graph ? "a graph (a mapping)" : "an op (a mapping)");
    Pos name_loc = here();
    next();
    KeySet keys;
    std::optional<std::string> name, type, ns;
    while (ev_.type != Event::MapEnd) {
      std::string key = key_text();
      keys.add(*this, key);
      Pos key_loc = here();
      next();
      if (key == "name") {
        name_loc = here();
        name = text_value("a name");
      } else if (key == "type" && kind == NodeKind::Op) {
        type = text_value("an op type");
      } else if (key == "namespace" && kind == NodeKind::Graph) {
        ns = text_value("a namespace");
      } else if (key == "attrs") {
        parse_node_attrs(node, kind, name, type, ns, name_loc);
      } else if (key == "input_ports" || key == "output_ports") {
        parse_ports(node, key == "input_ports" ? PortDir::In : PortDir::Out);
      } else if (key == "ops") {
        parse_ops(node);
      } else if (key == "edges") {
        parse_edges(node);
      } else {
        throw ParseError(key_loc, "unknown key '" + key + "' in " + (kind == NodeKind::Graph ? "a graph" : "an op") +
                                      "; expected " +
                                      (kind == NodeKind::Graph
                                           ? "name, namespace, attrs, input_ports, output_ports, ops or edges"
                                           : "type, name, attrs, input_ports, output_ports, ops or edges"));
      }
    }
    next();
    if (type) g_->set_type(node, g_->sym(*type));
    if (ns) g_->set_graph_namespace(node, g_->sym(*ns));
    if (name && !name->empty()) g_->set_name(node, g_->sym(*name));
    return name_loc;
  }

  void set_builtin(std::optional<std::string>& slot, std::string v, const char* what, const Pos& loc) {
    if (slot && *slot != v)
      throw ParseError(loc, std::string("builtin attribute '") + what + "' given twice with different values ('" +
                                *slot + "' and '" + v + "')");
    slot = std::move(v);
  }

  void parse_node_attrs(OpId node, NodeKind kind, std::optional<std::string>& name, std::optional<std::string>& type,
                        std::optional<std::string>& ns, Pos& name_loc) {
    expect(Event::MapStart, "attrs (a mapping)");
    next();
    KeySet keys;
    while (ev_.type != Event::MapEnd) {
      std::string key = key_text();
      keys.add(*this, key);
      Pos loc = here();
      next();
      // Builtin attributes may be written inside attrs (the seed's `op: {attrs: {name: g}}`).
      if (key == "name") {
        name_loc = here();
        set_builtin(name, text_value("a name"), "name", loc);
      } else if (key == "type" && kind == NodeKind::Op) {
        set_builtin(type, text_value("an op type"), "type", loc);
      } else if (key == "namespace" && kind == NodeKind::Graph) {
        set_builtin(ns, text_value("a namespace"), "namespace", loc);
      } else {
        Symbol k = g_->sym(key);
        if (g_->attr(node, k)) throw ParseError(loc, "duplicate attribute '" + key + "'");
        g_->set_attr(node, k, parse_value(node));
      }
    }
    next();
  }

  void parse_ports(OpId op, PortDir dir) {
    expect(Event::SeqStart, "a list of ports");
    next();
    std::vector<PortId> unnamed;
    absl::flat_hash_map<Symbol, Pos> named;
    auto name_port = [&](PortId p, const std::string& name, const Pos& loc) {
      Symbol s = g_->sym(name);
      g_->set_port_name(p, s);
      auto [it, fresh] = named.try_emplace(s, loc);
      if (!fresh) duplicates_.push_back({op, s, dir, true, loc, it->second});
    };
    while (ev_.type != Event::SeqEnd) {
      PortId p = g_->add_port(op, dir, 0);
      Pos port_loc = here();
      if (ev_.type == Event::Scalar) {  // shorthand: a port given by its name alone
        std::string n = text_value("a port name");
        if (n.empty())
          unnamed.push_back(p);
        else
          name_port(p, n, port_loc);
        continue;
      }
      expect(Event::MapStart, "a port (a mapping with name and attrs)");
      next();
      KeySet keys;
      std::optional<std::string> name;
      while (ev_.type != Event::MapEnd) {
        std::string key = key_text();
        keys.add(*this, key);
        Pos loc = here();
        next();
        if (key == "name") {
          port_loc = loc;
          set_builtin(name, text_value("a port name"), "name", loc);
        } else if (key == "attrs") {
          expect(Event::MapStart, "attrs (a mapping)");
          next();
          KeySet akeys;
          while (ev_.type != Event::MapEnd) {
            std::string ak = key_text();
            akeys.add(*this, ak);
            Pos aloc = here();
            next();
            if (ak == "name") {
              port_loc = aloc;
              set_builtin(name, text_value("a port name"), "name", aloc);
            } else {
              g_->set_attr(p, g_->sym(ak), parse_value(op));
            }
          }
          next();
        } else {
          throw ParseError(loc, "unknown key '" + key + "' in a port; expected name or attrs");
        }
      }
      next();
      if (name && !name->empty())
        name_port(p, *name, port_loc);
      else
        unnamed.push_back(p);
    }
    next();
    // Anonymous ports are named by position ("_0", "_1", ...), skipping names already taken.
    if (!unnamed.empty()) {
      absl::flat_hash_set<Symbol> taken;
      for (PortId p : g_->ports(op, dir)) taken.insert(g_->port_name(p));
      for (PortId p : unnamed) {
        uint32_t k = g_->port_index(p);
        Symbol s;
        while (taken.contains(s = g_->sym(generated_name(k)))) ++k;
        taken.insert(s);
        g_->set_port_name(p, s);
        g_->set_port_name_generated(p, true);
      }
    }
  }

  void parse_ops(OpId scope) {
    expect(Event::SeqStart, "a list of ops");
    g_->mark_has_body(scope);
    next();
    std::vector<OpId> kids;
    absl::flat_hash_map<Symbol, Pos> named;
    while (ev_.type != Event::SeqEnd) {
      OpId op = g_->create_op(scope, 0, 0, /*generate_name=*/false);
      progress_.advance();
      Pos loc = parse_node(op, NodeKind::Op);
      kids.push_back(op);
      if (Symbol n = g_->name(op)) {
        auto [it, fresh] = named.try_emplace(n, loc);
        if (!fresh) duplicates_.push_back({scope, n, PortDir::In, false, loc, it->second});
      }
    }
    next();
    // Anonymous ops are named by position, as the seed's PyTorch example shows.
    for (size_t i = 0; i < kids.size(); ++i) {
      if (g_->name(kids[i]) != 0) continue;
      uint32_t k = static_cast<uint32_t>(i);
      Symbol s;
      while (g_->find_op(scope, s = g_->sym(generated_name(k)))) ++k;
      g_->set_name(kids[i], s);
      g_->set_name_generated(kids[i], true);
    }
  }

  void parse_edges(OpId scope) {
    expect(Event::SeqStart, "a list of edges");
    g_->mark_has_body(scope);
    next();
    while (ev_.type != Event::SeqEnd) pending_.push_back(parse_edge(scope));
    next();
  }

  PendingEdge parse_edge(OpId scope) {
    expect(Event::MapStart, "an edge (a mapping with output_port and input_port)");
    PendingEdge pe;
    pe.scope = scope;
    pe.loc = here();
    next();
    KeySet keys;
    while (ev_.type != Event::MapEnd) {
      std::string key = key_text();
      Pos loc = here();
      next();
      std::string canonical = key;
      if (key == "input_ports" || key == "output_ports") {
        canonical = key.substr(0, key.size() - 1);
        diags_.warning(loc.str(), "edge key '" + key + "' should be '" + canonical + "'; read as '" + canonical + "'");
      }
      keys.add(*this, canonical);
      if (canonical == "output_port") {
        pe.out = parse_endpoint();
      } else if (canonical == "input_port") {
        pe.in = parse_endpoint();
      } else if (canonical == "attrs") {
        expect(Event::MapStart, "attrs (a mapping)");
        next();
        KeySet akeys;
        while (ev_.type != Event::MapEnd) {
          std::string ak = key_text();
          akeys.add(*this, ak);
          next();
          pe.attrs.emplace_back(g_->sym(ak), parse_value(scope));
        }
        next();
      } else {
        throw ParseError(loc, "unknown key '" + key + "' in an edge; expected output_port, input_port or attrs");
      }
    }
    if (!pe.out.present) throw ParseError(pe.loc, "edge has no output_port (the port that sends the value)");
    if (!pe.in.present) throw ParseError(pe.loc, "edge has no input_port (the port that receives the value)");
    next();
    return pe;
  }

  Endpoint parse_endpoint() {
    Endpoint ep;
    ep.loc = here();
    ep.present = true;
    expect(Event::MapStart, "an endpoint { op: NAME, port: NAME }");
    next();
    KeySet keys;
    bool has_op = false, has_port = false;
    while (ev_.type != Event::MapEnd) {
      std::string key = key_text();
      keys.add(*this, key);
      Pos loc = here();
      next();
      if (key == "op") {
        ep.op = text_value("an op name");
        has_op = true;
      } else if (key == "port") {
        ep.port = text_value("a port name");
        has_port = true;
      } else {
        throw ParseError(loc, "unknown key '" + key + "' in an edge endpoint; expected op and port");
      }
    }
    if (!has_op) throw ParseError(ep.loc, "edge endpoint has no 'op'");
    if (!has_port) throw ParseError(ep.loc, "edge endpoint has no 'port'");
    next();
    return ep;
  }

  // ------------------------------------------------------------ values
  Value parse_value(OpId owner) {
    switch (ev_.type) {
      case Event::Scalar: return parse_scalar();
      case Event::SeqStart: {
        if (!ev_.tag.empty() && ev_.tag != "tag:yaml.org,2002:seq") fail("unknown tag '" + ev_.tag + "' on a sequence");
        next();
        Value::List l;
        while (ev_.type != Event::SeqEnd) l.push_back(parse_value(owner));
        next();
        return Value(std::move(l));
      }
      case Event::MapStart: {
        if (ev_.tag == "!tensor") return parse_tensor();
        if (ev_.tag == "!graph") return parse_graph_value(owner);
        if (!ev_.tag.empty() && ev_.tag != "tag:yaml.org,2002:map") fail("unknown tag '" + ev_.tag + "' on a mapping");
        next();
        Value::Map m;
        absl::flat_hash_set<std::string> seen;
        bool first = true;
        while (ev_.type != Event::MapEnd) {
          std::string key = key_text();
          if (first && (key == "$tensor" || key == "$graph")) {
            next();
            Value v = key == "$tensor" ? parse_tensor() : parse_graph_value(owner);
            if (ev_.type != Event::MapEnd) fail("'" + key + "' must be the only key of its mapping");
            next();
            return v;
          }
          first = false;
          if (!seen.insert(key).second) fail("duplicate key '" + key + "'");
          next();
          m.push_back({std::move(key), parse_value(owner)});
        }
        next();
        return Value(std::move(m));
      }
      default: fail(std::string("expected a value, found ") + event_name(ev_));
    }
  }

  Value parse_scalar() {
    Value v;
    switch (ev_.style) {
      case Event::Plain: {
        if (!ev_.tag.empty()) {
          v = tagged_scalar();
          break;
        }
        PlainKind k = classify_plain(ev_.text);
        if (k == PlainKind::IntOverflow) fail("integer " + ev_.text + " is out of the 64-bit range");
        v = resolve_plain(ev_.text);
        break;
      }
      case Event::Quoted:
        if (!ev_.tag.empty() && ev_.tag != "tag:yaml.org,2002:str") {
          v = tagged_scalar();
          break;
        }
        v = Value(std::move(ev_.text));
        break;
      case Event::Null: v = Value(); break;
      case Event::Bool: v = Value(ev_.text == "true"); break;
      case Event::Int: {
        auto i = parse_int(ev_.text);
        if (!i) fail("integer " + ev_.text + " is out of the 64-bit range");
        v = Value(*i);
        break;
      }
      case Event::Float: {
        auto d = ev_.text == "NaN" ? std::optional<double>(std::nan(""))
                 : ev_.text == "Infinity" ? std::optional<double>(HUGE_VAL)
                 : ev_.text == "-Infinity" ? std::optional<double>(-HUGE_VAL)
                                           : parse_float(ev_.text);
        if (!d) fail("malformed number '" + ev_.text + "'");
        v = Value(*d);
        break;
      }
      case Event::String: v = Value(std::move(ev_.text)); break;
    }
    next();
    return v;
  }

  Value tagged_scalar() {
    const std::string& t = ev_.tag;
    if (t == "tag:yaml.org,2002:str") return Value(ev_.text);
    if (t == "tag:yaml.org,2002:null") return Value();
    if (t == "tag:yaml.org,2002:bool") {
      if (classify_plain(ev_.text) != PlainKind::Bool) fail("'" + ev_.text + "' is not a bool");
      return resolve_plain(ev_.text);
    }
    if (t == "tag:yaml.org,2002:int") {
      auto i = parse_int(ev_.text);
      if (!i) fail("'" + ev_.text + "' is not a 64-bit integer");
      return Value(*i);
    }
    if (t == "tag:yaml.org,2002:float") {
      auto d = parse_float(ev_.text);
      if (!d) fail("'" + ev_.text + "' is not a float");
      return Value(*d);
    }
    fail("unknown tag '" + t + "' on a scalar");
  }

  Value parse_graph_value(OpId owner) {
    OpId gnode = g_->create_attr_graph(owner, 0);
    parse_node(gnode, NodeKind::Graph);
    return Value::graph(gnode);
  }

  Value parse_tensor() {
    Pos loc = here();
    expect(Event::MapStart, "a tensor (a mapping with dtype, shape and data)");
    next();
    KeySet keys;
    std::optional<ir::DType> dtype;
    std::optional<std::vector<int64_t>> shape;
    std::optional<Value> data;
    std::optional<std::string> b64, file;
    std::optional<int64_t> offset, length;
    Pos data_loc;
    while (ev_.type != Event::MapEnd) {
      std::string key = key_text();
      keys.add(*this, key);
      Pos kloc = here();
      next();
      if (key == "dtype") {
        std::string s = text_value("an element type");
        dtype = ir::dtype_from_name(s);
        if (!dtype || *dtype == ir::DType::Undefined) throw ParseError(kloc, "unknown tensor element type '" + s + "'");
      } else if (key == "shape") {
        Value v = parse_value(g_->root());
        if (!v.is_list()) throw ParseError(kloc, "tensor shape must be a list of integers");
        shape.emplace();
        for (const auto& d : v.as_list()) {
          if (!d.is_int() || d.as_int() < 0) throw ParseError(kloc, "tensor shape must be a list of non-negative integers");
          shape->push_back(d.as_int());
        }
      } else if (key == "data") {
        data_loc = here();
        data = parse_value(g_->root());
      } else if (key == "base64") {
        data_loc = here();
        b64 = text_value("base64 text");
      } else if (key == "file") {
        data_loc = here();
        file = text_value("a side file name");
      } else if (key == "offset" || key == "length") {
        Value v = parse_scalar();
        if (!v.is_int() || v.as_int() < 0) throw ParseError(kloc, "tensor " + key + " must be a non-negative integer");
        (key == "offset" ? offset : length) = v.as_int();
      } else {
        throw ParseError(kloc, "unknown key '" + key + "' in a tensor; expected dtype, shape, data, base64, or file, offset and length");
      }
    }
    next();
    if (!dtype) throw ParseError(loc, "tensor has no dtype");
    if (!shape) throw ParseError(loc, "tensor has no shape");
    int sources = (data ? 1 : 0) + (b64 ? 1 : 0) + (file ? 1 : 0);
    if (sources != 1) throw ParseError(loc, "tensor needs exactly one of data, base64 or file");
    ir::Tensor t;
    t.dtype = *dtype;
    t.shape = *shape;
    auto count = t.element_count();
    if (!count) throw ParseError(loc, "tensor shape is too large");
    std::string shape_text = std::string(ir::dtype_name(t.dtype)) + "[";
    for (size_t i = 0; i < t.shape.size(); ++i) shape_text += (i ? ", " : "") + std::to_string(t.shape[i]);
    shape_text += "]";
    if (t.dtype == ir::DType::String) {
      if (!data || !data->is_list()) throw ParseError(loc, "a string tensor needs data: a list of strings");
      for (const auto& x : data->as_list()) {
        if (!x.is_string()) throw ParseError(data_loc, "a string tensor's data must be strings");
        t.strings.push_back(x.as_string());
      }
      if (t.strings.size() != *count)
        throw ParseError(data_loc, "tensor " + shape_text + " has " + std::to_string(*count) + " elements but data has " +
                                       std::to_string(t.strings.size()));
      return Value(std::move(t));
    }
    auto expected = t.expected_bytes();
    if (!expected) throw ParseError(loc, "tensor " + shape_text + " is too large: its size in bytes overflows");
    uint64_t need = *expected;
    if (b64) {
      auto bytes = base64_decode(*b64);
      if (!bytes) throw ParseError(data_loc, "tensor base64 text is not valid base64");
      if (bytes->size() != need)
        throw ParseError(data_loc, "tensor " + shape_text + " needs " + std::to_string(need) + " bytes but its data has " +
                                       std::to_string(bytes->size()));
      return Value(ir::Tensor::from_bytes(t.dtype, t.shape, std::move(*bytes)));
    }
    if (file) {
      if (!offset || !length) throw ParseError(loc, "a tensor in a side file needs offset and length");
      if (static_cast<uint64_t>(*length) != need)
        throw ParseError(loc, "tensor " + shape_text + " needs " + std::to_string(need) + " bytes but its length is " +
                                  std::to_string(*length));
      auto buf = side_file(*file, data_loc);
      if (static_cast<uint64_t>(*offset) > buf->size() || static_cast<uint64_t>(*length) > buf->size() - *offset)
        throw ParseError(loc, "tensor bytes [" + std::to_string(*offset) + ", " + std::to_string(static_cast<uint64_t>(*offset) + static_cast<uint64_t>(*length)) +
                                  ") lie outside side file '" + *file + "' (" + std::to_string(buf->size()) + " bytes)");
      return Value(ir::Tensor::borrow(t.dtype, t.shape, buf, buf->data() + *offset, static_cast<size_t>(*length)));
    }
    // data: a list of numbers (or bools)
    if (!data->is_list()) throw ParseError(data_loc, "tensor data must be a list of numbers");
    const auto& l = data->as_list();
    if (l.size() != *count)
      throw ParseError(data_loc, "tensor " + shape_text + " has " + std::to_string(*count) + " elements but data has " +
                                     std::to_string(l.size()));
    if (!listable(t.dtype))
      throw ParseError(data_loc, "tensor data lists are not supported for " + std::string(ir::dtype_name(t.dtype)) +
                                     "; write its bytes as base64");
    std::string bytes(need, '\0');
    size_t es = ir::dtype_size(t.dtype);
    for (size_t i = 0; i < l.size(); ++i) store_element(t.dtype, l[i], i, data_loc, bytes.data() + i * es);
    return Value(ir::Tensor::from_bytes(t.dtype, t.shape, std::move(bytes)));
  }

  static bool listable(ir::DType t) {
    switch (t) {
      case ir::DType::Bool: case ir::DType::Int8: case ir::DType::Int16: case ir::DType::Int32: case ir::DType::Int64:
      case ir::DType::UInt8: case ir::DType::UInt16: case ir::DType::UInt32: case ir::DType::UInt64:
      case ir::DType::Float32: case ir::DType::Float64:
        return true;
      default:
        return false;
    }
  }

  // Stores element i of a data list as the tensor's element type. A value the type cannot hold
  // exactly (300 in int8, 1.5 in int32, -1 in uint32) is an error, never silently changed; for
  // float32, rounding to the nearest float is what writing a decimal means.
  static void store_element(ir::DType dt, const Value& x, size_t i, const Pos& loc, char* dst) {
    auto put = [&](auto v) { std::memcpy(dst, &v, sizeof v); };
    auto bad = [&](const std::string& why) -> ParseError {
      return ParseError(loc, "tensor data element " + std::to_string(i) + " " + why);
    };
    if (!(x.is_float() || x.is_int() || x.is_bool())) throw bad("is not a number");
    if (dt == ir::DType::Float32 || dt == ir::DType::Float64) {
      double d = x.is_float() ? x.as_float() : x.is_int() ? static_cast<double>(x.as_int()) : x.as_bool();
      if (dt == ir::DType::Float64)
        put(d);
      else
        put(static_cast<float>(d));
      return;
    }
    int64_t v;
    if (x.is_int()) {
      v = x.as_int();
    } else if (x.is_bool()) {
      v = x.as_bool();
    } else {
      double d = x.as_float();
      // [-2^63, 2^63): the doubles that convert to int64 without overflow.
      if (!(d == std::trunc(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        throw bad("(" + fmt_double(d) + ") is not an integer, but the tensor is " + std::string(ir::dtype_name(dt)));
      v = static_cast<int64_t>(d);
    }
    auto range = [&](int64_t lo, int64_t hi) {
      if (v < lo || v > hi)
        throw bad("(" + std::to_string(v) + ") does not fit " + std::string(ir::dtype_name(dt)));
    };
    switch (dt) {
      case ir::DType::Bool: range(0, 1); put(static_cast<uint8_t>(v)); break;
      case ir::DType::Int8: range(INT8_MIN, INT8_MAX); put(static_cast<int8_t>(v)); break;
      case ir::DType::Int16: range(INT16_MIN, INT16_MAX); put(static_cast<int16_t>(v)); break;
      case ir::DType::Int32: range(INT32_MIN, INT32_MAX); put(static_cast<int32_t>(v)); break;
      case ir::DType::Int64: put(v); break;
      case ir::DType::UInt8: range(0, UINT8_MAX); put(static_cast<uint8_t>(v)); break;
      case ir::DType::UInt16: range(0, UINT16_MAX); put(static_cast<uint16_t>(v)); break;
      case ir::DType::UInt32: range(0, UINT32_MAX); put(static_cast<uint32_t>(v)); break;
      case ir::DType::UInt64: range(0, INT64_MAX); put(static_cast<uint64_t>(v)); break;
      default: break;
    }
  }

  static std::string fmt_double(double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    return buf;
  }

  std::shared_ptr<const Buffer> side_file(const std::string& name, const Pos& loc) {
    auto it = side_files_.find(name);
    if (it != side_files_.end()) return it->second;
    if (opt_.base_dir.empty()) throw ParseError(loc, "side file '" + name + "' cannot be read here: no folder is known for it");
    std::shared_ptr<const Buffer> buf;
    try {
      // The same policy as ONNX external data: relative, no '..', no symbolic link in any
      // component, a regular file inside the document's folder.
      buf = map_model_file(opt_.base_dir, name, "side file");
    } catch (const Error& e) {
      throw ParseError(loc, e.what());
    }
    side_files_[name] = buf;
    return buf;
  }

  // ------------------------------------------------------------ edge resolution
  std::string scope_text(OpId scope) const {
    if (scope == g_->root()) return g_->root_kind() == ir::Graph::RootKind::Graph ? "the top-level graph" : "the top-level op";
    return (g_->is_graph(scope) ? "the graph attribute of '" + g_->path(g_->parent(scope)) + "'" : "the body of '" + g_->path(scope) + "'");
  }

  // A problem that does not stop the reading; all of them are reported at the end.
  void problem(Pos loc, std::string msg) { problems_.emplace_back(std::move(loc), std::move(msg)); }

  // How an edge endpoint names an op, seen from the body (scope) that holds the edge.
  enum class Reach {
    Child,     // an op of the body: its output ports send, its input ports receive
    Boundary,  // the body's own op or graph: its input ports send, its output ports receive
    Capture,   // the op that owns an attribute graph: its input ports may be read inside
  };

  // The scoping rule of the seed: an edge joins ops of its own body and the body's own ports, and
  // an attribute graph may also read its owner's inputs. Nothing else is visible.
  OpId find_endpoint_op(OpId scope, Symbol name, Reach& reach) const {
    if (OpId c = g_->find_op(scope, name)) {
      reach = Reach::Child;
      return c;
    }
    if (g_->name(scope) == name) {
      reach = Reach::Boundary;
      return scope;
    }
    if (g_->is_graph(scope) && scope != g_->root() && g_->name(g_->parent(scope)) == name) {
      reach = Reach::Capture;
      return g_->parent(scope);
    }
    return OpId();
  }

  // Says why an op name is not visible from `scope`: it lives in an enclosing body, or inside
  // some op's body, or nowhere. Scans the graph, so only the first few failures get it.
  std::string why_not_visible(OpId scope, const std::string& name) const {
    Symbol s = g_->symbols().find(name);
    if (s != SymbolTable::kNone) {
      for (OpId up = g_->parent(scope); up; up = g_->parent(up)) {
        OpId hit = g_->find_op(up, s);
        if (!hit && g_->name(up) == s) hit = up;
        if (hit)
          return "; '" + g_->path(hit) + "' lies outside " + scope_text(scope) +
                 ", and an edge may leave a body only through its owner's ports";
      }
      std::string inside;
      g_->for_each_op([&](OpId op) {
        if (inside.empty() && op != g_->root() && g_->name(op) == s) inside = g_->path(op);
      });
      if (!inside.empty())
        return "; '" + inside + "' lies inside another op's body, and an edge may enter a body only through that op's ports";
    }
    return "";
  }

  PortId resolve(const PendingEdge& pe, const Endpoint& ep, bool source) {
    Symbol opname = g_->symbols().find(ep.op);
    Reach reach = Reach::Child;
    OpId op = opname == SymbolTable::kNone ? OpId() : find_endpoint_op(pe.scope, opname, reach);
    if (!op) {
      std::string why = problems_.size() < kExplainedProblems ? why_not_visible(pe.scope, ep.op) : "";
      problem(ep.loc, "edge refers to op '" + ep.op + "', which is not in " + scope_text(pe.scope) + why);
      return PortId();
    }
    if (reach == Reach::Capture && !source) {
      problem(ep.loc, "an edge inside a graph attribute of '" + ep.op + "' may read its input ports but cannot send to it");
      return PortId();
    }
    // Inside a body, the owner's input ports send values and its output ports receive them.
    bool from_inside = reach != Reach::Child;
    PortDir want = source == from_inside ? PortDir::In : PortDir::Out;
    Symbol port = g_->sym(ep.port);
    if (port == g_->control_symbol()) return want == PortDir::In ? g_->control_in(op) : g_->control_out(op);
    if (PortId p = g_->find_port(op, want, port)) return p;
    auto side = [](PortDir d) { return d == PortDir::In ? std::string("input") : std::string("output"); };
    PortDir other = want == PortDir::In ? PortDir::Out : PortDir::In;
    std::string msg = "op '" + ep.op + "' has no " + side(want) + " port '" + ep.port + "'";
    if (g_->find_port(op, other, port)) {
      msg += " ('" + ep.port + "' is one of its " + side(other) + " ports";
      if (from_inside)
        msg += std::string("; inside its body its ") + side(other) + " ports " +
               (other == PortDir::In ? "send values (output_port)" : "receive values (input_port)");
      else
        msg += std::string("; it can only be an edge's ") + (other == PortDir::In ? "input_port" : "output_port");
      msg += ")";
    }
    problem(ep.loc, msg);
    return PortId();
  }

  void resolve_edges() {
    // The edge that first fed each data port, to name it when a second one arrives.
    absl::flat_hash_map<uint32_t, uint32_t> fed_by;
    for (uint32_t i = 0; i < pending_.size(); ++i) {
      PendingEdge& pe = pending_[i];
      PortId src = resolve(pe, pe.out, true);
      PortId dst = resolve(pe, pe.in, false);
      if (!src || !dst) continue;
      if (g_->is_control(src) != g_->is_control(dst)) {
        problem(pe.loc, "edge joins a control port (^control) to a data port; both ends must be control ports or neither");
        continue;
      }
      if (!g_->is_control(dst)) {
        auto [it, fresh] = fed_by.try_emplace(dst.value, i);
        if (!fresh) {
          const PendingEdge& first = pending_[it->second];
          problem(pe.in.loc, "input port '" + g_->path(dst) + "' already receives a value from '" + first.out.op + ":" +
                                 first.out.port + "' (edge at " + line_col(first.loc) + "); a data port takes at most one producer");
          continue;
        }
      }
      ir::EdgeId e = g_->connect(src, dst);
      for (ir::Attr& a : pe.attrs) g_->set_attr(e, a.first, std::exchange(a.second, Value()));
    }
  }

  // Throws the first problem in file order; the others go to diags.
  void report_problems() {
    // Duplicate names are described only now, when every op has its name (the owner of a body
    // is named after its body has been read).
    for (const Duplicate& d : duplicates_) {
      std::string name(g_->str(d.name));
      if (d.port)
        problem(d.loc, "duplicate " + std::string(d.dir == PortDir::In ? "input" : "output") + " port name '" + name +
                           "' on '" + g_->path(d.owner) + "' (first at " + line_col(d.first) +
                           "); port names must be unique on each side of an op");
      else
        problem(d.loc, "duplicate op name '" + name + "' in " + scope_text(d.owner) + " (first at " + line_col(d.first) +
                           "); op names must be unique in a scope");
    }
    if (problems_.empty()) return;
    std::stable_sort(problems_.begin(), problems_.end(), [](const ParseError& a, const ParseError& b) {
      return std::pair(a.loc().line, a.loc().column) < std::pair(b.loc().line, b.loc().column);
    });
    for (size_t i = 1; i < problems_.size(); ++i) diags_.error(problems_[i].loc().str(), problems_[i].message());
    std::string more = problems_.size() > 1 ? " (and " + std::to_string(problems_.size() - 1) + " more problems)" : "";
    throw ParseError(problems_[0].loc(), problems_[0].message() + more);
  }

  static constexpr size_t kExplainedProblems = 16;

  EventSource& src_;
  Diagnostics& diags_;
  const ReadOptions& opt_;
  Event ev_;
  ir::Graph* g_ = nullptr;
  Progress progress_{"reading ops", 0};  // a progress line for a big document
  std::vector<PendingEdge> pending_;
  std::vector<ParseError> problems_;
  struct Duplicate {
    OpId owner;  // the scope (op names) or the op (port names)
    Symbol name;
    PortDir dir;
    bool port;
    Pos loc, first;
  };
  std::vector<Duplicate> duplicates_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Buffer>> side_files_;
};

}  // namespace

std::string_view format_name(Format f) { return f == Format::Yaml ? "yaml" : "json"; }

std::string_view kind_name(Document::Kind k) {
  switch (k) {
    case Document::Kind::Graph: return "graph";
    case Document::Kind::Op: return "op";
    case Document::Kind::Edge: return "edge";
  }
  return "?";
}

Format format_for_path(const std::string& path) {
  auto ext = std::filesystem::path(path).extension().string();
  return ext == ".json" ? Format::Json : Format::Yaml;
}

Document parse(std::string_view text, Format format, const std::string& file_name, Diagnostics& diags,
               const ReadOptions& options) {
  auto src = format == Format::Yaml ? make_yaml_source(text, file_name, options.limits)
                                    : make_json_source(text, file_name, options.limits);
  Builder b(*src, diags, options);
  return b.run();
}

Document read_file(const std::string& path, Diagnostics& diags, std::optional<Format> format, ReadOptions options) {
  auto buf = ReadGate(path).map_model();  // a regular file, opened without blocking
  if (options.base_dir.empty()) {
    auto parent = std::filesystem::path(path).parent_path();
    options.base_dir = parent.empty() ? "." : parent.string();
  }
  if (buf->size() == 0)
    throw ParseError(amanda::SourceLoc{path, 1, 1}, "empty file: expected a document with a top-level 'graph:', 'op:' or 'edge:'");
  return parse(buf->view(), format.value_or(format_for_path(path)), path, diags, options);
}

}  // namespace amanda::text
