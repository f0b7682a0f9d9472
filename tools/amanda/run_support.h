// What `amanda run` and `amanda convert --check` share: reading inputs (.npy, or ONNX .pb value
// files), checking them against the model's declared types and shapes, random inputs, summaries.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "amanda/interp/executor.h"

namespace amanda::tool {

// Refuses (amanda::Error naming the input) a file whose element type or shape the model does not
// accept, an unknown input name, or a missing input without an initializer when random is false.
std::map<std::string, interp::RValue> prepare_inputs(const interp::Executor& ex, const std::vector<std::string>& specs,
                                                     uint64_t seed, std::vector<std::string>* random_names);
// Random values for the declared input (dynamic dimensions become 1).
interp::Tensor random_input(const interp::InputSpec& spec, uint64_t& state);
// "float32 [1, 1000] min -3.2 max 4.1 mean 0.01"
std::string describe(const interp::RValue& v);
// The ONNX value name an op output port carries (@value), or the port's path.
std::string value_name(const ir::Graph& g, ir::PortId p);
// oneDNN's OpenMP threads spin after every parallel region unless OMP_WAIT_POLICY=PASSIVE, and
// on a shared machine that spinning takes the core the next op needs (resnet18: 1.4 s instead of
// 0.16 s). libgomp reads the variable when it is loaded, before main, so for the commands that
// run models (`run`, `convert --check`) the tool re-executes itself once with it set, unless the
// user set it. Returns only when no re-execution is needed or it failed.
void reexec_for_openmp(int argc, char** argv);
// Prints the ops without a kernel and returns true when there are any.
bool report_missing_kernels(const interp::Executor& ex, const std::string& model);

}  // namespace amanda::tool
