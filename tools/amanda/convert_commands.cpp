// `amanda convert` (mapping tables chained by the planner) and `amanda table check|list|plan|functions`.
#include "amanda/core/builder.h"
#include "amanda/interp/fold.h"
#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "amanda/pipeline/pipeline.h"
#include "amanda/ir/verify.h"
#include "amanda/mapping/engine.h"
#include "amanda/schema/registry.h"
#include "amanda/support/progress.h"
#include "check.h"
#include "commands.h"
#include "kept.h"

namespace amanda::tool {

namespace {

using io::full_namespace;

void load_tables(mapping::TableSet& set, const std::vector<std::string>& extra) { io::add_default_tables(set, extra); }

struct ConvertOpts {
  std::string in, out, to, report = "text", explain, format;
  int opset = 0;  // --opset N: --to onnx/N
  std::vector<std::string> tables, tags;
  std::vector<std::string> outputs;  // TensorFlow sources: the tensors that become ONNX graph outputs
  bool keep_unmapped = false, external_data = false, quiet = false;
  std::vector<std::string> input_shapes;
  std::vector<std::string> input_types;
  std::string reader = "auto";
  std::vector<std::string> options;   // --option KEY=VALUE: framework options
  std::string init_net;               // --init-net FILE: --option init_net=FILE
  std::vector<std::string> optimize;  // --optimize passes after the conversion
  bool print_pipeline = false;
  bool check = false;  // --check: run both sides with the interpreter and compare (check.cpp)
  CheckOptions check_opts;
};

int run_convert(const ConvertOpts& o) {
  if (o.quiet) set_progress_sink(nullptr);
  schema::Registry& reg = kept_until_exit(tool_registry());
  mapping::TableSet& tables = kept_until_exit(std::make_unique<mapping::TableSet>());
  load_tables(tables, o.tables);
  Diagnostics diags;
  auto t0 = std::chrono::steady_clock::now();
  pipeline::ConvertRequest request;
  request.to = o.to;
  if (o.opset) {
    // (what torch.onnx.export's opset_version says: a PyTorch source uses the ops opset N offers,
    // the tables' layers over opset 13; docs/pytorch.md)
    // The version N of the framework that writes the output (its versions() end in "/N": ONNX's
    // opsets), asked of the registry rather than spelled here.
    auto& frameworks = pipeline::FrameworkRegistry::instance();
    const pipeline::Framework* writer = frameworks.default_target();
    int best = 0;
    for (const auto& f : frameworks.frameworks()) {
      auto prefixes = f->namespace_prefixes();
      int score = o.out.empty() || prefixes.empty() ? 0 : f->detect_write(o.out, prefixes.front());
      if (score > best) writer = f.get(), best = score;
    }
    std::string want;
    if (writer)
      for (const auto& v : writer->versions())
        if (v.ends_with("/" + std::to_string(o.opset))) want = v;
    if (want.empty()) {
      std::cerr << "amanda: error: --opset " << o.opset << ": the output's format has no such version\n";
      return 2;
    }
    if (!o.to.empty() && o.to != want && o.to != want.substr(want.find('/') + 1)) {
      std::cerr << "amanda: error: --opset " << o.opset << " and --to " << o.to << " disagree\n";
      return 2;
    }
    request.to = want;
  }
  request.output = o.out;
  request.tags = o.tags;
  request.keep_unmapped = o.keep_unmapped;
  request.explain = o.explain;
  request.optimize = o.optimize;
  if (!o.input_shapes.empty()) request.options.set("input_shape", o.input_shapes);
  if (!o.input_types.empty()) request.options.set("input_type", o.input_types);
  request.options.set("reader", {o.reader});
  if (!o.outputs.empty()) request.options.set("outputs", o.outputs);
  if (!o.init_net.empty()) request.options.set("init_net", {o.init_net});
  for (const auto& kv : o.options) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "amanda: error: --option '" << kv << "': KEY=VALUE\n";
      return kUsage;
    }
    request.options.add(kv.substr(0, eq), kv.substr(eq + 1));
  }
  const pipeline::Framework* source_fw = pipeline::FrameworkRegistry::instance().for_reading(io::probe(o.in));
  // --check: a source whose framework has a runtime of its own (TorchScript: libtorch) runs there;
  // any other runs in the reference interpreter from a copy kept before conversion.
  const bool own_runtime = source_fw && source_fw->has_runtime();
  request.record_provenance = o.check;
  request.keep_source = o.check && !own_runtime;
  pipeline::PassContext& ctx = kept_until_exit(std::make_unique<pipeline::PassContext>(
      io::read_any(o.in, diags, request.options, &reg), reg, tables));
  ctx.request = request;
  for (const auto& d : diags.items()) std::cerr << d.str() << '\n';  // the reader's warnings (a lenient TF.js manifest)
  auto t1 = std::chrono::steady_clock::now();
  pipeline::PassList passes = pipeline::conversion_passes(ctx);
  if (o.print_pipeline) {
    std::cout << pipeline::describe(passes);
    return kOk;
  }
  pipeline::run(passes, ctx);
  for (const auto& d : ctx.diags.items()) std::cerr << d.str() << '\n';
  if (ctx.failed && ctx.report.ops == 0 && ctx.report.tables.empty() && ctx.report.errors.empty()) {
    // A structurally broken input: refused before any rule ran.
    std::cerr << "amanda: " << o.in << ": " << ctx.failure << "; no output written\n";
    return kInvalid;
  }
  mapping::Report& rep = ctx.report;
  auto t2 = std::chrono::steady_clock::now();
  bool ok = !ctx.failed || (o.keep_unmapped && rep.errors.empty());
  if (o.report == "json") std::cout << rep.json();
  else if (!o.quiet || !rep.ok()) std::cout << rep.text();
  if (!ok) {
    std::cerr << "amanda: conversion failed; no output written\n";
    return kInvalid;
  }
  if (!o.explain.empty() && rep.explain.empty()) std::cerr << "amanda: note: no op is named '" << o.explain << "'\n";
  if (o.check) {
    int rc;
    if (ctx.source) {
      rc = check_conversion(*ctx.source, ctx.doc, ctx.provenance, o.check_opts);
    } else {
      rc = check_with_runtime(*source_fw, o.in, ctx.doc, o.check_opts);
    }
    if (rc != kOk) {
      if (!o.out.empty()) std::cerr << "amanda: the check " << (rc == 2 ? "could not run" : "failed") << "; no output written\n";
      return rc == 2 ? kUsage : kInvalid;
    }
  }
  if (o.out.empty()) return kOk;
  auto t_write = std::chrono::steady_clock::now();  // (after --check, which has its own lines)
  io::Options wo = request.options;
  if (o.external_data) wo.set("external_data", {"1"});
  if (!o.format.empty()) wo.set("format", {o.format});
  io::write_document(ctx.doc, o.out, wo);
  auto t3 = std::chrono::steady_clock::now();
  if (o.report != "json" && !o.quiet)
    std::cout << fmt::format("wrote {} (read {:.3f} s, convert {:.3f} s, write {:.3f} s)\n", o.out,
                             std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
                             std::chrono::duration<double>(t3 - t_write).count());
  return kOk;
}

