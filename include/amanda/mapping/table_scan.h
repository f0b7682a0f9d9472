#pragma once
// A table file's header and what its rules need in a graph, read from the file's YAML events
// without parsing the rules (src/mapping/planner.cpp): the planner's lazy loading uses it to read
// only the files of the pairs a conversion plans, rewrite-table passes to read a table only when
// some rule can match the graph (amanda/pipeline/rewrite_tables.h).
#include <optional>
#include <string>
#include <vector>

namespace amanda::mapping {

struct TableScan {
  std::string src, dst;
  // One entry per rule: one entry per op of its pattern, each the op types that op may have. The
  // rule can match only a graph that has, for every op, one of its types.
  std::vector<std::vector<std::vector<std::string>>> needs;
  std::vector<std::string> rule_names;  // as the rules declare them (`rule_name`), in order
};

// Nothing when the file is not written in a way the scan follows (flow style, keys after the
// rules, JSON, a rule naming no op type, an error): the caller then reads the whole file, which
// reports any error with its place.
std::optional<TableScan> scan_table(const std::string& path);

// True when `types` (the op types of a graph) has, for every op of the need, one of its types.
bool need_satisfied(const std::vector<std::vector<std::string>>& need, const std::vector<std::string>& types);

}  // namespace amanda::mapping
