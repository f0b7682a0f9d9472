// libFuzzer target: the TorchScript interpreter of the libtorch-free reader on generated code.
// The input is the module's serialized code (code/__torch__.py of a module M whose forward()
// takes one tensor); the target wraps it in an archive (a fixed data.pkl for M, stored entries)
// and imports it with small budgets, so that a loop, a recursion or a growing list is a budget
// error within milliseconds. Every input must give a graph or amanda::Error: never a crash, a
// hang, or memory past -rss_limit_mb.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "amanda/support/budget.h"
#include "torchscript_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amanda;
  BudgetLimits small;
  small.memory = 64 << 20;
  small.steps = 200'000;
  small.ops = 20'000;
  Budget::run().set_limits(small);
  std::string archive = fuzz::interp_archive({reinterpret_cast<const char*>(data), size});
  // The archive importer of torchscript_check.h (first byte 2).
  std::string problem = fuzz::torchscript_problem(std::string(1, '\x02') + archive, AMANDA_TORCH_OPS_FILE);
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
