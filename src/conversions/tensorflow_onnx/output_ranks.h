// (output_ranks.cpp) Graph outputs ONNX's inference left without a rank take the one a few
// rank rules give.
#pragma once

#include "amanda/ir/graph.h"

namespace amanda::conversions {
void rank_unranked_outputs(ir::Graph& g);
}
