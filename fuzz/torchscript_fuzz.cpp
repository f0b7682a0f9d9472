// libFuzzer target: the libtorch-free TorchScript reader (see torchscript_check.h).
#include <cstdio>
#include <cstdlib>

#include "torchscript_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string problem = amanda::fuzz::torchscript_problem({reinterpret_cast<const char*>(data), size},
                                                          AMANDA_TORCH_OPS_FILE);
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
