// In-place writes the libtorch reader's import would lose (writes through views): refused;
// later reads of a tensor written in place (not through a view): rewired to the write's result.
#pragma once
#include <memory>

namespace torch::jit {
struct Graph;
}

namespace amanda::torch_frontend {
// Throws std::runtime_error naming the op when a write through a view is read afterwards.
void check_writes_through_views(const std::shared_ptr<torch::jit::Graph>& graph);
}  // namespace amanda::torch_frontend
