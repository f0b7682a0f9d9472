// The matcher (MLIR's pattern applicator): which candidate rule matches at an op. Candidates come
// from the compiled table's dispatch map by op type, in their order (bigger patterns, priority,
// declaration); a rule's pattern is matched from its start op along its match plan, attributes,
// ports, constants (`const:`), list captures (`ref: xs...`) and the condition checked, the captures
// bound. It reads the graph and changes nothing. Internal to src/mapping/ (driver.cpp uses it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apply_context.h"

namespace amanda::mapping::engine {

class Matcher : ContextUser {
 public:
  explicit Matcher(ApplyContext& c);
  // The first candidate rule that matches at op, in m (--explain: each candidate's verdict in
  // the context's `why`).
  bool find_match(OpId op, Match& m);
  // Whether some rule has a pattern op of this type.
  bool has_rules(Symbol type) const { return dispatch_.contains(type); }
  // One pattern op at op (its type, name, attributes, ports), then the rest of the plan from step k.
  bool match_op(const CRule& cr, size_t spec, OpId op, Match& m, std::string& why);
  bool extend(const CRule& cr, const std::vector<Step>& plan, size_t k, Match& m, std::string& why);

 private:
  absl::flat_hash_map<Symbol, const std::vector<Candidate>*> dispatch_;

  bool finish(const CRule& cr, Match& m, std::string& why);
  std::string describe_refs(const Expr& e, const Bindings& b);
  PortId find_spec_port(const CRule& cr, size_t spec, OpId op, PortDir dir, const std::string& name, const Bindings& b);
  const Value* attr_or_default(OpId op, const schema::OpSchema* s, const std::string& name);
  template <class Get>
  bool match_attrs(const std::vector<AttrSpec>& specs, const Get& get, Match& m, std::string& why, const std::string& where);
  std::optional<Value> constant_of(PortId in, OpId* producer);
  bool match_ports(const CRule& cr, size_t spec, OpId op, PortDir dir, Match& m, std::string& why);
  bool match_list(OpId op, PortDir dir, const PortSpec& ps, Match& m, std::string& why);
};

}  // namespace amanda::mapping::engine
