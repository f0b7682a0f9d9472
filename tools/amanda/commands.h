#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "amanda/text/document.h"

namespace amanda::tool {

// Exit codes: 0 = fine, 1 = the input is invalid, 2 = wrong usage.
inline constexpr int kOk = 0, kInvalid = 1, kUsage = 2;

// Subcommand groups; each sets exit_code from its callback.
void register_graph_commands(CLI::App& app, int& exit_code);
void register_schema_commands(CLI::App& app, int& exit_code);

std::string inspect_report(const text::Document& doc, const Diagnostics& problems);

}  // namespace amanda::tool
