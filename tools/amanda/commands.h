#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "amanda/io/io.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"

namespace amanda::tool {

// Exit codes: 0 = fine, 1 = the input is invalid, 2 = wrong usage.
inline constexpr int kOk = 0, kInvalid = 1, kUsage = 2;

// Subcommand groups; each sets exit_code from its callback.
void register_graph_commands(CLI::App& app, int& exit_code);
void register_schema_commands(CLI::App& app, int& exit_code);
void register_onnx_commands(CLI::App& app, int& exit_code);
void register_convert_commands(CLI::App& app, int& exit_code);
void register_view_commands(CLI::App& app, int& exit_code);
void register_formats_command(CLI::App& app, int& exit_code);
void register_optimize_command(CLI::App& app, int& exit_code);  // optimize_command.cpp
// Global --max-* flags that set the run's budgets (amanda/support/budget.h).
void register_budget_options(CLI::App& app);
void register_run_commands(CLI::App& app, int& exit_code);
void reexec_for_openmp(int argc, char** argv);  // run_support.h

// Reading and writing any file, and the default namespaces: the library's I/O layer (amanda/io).
using io::read_any;
using io::write_any;
using WriteAnyOptions = io::WriteOptions;
inline std::unique_ptr<schema::Registry> tool_registry() { return io::default_registry(); }
// Reads the tool's input. A TorchScript archive is read with `reader`: "script" (never libtorch)
// or "auto" (libtorch, in a child process with its own limits, for what the libtorch-free reader
// does not handle, e.g. a module read without --input-shape; see SECURITY.md).
inline text::Document read_input(const std::string& path, Diagnostics& diags, std::optional<text::Format> format = std::nullopt,
                                 const std::string& reader = "script") {
  io::Options o;
  if (format) o.set("format", {*format == text::Format::Json ? "json" : "yaml"});
  o.set("reader", {reader});
  return io::read_any(path, diags, o);
}

}  // namespace amanda::tool
namespace amanda::mapping {
class TableSet;
}
namespace amanda::tool {
// `amanda table coverage` (coverage_command.cpp): per op, converted / conditional / impossible.
int run_table_coverage(const std::string& from, const std::string& to, bool matrix, mapping::TableSet& tables,
                       const std::string& matrix_framework = "onnx");
// `amanda table coverage --vocabulary FILE`: covered / refused / missing against lists of ops.
int run_vocabulary_coverage(const std::string& from, const std::string& to, const std::vector<std::string>& files,
                            mapping::TableSet& tables);

std::string inspect_report(const text::Document& doc, const Diagnostics& problems);

}  // namespace amanda::tool
