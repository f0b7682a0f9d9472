// Structural verifier: checks what every graph must satisfy whatever its namespace, and reports
// every problem (not only the first) with the entity's path, e.g. "h/f:input x".
#pragma once

#include "amanda/ir/graph.h"
#include "amanda/support/diagnostics.h"

namespace amanda::ir {

// Checks: edge endpoints are live ports of live ops; a data port receives at most one edge (one
// producer); no two ops of one scope share a name; no op has two ports of one name on one side;
// an edge stays in its scope, leaving a nested graph only through its owner's ports; data and
// control edges form no cycle (within a scope, or through an op's nested graph).
// Returns true when nothing was found.
bool verify(const Graph& g, Diagnostics& diags);

}  // namespace amanda::ir
