// The conversion pipeline (DESIGN.md, layer 9): a conversion is an ordered list of named passes
// run by one driver over one context. The tool, the Python module, the tests and the benches all
// go through it, so they convert alike (byte for byte).
//
//   read -> boundary -> prepare (fold/infer to a fixed point) -> convert (plan + tables, folding
//   when a rule needs a constant) -> finish -> optimize -> validate -> write
//
// Frameworks and conversion extensions add their passes to these stages (Framework::
// contribute_passes); `amanda convert --print-pipeline` lists what a conversion will run.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amanda/mapping/engine.h"
#include "amanda/pipeline/framework.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"

namespace amanda::pipeline {

enum class Stage { Boundary, Prepare, Convert, Finish, Optimize, Validate };
std::string_view stage_name(Stage s);

struct ConvertRequest {
  std::string to;                    // target namespace ("onnx/11" or "amanda/onnx/11"); "" = from the output
  std::string output;                // output path ("" = none): chooses the target when `to` is empty
  Options options;                   // framework options (Framework::options)
  std::vector<std::string> tags;     // optional rules to use
  bool keep_unmapped = false;
  std::string explain;               // an op name: why each candidate rule did or did not match
  bool record_provenance = false;    // --check: which rule made each op
  bool keep_source = false;          // --check: a copy of the graph before conversion
  std::vector<std::string> optimize; // rewrite passes to run after conversion (amanda optimize's names)
};

// What a conversion is about, for frameworks deciding which passes to contribute.
struct ConversionInfo {
  std::string source_ns;  // the graph's root namespace when the pipeline starts
  std::string target_ns;  // resolved target namespace
  const ConvertRequest* request = nullptr;
};

struct PassContext {
  PassContext(text::Document d, schema::Registry& r, mapping::TableSet& t) : doc(std::move(d)), registry(r), tables(t) {}
  text::Document doc;
  schema::Registry& registry;
  mapping::TableSet& tables;
  ConvertRequest request;
  ConversionInfo info;
  Diagnostics diags;
  mapping::Report report;
  std::map<uint32_t, std::string> provenance;  // op id -> "rule 'x' of A -> B (file:line)"
  std::optional<text::Document> source;        // keep_source: the graph before conversion
  std::vector<std::pair<std::string, double>> timings;  // pass name -> seconds
  bool failed = false;                         // a pass refused the conversion (report and diags say why)
  std::string failure;                         // one line: what failed
};

struct Pass {
  std::string name;   // "onnx.infer", "tensorflow.onnx-boundary", "convert"
  Stage stage = Stage::Prepare;
  std::string doc;    // one line for --print-pipeline
  std::function<void(PassContext&)> run;
};

class PassList {
 public:
  void add(Pass p) { passes_.push_back(std::move(p)); }
  // Passes in stage order; within a stage, in the order they were added (deterministic).
  std::vector<const Pass*> ordered() const;
  const std::vector<Pass>& all() const { return passes_; }

 private:
  std::vector<Pass> passes_;
};

// Rewrite passes that a conversion can run by name after the tables (ConvertRequest::optimize,
// `amanda optimize`): the passes layer registers them.
struct OptimizePass {
  std::string name;
  std::string doc;
  std::function<void(PassContext&)> run;
};
void register_optimize_pass(OptimizePass p);
const OptimizePass* find_optimize_pass(std::string_view name);
const std::vector<OptimizePass>& all_optimize_passes();

// The passes of a conversion of `ctx.doc` under `ctx.request` (resolves ctx.info first).
PassList conversion_passes(PassContext& ctx);
// Runs them in order; stops at the first that sets ctx.failed. Returns !ctx.failed.
bool run(const PassList& passes, PassContext& ctx);
// One line per pass: "stage  name  doc".
std::string describe(const PassList& passes);

// The shared defaults: the namespaces (every framework's providers, namespaces/,
// $AMANDA_SCHEMA_PATH), the tables (tables/, $AMANDA_TABLE_PATH, then `extra`).
std::unique_ptr<schema::Registry> default_registry();
void add_default_tables(mapping::TableSet& set, const std::vector<std::string>& extra = {});
// "onnx/11" -> "amanda/onnx/11"; a name that already starts with "amanda/" is kept.
std::string full_namespace(const std::string& ns);

// Types a graph with the inference of the framework whose namespace it is in (nothing for a
// namespace no framework provides): what rewrite passes need between rounds.
void infer_types(ir::Graph& g, bool propagate_values, schema::Registry* registry = nullptr);

// Converts ctx.doc under ctx.request: conversion_passes + run. Returns !ctx.failed.
bool convert(PassContext& ctx);

}  // namespace amanda::pipeline
