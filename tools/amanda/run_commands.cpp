// `amanda run MODEL [--input NAME=FILE ...] [-o DIR] [--seed S] [--dump-intermediates]`: runs a
// model with the reference interpreter (src/interp) and prints a summary of its outputs.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "amanda/interp/executor.h"
#include "amanda/interp/memory.h"
#include "amanda/interp/npy.h"
#include "amanda/support/budget.h"
#include "amanda/support/gate.h"
#include "commands.h"
#include "run_support.h"

namespace amanda::tool {

namespace {

struct RunOpts {
  std::string model, out_dir;
  std::vector<std::string> inputs;
  uint64_t seed = 0;
  bool dump = false, quiet = false, profile = false;
  int repeat = 1;
};

// A value name made safe as a file name: no separator, control byte or NUL, at most 200 bytes.
// (The name comes from the model: it never chooses where a file goes, only part of its name.)
std::string file_stem(std::string n) {
  for (char& ch : n)
    if (ch == '/' || ch == '\\' || ch == ':' || static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '_';
  if (n.size() > 200) n.resize(200);
  if (n.empty() || n[0] == '.') n = "_" + n;
  return n;
}

// A JSON string literal (names from the model are escaped: a quote or a newline in an output's
// name made outputs.json invalid).
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Writes a value as NAME.npy (a sequence as NAME.0.npy, NAME.1.npy, ...) into the output gate
// (under `sub`, "" or "intermediates/"); returns a JSON entry. Names that collide after making
// them safe get a number.
std::string write_value(WriteGate& out, const std::string& sub, const std::string& name, const interp::RValue& v,
                        std::set<std::string>& used) {
  std::string stem = file_stem(name);
  for (int k = 1; used.count(sub + stem); ++k) stem = file_stem(name) + "~" + std::to_string(k);
  used.insert(sub + stem);
  if (v.kind == interp::RValue::Kind::Tensor) {
    out.create(sub + stem + ".npy").write(interp::npy_bytes(v.tensor));
    return fmt::format("{{\"name\": {}, \"kind\": \"tensor\", \"files\": [{}]}}", json_string(name), json_string(stem + ".npy"));
  }
  if (v.kind == interp::RValue::Kind::None)
    return fmt::format("{{\"name\": {}, \"kind\": \"none\", \"files\": []}}", json_string(name));
  std::string files;
  for (size_t i = 0; i < v.seq.size(); ++i) {
    std::string f = fmt::format("{}.{}.npy", stem, i);
    out.create(sub + f).write(interp::npy_bytes(v.seq[i]));
    files += (i ? ", " : "") + json_string(f);
  }
  return fmt::format("{{\"name\": {}, \"kind\": \"sequence\", \"files\": [{}]}}", json_string(name), files);
}

int run_model(const RunOpts& o) {
  Diagnostics diags;
  text::Document doc = read_any(o.model, diags);
  interp::Executor ex(doc.graph);
  if (report_missing_kernels(ex, o.model)) return kInvalid;
  std::vector<std::string> random_names;
  auto feeds = prepare_inputs(ex, o.inputs, o.seed, &random_names);
  if (!random_names.empty() && !o.quiet) {
    std::cout << "random inputs (seed " << o.seed << "):";
    for (const auto& n : random_names) std::cout << ' ' << n << ' ' << describe(feeds.at(n));
    std::cout << '\n';
  }
  // The output folder is staged and appears only when the run succeeded (a failed run left an
  // empty folder, or some of the .npy files).
  std::optional<WriteGate> out;
  std::set<std::string> used;
  if (!o.out_dir.empty()) {
    out.emplace(o.out_dir);
    out->make_folder_output();
    if (o.dump) out->set_max_files(1000000);
  }
  interp::RunOptions ro;
  if (o.dump) {
    ro.on_value = [&](ir::OpId, ir::PortId p, const interp::RValue& v) {
      write_value(*out, "intermediates/", value_name(doc.graph, p), v, used);
    };
  }
  std::map<std::string, std::pair<double, int64_t>> profile;
  if (o.profile) ro.profile = &profile;
  interp::reset_peak();
  std::vector<interp::RValue> outs;
  double best = 1e30;
  for (int r = 0; r < std::max(1, o.repeat); ++r) {
    if (r) Budget::run().reset_counters();  // (each repetition gets the whole step budget)
    auto t0 = std::chrono::steady_clock::now();
    outs = ex.run(feeds, ro);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ro.on_value = nullptr;  // dump once
  }
  if (o.profile) {
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto& [type, e] : profile) rows.emplace_back(e.first, type), total += e.first;
    std::sort(rows.rbegin(), rows.rend());
    std::cout << "time by op type (all runs):\n";
    for (const auto& [t, type] : rows)
      std::cout << fmt::format("  {:24} {:8.3f} s {:5.1f}%  {} calls\n", type, t, 100 * t / std::max(total, 1e-12), profile[type].second);
  }
  auto names = ex.output_names();
  if (!o.quiet) {
    for (size_t i = 0; i < outs.size(); ++i) std::cout << names[i] << ": " << describe(outs[i]) << '\n';
    std::cout << fmt::format("ran {} ops in {:.3f} s{}; peak tensor memory {:.1f} MB\n", doc.graph.op_count(), best,
                             o.repeat > 1 ? fmt::format(" (best of {})", o.repeat) : "",
                             static_cast<double>(interp::memory_stats().peak_bytes) / 1e6);
  }
  if (!o.out_dir.empty()) {
    std::string manifest = "{\"outputs\": [";
    for (size_t i = 0; i < outs.size(); ++i) manifest += (i ? ", " : "") + write_value(*out, "", names[i], outs[i], used);
    manifest += "]}\n";
    out->create("outputs.json").write(manifest);
    out->commit();
    if (!o.quiet) std::cout << "wrote " << outs.size() << " output(s) to " << o.out_dir << '\n';
  }
  return kOk;
}

}  // namespace

void register_run_commands(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOpts>();
  auto* c = app.add_subcommand("run",
                               "Run an ONNX model with Amanda's reference interpreter on .npy inputs (or ONNX .pb tensors); "
                               "inputs not given get random values of the declared type and shape");
  c->add_option("MODEL", o->model, "Model (.onnx, or a YAML/JSON document in an ONNX namespace)")->required();
  c->add_option("--input", o->inputs, "NAME=FILE.npy (or FILE.pb: an ONNX TensorProto/SequenceProto), repeatable");
  c->add_option("-o,--output", o->out_dir, "Folder for the outputs: NAME.npy each, and outputs.json listing them");
  c->add_option("--seed", o->seed, "Seed of the random inputs (default 0)");
  c->add_flag("--dump-intermediates", o->dump, "Also write every value the graph computes to OUT/intermediates/ (needs -o)");
  c->add_option("--repeat", o->repeat, "Run this many times and report the fastest (for timing)");
  c->add_flag("--profile", o->profile, "Print the time spent in each op type");
  c->add_flag("-q,--quiet", o->quiet, "Print nothing on success");
  c->callback([o, &exit_code] {
    if (o->dump && o->out_dir.empty()) {
      std::cerr << "amanda: error: --dump-intermediates needs -o DIR\n";
      exit_code = kUsage;
      return;
    }
    try {
      exit_code = run_model(*o);
    } catch (const ParseError& e) {
      std::cerr << e.what() << '\n';
      exit_code = kInvalid;
    } catch (const std::exception& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kInvalid;
    }
  });
}

}  // namespace amanda::tool
