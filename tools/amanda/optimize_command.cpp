// `amanda optimize MODEL -o OUT`: the rewrite passes of amanda/passes/registry.h (docs/optimize.md).
// Thin: read, type (ONNX inference, so that passes see shapes), run the passes by name, check,
// write, report.
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "amanda/mapping/engine.h"
#include "amanda/mapping/table.h"
#include "amanda/pipeline/pipeline.h"
#include "amanda/pipeline/rewrite_tables.h"
#include "amanda/passes/pattern_text.h"
#include "amanda/passes/registry.h"
#include "amanda/support/file.h"
#include "amanda/support/progress.h"
#include "check.h"
#include "commands.h"
#include "kept.h"

namespace amanda::tool {

namespace {

struct OptimizeOpts {
  std::string in, out, passes, report, format;
  std::vector<std::string> exclude, tables;
  std::string match, why;  // --match PATTERN_FILE, --why OP_NAME
  bool check = false, list = false, external_data = false, quiet = false, no_descend = false;
  size_t fold_limit = size_t(64) << 20;
  size_t rounds = 32;
  CheckOptions check_opts;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> r;
  std::string cur;
  for (char c : s) {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) r.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) r.push_back(cur);
  return r;
}

std::string json_str(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\', r += c;
    else if (static_cast<unsigned char>(c) < 0x20) r += fmt::format("\\u{:04x}", static_cast<int>(c));
    else r += c;
  }
  return r + "\"";
}

// Types for the passes (value_info stays as the file had it), by the graph's framework.
void type_graph(ir::Graph& g) { pipeline::infer_types(g, true); }

int list_passes() {
  const auto& reg = pipeline::optimize_registry();
  for (const passes::PassInfo* p : reg.all())
    std::cout << fmt::format("{:<36} {}{}{}\n", p->name, p->in_default ? "" : "[not default] ", p->onnx_only ? "" : "[any namespace] ",
                             p->doc);
  return kOk;
}

// After a failed check: the passes again one at a time from the source, checking after each one
// that changed something, to name the first pass after which the outputs differ.
void bisect(const OptimizeOpts& o, const std::vector<std::string>& names, const passes::PassOptions& po,
            const passes::PassRegistry& reg) {
  Diagnostics diags;
  text::Document source = read_input(o.in, diags);
  text::Document work = read_input(o.in, diags);
  type_graph(work.graph);
  passes::PassOptions one = po;
  one.on_pass = nullptr;
  one.max_iterations = 1;
  for (size_t round = 0; round < po.max_iterations; ++round) {
    bool changed = false;
    for (const auto& n : names) {
      auto r = passes::run_pipeline(work.graph, {n}, one, reg);
      if (r.ops_before == r.ops_after && !r.passes[0].second.changed()) continue;
      changed = true;
      CheckOptions quiet = o.check_opts;
      std::cerr << "amanda: checking after pass " << n << " (round " << round + 1 << ")\n";
      if (check_conversion(source, work, {}, quiet) != kOk) {
        std::cerr << "amanda: the outputs first differ after pass " << n << " (round " << round + 1 << ")\n";
        return;
      }
    }
    if (!changed) break;
  }
}

// Rewrite tables (same-namespace mapping tables, docs/mapping-tables.md) as passes named
// "table:FILE", after the named passes in each round: rewrites as data beside the C++ passes. A
// malformed table is refused here, before anything runs, with its file, line and column.
// Rewrite tables given with --table (same-namespace mapping tables, docs/mapping-tables.md) as
// passes named "table:FILE", after the named passes in each round. A malformed table is refused
// here, before anything runs, with its file, line and column.
void add_table_passes(passes::PassRegistry& reg, std::vector<std::string>& names, const std::vector<std::string>& files) {
  for (const auto& f : files) {
    std::string name = "table:" + f;
    pipeline::add_table_pass(reg, {f}, name, false, false, true);
    names.push_back(name);
  }
}

