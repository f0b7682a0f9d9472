// `amanda convert --check`: runs the source graph and the converted graph on the same inputs with
// the reference interpreter and compares every output; on a mismatch, names the first converted
// op (in execution order) whose output differs from the source value of the same name, with the
// rule that produced it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "amanda/pipeline/framework.h"
#include "amanda/text/document.h"

namespace amanda::tool {

struct CheckOptions {
  double rtol = 1e-4, atol = 1e-5;
  uint64_t seed = 0;
  std::vector<std::string> inputs;  // NAME=FILE, as for amanda run
};

// provenance: converted op id -> the rules that made or rewrote it. Returns an exit code
// (0 all outputs match, 1 a mismatch or something could not run).
int check_conversion(const text::Document& source, const text::Document& converted,
                     const std::map<uint32_t, std::string>& provenance, const CheckOptions& o);

// A source whose framework has its own runtime (TorchScript: forward() in libtorch, a child
// process through the PyTorch plugin): the converted graph runs in the reference interpreter, the
// source in its runtime, on the same inputs (the converted graph's inputs, without initializers,
// in order = forward's tensor arguments); every output is compared in order. Without the runtime
// it says so and returns 2.
int check_with_runtime(const pipeline::Framework& source, const std::string& source_path, const text::Document& converted,
                       const CheckOptions& o);

}  // namespace amanda::tool
