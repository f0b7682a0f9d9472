// What the two schemas of an op say about converting it between two namespaces without a rule
// (ONNX's version converter does the same with its CompatibleAdapter and TypeRestriction): an op
// whose attributes and ports are the same in both, differing at most in the element types its
// type parameters take, converts as it is when the model's element types are ones the target
// takes; the tables hold only real changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <string_view>

#include "amanda/ir/graph.h"
#include "amanda/ir/rewriter.h"
#include "amanda/schema/schema.h"

namespace amanda::mapping {

struct SchemaStep {
  enum class Kind {
    Same,       // one declaration: nothing to check
    TypesOnly,  // attributes and ports the same; type constraints may differ: check the model's types
    Changed,    // attributes or ports differ: a rule must say what to do
    Missing,    // the target has no such op
  };
  Kind kind = Kind::Changed;
  std::string why;  // Changed / Missing: what differs, for the report
  // TypesOnly may also mean: the target lacks some attributes (they convert at their default) or
  // some trailing optional ports (they convert when unused); attributes the target adds have
  // defaults that keep the meaning.
  std::vector<const schema::AttrSchema*> dropped_attrs;
  std::vector<const schema::AttrSchema*> required_attrs;  // optional in the source, required in the target
  size_t max_inputs = SIZE_MAX, max_outputs = SIZE_MAX;  // the target's port counts when smaller
  std::vector<size_t> required_inputs;  // optional in the source, required in the target: must be connected
  size_t min_variadic = 0;              // the target's variadic input needs at least this many
};

// src and dst may be null (no such op). dst_ns names the target in messages.
SchemaStep compare_schemas(const schema::OpSchema* src, const schema::OpSchema* dst, std::string_view dst_ns);

// Why the op cannot drop what the target lacks (an attribute not at its default, a connected
// input or used output the target does not have); empty when it can.
std::string extension_refusal(const ir::Graph& g, ir::OpId op, const SchemaStep& st, std::string_view dst_ns);
// Drops those attributes and ports (after extension_refusal said yes), through the rewriter.
void drop_extensions(ir::Rewriter& rw, ir::OpId op, const SchemaStep& st);

// The type of the value at a port as the model says it ("tensor(float)"), or "" when it does not:
// an input's producer, an output's own value info, else a graph output it feeds.
std::string port_value_type(const ir::Graph& g, ir::PortId p);

// Why `dst` cannot take the op as it is: the first data port whose known element type is not among
// those its type parameter allows in dst ("input B of Pow is tensor(int64); Pow in amanda/onnx/11
// takes T in {tensor(float16), ...}"). Empty when every known type fits.
std::string type_refusal(const ir::Graph& g, ir::OpId op, const schema::OpSchema& dst, std::string_view dst_ns);

// The allowed types of port k (an input when `input`) of dst; empty when the schema does not say.
const std::vector<std::string>* allowed_types(const schema::OpSchema& s, bool input, size_t k);

}  // namespace amanda::mapping
