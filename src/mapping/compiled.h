// The compiled form of a mapping table, shared by the parts of the engine (matcher.cpp,
// result_builder.cpp, driver.cpp): rules with their match plans and schemas, a dispatch map from op
// type to candidate (rule, pattern op) pairs, and what a match holds. Internal to src/mapping/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/container/node_hash_map.h>

#include "amanda/mapping/engine.h"

namespace amanda::mapping::engine {

using ir::EdgeId;
using ir::OpId;
using ir::PortDir;
using ir::PortId;
using amanda::Symbol;
using ir::Value;

// One step of a match plan: match pattern op `spec` through pattern edge `edge`, from the end that
// is already matched (`forward`: the edge's source is matched; look among its consumers).
struct Step {
  size_t spec, edge;
  bool forward;
};

// A rule's mapper, compiled: the pattern, its ops' schemas, and the op that takes over.
struct DstSide {
  const Pattern* pattern = nullptr;
  std::vector<const schema::OpSchema*> schema;
  size_t primary = 0;  // dst op that takes over (and, for 1-op matchers, reuses) the op
};

struct CRule {
  const Rule* rule = nullptr;
  std::vector<std::vector<Step>> plans;                   // per start op of the pattern
  std::vector<const schema::OpSchema*> src_schema;
  std::vector<std::vector<std::string>> inner_outputs;    // per src op: output ports that feed other pattern ops
  DstSide dst;                                            // (a template's is expanded per match: dst_template)
};

// The dst op that takes over the matched op (compiled_table.cpp).
size_t primary_of(const Rule& r, const Pattern& dst);

struct Candidate {
  const CRule* rule;
  size_t start;
};

// A match: the rule, the ops of the graph bound to its pattern ops, the captures, and the
// constant ops whose values `const:` inputs took.
struct Match {
  const CRule* rule = nullptr;
  const DstSide* dst = nullptr;  // the mapper used (a template's expansion), set by rewrite_match
  absl::InlinedVector<OpId, 2> ops;  // (no allocation for the usual one- or two-op match)
  Bindings b;
  std::vector<OpId> const_producers;
};

}  // namespace amanda::mapping::engine

namespace amanda::mapping {

struct CompiledTable::Impl {
  const Table& table;
  schema::Registry& reg;
  std::vector<engine::CRule> rules;
  absl::flat_hash_map<std::string, std::vector<engine::Candidate>> by_type;
  // Mappers that are templates (Rule::dst_template), expanded per match: one compiled expansion
  // per (rule, expanded text), and the count expressions the expansions evaluate, parsed once.
  struct Expansion {
    Pattern pattern;
    engine::DstSide side;
  };
  mutable absl::node_hash_map<std::string, std::unique_ptr<Expansion>> expansions;
  mutable absl::node_hash_map<std::string, std::unique_ptr<Expr>> count_exprs;
  Impl(const Table& t, schema::Registry& r) : table(t), reg(r) {}
};

}  // namespace amanda::mapping
