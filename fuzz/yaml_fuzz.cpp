// libFuzzer target: the YAML reader and writer (see roundtrip_check.h for the property).
#include <cstdio>
#include <cstdlib>

#include "roundtrip_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string problem = amanda::fuzz::roundtrip_problem({reinterpret_cast<const char*>(data), size}, amanda::text::Format::Yaml);
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
