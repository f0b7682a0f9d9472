// libFuzzer target: the libtorch-free TorchScript reader (see torchscript_check.h).
#include <cstdio>
#include <cstdlib>

#include "torchscript_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Budgets well under -rss_limit_mb=2048, so that a blow-up is a budget error, or a finding.
  static const bool once = [] {
    amanda::BudgetLimits small;
    small.memory = 512 << 20;
    small.decompressed = 256 << 20;
    small.steps = 200'000;
    small.ops = 20'000;
    amanda::Budget::run().set_limits(small);
    return true;
  }();
  (void)once;
  std::string problem = amanda::fuzz::torchscript_problem({reinterpret_cast<const char*>(data), size},
                                                          AMANDA_TORCH_OPS_FILE);
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
