// Namespace schemas (amanda-design.md, "Namespace"): the vocabulary of one framework version.
//
//   namespace:
//     name: amanda/tensorflow/1.13.1
//     type_system: python
//     op_schemas:
//       - type: MatMul
//         attrs: { T: {one_of: [...]}, transpose_a: {type: bool, default: false} }
//         input_ports: [ {attrs: {name: {type: str, default: a}}}, ... ]
//         output_ports: [ ... ]
//         ops: [...]     # composite ops: the body, kept as written
//         edges: [...]
//
// attr_type is one of: a type; {type, default}; {type, constant}; {one_of: [attr_type...], default}.
// Extensions (documented in docs/namespaces.md): `optional: true` on the map forms; per port
// `arity: single|optional|variadic` and `min_arity`; per op `since_version`, `deprecated`,
// `domain`, `type_constraints`.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "amanda/ir/value.h"
#include "amanda/schema/type_system.h"
#include "amanda/support/diagnostics.h"
#include "amanda/text/tree.h"

namespace amanda::schema {

// "1.13.1" < "1.14" < "2.0"; "9" < "13". Non-numeric parts compare as text.
int compare_versions(std::string_view a, std::string_view b);
bool is_version(std::string_view s);  // starts with a digit
// A namespace name is a path: non-empty parts separated by '/', of letters, digits, '.', '_', '-', '+'.
bool valid_namespace_name(std::string_view s, std::string* why = nullptr);
// "amanda/onnx/13" -> {"amanda/onnx", "13"}; "amanda/onnx" -> {"amanda/onnx", ""} when the last part is not a version.
std::pair<std::string, std::string> split_version(std::string_view ns);

struct AttrType {
  enum class Form { Type, Default, Constant, OneOf };
  Form form = Form::Type;
  std::string type;            // Type, Default, Constant
  TypeRef compiled;            // the type system's compiled form of `type`
  ir::Value value;             // Default: the default; Constant: the constant
  std::vector<AttrType> options;  // OneOf
  std::optional<ir::Value> one_of_default;
  bool optional = false;       // extension: may be absent although it has no default
  SourceLoc loc;

  bool required() const;
  const ir::Value* default_value() const;
  bool operator==(const AttrType& o) const;
};

struct AttrSchema {
  std::string name;
  AttrType type;
  bool operator==(const AttrSchema& o) const { return name == o.name && type == o.type; }
};

enum class Arity { Single, Optional, Variadic };
std::string_view arity_name(Arity a);

struct PortSchema {
  std::vector<AttrSchema> attrs;
  Arity arity = Arity::Optional;  // the seed's ports say nothing: they may be left out
  bool arity_given = false;
  uint32_t min_arity = 1;         // variadic
  bool homogeneous = true;        // variadic: one type for all
  std::string type;               // extension: a type or a type-constraint name ("T")
  const AttrSchema* attr(std::string_view name) const;
  // The name a port must have: the `name` attribute's constant or default, if any.
  std::optional<std::string> expected_name() const;
  bool operator==(const PortSchema& o) const;
};

struct TypeConstraint {
  std::string name;
  std::vector<std::string> allowed;
  bool operator==(const TypeConstraint& o) const = default;
};

struct OpSchema {
  std::string type;
  std::vector<AttrSchema> attrs;
  std::vector<PortSchema> inputs, outputs;
  std::optional<text::Tree> ops, edges;  // composite ops: the body as written
  std::optional<int64_t> since_version;
  bool deprecated = false;
  std::string domain;
  std::vector<TypeConstraint> type_constraints;
  std::string declared_in;  // the namespace whose file declares it
  SourceLoc loc;

  const AttrSchema* attr(std::string_view name) const;
};

struct NamespaceSchema {
  std::string name;
  std::string type_system;
  const TypeSystem* types = nullptr;
  std::vector<std::unique_ptr<OpSchema>> ops;
  absl::flat_hash_map<std::string, const OpSchema*> by_type;
  SourceLoc loc;

  const OpSchema* find(std::string_view type) const;
  OpSchema& add(std::unique_ptr<OpSchema> op);  // throws amanda::Error on a duplicate type
};

// Reads a namespace schema file (YAML or JSON). Throws ParseError with file:line:column on any
// problem: unknown attr_type form, one_of with no options, duplicate op type, a default or
// constant not of its type, a namespace name that is not a path, an unknown type system or type.
std::unique_ptr<NamespaceSchema> read_namespace(const std::string& path, const TypeSystems& types);
std::unique_ptr<NamespaceSchema> parse_namespace(const text::Tree& doc, const TypeSystems& types);
// The namespace as a seed-format document (YAML or JSON text) that read_namespace loads back.
std::string namespace_to_text(const NamespaceSchema& ns, text::Format format = text::Format::Yaml);
// Compiles every type of a schema built in code (providers) against its type system.
void compile_types(NamespaceSchema& ns, const TypeSystems& types);

}  // namespace amanda::schema
