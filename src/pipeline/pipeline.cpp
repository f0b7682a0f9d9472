#include "amanda/pipeline/pipeline.h"
#include "amanda/pipeline/fold.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "amanda/core/builder.h"
#include "amanda/core/namespace.h"
#include "amanda/interp/fold.h"
#include "amanda/ir/verify.h"

namespace amanda::pipeline {

std::string_view stage_name(Stage s) {
  switch (s) {
    case Stage::Boundary: return "boundary";
    case Stage::Prepare: return "prepare";
    case Stage::Convert: return "convert";
    case Stage::Finish: return "finish";
    case Stage::Optimize: return "optimize";
    case Stage::Validate: return "validate";
  }
  return "?";
}

std::vector<const Pass*> PassList::ordered() const {
  std::vector<const Pass*> v;
  for (const auto& p : passes_) v.push_back(&p);
  std::stable_sort(v.begin(), v.end(), [](const Pass* a, const Pass* b) { return a->stage < b->stage; });
  return v;
}

std::string full_namespace(const std::string& ns) { return ns.starts_with("amanda/") ? ns : "amanda/" + ns; }

std::unique_ptr<schema::Registry> default_registry() {
  FrameworkRegistry& frameworks = FrameworkRegistry::instance();
  auto r = schema::make_default_registry();
  for (const auto& f : frameworks.frameworks()) f->add_namespaces(*r);
  r->add_provider(core::make_core_namespace_provider());
  return r;
}

void add_default_tables(mapping::TableSet& set, const std::vector<std::string>& extra) {
  // The shipped tables are read when a plan needs them (a conversion between ONNX opsets does not
  // pay for the PyTorch tables); tables a user names are read at once, so their errors show now.
  set.add_folder(mapping::shipped_table_dir(), /*lazy=*/true);
  if (const char* p = std::getenv("AMANDA_TABLE_PATH")) {
    std::string s = p;
    size_t start = 0;
    while (start <= s.size()) {
      size_t e = s.find(':', start);
      if (e == std::string::npos) e = s.size();
      if (e > start) set.add_folder(s.substr(start, e - start));
      start = e + 1;
    }
  }
  for (const auto& d : extra) {
    std::error_code ec;
    if (std::filesystem::is_directory(d, ec)) set.add_folder(d);
    else set.add(mapping::read_table(d));
  }
}

namespace {

std::string root_ns(const ir::Graph& g) { return std::string(g.type_str(g.root())); }

const Framework* framework_of(const ir::Graph& g) { return FrameworkRegistry::instance().for_namespace(g.type_str(g.root())); }

// The namespace a conversion aims at: --to; else what the output's writer asks for (the first the
// planner reaches), else the default target framework's.
std::string resolve_target(PassContext& ctx) {
  const ConvertRequest& r = ctx.request;
  FrameworkRegistry& reg = FrameworkRegistry::instance();
  const std::string src = ctx.info.source_ns;
  // --to onnx, --to caffe2: a framework's name stands for the namespaces it would aim at.
  const Framework* named = r.to.find('/') == std::string::npos ? reg.find(r.to) : nullptr;
  if (!r.to.empty() && !named) return full_namespace(r.to);
  // The framework that would write the output once the graph is in its namespace (a TF.js
  // model.json from an ONNX source is a TensorFlow output, not an ONNX one).
  const Framework* writer = named ? named : reg.default_target();
  if (!named && !r.output.empty()) {
    writer = nullptr;
    int best = 0;
    for (const auto& f : reg.frameworks()) {
      auto prefixes = f->namespace_prefixes();
      int s = f->detect_write(r.output, prefixes.empty() ? std::string_view(src) : std::string_view(prefixes.front()));
      if (s > best) writer = f.get(), best = s;
    }
  }
  std::vector<std::string> candidates;
  if (writer) candidates = writer->default_targets(r.output, src);
  if (candidates.empty() && named)
    throw UsageError("--to " + r.to + ": name a namespace of it (`amanda schema list amanda/" + r.to + "`)");
  if (candidates.empty())
    throw UsageError("--to is needed: the output '" + r.output + "' does not say which namespace to convert to");
  for (const auto& c : candidates) {
    if (c == src) return c;
    try {
      ctx.tables.plan(src, c, ctx.doc.graph);
      return c;
    } catch (const Error&) {
    }
  }
  return candidates.front();  // (none is reachable: the conversion reports why)
}

InferRequest infer_request(PassContext& ctx, bool propagate) {
  InferRequest r;
  r.propagate_values = propagate;
  r.registry = &ctx.registry;
  return r;
}

// Folds what no graph input changes into constants, typing the graph between rounds (more shapes
// are known after a round, so more Shape ops fold), until nothing more folds. Returns the count.
// A round folds one link of a chain of shapes (a Reshape to a computed shape, whose output's Shape
// feeds the next one): swin_t's twelve blocks need 15 rounds. A round computes only the constant
// ops (interp::fold_constants), so the bound is against cycles of no progress, not for time.
size_t fold_to_fixed_point(PassContext& ctx, bool propagate) {
  size_t folded = 0;
  for (int round = 0; round < 64; ++round) {
    if (const Framework* f = framework_of(ctx.doc.graph)) f->prepare(ctx.doc.graph, infer_request(ctx, propagate));
    interp::FoldResult r = interp::fold_constants(ctx.doc.graph);
    if (!r.folded) break;
    folded += r.folded;
    if (std::getenv("AMANDA_FOLD_DEBUG")) fmt::print(stderr, "fold round {}: {} folded, {} erased\n", round, r.folded, r.erased);
  }
  return folded;
}

mapping::ConvertOptions convert_options(PassContext& ctx, std::map<uint32_t, std::string>* provenance) {
  mapping::ConvertOptions co;
  co.tags = ctx.request.tags;
  co.keep_unmapped = ctx.request.keep_unmapped;
  co.explain = ctx.request.explain;
  FrameworkRegistry& reg = FrameworkRegistry::instance();
  co.expand = [&reg](ir::Graph& g, ir::OpId op, const std::string& ns) -> std::string {
    const Framework* f = reg.for_namespace(ns);
    return f ? f->expand(g, op, ns) : "no framework provides " + ns;
  };
  co.lowers_refused = [&reg](const std::string& type, const std::string& ns) {
    const Framework* f = reg.for_namespace(ns);
    return f && f->lowers_refused(type, ns);
  };
  schema::Registry* types = &ctx.registry;
  co.between_steps = [&reg, types, from = ctx.info.source_ns, to = ctx.info.target_ns](ir::Graph& g) {  // the ops a step made get types
    InferRequest r;
    r.registry = types;
    const std::string ns(g.type_str(g.root()));
    if (const Framework* f = reg.for_namespace(ns)) f->prepare(g, r);
    for (const auto& e : reg.extensions())
      if (e->applies(from, to)) e->between_steps(g, ns);
  };
  co.after_steps = [&reg](ir::Graph& g) {
    if (const Framework* f = reg.for_namespace(g.type_str(g.root()))) f->arrive(g);
  };
  if (provenance)
    co.on_rewrite = [provenance](ir::OpId op, const std::string& rule) {
      std::string& s = (*provenance)[op.value];
      s += (s.empty() ? "" : ", then ") + rule;
    };
  return co;
}

void run_tables(PassContext& ctx) {
  const std::string& to = ctx.info.target_ns;
  const Framework* src = framework_of(ctx.doc.graph);
  const Framework* dst = FrameworkRegistry::instance().for_namespace(to);
  // A model refused because a value its rules need is computed at run time (Pad's pads, Slice's
  // bounds, shapes from Shape -> Gather -> Concat) converts once the values that no graph input
  // changes are folded into constants: keep a copy to fold and try again (the source of --check
  // stays as it was read).
  // (Within the source framework, and into a framework that asks for it: ONNX -> PyTorch, and
  // TF / TF.js -> ONNX -> PyTorch, where the folding happens once the chain's first step has made
  // the graph ONNX: interp::fold_constants folds graphs of the ONNX namespace only.)
  bool may_retry = !ctx.request.keep_unmapped && src &&
                   ((src->retry_after_folding() && src == dst) || (dst && dst->converts_after_folding()));
  std::optional<text::Document> before;
  if (may_retry) before.emplace(text::copy_document(ctx.doc));
  ctx.report = mapping::convert(ctx.doc.graph, to, ctx.tables, ctx.registry,
                                convert_options(ctx, ctx.request.record_provenance ? &ctx.provenance : nullptr));
  if (ctx.report.ok() || !before) return;
  PassContext again(std::move(*before), ctx.registry, ctx.tables);
  again.request = ctx.request;
  again.info = ctx.info;
  size_t folded = fold_to_fixed_point(again, true);
  const size_t steps = ctx.tables.plan(ctx.info.source_ns, to, again.doc.graph).size();
  // Into a framework that converts after folding (PyTorch), the retry also uses the rules tagged
  // `run_time_lists`: what folding leaves computed when the model runs (a shape, axes, bounds or
  // scales fed as a tensor) is read as a list then (`tolist()`). Only in the retry: what folds is
  // written as constants first, so a model that folds keeps its literal lists.
  const bool run_time_lists = dst && dst->converts_after_folding();
  if (!folded && steps < 2 && !run_time_lists) return;  // (with more steps, one may write a function body that folds)
  std::map<uint32_t, std::string> provenance;
  mapping::ConvertOptions co = convert_options(again, ctx.request.record_provenance ? &provenance : nullptr);
  if (run_time_lists) co.tags.push_back("run_time_lists");
  // A step may write an op as its function body (ONNX 17 -> 16: LayerNormalization's Shape, Size,
  // ConstantOfShape, Reshape): what of it no graph input changes folds before the next step too.
  co.between_steps = [&again, &folded, typed = co.between_steps](ir::Graph& g) {
    if (typed) typed(g);
    if (&g == &again.doc.graph) folded += fold_to_fixed_point(again, true);
  };
  mapping::Report rep = mapping::convert(again.doc.graph, to, ctx.tables, ctx.registry, co);
  if (!folded && !run_time_lists) return;  // (the same conversion again: the first report)
  if (!rep.ok()) {
    // Refused again: what is left after folding (and the rules reading lists at run time) is
    // what stops the conversion (the first attempt's report also lists the ops that only waited
    // for folded values).
    rep.explain.insert(rep.explain.begin(), fmt::format("note: refused after folding {} values that no graph input changes into constants{} "
                                                        "(the ops listed are what that did not resolve)",
                                                        folded, run_time_lists ? " and reading the lists left at run time" : ""));
    ctx.report = std::move(rep);
    return;
  }
  rep.explain.insert(rep.explain.begin(), fmt::format("note: converted after folding {} values that no graph input changes into "
                                                      "constants (the first attempt refused ops whose inputs are computed at run time){}",
                                                      folded, run_time_lists ? "; lists still computed at run time are read then (tolist)" : ""));
  ctx.report = std::move(rep);
  ctx.doc = std::move(again.doc);
  ctx.provenance = std::move(provenance);
}

}  // namespace

PassList conversion_passes(PassContext& ctx) {
  ctx.info.source_ns = root_ns(ctx.doc.graph);
  ctx.info.request = &ctx.request;
  ctx.info.target_ns = resolve_target(ctx);
  const ConversionInfo& info = ctx.info;
  FrameworkRegistry& reg = FrameworkRegistry::instance();
  const Framework* source = reg.for_namespace(info.source_ns);
  const Framework* target = reg.for_namespace(info.target_ns);
  const bool to_core = info.target_ns == core::kNamespace;

  PassList passes;
  passes.add({"verify", Stage::Boundary, "refuse a structurally broken graph (a data-edge cycle, duplicate names)",
              [](PassContext& c) {
                Diagnostics problems;
                if (ir::verify(c.doc.graph, problems)) return;
                for (const auto& d : problems.items()) c.diags.add(d);
                c.failed = true;
                c.failure = fmt::format("not converted: {} structural problem{}", problems.error_count(),
                                        problems.error_count() == 1 ? "" : "s");
              }});
  if (ctx.request.keep_source)
    passes.add({"keep-source", Stage::Boundary, "keep a copy of the graph as read (convert --check runs it)",
                [](PassContext& c) { c.source.emplace(text::copy_document(c.doc)); }});
  if (source)
    passes.add({std::string(source->name()) + ".prepare", Stage::Prepare,
                "type the graph (what rules that read an element type or a shape need)", [source, to_core](PassContext& c) {
                  // The core table needs every shape it broadcasts to or reshapes to: carry the values of
                  // the small tensors computed in the graph too.
                  source->prepare(c.doc.graph, infer_request(c, to_core));
                }});
  // Frameworks and the extensions between two of them add their boundary, preparation and finish.
  if (source) source->contribute_passes(passes, info);
  if (target && target != source) target->contribute_passes(passes, info);
  for (const auto& e : reg.extensions())
    if (e->applies(info.source_ns, info.target_ns)) e->contribute_passes(passes, info);
  if (to_core)
    passes.add({"core.fold", Stage::Prepare, "fold computed shapes and bounds into constants (the core needs every shape)",
                [](PassContext& c) { fold_to_fixed_point(c, true); }});
  passes.add({"convert", Stage::Convert,
              "plan the chain of tables to the target and apply it; fold values no input changes and retry when a rule "
              "needs a constant",
              [](PassContext& c) {
                run_tables(c);
                if (!c.report.ok() && !c.request.keep_unmapped) {
                  c.failed = true;
                  c.failure = "conversion failed";
                }
              }});
  if (to_core)
    passes.add({"core.typecheck", Stage::Validate,
                "type every op by its core rule (refuses an implicit broadcast or a wrong element type a table left)",
                [](PassContext& c) {
                  Diagnostics typing;
                  if (core::infer_types(c.doc.graph, typing)) return;
                  for (const auto& d : typing.items())
                    c.report.errors.push_back("result does not type-check: " + d.where + ": " + d.message);
                  c.failed = true;
                  c.failure = "conversion failed";
                }});
  for (const auto& name : ctx.request.optimize) {
    const OptimizePass* p = find_optimize_pass(name);
    if (!p) throw UsageError("unknown optimization pass '" + name + "'");
    passes.add({"optimize." + name, Stage::Optimize, p->doc, p->run});
  }
  return passes;
}

bool run(const PassList& passes, PassContext& ctx) {
  for (const Pass* p : passes.ordered()) {
    auto t0 = std::chrono::steady_clock::now();
    p->run(ctx);
    ctx.timings.emplace_back(p->name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (ctx.failed) return false;
  }
  return true;
}

std::string describe(const PassList& passes) {
  std::string s;
  for (const Pass* p : passes.ordered()) s += fmt::format("{:<9} {:<34} {}\n", stage_name(p->stage), p->name, p->doc);
  return s;
}

bool convert(PassContext& ctx) { return run(conversion_passes(ctx), ctx); }

void infer_types(ir::Graph& g, bool propagate_values, schema::Registry* registry) {
  const Framework* f = FrameworkRegistry::instance().for_namespace(g.type_str(g.root()));
  if (!f) return;
  InferRequest r;
  r.propagate_values = propagate_values;
  r.registry = registry;
  f->infer_types(g, r);
}

// ---- optimization passes by name (the rewrite passes register here)

void register_rewrite_passes(std::vector<OptimizePass>& out);  // rewrite_passes.cpp

namespace {
std::vector<OptimizePass>& optimize_passes() {
  static std::vector<OptimizePass> v = [] {
    std::vector<OptimizePass> r;
    register_rewrite_passes(r);  // the passes layer's (amanda/passes/registry.h)
    return r;
  }();
  return v;
}
}  // namespace

void register_optimize_pass(OptimizePass p) { optimize_passes().push_back(std::move(p)); }
const OptimizePass* find_optimize_pass(std::string_view name) {
  for (const auto& p : optimize_passes())
    if (p.name == name) return &p;
  return nullptr;
}
const std::vector<OptimizePass>& all_optimize_passes() { return optimize_passes(); }

void fold_and_type(PassContext& ctx) {
  fold_to_fixed_point(ctx, true);
  if (const Framework* f = framework_of(ctx.doc.graph)) f->prepare(ctx.doc.graph, infer_request(ctx, false));
}

}  // namespace amanda::pipeline
