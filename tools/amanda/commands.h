#pragma once

#include <string>

#include <CLI/CLI.hpp>

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
void register_run_commands(CLI::App& app, int& exit_code);
void reexec_for_openmp(int argc, char** argv);  // run_support.h

// Reads a document: ONNX (.onnx) by extension, else YAML or JSON. Throws like text::read_file.
text::Document read_any(const std::string& path, Diagnostics& diags, std::optional<text::Format> format = std::nullopt);
// Writes a document: ONNX (.onnx) by extension, else text. Returns the side file written, or "".
struct WriteAnyOptions {
  text::WriteOptions text;
  bool external_data = false;
  size_t threshold = 1024;
};
std::string write_any(const text::Document& doc, const std::string& path, text::Format format, const WriteAnyOptions& options);

// The tool's namespaces: the shipped ones, $AMANDA_SCHEMA_PATH, and ONNX's from libonnx.
std::unique_ptr<schema::Registry> tool_registry();

std::string inspect_report(const text::Document& doc, const Diagnostics& problems);

}  // namespace amanda::tool
