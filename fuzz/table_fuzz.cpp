// libFuzzer target: the mapping tables' expression language and table files (see table_check.h).
#include <cstdio>
#include <cstdlib>

#include "table_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A smaller expression budget than the tool's: a blow-up is found in milliseconds.
  static const bool once = [] {
    amanda::BudgetLimits small;
    small.expr_steps = 200'000;
    amanda::Budget::run().set_limits(small);
    return true;
  }();
  (void)once;
  std::string problem = amanda::fuzz::table_problem({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
