// libFuzzer target: the TensorFlow readers (GraphDef binary and text, TF.js model.json with its
// weights manifest) and their writers (see tensorflow_roundtrip_check.h for the property).
#include <cstdio>
#include <cstdlib>

#include <google/protobuf/stubs/logging.h>

#include "tensorflow_roundtrip_check.h"

// protobuf logs every string field that is not UTF-8 before refusing the input: noise here.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string problem = amanda::fuzz::tensorflow_roundtrip_problem({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
