// In-place writes the libtorch reader's node-by-node import would lose (writes through views,
// `x[1:3] = data`): lowered to a scatter into the viewed tensor where the view is a chain of
// view ops with constant arguments on a fully typed tensor, refused (naming the op and the
// view) otherwise; later reads of a tensor written in place (not through a view) are rewired to
// the write's result.
#pragma once
#include <memory>

namespace torch::jit {
struct Graph;
}

namespace amanda::torch_frontend {
// Rewrites the graph; throws std::runtime_error naming the op when a write through a view that is
// read afterwards cannot be lowered.
void lower_writes_through_views(const std::shared_ptr<torch::jit::Graph>& graph);
}  // namespace amanda::torch_frontend
