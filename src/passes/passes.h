// The built-in passes register themselves here (one function per file of src/passes/), and the
// scaffolding they share: walking the scopes a pass rewrites. Private to src/passes/.
#pragma once

#include <functional>
#include <vector>

#include "amanda/passes/matcher.h"
#include "amanda/passes/registry.h"

namespace amanda::passes::detail {

// The scopes a pass rewrites: the root graph, then (options.descend) every attribute graph of an
// op (If branches, Loop and Scan bodies), nested ones after their owners. Function bodies (attribute
// graphs of the root) are not rewritten.
std::vector<ir::OpId> scopes(const ir::Graph& g, const PassOptions& options);
// MatchOptions that refuse excluded ops.
MatchOptions match_options(const ir::Graph& g, const PassOptions& options);
// Runs a pattern over every scope with replace_all and adds the counts to `r`.
void replace_everywhere(ir::Graph& g, const PassOptions& options, const Pat& pattern, const ReplaceFn& fn, PassResult& r,
                        const std::string& name);

void register_cleanup(PassRegistry& r);      // dce.cpp: eliminate_deadend, eliminate_unused_initializer
void register_cse(PassRegistry& r);          // cse.cpp
void register_fold(PassRegistry& r);         // fold.cpp: constant_folding, shape_folding
void register_nop(PassRegistry& r);          // nop.cpp: eliminate_identity, eliminate_nop_*
void register_transpose(PassRegistry& r);    // transpose.cpp: push_transpose_down
void register_consecutive(PassRegistry& r);  // consecutive.cpp: fuse_consecutive_*
void register_conv(PassRegistry& r);         // conv.cpp: fuse_bn_into_conv, fuse_add_bias_into_conv, fuse_mul_into_conv, fuse_pad_into_*
void register_gemm(PassRegistry& r);         // gemm.cpp: fuse_matmul_add_bias_into_gemm, fuse_transpose_into_gemm
void register_control(PassRegistry& r);      // control.cpp: eliminate_if_with_const_cond
void register_layernorm(PassRegistry& r);    // layernorm.cpp: fuse_layer_norm

}  // namespace amanda::passes::detail