// --match: the ops where a text pattern (amanda/passes/pattern_text.h) matches, one path a line;
// --why NAME: the matcher's answer for the op named NAME (why it does or does not match).
int run_match(const OptimizeOpts& o) {
  auto buf = map_file(o.match);
  passes::TextPattern tp = passes::parse_pattern(std::string_view(reinterpret_cast<const char*>(buf->data()), buf->size()), o.match);
  Diagnostics diags;
  text::Document doc = read_input(o.in, diags);
  type_graph(doc.graph);
  const ir::Graph& g = doc.graph;
  size_t n = 0, whys = 0;
  g.for_each_op([&](ir::OpId op) {
    if (g.is_graph(op)) return;
    passes::Match m = passes::match(g, op, tp.root);
    if (!o.why.empty() && g.name_str(op) == o.why) {
      ++whys;
      std::cout << g.path(op) << ": " << (m ? "matches (" + std::to_string(m.ops.size()) + " ops)" : "no match: " + m.why) << '\n';
    }
    if (m && o.why.empty()) {
      ++n;
      std::cout << g.path(op) << '\n';
    }
  });
  if (!o.why.empty() && !whys) {
    std::cerr << "amanda: error: no op named '" << o.why << "'\n";
    return kInvalid;
  }
  if (o.why.empty() && !o.quiet) std::cerr << n << " matches\n";
  return kOk;
}

int run_optimize(const OptimizeOpts& o) {
  auto t0 = std::chrono::steady_clock::now();
  Diagnostics diags;
  // The graph and the pass registry are kept to the end of the process (kept.h): freeing them
  // is work for nothing once the output is written.
  text::Document& doc = kept_until_exit(std::make_unique<text::Document>(read_input(o.in, diags)));
  std::optional<text::Document> source;
  if (o.check) source.emplace(read_input(o.in, diags));
  auto t1 = std::chrono::steady_clock::now();
  type_graph(doc.graph);
  passes::PassRegistry& reg = kept_until_exit(std::make_unique<passes::PassRegistry>(pipeline::optimize_registry()));
  std::vector<std::string> names = o.passes.empty() ? reg.default_passes() : split_list(o.passes);
  add_table_passes(reg, names, o.tables);
  passes::PassOptions po;
  po.exclude = o.exclude;
  po.fold_size_limit = o.fold_limit;
  po.descend = !o.no_descend;
  po.max_iterations = o.rounds;
  po.retype = type_graph;
  size_t total = names.size() * po.max_iterations, done = 0;
  auto progress = std::make_shared<Progress>("optimize", total);
  po.on_pass = [&](const std::string&, const passes::PassResult&) { progress->set(++done); };
  passes::PipelineResult res = passes::run_pipeline(doc.graph, names, po, reg);
  progress.reset();
  auto t2 = std::chrono::steady_clock::now();
  int rc = kOk;
  if (o.check) {
    rc = check_conversion(*source, doc, {}, o.check_opts);
    if (rc != kOk) {
      bisect(o, names, po, reg);
      if (!o.out.empty()) std::cerr << "amanda: the check failed; no output written\n";
      return kInvalid;
    }
  }
  auto t3 = std::chrono::steady_clock::now();
  if (!o.out.empty()) {
    WriteAnyOptions wo;
    wo.external_data = o.external_data;
    text::Format f = o.out.ends_with(".json") ? text::Format::Json : text::Format::Yaml;
    write_any(doc, o.out, f, wo);
  }
  auto t4 = std::chrono::steady_clock::now();
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  if (o.report == "json") {
    std::ostringstream j;
    j << "{\"input\": " << json_str(o.in) << ", \"output\": " << json_str(o.out) << ", \"ops_before\": " << res.ops_before
      << ", \"ops_after\": " << res.ops_after << ", \"rounds\": " << res.rounds
      << fmt::format(", \"seconds\": {{\"read\": {:.4f}, \"optimize\": {:.4f}, \"check\": {:.4f}, \"write\": {:.4f}}}", secs(t0, t1),
                     secs(t1, t2), secs(t2, t3), secs(t3, t4))
      << ", \"checked\": " << (o.check ? "true" : "false") << ", \"passes\": [";
    for (size_t i = 0; i < res.passes.size(); ++i) {
      const auto& [name, r] = res.passes[i];
      j << (i ? ", " : "") << "{\"name\": " << json_str(name) << ", \"rewrites\": " << r.rewrites << ", \"erased\": " << r.erased
        << ", \"created\": " << r.created << ", \"refused\": " << r.refused << fmt::format(", \"seconds\": {:.4f}", r.seconds)
        << ", \"notes\": [";
      for (size_t k = 0; k < r.notes.size() && k < 50; ++k) j << (k ? ", " : "") << json_str(r.notes[k]);
      j << "]}";
    }
    j << "]}\n";
    std::cout << j.str();
  } else if (!o.quiet) {
    for (const auto& [name, r] : res.passes)
      if (r.changed() || r.refused)
        std::cout << fmt::format("  {:<34} {} rewrites, {} ops removed, {} made{}\n", name, r.rewrites, r.erased, r.created,
                                 r.refused ? fmt::format(", {} refused", r.refused) : "");
    std::cout << fmt::format("{}: {} ops -> {} ops (Constant ops not counted) in {} rounds; read {:.3f} s, optimize {:.3f} s{}{}\n",
                             o.in, res.ops_before, res.ops_after, res.rounds, secs(t0, t1), secs(t1, t2),
                             o.check ? fmt::format(", check {:.3f} s", secs(t2, t3)) : "",
                             o.out.empty() ? "" : fmt::format(", write {:.3f} s", secs(t3, t4)));
  }
  return rc;
}

}  // namespace

