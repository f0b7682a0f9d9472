// The amanda/core op registry (internal): one entry per op with its input names, its attributes
// (name, type in the onnx type system's spelling, default) and its type rule. The builder, the
// namespace schema (namespace.cpp) and type checking of mapped graphs (infer_types) all read it,
// so the ops are listed once.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/core/builder.h"

namespace amanda::core::detail {

// A type rule's refusal: the message says what was expected (the caller adds the op's path).
struct Failure {
  std::string why;
};

using Rule = std::function<ir::TypeData(std::span<const ir::TypeData* const> in, const ir::AttrList& attrs, ir::Graph& g)>;

struct AttrDef {
  std::string_view name;
  std::string_view type;           // "int", "float", "ints", "string", "tensor", "any"
  std::optional<ir::Value> dflt;   // none: required
};

struct OpDef {
  std::string_view type;
  std::vector<std::string_view> inputs;  // with `variadic`, the one input name repeated (inputs.0, ...)
  std::vector<AttrDef> attrs;
  Rule rule;
  bool variadic = false;
  std::string_view doc;
};

const std::vector<OpDef>& registry();
const OpDef* find_def(std::string_view type);
std::string show(ir::Graph& g, ir::TypeData t);

}  // namespace amanda::core::detail
