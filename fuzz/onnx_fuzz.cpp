// libFuzzer target: the ONNX importer and exporter (see onnx_roundtrip_check.h for the property).
#include <cstdio>
#include <cstdlib>

#include "onnx_roundtrip_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string problem = amanda::fuzz::onnx_roundtrip_problem({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
