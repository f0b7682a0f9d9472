// torch's type promotion made explicit in the libtorch reader's graph (promotion_pass.cpp).
#pragma once
#include <memory>

namespace torch::jit {
struct Graph;
}

namespace amanda::torch_frontend {
// Inserts aten::to casts before every op of the shared promotion table whose tensor operands
// differ from the element type torch computes in.
void make_promotion_explicit(const std::shared_ptr<torch::jit::Graph>& graph);
}  // namespace amanda::torch_frontend
