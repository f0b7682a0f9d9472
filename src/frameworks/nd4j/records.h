// The annotations that keep what a .fb file says beyond the graph itself (docs/nd4j.md):
//   root graph  @nd4j.graph     {id, outputs, configuration, placeholders, lossVariables, trainingConfig, updaterState,
//                                variables/nodes: whether the vectors were present}
//   op          @nd4j.node      {id, no_name, opType/opNum (only when not derived from the op type), present: the
//                                vectors that were present (even empty), properties, input, output, device,
//                                scope_id, scope_name, outputTypes, scalar, controlDeps, varControlDeps, controlDepFor}
//   op          @nd4j.dimensions FlatNode.dimensions, the axes of a legacy op (apart: rules read it)
//   port        @nd4j.variable  {index (position in FlatGraph.variables), id (graph inputs), dtype, shape, device,
//                                variabletype, control deps, ndarray (its shape_info and byte order; the tensor
//                                itself is the port's `initializer`), no_id, no_name}
//   graph output @nd4j.derived  the output was not in FlatGraph.outputs (an op output nothing reads)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace amanda::nd4j {

inline constexpr std::string_view kGraphRecord = "@nd4j.graph";
inline constexpr std::string_view kNodeRecord = "@nd4j.node";
inline constexpr std::string_view kVarRecord = "@nd4j.variable";
inline constexpr std::string_view kDimensions = "@nd4j.dimensions";  // FlatNode.dimensions (legacy ops' axes)

// The opType and opNum a node of this op type gets when its record does not say: a legacy op's
// (opType, number) where known, else CUSTOM (21) and the hash of the op's first name.
void derived_op_number(std::string_view type, int64_t& op_type, int64_t& op_num);

// The IR name of tensor port i of an op whose descriptor names `names`.
std::string port_name(const std::vector<std::string>& names, size_t i);

}  // namespace amanda::nd4j
