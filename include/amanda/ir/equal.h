// Structural comparison of two graphs (possibly of two arenas): same nodes in the same order with
// the same names, types, namespaces, ports, attributes (graph values compared structurally) and
// edges; the attributes of edges count as much as those of ops and ports. Ids and generated-name
// flags do not matter.
#pragma once

#include <string>

#include "amanda/ir/graph.h"

namespace amanda::ir {

// "" when equal, else a description of the first difference with its path.
std::string first_difference(const Graph& a, const Graph& b);
inline bool equal(const Graph& a, const Graph& b) { return first_difference(a, b).empty(); }

}  // namespace amanda::ir
