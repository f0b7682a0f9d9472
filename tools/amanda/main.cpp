// amanda: the command-line tool. Thin: parse arguments, call the library, print.
// Each group of subcommands registers itself (graph_commands.cpp, ...).
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <string_view>

#include <CLI/CLI.hpp>

#include "amanda/support/progress.h"
#include "commands.h"

#if defined(__SANITIZE_ADDRESS__)
#define AMANDA_TOOL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AMANDA_TOOL_SANITIZED 1
#endif
#endif
#ifndef AMANDA_TOOL_SANITIZED
#define AMANDA_TOOL_SANITIZED 0
#endif

#if !AMANDA_TOOL_SANITIZED
// The heap grows by 32 MB more than asked and gives back only what lies beyond that: a freed
// tensor's pages are reused by the next one instead of being returned to the kernel and faulted in
// (zeroed) again. Untouched pages cost nothing, so the peak memory is unchanged but for up to 32 MB
// kept after frees at the top. Set before any static initialiser allocates (priority 101, the
// first). human_faceres (14 MB) optimizes with 11,400 -> 9,000 page faults and about 10% less CPU
// (docs/performance.md, "Fewer shared objects, fewer page faults").
__attribute__((constructor(101))) static void keep_freed_heap() { mallopt(M_TOP_PAD, 32 << 20); }
#endif

int main(int argc, char** argv) {
  using namespace amanda::tool;
  reexec_for_openmp(argc, argv);
  CLI::App app{
      "amanda: one graph abstraction for the neural-network graphs of every framework.\n"
      "Reads and writes the graph abstraction's YAML and JSON forms, checks and summarises graphs.\n"
      "Exit codes: 0 = fine, 1 = the input is invalid, 2 = wrong usage.",
      "amanda"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("amanda 0.1.0"));
  int exit_code = kOk;
  // -q turns the progress line off: the commands that print a report have their own -q (which
  // also does); for the others it falls through to this one (subcommands inherit fallthrough).
  app.add_flag_callback("-q,--quiet", [] { amanda::set_progress_sink(nullptr); }, "No progress line on the terminal");
  app.fallthrough();  // and the global --max-* budget flags may follow the subcommand
  register_budget_options(app);
  // A progress line for work over a second, on a terminal only. -q turns it off: the commands
  // that print a report have their own -q; for the others it falls through to this one.
  if (isatty(STDERR_FILENO)) amanda::set_progress_sink(amanda::terminal_progress());
  // The groups of subcommands and the commands each registers. Setting up every command's
  // options (CLI11 objects, validators, help strings) was 5% of a whole small `amanda optimize`;
  // a command line naming a command sets up its group alone. Without one (--help, --version, a
  // typo), or if this list missed a command (then the others are added after all), every group.
  struct Group {
    void (*add)(CLI::App&, int&);
    std::initializer_list<std::string_view> commands;
  };
  const Group groups[] = {{register_graph_commands, {"inspect", "fmt", "verify"}},
                          {register_schema_commands, {"schema", "validate"}},
                          {register_onnx_commands, {"infer", "diff"}},
                          {register_convert_commands, {"convert", "table"}},
                          {register_view_commands, {"view"}},
                          {register_formats_command, {"formats"}},
                          {register_optimize_command, {"optimize"}},
                          {register_run_commands, {"run"}}};
  const Group* named = nullptr;
  for (const auto& g : groups)
    for (std::string_view c : g.commands)
      if (argc > 1 && c == argv[1]) named = &g;
  auto registered = [&](std::string_view name) {
    for (const auto* sub : app.get_subcommands({}))
      if (sub->get_name() == name) return true;
    return false;
  };
  if (named) named->add(app, exit_code);
  if (!named || !registered(argv[1]))
    for (const auto& g : groups)
      if (&g != named) g.add(app, exit_code);
  std::string known;
  bool found = false;
  for (const auto* sub : app.get_subcommands({})) {
    known += (known.empty() ? "" : ", ") + sub->get_name();
    found = found || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !found) {
    std::cerr << "amanda: error: unknown command '" << argv[1] << "' (commands: " << known << "; see amanda --help)\n";
    return kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  // Leaving without running destructors: freeing libonnx's schema registry and the objects a
  // conversion keeps (namespaces, tables, graphs) costs milliseconds, a tenth of a small model's
  // whole conversion, for nothing. Every output is complete and renamed into place by now
  // (AtomicFile); only the standard streams need flushing. Sanitizer builds leave normally so that
  // LeakSanitizer still checks at exit.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if !AMANDA_TOOL_SANITIZED
  std::_Exit(exit_code);
#endif
  return exit_code;
}
