// `amanda convert` (mapping tables chained by the planner) and `amanda table check|list|plan|functions`.
#include "amanda/core/builder.h"
#include "amanda/interp/fold.h"
#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "amanda/frameworks/onnx/functions.h"
#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/onnx_boundary.h"
#include "amanda/frameworks/tensorflow/tfjs.h"
#include "amanda/frameworks/torch/torchscript.h"
#include "amanda/ir/verify.h"
#include "amanda/mapping/engine.h"
#include "amanda/schema/registry.h"
#include "amanda/support/progress.h"
#include "check.h"
#include "amanda/passes/registry.h"
#include "commands.h"

namespace amanda::tool {

namespace {

using io::full_namespace;

void load_tables(mapping::TableSet& set, const std::vector<std::string>& extra) { io::add_default_tables(set, extra); }

struct ConvertOpts {
  std::string in, out, to, report = "text", explain, format;
  std::vector<std::string> tables, tags;
  std::vector<std::string> outputs;  // TensorFlow sources: the tensors that become ONNX graph outputs
  bool keep_unmapped = false, external_data = false, quiet = false;
  std::vector<std::string> input_shapes;
  std::vector<std::string> input_types;
  std::string reader = "auto";
  bool check = false;  // --check: run both sides with the interpreter and compare (check.cpp)
  std::string optimize;  // --optimize: rewrite passes after the conversion ("default" or names)
  CheckOptions check_opts;
};

// The objects of one conversion (the namespaces, the tables, the graph: tens of MB of small
// allocations) are never freed: the process ends right after, and freeing them would cost more
// than a tenth of a small model's conversion. They stay reachable from here, so leak checkers
// do not count them (what LLVM's tools do with -disable-free).
template <class T>
T& kept_until_exit(std::unique_ptr<T> p) {
  static auto* kept = new std::vector<std::shared_ptr<void>>();
  std::shared_ptr<T> s(std::move(p));
  kept->push_back(s);
  return *s;
}

int run_convert(const ConvertOpts& o) {
  if (o.quiet) set_progress_sink(nullptr);
  schema::Registry& reg_ref = kept_until_exit(tool_registry());
  schema::Registry* reg = &reg_ref;
  mapping::TableSet& tables = kept_until_exit(std::make_unique<mapping::TableSet>());
  load_tables(tables, o.tables);
  Diagnostics diags;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<text::Document>& read = kept_until_exit(std::make_unique<std::optional<text::Document>>());
  if (torch_frontend::is_torchscript_path(o.in)) {
    torch_frontend::ImportOptions io;
    if (o.input_types.size() == 1) io.input_dtype = o.input_types[0];
    else io.input_dtypes = o.input_types;
    io.reader = o.reader;
    for (const auto& s : o.input_shapes) {
      std::vector<int64_t> dims;
      if (s.empty() || s == "[]") {  // a 0-d tensor
        io.input_shapes.push_back(std::move(dims));
        continue;
      }
      size_t start = 0;
      while (start <= s.size()) {
        size_t e = s.find(',', start);
        if (e == std::string::npos) e = s.size();
        std::string part = s.substr(start, e - start);
        char* end = nullptr;
        long long v = std::strtoll(part.c_str(), &end, 10);
        if (!part.empty() && (std::isalpha(static_cast<unsigned char>(part[0])) || part[0] == '_') &&
            std::all_of(part.begin(), part.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; })) {
          // a name: a symbolic dimension (an ONNX dim_param)
          auto at = std::find(io.dim_names.begin(), io.dim_names.end(), part);
          if (at == io.dim_names.end()) at = io.dim_names.insert(io.dim_names.end(), part);
          dims.push_back(-1 - (at - io.dim_names.begin()));
          start = e + 1;
          continue;
        }
        if (part.empty() || *end || v < 0) {
          std::cerr << "amanda: error: --input-shape '" << s << "': dimensions are non-negative integers or names (a symbolic dimension) separated by commas\n";
          return kUsage;
        }
        dims.push_back(v);
        start = e + 1;
      }
      io.input_shapes.push_back(std::move(dims));
    }
    read.emplace(torch_frontend::read_torchscript(o.in, io, reg));
  } else {
    read.emplace(read_any(o.in, diags));
  }
  text::Document& doc = *read;
  {
    // A structurally broken input (a data-edge cycle, duplicate names) is refused, never converted
    // into a model that onnx.checker rejects.
    Diagnostics problems;
    if (!ir::verify(doc.graph, problems)) {
      for (const auto& d : problems.items()) std::cerr << d.str() << '\n';
      std::cerr << "amanda: " << o.in << ": not converted: " << problems.error_count() << " structural problem"
                << (problems.error_count() == 1 ? "" : "s") << "; no output written\n";
      return kInvalid;
    }
  }
  std::string to = o.to;
  if (to.empty() && !o.out.empty() && (tf_frontend::is_tfjs_output_path(o.out) || tf_frontend::is_graphdef_path(o.out)))
    to = "amanda/tensorflow/2.2";  // a TF.js graph model or a GraphDef
  const std::string source_ns(doc.graph.type_str(doc.graph.root()));
  if (to.empty() || full_namespace(to).starts_with("amanda/onnx/"))
    tf_frontend::make_onnx_boundary(doc.graph, o.outputs);  // (a TensorFlow graph: its placeholders and outputs)
  io::prepare_for_conversion(doc.graph, to);
  // Into TensorFlow, values no graph input changes (shapes computed with Shape -> Gather -> Concat,
  // masks built from Range, ...) are folded into constants first: TF.js runs fewer ops, and rules
  // read shapes and bounds as constants.
  for (int round = 0; round < 8 && full_namespace(to).starts_with("amanda/tensorflow/") &&
                      doc.graph.type_str(doc.graph.root()).starts_with("amanda/onnx/");
       ++round) {
    io::prepare_for_conversion(doc.graph, to, true);
    if (!interp::fold_constants(doc.graph).folded) break;
  }
  io::prepare_for_conversion(doc.graph, to);
  // Into the core, computed shapes and bounds must be constants: fold what no input changes, infer
  // again (more shapes are known now, so more Shape ops fold), until nothing more folds.
  for (int round = 0; round < 8 && full_namespace(o.to) == core::kNamespace; ++round) {
    if (!interp::fold_constants(doc.graph).folded) break;
    io::prepare_for_conversion(doc.graph, o.to);
  }
  auto t1 = std::chrono::steady_clock::now();
  mapping::ConvertOptions co = io::default_convert_options();
  co.tags = o.tags;
  co.keep_unmapped = o.keep_unmapped;
  co.explain = o.explain;
  if (to.empty()) {
    // Without --to: the output's format says the family; the nearest namespace of it the tables reach.
    if (!o.out.empty() && !o.out.ends_with(".onnx")) {
      std::cerr << "amanda: error: --to is needed unless the output is a .onnx file (or there is no output)\n";
      return kUsage;
    }
    std::string src(doc.graph.str(doc.graph.graph_namespace(doc.graph.root())));
    to = src.starts_with("amanda/onnx/") ? src : "amanda/onnx/13";
    for (int v = 13; v <= 17 && !src.starts_with("amanda/onnx/"); ++v) {
      try {
        tables.plan(src, "amanda/onnx/" + std::to_string(v), doc.graph);
        to = "amanda/onnx/" + std::to_string(v);
        break;
      } catch (const Error&) {
      }
    }
  }
  std::optional<text::Document> source;  // --check: the graph before conversion
  std::map<uint32_t, std::string> provenance;
  if (o.check) {
    // A TorchScript source runs in libtorch after the conversion (check_torch_conversion).
    if (!torch_frontend::is_torchscript_path(o.in)) source.emplace(read_any(o.in, diags));
    co.on_rewrite = [&provenance](ir::OpId op, const std::string& rule) {
      std::string& s = provenance[op.value];
      s += (s.empty() ? "" : ", then ") + rule;
    };
  }
  mapping::Report rep = mapping::convert(doc.graph, full_namespace(to), tables, *reg, co);
  // An ONNX model refused because a value its rules need is computed at run time (Pad's pads,
  // Slice's bounds, ScatterND's shapes from Shape -> Gather -> Concat): values that no graph input
  // changes are constants in fact. Fold them (the interpreter runs those ops once) and try again;
  // the report says so. The source stays the same for --check.
  if (!rep.ok() && !o.keep_unmapped && !torch_frontend::is_torchscript_path(o.in) &&
      full_namespace(to).starts_with("amanda/onnx/") && full_namespace(to) != core::kNamespace) {
    text::Document again = read_any(o.in, diags);
    tf_frontend::make_onnx_boundary(again.graph, o.outputs);
    io::prepare_for_conversion(again.graph, o.to, true);
    size_t folded = 0;
    for (int round = 0; round < 8; ++round) {
      interp::FoldResult f = interp::fold_constants(again.graph);
      if (!f.folded) break;
      folded += f.folded;
      io::prepare_for_conversion(again.graph, o.to, true);
    }
    if (folded) {
      std::map<uint32_t, std::string> provenance2;
      mapping::ConvertOptions co2 = co;
      if (o.check)
        co2.on_rewrite = [&provenance2](ir::OpId op, const std::string& rule) {
          std::string& s = provenance2[op.value];
          s += (s.empty() ? "" : ", then ") + rule;
        };
      mapping::Report rep2 = mapping::convert(again.graph, full_namespace(to), tables, *reg, co2);
      if (rep2.ok()) {
        rep2.explain.insert(rep2.explain.begin(),
                            fmt::format("note: converted after folding {} values that no graph input changes into constants "
                                        "(the first attempt refused ops whose inputs are computed at run time)",
                                        folded));
        rep = std::move(rep2);
        doc = std::move(again);
        provenance = std::move(provenance2);
      }
    }
  }
  if (rep.ok()) io::finish_conversion(doc.graph, source_ns);
  if (rep.ok() && full_namespace(to) == core::kNamespace) {
    // The typed core: every op typed by its registry rule, which also refuses what a table got
    // wrong (an implicit broadcast left in, a wrong element type).
    Diagnostics typing;
    if (!core::infer_types(doc.graph, typing))
      for (const auto& d : typing.items()) rep.errors.push_back("result does not type-check: " + d.where + ": " + d.message);
  }
  if (rep.ok() && !o.optimize.empty()) {
    // amanda optimize's passes on the result (passes/registry.h), before --check compares it
    const auto& preg = passes::PassRegistry::builtin();
    std::vector<std::string> names;
    if (o.optimize == "default") {
      names = preg.default_passes();
    } else {
      std::string cur;
      for (char ch : o.optimize + ",")
        if (ch == ',') {
          if (!cur.empty()) names.push_back(cur);
          cur.clear();
        } else {
          cur += ch;
        }
    }
    auto pr = passes::run_pipeline(doc.graph, names);
    if (!o.quiet && o.report != "json")
      std::cerr << fmt::format("optimize: {} ops -> {} ops (Constant ops not counted)\n", pr.ops_before, pr.ops_after);
  }
  auto t2 = std::chrono::steady_clock::now();
  bool ok = rep.ok() || o.keep_unmapped;
  if (o.report == "json") std::cout << rep.json();
  else if (!o.quiet || !rep.ok()) std::cout << rep.text();
  if (!ok) {
    std::cerr << "amanda: conversion failed; no output written\n";
    return kInvalid;
  }
  if (!o.explain.empty() && rep.explain.empty()) std::cerr << "amanda: note: no op is named '" << o.explain << "'\n";
  if (o.check) {
    int rc = source ? check_conversion(*source, doc, provenance, o.check_opts)
                    : check_torch_conversion(o.in, doc, o.check_opts);
    if (rc != kOk) {
      if (!o.out.empty()) std::cerr << "amanda: the check " << (rc == 2 ? "could not run" : "failed") << "; no output written\n";
      return rc == 2 ? kUsage : kInvalid;
    }
  }
  if (o.out.empty()) return kOk;
  auto t_write = std::chrono::steady_clock::now();  // (after --check, which has its own lines)
  WriteAnyOptions wo;
  wo.external_data = o.external_data;
  text::Format f = o.format == "json" ? text::Format::Json : text::Format::Yaml;
  if (o.format.empty() && (o.out.ends_with(".json"))) f = text::Format::Json;
  write_any(doc, o.out, f, wo);
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
  c->add_option("--outputs", o->outputs,
                "TensorFlow input: the tensors that become the ONNX graph's outputs (node or node:k, comma-separated); default: "
                "the TF.js signature's outputs, else every output of an op nobody reads")
      ->delimiter(',');
  c->add_option("--tables", o->tables, "More table files or folders (besides the shipped tables/ and $AMANDA_TABLE_PATH)");
  c->add_option("--tags", o->tags, "Use the optional rules with these tags")->delimiter(',');
  c->add_flag("--keep-unmapped", o->keep_unmapped, "Keep ops no rule maps as they are and write the output anyway");
  c->add_option("--optimize", o->optimize,
                "Run rewrite passes on the result: 'default' (amanda optimize's list) or comma-separated pass names "
                "(amanda optimize --list)");
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
  coverage->add_flag("--matrix", *matrix, "Every ONNX opset step 1..17 both ways, as a Markdown table (docs/opset-conversion.md)");
  coverage->add_option("--tables", *dirs, "More table files or folders");
  coverage->callback([cov, matrix, dirs, &exit_code] {
    if (!*matrix && (cov->first.empty() || cov->second.empty())) {
      std::cerr << "amanda: error: table coverage needs --from and --to, or --matrix\n";
      exit_code = kUsage;
      return;
    }
    try {
      mapping::TableSet set;
      load_tables(set, *dirs);
      exit_code = run_table_coverage(*matrix ? "" : full_namespace(cov->first), *matrix ? "" : full_namespace(cov->second), *matrix, set);
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
