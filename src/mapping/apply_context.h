// What one CompiledTable::apply shares between the parts of the engine (docs/mapping-tables.md,
// "The engine"): the driver (driver.cpp: traversal, the schemas' verdicts, the transaction, the
// fixed point), the matcher (matcher.cpp) and the result builder (result_builder.cpp), as MLIR's
// drivers share a rewriter and a pattern applicator. Internal to src/mapping/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>

#include "amanda/ir/rewriter.h"
#include "compiled.h"

namespace amanda::mapping::engine {

using PortList = absl::InlinedVector<PortId, 6>;

struct ApplyContext {
  ApplyContext(ir::Graph& graph, const CompiledTable::Impl& compiled, const ConvertOptions& options, Report& report, ir::Rewriter* rewriter)
      : g(graph), impl(compiled), t(compiled.table), o(options), rep(report), rw(rewriter) {}

  ir::Graph& g;
  const CompiledTable::Impl& impl;
  const Table& t;
  const ConvertOptions& o;
  Report& rep;
  // Every change goes through a rewriter: the engine's own, or the greedy driver's (fixed_point).
  ir::Rewriter* rw;
  std::vector<uint8_t> claimed;   // ops a match of the one pass has taken
  std::vector<uint32_t> pos;      // ops' positions among their siblings (one pass; fix_order)
  bool fixed = false;             // fixed-point mode: ops come and go, positions are not kept
  std::vector<std::string>* why = nullptr;  // --explain: reasons for the op being explained

  // Attribute, port and op type names come from the table and repeat for every op: a small table
  // of them stays in cache, where the graph's symbol table (every op name too) does not.
  absl::flat_hash_map<std::string, Symbol> keys;
  Symbol sym(std::string_view s) {
    auto it = keys.find(absl::string_view(s.data(), s.size()));
    if (it != keys.end()) return it->second;
    Symbol y = g.sym(s);
    keys.emplace(std::string(s), y);
    return y;
  }
  // A string the table owns (an attribute, port or op type name of a rule; it lives as long as the
  // table): looked up by its address, which is cheaper than hashing its text for every op.
  // In front of it, a direct-mapped cache by address: a hit is a load and a compare, where the
  // hash map costs a hash, a probe and a call (callgrind: 4M of 160M instructions in
  // BM_ApplyProfile went to the map alone).
  absl::flat_hash_map<const std::string*, Symbol> tkeys;
  struct TCacheEntry {
    const std::string* key = nullptr;
    Symbol sym = 0;
  };
  static constexpr size_t kTCache = 4096;
  std::vector<TCacheEntry> tcache = std::vector<TCacheEntry>(kTCache);
  Symbol tsym(const std::string& s) {
    auto a = reinterpret_cast<uintptr_t>(&s);
    TCacheEntry& e = tcache[((a >> 5) ^ (a >> 14)) & (kTCache - 1)];
    if (e.key == &s) return e.sym;
    auto [it, fresh] = tkeys.try_emplace(&s, 0);
    if (fresh) it->second = sym(s);
    e = {&s, it->second};
    return it->second;
  }
};

// The context's members under the names the parts use (g_, rw_, sym(), ...), and the helpers all
// of them need.
class ContextUser {
 protected:
  explicit ContextUser(ApplyContext& c)
      : cx_(c), g_(c.g), impl_(c.impl), t_(c.t), o_(c.o), rep_(c.rep), rw_(c.rw), why_(c.why), pos_(c.pos), fixed_(c.fixed) {}

  ApplyContext& cx_;
  ir::Graph& g_;
  const CompiledTable::Impl& impl_;
  const Table& t_;
  const ConvertOptions& o_;
  Report& rep_;
  ir::Rewriter*& rw_;
  std::vector<std::string>*& why_;
  std::vector<uint32_t>& pos_;
  bool& fixed_;

  Symbol sym(std::string_view s) { return cx_.sym(s); }
  Symbol tsym(const std::string& s) { return cx_.tsym(s); }
  // Op names are (mostly) all different: straight to the graph's symbol table.
  Symbol name_sym(std::string_view s) { return g_.sym(s); }

  void note(const std::string& s) {
    if (why_) why_->push_back(s);
  }

  bool claimed(OpId op) const { return op.value < cx_.claimed.size() && cx_.claimed[op.value]; }
  void claim(OpId op) {
    if (op.value >= cx_.claimed.size()) cx_.claimed.resize(g_.id_bound(), 0);
    cx_.claimed[op.value] = 1;
  }

  PortList data_ports(OpId op, PortDir d) {
    PortList out;
    for (PortId p : g_.ports(op, d)) {
      std::string_view n = g_.port_name_str(p);  // "@..." ports are Amanda's own (not data)
      if (!g_.is_control(p) && (n.empty() || n[0] != '@')) out.push_back(p);
    }
    return out;
  }

  // The port a pattern's port spec names: by name (an expression), else by position among the
  // data ports.
  PortId locate(OpId op, PortDir dir, const PortSpec& ps, const Bindings& b) {
    if (ps.name && ps.name->kind != Expr::Kind::Ref) {
      Value n = ps.name->eval(b);
      if (!n.is_string()) return PortId();
      return g_.find_port(op, dir, sym(n.as_string()));
    }
    PortList ports = data_ports(op, dir);
    return ps.position < ports.size() ? ports[ps.position] : PortId();
  }
};

}  // namespace amanda::mapping::engine
