// What a conversion changed: the ops of a converted graph B matched to those of the original A by
// their path (scope-qualified name; the mapping engine keeps an op's name when a rule rewrites
// it in place, names the extra ops it makes NAME/Type and the constants NAME_port), then grouped
// into changes: the A ops a rule replaced and the B ops it made, joined through their edges.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "amanda/ir/graph.h"

namespace amanda::view {

enum class Mark : uint8_t { Same, Modified, Retyped, Added };
std::string_view mark_name(Mark m);  // "same", "modified", "retyped", "added"

struct Change {
  struct Before {
    std::string path, type;
  };
  std::vector<Before> before;   // ops of A (removed, or the A side of a modified/retyped op)
  std::vector<ir::OpId> after;  // ops of B
};

struct Diff {
  std::vector<Mark> mark;  // indexed by B's op ids
  std::vector<Change> changes;
  size_t same = 0, modified = 0, retyped = 0, added = 0, removed = 0;
  Mark of(ir::OpId op) const { return op.value < mark.size() ? mark[op.value] : Mark::Same; }
};

Diff diff_graphs(const ir::Graph& a, const ir::Graph& b);

}  // namespace amanda::view
