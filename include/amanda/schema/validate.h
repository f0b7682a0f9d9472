// The validator: checks a graph (and each nested graph with a namespace) against namespace
// schemas, reporting every problem with its path, plus a summary per op type. It can also fill in
// defaults (normalise) and drop attributes equal to their default.
#pragma once

#include <map>
#include <string>

#include "amanda/ir/graph.h"
#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"

namespace amanda::schema {

struct ValidateOptions {
  std::string namespace_override;  // validate as this namespace whatever the graph says
  bool fill_defaults = false;      // normalise: add missing attributes that have a default
  bool drop_defaults = false;      // remove attributes equal to their default
  size_t max_problems_per_type = 1000;  // beyond this, problems of one op type are only counted
};

struct OpTypeSummary {
  size_t ops = 0;
  size_t problems = 0;
};

struct ValidationResult {
  size_t ops_checked = 0;
  size_t problems = 0;
  size_t filled = 0, dropped = 0;
  std::map<std::string, OpTypeSummary> by_type;  // "namespace op-type" -> counts
  bool ok() const { return problems == 0; }
};

// Validates every op of every graph node that has (or inherits) a namespace. An op whose type is
// "prefix::name" where the graph's `imports` attribute maps prefix to a namespace resolves in that
// namespace (ONNX models import several domains at once).
ValidationResult validate(ir::Graph& g, Registry& registry, Diagnostics& diags, const ValidateOptions& options = {});

}  // namespace amanda::schema
