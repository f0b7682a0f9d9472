// ONNX opset conversion in process, bytes -> bytes, with the library calls `amanda convert` makes
// (tools/amanda/convert_commands.cpp): import_model_buffer (the model's bytes already in memory),
// pipeline::convert (the same passes as the tool: typing, the planner's chain, compile each table,
// apply, validate against the target), and export_model_bytes. The registry (shipped namespaces + libonnx's) and the TableSet (the shipped
// tables/ folder, read from YAML) are made once per process, as the tool makes them once per
// command; their cost is printed separately ("setup"). scripts/convert_speed.sh runs this next to
// Python's onnx.version_converter.convert_version.
//
//   convert_bench [--reps N] [--min-time S] --to 9,11,12 model.onnx ...
//
// One line per model and target, tab-separated:
//   model  target  status  best_total_s  best_import_s  best_convert_s  best_export_s  first_total_s  out_bytes  detail
// status is "ok" or "fails" (detail: the report's first line of trouble). Times are wall clock,
// best of the repetitions; each repetition starts from the same bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/io/io.h"
#include "amanda/pipeline/pipeline.h"
#include "amanda/mapping/engine.h"
#include "amanda/schema/registry.h"
#include "amanda/support/file.h"

namespace {

using namespace amanda;
using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string first_problem(const mapping::Report& r) {
  std::string t = r.text();
  std::string out;
  std::istringstream in(t);
  std::string line;
  bool take = false;
  while (std::getline(in, line)) {
    if (line.starts_with("unmapped") || line.starts_with("cannot") || line.starts_with("error")) take = true;
    if (take) {
      std::string one;  // the report's columns, on one line
      for (char c : line)
        if (c != ' ' || (!one.empty() && one.back() != ' ')) one += c;
      out += (out.empty() ? "" : " | ") + one;
      if (out.size() > 300) break;
    }
  }
  return out.empty() ? "conversion failed" : out;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  double min_time = 0.0;
  std::vector<int> targets;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.starts_with("--benchmark_")) continue;  // scripts/bench.sh passes these to every *_bench
    if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--min-time" && i + 1 < argc) min_time = std::atof(argv[++i]);
    else if (a == "--to" && i + 1 < argc) {
      std::string s = argv[++i];
      for (size_t p = 0; p < s.size();) {
        size_t e = s.find(',', p);
        if (e == std::string::npos) e = s.size();
        targets.push_back(std::atoi(s.substr(p, e - p).c_str()));
        p = e + 1;
      }
    } else {
      models.push_back(a);
    }
  }
  if (targets.empty() || models.empty()) {
    // (scripts/bench.sh runs every *_bench without models: nothing to do is not an error there.)
    std::cerr << "usage: convert_bench [--reps N] [--min-time S] --to 9,11,12 model.onnx ...  (scripts/convert_speed.sh runs it)\n";
    return models.empty() && targets.empty() ? 0 : 2;
  }

  auto s0 = Clock::now();
  auto reg = io::default_registry();
  mapping::TableSet tables;
  io::add_default_tables(tables);
  auto s1 = Clock::now();
  std::cout << fmt::format("# setup\tregistry + tables/ read\t{:.4f}\n", secs(s0, s1)) << std::flush;

  for (const std::string& path : models) {
    std::string name = std::filesystem::path(path).stem().string();
    auto buf = make_buffer(read_bytes(path));
    for (int target : targets) {
      std::string to = fmt::format("amanda/onnx/{}", target);
      double best = 1e30, best_imp = 1e30, best_conv = 1e30, best_exp = 1e30, first = 0, spent = 0;
      size_t out_bytes = 0;
      std::string status = "ok", detail;
      for (int r = 0; r < reps || spent < min_time; ++r) {
        auto t0 = Clock::now();
        text::Document doc = onnx_frontend::import_model_buffer(buf);
        auto t1 = Clock::now();
        pipeline::PassContext ctx(std::move(doc), *reg, tables);
        ctx.request.to = to;
        mapping::Report& rep = ctx.report;
        try {
          pipeline::convert(ctx);
        } catch (const std::exception& e) {
          status = "fails";
          detail = e.what();
          break;
        }
        auto t2 = Clock::now();
        if (!rep.ok()) {
          status = "fails";
          detail = first_problem(rep);
          break;
        }
        std::string out = onnx_frontend::export_model_bytes(ctx.doc);
        auto t3 = Clock::now();
        out_bytes = out.size();
        if (r == 0) {
          first = secs(t0, t3);
          detail = fmt::format("{} tables, {} ops, {} converted by rules", rep.tables.size(), rep.ops, rep.mapped);
        }
        best = std::min(best, secs(t0, t3));
        best_imp = std::min(best_imp, secs(t0, t1));
        best_conv = std::min(best_conv, secs(t1, t2));
        best_exp = std::min(best_exp, secs(t2, t3));
        spent += secs(t0, t3);
        if (r > 1000) break;
      }
      if (status != "ok") best = best_imp = best_conv = best_exp = first = 0;
      std::cout << fmt::format("{}\t{}\t{}\t{:.6f}\t{:.6f}\t{:.6f}\t{:.6f}\t{:.6f}\t{}\t{}\n", name, target, status, best, best_imp, best_conv,
                               best_exp, first, out_bytes, detail)
                << std::flush;
    }
  }
  return 0;
}
