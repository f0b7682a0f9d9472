// libFuzzer target: .npy files (the inputs of `amanda run`), under small budgets (issue 32).
// Property: any input is refused with an amanda::Error, or it parses, writes, and parses again to
// the same element type, shape and (numbers) bytes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "amanda/interp/npy.h"
#include "files_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amanda;
  fuzz::small_budgets();
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::optional<interp::Tensor> t;
  try {
    t = interp::parse_npy(in, "x.npy");
  } catch (const Error&) {
    return 0;
  } catch (const ParseError&) {
    return 0;
  }
  std::string bytes = interp::npy_bytes(*t);
  interp::Tensor back;
  try {
    back = interp::parse_npy(bytes, "again.npy");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "a written .npy does not parse: %s\n", e.what());
    std::abort();
  }
  bool same = back.dtype() == t->dtype() && back.shape() == t->shape();
  // (Strings: the shape only; code points outside Unicode need not survive UTF-8.)
  if (same && t->dtype() != ir::DType::String) same = back.nbytes() == t->nbytes() && (t->nbytes() == 0 || std::memcmp(back.raw(), t->raw(), t->nbytes()) == 0);
  if (!same) {
    std::fprintf(stderr, "a .npy written and read again differs\n");
    std::abort();
  }
  return 0;
}
