// The run's resource budgets as tool flags (--max-memory, --max-steps, ...): global options that
// may come before or after the subcommand. See SECURITY.md for what each budget bounds.
#include <string>

#include "amanda/support/budget.h"
#include "commands.h"

namespace amanda::tool {

void register_budget_options(CLI::App& app) {
  struct Doc {
    BudgetKind kind;
    const char* help;
  };
  static const Doc docs[] = {
      {BudgetKind::Memory, "Budget: bytes of values and tensors a reader computes or copies (K/M/G suffixes; default 4G)"},
      {BudgetKind::Decompressed, "Budget: bytes inflated from compressed archive entries, in total (default 2G)"},
      {BudgetKind::Steps, "Budget: interpreter steps: TorchScript statements, and ops `run`, `--check` and folding execute (default 2000000)"},
      {BudgetKind::Ops, "Budget: graph ops the TorchScript interpreter creates (default 200000)"},
      {BudgetKind::ExprSteps, "Budget: steps of one table-expression evaluation (default 1000000)"},
      {BudgetKind::Depth, "Budget: nesting depth of parsers and recursive walks (default 500)"},
  };
  for (const Doc& d : docs) {
    BudgetKind k = d.kind;
    app.add_option_function<std::string>(
           budget_info(k).flag,
           [k](const std::string& s) {
             uint64_t v = 0;
             if (!parse_budget_value(s, v) || v == 0)
               throw CLI::ValidationError(budget_info(k).flag, "'" + s + "' is not a positive count (K, M, G, T suffixes allowed)");
             BudgetLimits l = Budget::run().limits();
             l.set(k, v);
             Budget::run().set_limits(l);
           },
           d.help)
        ->trigger_on_parse();
  }
}

}  // namespace amanda::tool
