// The kernel interface: one function per (op type, since-version), found in a registry the way
// ONNX resolves schemas (the kernel for opset N is the one with the largest since-version <= N).
// A kernel reads its inputs and attributes from a KernelContext and sets its outputs; it never
// sees the graph's mutation API. Kernels live in src/interp/kernels/, one file per op family.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "amanda/interp/tensor.h"
#include "amanda/ir/graph.h"

namespace amanda::interp {

class Executor;

class KernelContext {
 public:
  KernelContext(const ir::Graph& g, ir::OpId op, int opset, Executor& exec) : g_(g), op_(op), opset_(opset), exec_(exec) {}

  // ---- inputs: the op's positional ports (capture ports excluded); an omitted optional input
  // (a port with no edge) is absent.
  size_t input_count() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const RValue& value(size_t i) const;
  const Tensor& input(size_t i) const;  // throws a clear error when absent or not a tensor
  // ---- outputs
  size_t output_count() const { return outputs_.size(); }
  // Whether anything reads output i (an unconnected optional output need not be computed).
  bool output_used(size_t i) const { return i < used_.size() && used_[i]; }
  void set_output(size_t i, RValue v);
  void set_output(size_t i, Tensor t) { set_output(i, RValue(std::move(t))); }

  // ---- attributes
  const ir::Value* attr(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t dflt) const;
  float attr_float(std::string_view name, float dflt) const;
  std::string attr_string(std::string_view name, std::string dflt = {}) const;
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const;
  std::optional<std::vector<float>> attr_floats(std::string_view name) const;
  std::optional<std::vector<std::string>> attr_strings(std::string_view name) const;
  const ir::Tensor* attr_tensor(std::string_view name) const;
  std::shared_ptr<const ir::Tensor> attr_tensor_ptr(std::string_view name) const;
  ir::OpId attr_graph(std::string_view name) const;  // OpId() when absent

  // Runs an attribute graph (If branch, Loop/Scan body) on `args`; the body's captures read the
  // values of this op's capture ports.
  std::vector<RValue> run_body(ir::OpId body, std::vector<RValue> args);

  int opset() const { return opset_; }
  const ir::Graph& graph() const { return g_; }
  ir::OpId op() const { return op_; }
  std::string where() const;  // the op's path and type, for messages
  [[noreturn]] void fail(const std::string& message) const;

  // An activation the executor fused into this op: a Conv whose only reader is a Relu, a Clip
  // or a LeakyRelu computes that op's output instead (the activation runs while the output is
  // still in cache, and oneDNN applies it inside the convolution). Only kernels registered as
  // taking one (Conv) get anything but None.
  struct Activation {
    enum Kind { None, Relu, Clip, LeakyRelu } kind = None;
    float a = 0, b = 0;  // Clip: min, max; LeakyRelu: alpha
  };
  const Activation& fused_activation() const { return fused_; }
  // Whether output 0 may be left in a native layout (Tensor::layout): every reader of it takes
  // native inputs (Conv, Add). Inputs of such kernels may be native too; all others get row-major.
  bool native_output_ok() const { return native_out_; }

  // Filled by the executor.
  Activation fused_;
  bool native_out_ = false;
  std::vector<const RValue*> inputs_;
  std::vector<RValue> outputs_;
  std::vector<bool> used_;
  const absl::flat_hash_map<uint32_t, const RValue*>* captures_ = nullptr;  // capture port -> value

 private:
  const ir::Graph& g_;
  ir::OpId op_;
  int opset_;
  Executor& exec_;
};

using KernelFn = void (*)(KernelContext&);

class KernelRegistry {
 public:
  void add(std::string_view op_type, int since_version, KernelFn fn);
  // The kernel for `op_type` at `opset`, or nullptr.
  KernelFn find(std::string_view op_type, int opset) const;
  std::vector<std::string> op_types() const;
  // Every kernel this library has.
  static const KernelRegistry& builtin();

 private:
  absl::flat_hash_map<std::string, std::vector<std::pair<int, KernelFn>>> kernels_;
};

}  // namespace amanda::interp
