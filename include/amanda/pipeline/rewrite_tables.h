// Rewrite tables as passes (docs/optimize.md, "Passes as rewrite tables"). A rewrite table is a
// mapping table whose src and dst are one namespace (docs/mapping-tables.md); as a pass it runs
// its rules to a fixed point through mapping::rewrite, each application one ir::Rewriter
// transaction. The shipped ones are rewrites/<family>/NAME.yaml (or NAME/*.yaml), the pass NAME,
// beside the C++ passes of PassRegistry::builtin(): passes that are a pattern and a replacement
// are data, and only the rest is code.
#pragma once

#include <string>
#include <vector>

#include "amanda/passes/registry.h"

namespace amanda::pipeline {

// rewrites/ of the source tree, or AMANDA_REWRITES_DIR, or <prefix>/share/amanda/rewrites.
std::string shipped_rewrite_dir();

// Adds the tables `files` to `reg` as the pass `name` (several files: one per namespace version
// from which it holds; a graph gets the highest not above its own). Each file is read now (a malformed table
// throws ParseError with its file, line and column; a table between two namespaces is refused);
// its rules are checked against the namespaces' schemas now when `check_now`, else on the first
// graph that has an op its rules match (a graph without one costs a walk over its op types, and
// no schema registry is built). `onnx_only`: the pass is skipped on graphs of other namespaces.
void add_table_pass(passes::PassRegistry& reg, const std::vector<std::string>& files, const std::string& name, bool in_default,
                    bool onnx_only, bool check_now);

// PassRegistry::builtin() and the shipped rewrite tables (each in the default list), built once:
// what `amanda optimize`, `amanda convert --optimize` and amanda.optimize() run.
const passes::PassRegistry& optimize_registry();

}  // namespace amanda::pipeline