int run_table_check(const std::vector<std::string>& files) {
  auto reg = tool_registry();
  int rc = kOk;
  for (const auto& f : files) {
    try {
      auto t = mapping::read_table(f);
      Diagnostics d;
      mapping::check_table(*t, *reg, d);
      if (t->reversible) {
        auto r = mapping::reverse_table(*t);
        mapping::check_table(*r, *reg, d);
      }
      for (const auto& x : d.items()) std::cerr << x.str() << '\n';
      if (d.has_errors()) {
        rc = kInvalid;
        std::cout << f << ": " << d.error_count() << " problems\n";
      } else {
        std::cout << f << ": ok (" << t->src << " -> " << t->dst << ", " << t->rules.size() << " rules"
                  << (t->reversible ? ", reversible" : "") << ")\n";
      }
    } catch (const ParseError& e) {
      std::cerr << e.what() << '\n';
      rc = kInvalid;
    } catch (const Error& e) {
      std::cerr << f << ": " << e.what() << '\n';
      rc = kInvalid;
    }
  }
  return rc;
}

}  // namespace

void register_convert_commands(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ConvertOpts>();
  auto* c = app.add_subcommand("convert",
                               "Convert a graph to another namespace with mapping tables (the planner picks the chain, e.g. "
                               "amanda/onnx/13 -> 12 -> 11). Ops no rule maps are reported all at once; then nothing is written "
                               "and the exit code is 1");
  c->add_option("IN", o->in, "Input document (ONNX, TorchScript .pt, YAML or JSON)")->required();
  c->add_option("--input-shape", o->input_shapes,
                "TorchScript input: the shape of forward()'s tensor inputs, one per input, e.g. --input-shape 1,3,224,224 "
                "(shapes are then propagated and shape arithmetic folded, as torch.onnx.export does)");
  c->add_option("--input-type", o->input_types,
                "TorchScript input: element type of forward()'s tensor inputs (default float32): once for all, or one per input "
                "in order (--input-type float32 --input-type int64)");
  c->add_option("--reader", o->reader,
                "TorchScript input: 'script' reads the archive without libtorch (fast), 'libtorch' uses the PyTorch plugin, "
                "'auto' (default) tries the first and falls back to the second for modules it does not handle")
      ->check(CLI::IsMember({"auto", "script", "libtorch"}));
  c->add_option("-o,--output", o->out, "Output document (.onnx, .yaml, .json); none: only report");
  c->add_option("--to", o->to, "Target namespace, e.g. amanda/onnx/11 (the 'amanda/' may be left out); default for a .onnx output: "
                "the input's ONNX opset, or the first ONNX opset (from 13) the tables reach");
  c->add_option("--opset", o->opset, "The ONNX opset to write (the same as --to onnx/N); from PyTorch, the ops that opset offers (Trilu at 14, "
                "GridSample at 16, LayerNormalization at 17)")
      ->check(CLI::Range(1, 17));
  c->add_option("--outputs", o->outputs,
                "TensorFlow input: the tensors that become the ONNX graph's outputs (node or node:k, comma-separated); default: "
                "the TF.js signature's outputs, else every output of an op nobody reads")
      ->delimiter(',');
  c->add_option("--tables", o->tables, "More table files or folders (besides the shipped tables/ and $AMANDA_TABLE_PATH)");
  c->add_option("--tags", o->tags, "Use the optional rules with these tags")->delimiter(',');
  c->add_option("--init-net", o->init_net, "A Caffe2 predict net's init net (default: init_net.pb beside it); the same as --option init_net=FILE");
  c->add_option("--option", o->options,
                "A framework option KEY=VALUE, repeatable (`amanda formats` lists each framework's keys), e.g. --option threshold=4096");
  c->add_option("--optimize", o->optimize, "Rewrite passes to run after the conversion (`amanda optimize --list`)")->delimiter(',');
  c->add_flag("--print-pipeline", o->print_pipeline, "Print the passes this conversion would run, in order, and stop");
  c->add_flag("--keep-unmapped", o->keep_unmapped, "Keep ops no rule maps as they are and write the output anyway");
  c->add_option("--report", o->report, "Report format: text or json")->check(CLI::IsMember({"text", "json"}));
  c->add_option("--explain", o->explain, "Tell why each candidate rule did or did not match the op of this name");
  c->add_option("--format", o->format, "Text output format: yaml or json (default: by extension)")->check(CLI::IsMember({"yaml", "json"}));
  c->add_flag("--external-data", o->external_data, "ONNX output: big tensors in OUT.data");
  c->add_flag("-q,--quiet", o->quiet, "Print the report only when something is wrong");
  c->add_flag("--check", o->check,
              "Run the source and the converted graph with the reference interpreter on the same inputs and compare every "
              "output; on a mismatch name the first diverging op and the rule that made it (ONNX sources). A TorchScript source "
              "runs in libtorch (the PyTorch plugin, in a child process) and its outputs are compared");
  c->add_option("--rtol", o->check_opts.rtol, "--check: relative tolerance (default 1e-4)");
  c->add_option("--atol", o->check_opts.atol, "--check: absolute tolerance (default 1e-5)");
  c->add_option("--seed", o->check_opts.seed, "--check: seed of the random inputs (default 0)");
  c->add_option("--check-input", o->check_opts.inputs, "--check: NAME=FILE.npy (or .pb) instead of a random input, repeatable");
  c->callback([o, &exit_code] {
    try {
      exit_code = run_convert(*o);
    } catch (const UsageError& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kUsage;
    } catch (const ParseError& e) {
      std::cerr << e.what() << '\n';
      exit_code = kInvalid;
    } catch (const std::exception& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kInvalid;
    }
  });

  auto* table = app.add_subcommand("table", "Mapping tables: check, list, plan, coverage, functions");
  table->require_subcommand(1);
  auto files = std::make_shared<std::vector<std::string>>();
  auto* check = table->add_subcommand("check", "Check table files against both namespaces' schemas (exit 1 on a problem)");
  check->add_option("FILE", *files, "Table files")->required();
  check->callback([files, &exit_code] { exit_code = run_table_check(*files); });

  auto dirs = std::make_shared<std::vector<std::string>>();
  auto* list = table->add_subcommand("list", "List the known tables");
  list->add_option("--tables", *dirs, "More table files or folders");
  list->callback([dirs, &exit_code] {
    try {
      mapping::TableSet set;
      load_tables(set, *dirs);
      for (const auto& t : set.tables())
        std::cout << fmt::format("{:<22} -> {:<22} {:>4} rules{}  {}\n", t->src, t->dst, t->rules.size(), t->reversible ? " (reversible)" : "", t->file);
      exit_code = kOk;
    } catch (const std::exception& e) {
      std::cerr << e.what() << '\n';
      exit_code = kInvalid;
    }
  });

  auto ends = std::make_shared<std::pair<std::string, std::string>>();
  auto* plan = table->add_subcommand("plan", "Show the chain of tables from one namespace to another");
  plan->add_option("FROM", ends->first, "Source namespace")->required();
  plan->add_option("TO", ends->second, "Target namespace")->required();
  plan->add_option("--tables", *dirs, "More table files or folders");
  plan->callback([ends, dirs, &exit_code] {
    try {
      mapping::TableSet set;
      load_tables(set, *dirs);
      for (const mapping::Table* t : set.plan(full_namespace(ends->first), full_namespace(ends->second)))
        std::cout << t->src << " -> " << t->dst << "  (" << t->file << ")\n";
      exit_code = kOk;
    } catch (const std::exception& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kInvalid;
    }
  });

  auto cov = std::make_shared<std::pair<std::string, std::string>>();
  auto matrix = std::make_shared<bool>(false);
  auto* coverage = table->add_subcommand("coverage", "Per op: converted, conditional (and when), function body, impossible (why), no rule");
  coverage->add_option("--from", cov->first, "Source namespace (onnx/13)");
  coverage->add_option("--to", cov->second, "Target namespace (onnx/9)");
  coverage->add_flag("--matrix", *matrix, "Every step between neighbouring versions of a framework (ONNX: opsets 1..17) both ways, as "
                                          "a Markdown table (docs/opset-conversion.md)");
  auto matrix_fw = std::make_shared<std::string>("onnx");
  coverage->add_option("--framework", *matrix_fw, "--matrix: the framework whose versions it shows (default onnx)");
  coverage->add_option("--tables", *dirs, "More table files or folders");
  auto vocab = std::make_shared<std::vector<std::string>>();
  coverage->add_option("--vocabulary", *vocab,
                       "Files listing ops (one a line; namespaces/tensorflow/vocabulary/): covered / refused / missing against each");
  coverage->callback([cov, matrix, matrix_fw, dirs, vocab, &exit_code] {
    if (!*matrix && (cov->first.empty() || cov->second.empty())) {
      std::cerr << "amanda: error: table coverage needs --from and --to, or --matrix\n";
      exit_code = kUsage;
      return;
    }
    try {
      mapping::TableSet set;
      load_tables(set, *dirs);
      if (!vocab->empty()) {
        exit_code = run_vocabulary_coverage(full_namespace(cov->first), full_namespace(cov->second), *vocab, set);
        return;
      }
      exit_code = run_table_coverage(*matrix ? "" : full_namespace(cov->first), *matrix ? "" : full_namespace(cov->second), *matrix, set,
                                     *matrix_fw);
    } catch (const std::exception& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kInvalid;
    }
  });

  auto* fns = table->add_subcommand("functions", "List the functions of the table expression language");
  fns->callback([&exit_code] {
    for (const auto& f : mapping::functions())
      std::cout << fmt::format("{:<48} {}{}\n", f.signature, f.doc, f.invertible ? "  [invertible]" : "");
    exit_code = kOk;
  });
}

}  // namespace amanda::tool
