// `amanda formats`: the registered frameworks (built-in and $AMANDA_PLUGINS), the namespaces each
// provides, and the options its readers and writers take (`--option KEY=VALUE`).
#include <iostream>

#include <fmt/format.h>

#include "amanda/pipeline/framework.h"
#include "commands.h"

namespace amanda::tool {

void register_formats_command(CLI::App& app, int& exit_code) {
  auto* c = app.add_subcommand("formats", "List the frameworks Amanda reads and writes (with $AMANDA_PLUGINS), their "
                                          "namespaces and their options");
  c->callback([&exit_code] {
    for (const auto& f : pipeline::FrameworkRegistry::instance().frameworks()) {
      std::string ns;
      for (const auto& p : f->namespace_prefixes()) ns += (ns.empty() ? "" : ", ") + p + "*";
      std::cout << fmt::format("{:<12} {}\n", f->name(), f->description());
      if (!ns.empty()) std::cout << fmt::format("{:<12}   namespaces: {}\n", "", ns);
      for (const auto& o : f->options()) std::cout << fmt::format("{:<12}   --option {}=...: {}\n", "", o.key, o.help);
    }
    exit_code = kOk;
  });
}

}  // namespace amanda::tool
