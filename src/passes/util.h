// Helpers every ONNX pass shares: reading constants and attributes, making constants, and
// replacing a value with another one while keeping the names the file's graph outputs have.
// Private to src/passes/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/interp/tensor.h"
#include "amanda/ir/conventions.h"
#include "amanda/ir/graph.h"
#include "amanda/ir/rewriter.h"
#include "amanda/passes/registry.h"
#include "amanda/support/diagnostics.h"

namespace amanda::passes::detail {

using ir::Graph;
using ir::OpId;
using ir::PortId;

// The default-domain opset of the graph (its root namespace amanda/onnx/V), 0 when not ONNX.
int onnx_opset(const Graph& g);
bool is_onnx(const Graph& g);

// An input port that makes an outer value visible to an attribute graph ("@capture.x").
bool is_capture(const Graph& g, PortId p);
// The data input ports of an op, in order (control and capture ports left out).
std::vector<PortId> data_inputs(const Graph& g, OpId op);
std::vector<PortId> data_outputs(const Graph& g, OpId op);
// The producer of data input i (PortId() when absent or omitted).
PortId input_value(const Graph& g, OpId op, size_t i);
// The value at `src` is a scope input: the scope's own input port, or a capture of its owner.
bool is_scope_value(const Graph& g, PortId src);

// The constant tensor at output `src` (a Constant op's value, a fixed initializer; a capture is
// followed to its outer producer), or nullptr.
const ir::Value* constant_value(const Graph& g, PortId src);
const ir::Tensor* const_tensor(const Graph& g, PortId src);
// The constant as the interpreter's tensor (borrowed, no copy).
std::optional<interp::Tensor> constant_rtensor(const Graph& g, PortId src);
// An int64/int32 constant as a vector.
std::optional<std::vector<int64_t>> constant_ints(const Graph& g, PortId src);
// A constant scalar (any element count 1) as double.
std::optional<double> constant_scalar(const Graph& g, PortId src);

// Attributes (nullopt / dflt when absent or of another kind).
std::optional<int64_t> attr_int(const Graph& g, OpId op, std::string_view name);
int64_t attr_int(const Graph& g, OpId op, std::string_view name, int64_t dflt);
std::optional<double> attr_float(const Graph& g, OpId op, std::string_view name);
std::optional<std::string> attr_string(const Graph& g, OpId op, std::string_view name);
std::optional<std::vector<int64_t>> attr_ints(const Graph& g, OpId op, std::string_view name);
bool has_graph_attr(const Graph& g, OpId op);

// Uses of an output (edges leaving it).
size_t uses(const Graph& g, PortId out);
// Whether one of the uses of `out` is an output of its scope (a graph or body output).
bool feeds_scope_output(const Graph& g, PortId out);
bool has_control_edges(const Graph& g, OpId op);

// The known static shape of a port (every dimension known), or nullopt.
std::optional<std::vector<int64_t>> static_shape(const Graph& g, PortId p);
// The element type of a port's type, Undefined when not known.
ir::DType elem_type(const Graph& g, PortId p);
int64_t rank_of(const Graph& g, PortId p);  // -1 unknown

// Replacing `from` (an op's output) by `to`: every use of `from` becomes a use of `to`. When
// `from` is an output of its scope, `to` takes over its value name, which is possible only when
// `to` is an op output of the same scope that is not itself a scope output; can_replace says so.
bool can_replace(const Graph& g, PortId from, PortId to);
// Returns false (changing nothing) when !can_replace.
bool replace_value(ir::Rewriter& rw, PortId from, PortId to);

// A Constant op holding `t`, created before `before` (in its scope); returns its output. Its value
// name is derived from `hint` and unique in the graph.
PortId make_constant(ir::Rewriter& rw, OpId before, const ir::Tensor& t, std::string_view hint);
PortId make_constant(ir::Rewriter& rw, OpId before, const interp::Tensor& t, std::string_view hint);
ir::Tensor to_ir(const interp::Tensor& t);
ir::Tensor int64_tensor(const std::vector<int64_t>& v, std::vector<int64_t> shape);
ir::Tensor int64_tensor(const std::vector<int64_t>& v);

// A fresh value name for a new output port (unique: derived from the port id).
void name_value(ir::Rewriter& rw, PortId out, std::string_view hint);

// Ops of the scope in topological order (data and control edges), or nullopt on a cycle.
std::optional<std::vector<OpId>> topo(const Graph& g, OpId scope);

// Runs the interpreter's kernel for `op` on `inputs` (positional; nullopt for an omitted input).
// Returns nullopt when there is no kernel or the kernel refuses.
std::optional<std::vector<interp::Tensor>> eval_op(const Graph& g, OpId op, const std::vector<std::optional<interp::Tensor>>& inputs);

// ONNX Transpose of a constant's bytes (out.shape[i] = in.shape[perm[i]]), read unaligned: what
// constant folding does with the exporters' weight Transposes without copying the weight to an
// aligned block first. nullopt: strings, a perm that is not one, bytes that do not fit the shape.
std::optional<ir::Tensor> transpose_tensor(const ir::Tensor& t, const std::vector<int64_t>& perm);

// Ops never folded, merged or removed for their value: random, or with a state.
bool nondeterministic(std::string_view type);

}  // namespace amanda::passes::detail

namespace amanda::passes::detail {
// Float tensors as doubles and back (float16, bfloat16, float32, float64; nullopt for others).
std::optional<std::vector<double>> doubles(const Graph& g, PortId constant);
std::optional<ir::Tensor> from_doubles(const std::vector<double>& v, std::vector<int64_t> shape, ir::DType t);
// Reconnects data input i of op to `src` (adding omitted trailing input ports named `name`).
void set_input(ir::Rewriter& rw, OpId op, size_t i, PortId src, std::string_view name);
}  // namespace amanda::passes::detail

namespace amanda::passes::detail {
// Exactly one edge leaves `p` (O(1): a shared constant's use list is not walked).
inline bool single_use(const Graph& g, PortId p) {
  ir::EdgeId e = g.first_out_edge(p);
  return e && !g.next_out_edge(e);
}
}  // namespace amanda::passes::detail
