// libFuzzer target: the TensorFlow readers (GraphDef binary and text, TF.js model.json with its
// weights manifest) and their writers (see tensorflow_roundtrip_check.h for the property).
#include <cstdio>
#include <cstdlib>

#include "tensorflow_roundtrip_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string problem = amanda::fuzz::tensorflow_roundtrip_problem({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
