// Framework conventions that the layers above the frontends (mapping, views) consult without
// knowing any framework: how each framework numbers element types ("onnx": TensorProto.DataType,
// "torch": c10::ScalarType) and which op types produce a constant. Each frontend registers its own
// (onnx_frontend::register_conventions, torch_frontend::register_conventions);
// io::install_conventions() registers every built-in frontend's once, and a user's frontend adds
// its own the same way. Register before converting: lookups take no lock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "amanda/ir/graph.h"

namespace amanda::ir {

// An element-type numbering: code -> element type name (ir::dtype_name spelling).
using DTypeCodes = std::vector<std::pair<int64_t, std::string>>;

class Conventions {
 public:
  // Adds (or replaces) a numbering system.
  void add_dtype_codes(std::string_view system, DTypeCodes codes);
  const DTypeCodes* dtype_codes(std::string_view system) const;  // nullptr when none is registered
  std::vector<std::string> dtype_systems() const;                // registered names, sorted

  // An op type whose (single) output is a constant: `Constant`, `prim::Constant`, ... For graphs
  // read from text, where port roles are not stored.
  void add_constant_op(std::string_view type);
  bool is_constant_op(std::string_view type) const;

  // An op type whose outputs close a dataflow loop (nd4j's next_iteration, like TensorFlow 1's
  // NextIteration, which ir::verify knows itself): the edges out of it may close a cycle.
  void add_loop_back_op(std::string_view type);
  bool is_loop_back_op(std::string_view type) const;

 private:
  std::vector<std::pair<std::string, DTypeCodes>> systems_;
  std::vector<std::string> constant_ops_;
  std::vector<std::string> loop_back_ops_;
};

// The process-wide conventions every layer reads.
Conventions& conventions();

// The value at output port `src` is a constant: it has the Constant role, or its op's type is a
// registered constant op.
bool is_constant_output(const Graph& g, PortId src);

// The tensor a graph input port is fixed to: its `initializer` attribute when the port is not also
// a graph input the caller may override (`graph_input: true`); else nullptr.
const Value* fixed_initializer(const Graph& g, PortId p);

// The tensor a constant output holds (its op's `value` attribute, the attribute every registered
// constant op keeps its value in) or a fixed initializer is; nullptr for anything else.
const Value* constant_tensor(const Graph& g, PortId src);

}  // namespace amanda::ir
