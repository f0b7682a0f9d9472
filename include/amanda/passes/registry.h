// Rewrite passes by name (DESIGN.md, layer 7). Each pass has a name, a one-line doc and
// run(graph, options) -> result with counts. The pipeline's Optimize stage
// (ConvertRequest::optimize), `amanda optimize` and the Python module's `amanda.optimize` all call
// passes through this registry, so they optimize alike.
//
// Passes make every change through ir::Rewriter; one rewrite that fails half-way is rolled back.
// They descend into attribute graphs (If/Loop/Scan bodies) unless told not to, and never touch an
// op whose name matches PassOptions::exclude.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/graph.h"

namespace amanda::passes {

struct PassOptions {
  // Op names (or glob patterns with * and ?) no pass may change or remove.
  std::vector<std::string> exclude;
  // Constant folding: a folded tensor bigger than this many bytes is kept as the op that makes it
  // (unless it is no bigger than the constants it is made from).
  size_t fold_size_limit = size_t(64) << 20;
  bool descend = true;           // also rewrite attribute graphs (If/Loop/Scan bodies)
  size_t max_iterations = 32;    // run_pipeline: rounds of the whole list until nothing changes (a shape chain folds a level a round)
  // Called by run_pipeline before every round after the first: types the graph's values again
  // (the tool and the Python module pass ONNX inference), so that what a round folded gives the
  // next round shapes to fold with. Passes read port types; they make none but their own outputs'.
  std::function<void(ir::Graph&)> retype;
  // Called after each pass of run_pipeline (name, result) for progress and reports.
  std::function<void(const std::string&, const struct PassResult&)> on_pass;

  bool excluded(const ir::Graph& g, ir::OpId op) const;
};

struct PassResult {
  size_t rewrites = 0;   // rewrites applied (ops fused, removed, folded...)
  size_t erased = 0;     // ops removed
  size_t created = 0;    // ops made
  size_t refused = 0;    // candidates matched but left as they were (a reason in notes)
  std::vector<std::string> notes;  // why a candidate was refused, errors of rolled-back rewrites
  double seconds = 0;
  bool changed() const { return rewrites > 0 || erased > 0 || created > 0; }
  PassResult& operator+=(const PassResult& o);
};

using PassFn = std::function<PassResult(ir::Graph&, const PassOptions&)>;

struct PassInfo {
  std::string name;  // onnxoptimizer's name where it has the same pass ("fuse_bn_into_conv")
  std::string doc;   // one line
  PassFn run;
  bool onnx_only = true;  // false: works on any namespace (dce, cse)
  bool in_default = true; // part of the default list (amanda optimize without --passes)
};

class PassRegistry {
 public:
  void add(PassInfo p);
  const PassInfo* find(std::string_view name) const;
  std::vector<const PassInfo*> all() const;  // in registration order
  // The default list, in the order it runs.
  std::vector<std::string> default_passes() const;
  // Every built-in pass.
  static const PassRegistry& builtin();

 private:
  std::vector<PassInfo> passes_;
  std::map<std::string, size_t, std::less<>> index_;
};

struct PipelineResult {
  std::vector<std::pair<std::string, PassResult>> passes;  // per pass, summed over rounds
  size_t rounds = 0;
  size_t ops_before = 0, ops_after = 0;  // ops (nested ones included) before and after
  double seconds = 0;
};

// Runs `names` in order, the whole list again while something changes (at most
// options.max_iterations rounds). An unknown name throws amanda::Error naming the known ones. A
// pass that needs ONNX is skipped on other namespaces (noted in its result).
PipelineResult run_pipeline(ir::Graph& g, const std::vector<std::string>& names, const PassOptions& options = {},
                            const PassRegistry& registry = PassRegistry::builtin());

// Ops of `g` (nested included), Constant ops not counted: what the op-count tables compare.
size_t count_ops(const ir::Graph& g, bool with_constants = false);

}  // namespace amanda::passes
