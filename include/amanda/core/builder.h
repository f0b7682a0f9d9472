// The typed core namespace `amanda/core` and its C++ builder, in the style of the nGraph seed
// (ngraph-graph-basics.rst): a Function is made from Parameters (element type + shape) and ops
// whose construction checks the input types and sets the output types. There is no implicit
// broadcast or element-type coercion: Add of [32, 32] and [32] throws; Broadcast says it.
//
// The builder is a typed view over ir::Graph, not a second graph: every op is an ir op in the
// namespace amanda/core, every Output an ir output port with its interned TypeId (and the
// `@type`/`@shape` attributes that the text forms write), so the result can be written, verified,
// mapped and rewritten like any other graph.
//
//   core::Function f;
//   auto a = f.parameter(ir::DType::Float32, {32, 32}, "a");
//   auto b = f.parameter(ir::DType::Float32, {32, 32}, "b");
//   auto c = f.parameter(ir::DType::Float32, {32, 32}, "c");
//   f.result(core::multiply(core::add(a, b), c), "f");
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/support/diagnostics.h"

namespace amanda::core {

inline constexpr std::string_view kNamespace = "amanda/core";

using ElemType = ir::ElemType;
using Shape = std::vector<int64_t>;  // static shapes; PartialShape for symbolic or unknown dims

// A shape whose dimensions may be symbolic (`N`) or unknown (-1 / Dim::unknown()).
struct PartialShape {
  std::vector<ir::Dim> dims;
  PartialShape() = default;
  PartialShape(std::initializer_list<int64_t> d) : dims(ir::dims_of(std::span<const int64_t>(d.begin(), d.size()))) {}
  PartialShape(const Shape& s) : dims(ir::dims_of(s)) {}
  explicit PartialShape(std::vector<ir::Dim> d) : dims(std::move(d)) {}
};

// One output of an op (or a parameter) of a typed graph.
class Output {
 public:
  Output() = default;
  Output(ir::Graph* g, ir::PortId p) : g_(g), port_(p) {}
  ir::Graph& graph() const { return *g_; }
  ir::PortId port() const { return port_; }
  ir::OpId op() const { return g_->port_op(port_); }
  ir::TypeId type() const { return g_->port_type(port_); }
  ElemType element_type() const { return g_->port_type_data(port_).elem; }
  const std::vector<ir::Dim>& dims() const { return g_->port_type_data(port_).dims; }
  size_t rank() const { return dims().size(); }
  std::string type_str() const { return ir::format_type(*g_, type()); }
  explicit operator bool() const { return g_ && port_; }

 private:
  ir::Graph* g_ = nullptr;
  ir::PortId port_;
};

// A function: parameters (graph inputs), results (graph outputs), and the ops between, in an
// ir::Graph it owns or one it views (its root must be in amanda/core, or unnamed).
class Function {
 public:
  Function();
  explicit Function(ir::Graph& g);
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  ir::Graph& graph() { return *g_; }
  const ir::Graph& graph() const { return *g_; }

  // A Parameter: an argument of the function. Names must be unique among the parameters.
  Output parameter(ElemType t, const PartialShape& shape, std::string_view name = {});
  // Marks a value as a result of the function.
  void result(Output v, std::string_view name = {});
  std::vector<Output> parameters() const;
  std::vector<Output> results() const;
  // A Constant op holding `value` (its type is the tensor's element type and shape).
  Output constant(ir::Tensor value, std::string_view name = {});

 private:
  std::unique_ptr<ir::Graph> owned_;
  ir::Graph* g_;
};

// ---- ops. Each checks its inputs' types and throws amanda::Error naming the op's path, the op
// type and what was expected. `name` names the op (a fresh one is made when empty).

// Elementwise binary ops: both inputs of one element type and one shape (no implicit broadcast).
Output add(Output a, Output b, std::string_view name = {});
Output subtract(Output a, Output b, std::string_view name = {});
Output multiply(Output a, Output b, std::string_view name = {});
Output divide(Output a, Output b, std::string_view name = {});
Output maximum(Output a, Output b, std::string_view name = {});
Output minimum(Output a, Output b, std::string_view name = {});
// Elementwise unary ops (floating point).
Output relu(Output x, std::string_view name = {});
Output negative(Output x, std::string_view name = {});
Output exp(Output x, std::string_view name = {});
Output tanh(Output x, std::string_view name = {});
Output sigmoid(Output x, std::string_view name = {});
// nGraph's Broadcast: the input placed in `shape`, `axes` being the new axes (sorted, distinct);
// the input's shape must equal `shape` without them.
Output broadcast(Output x, const PartialShape& shape, const std::vector<int64_t>& axes, std::string_view name = {});
// Matrix product of [m, k] and [k, n] (one element type).
Output dot(Output a, Output b, std::string_view name = {});
// Element type conversion (the only one there is: explicit).
Output convert(Output x, ElemType to, std::string_view name = {});
// Same elements, another static shape of the same element count.
Output reshape(Output x, const Shape& shape, std::string_view name = {});

// Any registered op by its type (Convolution, MaxPool, Concat, ...: `amanda schema show
// amanda/core` lists them with their attributes), checked like the constructors above; a variadic
// op (Concat) takes its inputs in order (ports inputs.0, inputs.1, ...).
Output op(std::string_view type, const std::vector<Output>& inputs, ir::AttrList attrs = {}, std::string_view name = {});

// Every op type of amanda/core, as the registry in src/core/ops.cpp lists them (one entry per op).
const std::vector<std::string_view>& op_types();

// Types a graph of amanda/core made by other means (a mapping table, a YAML file): every op of
// the root scope, in topological order, gets its output type from its registry rule over its
// producers' types, as the constructors do. An op the namespace lacks, an input without a type,
// a rule's refusal (an implicit broadcast, a wrong element type) or a declared output type that
// contradicts the rule is reported in `diags` with the op's path; returns false if any was.
bool infer_types(ir::Graph& g, Diagnostics& diags);

}  // namespace amanda::core
