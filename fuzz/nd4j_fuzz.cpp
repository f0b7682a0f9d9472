// libFuzzer target: the SameDiff FlatBuffers reader and writer (see nd4j_roundtrip_check.h).
#include <cstdio>
#include <cstdlib>

#include "nd4j_roundtrip_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string problem = amanda::fuzz::nd4j_roundtrip_problem({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
