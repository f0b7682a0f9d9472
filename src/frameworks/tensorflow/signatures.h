// What the importer and exporter need to know of an op: its argument lists (from the TensorFlow
// namespaces, or from a FunctionDef's signature when the op calls a library function) and its
// attributes' types. One place, so both directions name ports the same way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/node_hash_map.h>

#include "amanda/schema/schema.h"
#include "amanda_tf_graph.pb.h"

namespace amanda::tf_frontend::detail {

struct ArgSpec {
  std::string name;
  bool list = false;            // number_attr or type_list_attr (or a TF.js list input)
  std::string number_attr, type_list_attr;
};

struct OpSignature {
  std::vector<ArgSpec> inputs, outputs;
  const schema::OpSchema* schema = nullptr;  // null for a library function
  bool tfjs = false;                         // from amanda/tensorflow/tfjs
};

class Signatures {
 public:
  // Library functions are callable as ops by name; they are added before any body is read.
  void add_function(const tensorflow::OpDef& sig);
  // nullptr for an op nobody declares.
  const OpSignature* find(std::string_view op);
  // The schema's type of attribute `name` of op `op` ("tensorflow.DType", "List[int]", ...), or "".
  std::string_view attr_hint(std::string_view op, std::string_view name);
  // The same for an op whose signature was found already (null: "").
  static std::string_view attr_hint(const OpSignature* sig, std::string_view name);

 private:
  // Node maps: find() hands out pointers that must survive later insertions. cache_: the
  // registry's signatures (shared by the process, registry_signature in signatures.cpp).
  absl::flat_hash_map<std::string, const OpSignature*> cache_;
  absl::node_hash_map<std::string, OpSignature> functions_;
};

// How many ports an argument list has on a node, given its attributes (number_attr: the int;
// type_list_attr: the list's length); -1 when they do not say.
int64_t list_length(const ArgSpec& a, const google::protobuf::Map<std::string, tensorflow::AttrValue>& attrs);

}  // namespace amanda::tf_frontend::detail
