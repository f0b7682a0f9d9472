// libFuzzer target: the Caffe2 NetDef reader and writer, binary and text, predict and init nets,
// the wire paths against protobuf's (see caffe2_roundtrip_check.h for the property).
#include <cstdio>
#include <cstdlib>

#include <google/protobuf/stubs/logging.h>

#include "caffe2_roundtrip_check.h"

// protobuf logs every string field that is not UTF-8 before refusing the input: noise here.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string problem = amanda::fuzz::caffe2_roundtrip_problem({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
