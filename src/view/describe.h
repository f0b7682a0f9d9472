// Short human-readable text for the viewer: attribute values, port types and shapes, endpoints.
#pragma once

#include <string>

#include "amanda/ir/graph.h"

namespace amanda::view {

// A value cut to about `budget` characters: tensors as "float32[64, 3, 7, 7]" (with the values
// when there are a few), graphs as "graph NAME (N ops)".
std::string value_summary(const ir::Graph& g, const ir::Value& v, size_t budget = 200);
// The type and shape a port carries ("tensor(float) [N, 3, 224, 224]"), from its own attributes,
// its initializer, or for an input port without them, its producer's. "" when nothing says.
std::string port_type(const ir::Graph& g, ir::PortId p);
// Where an input port's value comes from ("conv1:Y", "input x", "initializer W"), and where an
// output port's goes ("relu:X, add:A, ... (5 uses)").
std::string port_source(const ir::Graph& g, ir::PortId in);
std::string port_uses(const ir::Graph& g, ir::PortId out);
// True for a graph input port that holds a weight (ONNX initializer): not drawn as a node.
bool is_initializer(const ir::Graph& g, ir::PortId p);
// The attribute of `owner` that holds graph node `gn` ("then_branch"), or the graph's name.
std::string body_title(const ir::Graph& g, ir::OpId owner, ir::OpId gn);

}  // namespace amanda::view