void register_optimize_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<OptimizeOpts>();
  auto* c = app.add_subcommand("optimize",
                               "Rewrite a graph with named passes (dead code, common subexpressions, constant and shape "
                               "folding, no-op removal, fusions; see --list and docs/optimize.md)");
  c->add_option("MODEL", o->in, "Input model (.onnx, .yaml, .json, ...)");
  c->add_option("-o,--output", o->out, "Output file (format by extension)");
  c->add_option("--passes", o->passes, "Comma-separated pass names (default: every pass marked default, in --list order)");
  c->add_option("--exclude", o->exclude, "Op name or glob pattern (* ?) no pass may change; repeatable")->take_all();
  c->add_option("--table", o->tables,
                "A rewrite table (a mapping table whose src and dst are the graph's namespace) run as a pass after the others, "
                "each round; repeatable")
      ->take_all();
  c->add_option("--fold-size-limit", o->fold_limit, "constant_folding: largest folded tensor in bytes (default 64 MiB)");
  c->add_option("--rounds", o->rounds, "Run the pass list again while something changes, at most this many times (default 32)");
  c->add_flag("--no-subgraphs", o->no_descend, "Leave If/Loop/Scan bodies as they are");
  c->add_flag("--check", o->check,
              "Run the model before and after on the same random inputs with the interpreter and compare every output; "
              "on a difference, name the first pass after which they differ (nothing is written)");
  c->add_option("--rtol", o->check_opts.rtol, "--check: relative tolerance (default 1e-4)");
  c->add_option("--atol", o->check_opts.atol, "--check: absolute tolerance (default 1e-5)");
  c->add_option("--seed", o->check_opts.seed, "--check: seed of the random inputs");
  c->add_option("--report", o->report, "Report format on standard output: json")->check(CLI::IsMember({"json", "text"}));
  c->add_flag("--external-data", o->external_data, "ONNX output: big tensors in OUT.data");
  c->add_flag("--list", o->list, "List the passes and exit");
  c->add_option("--match", o->match,
                "A pattern file in the matcher's text form (docs/optimize.md, 'Patterns as text'): list the ops where it matches "
                "and exit (nothing is optimized or written)");
  c->add_option("--why", o->why, "With --match: the matcher's answer for the op of this name (why it does not match)");
  c->add_flag("-q,--quiet", o->quiet, "No summary");
  c->callback([o, &exit_code] {
    try {
      if (o->list) {
        exit_code = list_passes();
        return;
      }
      if (o->in.empty()) {
        std::cerr << "amanda optimize: a MODEL is required (or --list)\n";
        exit_code = kUsage;
        return;
      }
      exit_code = o->match.empty() ? run_optimize(*o) : run_match(*o);
    } catch (const std::exception& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kInvalid;
    }
  });
}

}  // namespace amanda::tool
