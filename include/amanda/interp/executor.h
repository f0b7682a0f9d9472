// The executor: runs a graph of the ONNX namespace (amanda/onnx/V, and ai.onnx.* domains) in
// topological order with the kernels of the registry. Shapes come from the actual inputs at run
// time. Before computing anything it checks that every op (bodies included) has a kernel and
// reports each one that has none, with its path.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "amanda/interp/kernel.h"
#include "amanda/interp/tensor.h"
#include "amanda/ir/graph.h"

namespace amanda::interp {

// The typed core namespace (amanda/core/builder.h), whose graphs the executor runs too.
inline constexpr std::string_view kCoreNamespace = "amanda/core";

// A graph input the caller may feed: name, element type and shape as the model declares them
// (a dimension that is symbolic or unknown is -1; rank unknown: shape empty and has_shape false).
struct InputSpec {
  std::string name;
  std::string type;  // ONNX spelling, "tensor(float)", "seq(tensor(int64))"
  DType dtype = DType::Undefined;
  Shape shape;
  bool has_shape = false;
  bool has_initializer = false;  // an input with a default value
};

struct RunOptions {
  // Called with each value as soon as an op of the root graph has computed it (the op, its output
  // port, the value). --dump-intermediates and convert --check use it.
  std::function<void(ir::OpId, ir::PortId, const RValue&)> on_value;
  // When set: seconds and calls per op type (bodies included), for `amanda run --profile`.
  std::map<std::string, std::pair<double, int64_t>>* profile = nullptr;
};

struct MissingKernel {
  std::string path;  // op path
  std::string type;
  int opset;
};

class Executor {
 public:
  // `graph` is the graph node to run (normally g.root()). Throws amanda::Error if the graph is
  // not in an ONNX namespace.
  explicit Executor(const ir::Graph& g, const KernelRegistry& kernels = KernelRegistry::builtin());
  ~Executor();

  // Every op without a kernel (bodies included), in graph order.
  std::vector<MissingKernel> missing_kernels() const;
  std::vector<InputSpec> inputs() const;
  std::vector<std::string> output_names() const;

  // Runs the root graph. Throws amanda::Error (naming the op) when a kernel refuses its inputs,
  // and when an input is missing. Outputs are in graph output order.
  std::vector<RValue> run(const std::map<std::string, RValue>& feeds, const RunOptions& options = {});

  // Runs an attribute graph: formal inputs `args`, captures from `captures` (capture port ->
  // value). Used by KernelContext::run_body.
  std::vector<RValue> run_graph(ir::OpId graph_node, std::vector<RValue> args,
                                const absl::flat_hash_map<uint32_t, const RValue*>* captures,
                                const RunOptions* options);

  const ir::Graph& graph() const { return g_; }
  int opset() const { return opset_; }

 private:
  struct Plan;
  const Plan& plan(ir::OpId scope);
  int op_version(ir::OpId op) const;

  const ir::Graph& g_;
  const KernelRegistry& kernels_;
  int opset_ = 0;
  bool core_ = false;  // a graph of amanda/core: kernels registered as "amanda/core::TYPE"
  std::map<std::string, int> domain_versions_;
  std::string kernel_key(ir::OpId op) const;
  absl::flat_hash_map<uint32_t, std::unique_ptr<Plan>> plans_;
  std::vector<bool> root_fed_;
  std::map<std::string, std::pair<double, int64_t>>* profile_ = nullptr;  // per formal root input: given by the caller
};

// The ONNX element type name inside "tensor(...)" -> DType.
std::optional<DType> onnx_elem_type(std::string_view onnx_type);

}  // namespace amanda::interp
