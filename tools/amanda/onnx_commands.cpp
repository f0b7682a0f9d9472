// `amanda diff A B`, the semantic comparison of two documents of any format.
#include <iostream>

#include "amanda/ir/equal.h"
#include "commands.h"

namespace amanda::tool {

namespace {

int run_diff(const std::string& a, const std::string& b) {
  Diagnostics diags;
  std::optional<text::Document> da, db;
  for (auto [path, doc] : {std::pair{&a, &da}, std::pair{&b, &db}}) {
    try {
      doc->emplace(read_input(*path, diags, std::nullopt, "auto"));
    } catch (const std::exception& e) {
      std::cerr << e.what() << '\n';
      return kInvalid;
    }
  }
  for (const auto& d : diags.items())
    if (d.severity != Severity::Error) std::cerr << d.str() << '\n';
  if (da->kind != db->kind) {
    std::cout << "document kinds differ: " << text::kind_name(da->kind) << " vs " << text::kind_name(db->kind) << '\n';
    return kInvalid;
  }
  std::string diff = ir::first_difference(da->graph, db->graph);
  if (diff.empty()) {
    std::cout << "equal\n";
    return kOk;
  }
  std::cout << diff << '\n';
  return kInvalid;
}

}  // namespace

void register_onnx_commands(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string a, b;
  };
  auto o = std::make_shared<Opts>();
  auto* diff = app.add_subcommand("diff",
                                  "Compare two documents semantically (YAML, JSON or ONNX, by extension): prints the first "
                                  "difference with its path. Exit 0 when equal, 1 when different or unreadable");
  diff->add_option("A", o->a, "First document")->required();
  diff->add_option("B", o->b, "Second document")->required();
  diff->callback([o, &exit_code] {
    try {
      exit_code = run_diff(o->a, o->b);
    } catch (const std::exception& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kInvalid;
    }
  });
}

}  // namespace amanda::tool
