// nd4j / SameDiff (docs/nd4j.md): the namespace of nd4j's ordered-argument ops, SameDiff's
// FlatBuffers model files (.fb) in and out, and DL4J's own mapping rule sets as Amanda tables.
//
// How ordered arguments live in the IR: an op's arguments are attributes named by the op
// descriptor's argument names (conv2d: kH, kW, sH, ...), their type and index are the namespace's
// (Descriptors below, from namespaces/nd4j/1.0.nd4jops). A name that the descriptor gives to
// arguments of several types gets the type as suffix (range: from_double, from_int64). Arguments
// past the descriptor's count of a list stay in order in `rest_int`, `rest_float`, `rest_bool`,
// `rest_dtype`, `rest_string`. Writing puts each list back in index order; a gap (argument k
// missing while k + 1 is given) cannot be written and is a validation error naming the argument.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "amanda/text/document.h"

namespace amanda::pipeline {
class Framework;
}
namespace amanda::ir {
class Conventions;
}

namespace amanda::nd4j {

inline constexpr std::string_view kNamespace = "amanda/nd4j/1.0";
// SameDiff has no constant op: its constants are CONSTANT variables. Tables that must make a
// constant (an attribute turned into an input) make this op (attribute `value`, output `outputs`);
// the .fb writer writes it as a CONSTANT variable, and the reader gives such variables back as
// graph inputs with an initializer (docs/nd4j.md).
inline constexpr std::string_view kConstantOp = "constant";

// The five ordered lists of a SameDiff node (FlatNode's extraInteger, extraParams, extraBools,
// extraTypes, extraStrings). INT32 and INT64 arguments share the integer list, FLOAT and DOUBLE
// the floating-point one.
enum class ArgList : uint8_t { Int, Float, Bool, DType, String };
inline constexpr int kArgLists = 5;
std::string_view list_name(ArgList l);     // "int", "float", ...
std::string rest_attr(ArgList l);          // "rest_int", ...

struct ArgDesc {
  ArgList list;
  std::string type;  // as the descriptor says: int64, int32, double, float, bool, dtype, string
  uint32_t index = 0;
  std::string name;  // the descriptor's name
  std::string attr;  // the IR attribute (the name, or name_TYPE when the name is used twice)
};

struct OpDesc {
  std::string name;
  std::string declaration;  // CUSTOM_OP_IMPL, LEGACY_XYZ, ...
  std::vector<std::string> inputs, outputs;  // by index
  std::vector<ArgDesc> args;                 // by list, then index
  std::vector<std::string> aliases;
  // The arguments of one list, by index (index i at position i when the descriptor has no gap).
  std::vector<const ArgDesc*> list(ArgList l) const;
  const ArgDesc* arg_by_attr(std::string_view attr) const;
};

class Descriptors {
 public:
  // The shipped namespaces/nd4j/1.0.nd4jops, read once per process.
  static const Descriptors& shipped();
  // Reads the compact form; `path` is used in errors (path:line).
  static std::unique_ptr<Descriptors> parse(std::string_view text, const std::string& path);

  const OpDesc* find(std::string_view type) const;  // by name or alias
  const std::vector<std::unique_ptr<OpDesc>>& ops() const { return ops_; }
  size_t argument_count() const;  // argument descriptors, tensors included
  // The namespace schema: ports by the descriptor's tensor names (every one optional, then a
  // variadic `more` for the ports past them), each argument an optional attribute of the
  // flatbuffers type system, the rest_* lists, and the annotations a .fb file needs (@nd4j.*).
  std::unique_ptr<schema::NamespaceSchema> schema(const schema::TypeSystems& types) const;

 private:
  std::vector<std::unique_ptr<OpDesc>> ops_;
  std::vector<std::pair<std::string, const OpDesc*>> index_;  // sorted by name, aliases included
  std::string name_;
};

std::shared_ptr<schema::Provider> make_namespace_provider();
// nd4j's type system ("nd4j": int64, double, bool, dtype, string and their lists; type_system.cpp).
std::unique_ptr<schema::TypeSystem> make_type_system();
// Adds the type system and the namespace provider to a registry.
void add_to(schema::Registry& registry);
// Registers `constant` as a constant-producing op type (ir::conventions).
void register_conventions(ir::Conventions& c);

// The ordered lists of an op, from its attributes (position = argument index, then rest_*).
// Fails naming the op path and the argument when an argument is missing before a given one, or
// has a value of the wrong kind.
struct OrderedArgs {
  std::vector<ir::Value> lists[kArgLists];
};
OrderedArgs ordered_args(const ir::Graph& g, ir::OpId op, const OpDesc* desc);
// Sets the attributes of `op` from ordered lists (the reader, and tables that produce lists).
void set_ordered_args(ir::Graph& g, ir::OpId op, const OpDesc* desc, const OrderedArgs& args);
// Every ordered-argument problem of every nd4j op of the graph, as errors with their paths.
size_t check_ordered_args(const ir::Graph& g, Diagnostics& diags);

// SameDiff's op number of a custom op: libnd4j's HashHelper::getLongHash of its name.
int64_t op_hash(std::string_view name);

// sd.graph.DType <-> Amanda's element type names ("float32"); nullopt when there is none.
std::optional<std::string> dtype_from_sd(int code);
std::optional<int> dtype_to_sd(std::string_view name);

// A .fb file (FlatGraph) as a graph of amanda/nd4j/1.0. `where` names the file in errors. Every
// field the schema has is kept (docs/nd4j.md, "The IR of a .fb file").
text::Document read_flatgraph(std::shared_ptr<const Buffer> bytes, const std::string& where);
// The graph as a FlatGraph; throws amanda::Error naming the op when it cannot be written.
std::string write_flatgraph(const text::Document& doc);

// Root constant ops (ir::is_constant_output) become graph inputs with an initializer: SameDiff's
// constants are variables. Returns how many.
size_t constants_to_initializers(ir::Graph& g);
// Drops root noops whose outputs nothing reads (before converting out of nd4j). Returns how many.
size_t drop_unused_noops(ir::Graph& g);
// The value types of a graph by value name (`@value`), taken before a conversion into nd4j and given
// back after it to the ports that kept their value's name: nd4j has no type inference of its own,
// and the .fb file records each variable's element type and shape, which rules going out read.
struct TypeMemo {
  std::map<std::string, ir::TypeId> by_value;
};
TypeMemo remember_types(const ir::Graph& g);
size_t restore_types(ir::Graph& g, const TypeMemo& m);
// After converting an nd4j graph to ONNX: every value typed by ONNX's inference (graph outputs need types).
void finish_onnx(ir::Graph& g);

std::unique_ptr<pipeline::Framework> make_framework();

}  // namespace amanda::nd4j

namespace amanda::frameworks {
std::unique_ptr<amanda::pipeline::Framework> make_nd4j();
}
