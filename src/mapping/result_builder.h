// The result builder: what a match becomes. The mapper (a template's expansion for this match,
// compiled once per distinct text) is planned while the matched ops still exist (ports, names,
// attribute values: a mapper that fails changes nothing), then the dst ops are made (the primary
// one reusing a single matched op), wired to the match's boundary and to each other, and ordered
// where the last matched op was. Every change goes through the context's rewriter; the driver
// owns the transaction around it. Internal to src/mapping/ (driver.cpp uses it).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apply_context.h"

namespace amanda::mapping::engine {

class ResultBuilder : ContextUser {
 public:
  explicit ResultBuilder(ApplyContext& c) : ContextUser(c) {}
  // Rewrites the match m (its ops in `scope`) with its rule's mapper; sets m.dst to the mapper
  // used. Returns the dst ops made, in the mapper's order. Throws on a mapper error (the caller
  // rolls the transaction back).
  absl::InlinedVector<OpId, 2> rewrite_match(Match& m, OpId scope);

 private:
  struct InLink {
    Symbol name = 0;
    PortId producer;
    ir::AttrList attrs;
    std::optional<Value> constant;
    bool droppable = false;  // `optional: true`: left out when nothing connects to it and nothing after it does
  };
  struct OutLink {
    Symbol name = 0;
    std::vector<PortId> consumers;
    ir::AttrList attrs;
    ir::TypeId type;  // the value's inferred type: a later rewrite's mapper in this pass reads it
  };
  struct Plan {
    std::vector<InLink> ins;
    std::vector<OutLink> outs;
    bool rebuild_in = false, rebuild_out = false;
  };

  // A rule's attribute values, evaluated before the rewrite changes anything: a mapper that fails
  // then leaves the graph as it was (the check-then-mutate discipline of MLIR's patterns).
  // (One vector for the whole apply, reused: rewrite_match fills it and records where each dst op's
  // values start.) A null Value: erase the key.
  std::vector<std::pair<Symbol, Value>> attr_values_;

  const DstSide& dst_side(const Match& m);
  Symbol unique_op_name(OpId scope, const std::string& base);
  std::vector<PortId> consumers(PortId out);
  PortId source_port(const Match& m, const PortSpec& ps, PortDir dir, bool single, const Bindings& b);
  std::string port_name_for(const PortSpec& ps, PortId src, const schema::OpSchema* s, PortDir dir, const Bindings& b);
  static std::string schema_port_name(const std::vector<schema::PortSchema>* ports, size_t i, std::string_view fallback);
  Plan plan_ports(const Match& m, size_t d, bool single, const std::vector<PortId>& bin, const std::vector<PortId>& bout, bool implicit);
  OpId make_constant(OpId scope, const std::string& base, const Value& v);
  void build_ports(OpId op, Plan& p, OpId scope, const std::string& base);
  void reorder_inputs(OpId op);
  void eval_attrs(const OpSpec& os, const Bindings& b);
  void set_attrs(OpId op, const schema::OpSchema* s, std::span<std::pair<Symbol, Value>> values, bool reused, bool carried);
  OpId last_in_body(const Match& m);
  PortId dst_port(OpId op, const OpSpec& os, PortDir dir, const std::string& name, const Bindings& b);
};

}  // namespace amanda::mapping::engine
