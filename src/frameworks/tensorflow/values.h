// TensorFlow's values <-> the IR's: DataType names, TensorShapeProto, TensorProto and AttrValue.
// See docs/tensorflow.md ("Attributes") for the spellings. Conversions are exact or refused: a
// caller that gets std::nullopt / false keeps the message whole instead (an '@' annotation).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "amanda/ir/value.h"
#include "amanda_tf_graph.pb.h"

namespace amanda::tf_frontend::detail {

// DT_FLOAT -> "float32" (tf.DType.name), DT_FLOAT_REF -> "float32_ref"; nullopt for an enum value
// the name table does not know (DT_INVALID included).
std::optional<std::string_view> dtype_name(int dt);
std::optional<tensorflow::DataType> dtype_from_name(std::string_view name);
// The IR element type a TensorFlow tensor's bytes have (qint8 -> Int8, ...); Undefined when the
// IR has none (resource, variant).
ir::DType ir_dtype(tensorflow::DataType dt);
// The dtype ops.pbtxt's names would call an IR tensor (Float32 -> DT_FLOAT).
tensorflow::DataType tf_dtype(ir::DType t);

// A shape as the importer spells it: [dims], null for an unknown dim (-1); null for an unknown
// rank. nullopt when that cannot say it (a named dim, a size below -1).
std::optional<ir::Value> shape_value(const tensorflow::TensorShapeProto& s);
bool shape_proto(const ir::Value& v, tensorflow::TensorShapeProto& s);

// How a TensorProto's elements were stored, so that export writes them back the same way:
//   content (tensor_content; the default), typed (float_val, int_val, ...: `values` of them, the
//   last one repeated to fill the shape when fewer), none (no value field: all zeros).
struct TensorMeta {
  std::string storage = "content";
  int64_t values = -1;           // typed: how many values the field held (-1: one per element)
  std::string tf_dtype;          // when the IR dtype does not say it (qint8 -> int8 ...)
  int32_t version_number = 0;
  ir::Value to_value() const;    // a map of the non-default fields; null when all are defaults
  static TensorMeta from_value(const ir::Value* v);
};

// TensorProto -> ir::Tensor. Throws amanda::Error (`where`: for the message) when the data do not
// hold the elements the shape says. Returns nullopt for a tensor the IR cannot hold (resource,
// variant, an unknown dtype, an unknown shape).
// `content`: the tensor_content the caller moved out of `t` (the tensor then owns those bytes: no copy).
std::optional<ir::Tensor> tensor_from_proto(const tensorflow::TensorProto& t, TensorMeta& meta, const std::string& where,
                                            std::string* content = nullptr);
// without_content: leaves tensor_content out (for comparing with a proto whose bytes were moved out).
void tensor_to_proto(const ir::Tensor& t, const TensorMeta& meta, tensorflow::TensorProto& out, bool without_content = false);

// The kinds of AttrValue; the IR value alone cannot always tell them apart ("float32" may be a
// type or a string; [1, 2] a list(int) or a shape), so the importer records the kind when the
// op's schema does not imply it (`@attr_kinds`).
enum class AttrKind { S, I, F, B, Type, Shape, Tensor, Func, Placeholder, ListS, ListI, ListF, ListB, ListType,
                      ListShape, ListTensor, ListFunc, Unsupported };
std::string_view kind_name(AttrKind k);
std::optional<AttrKind> kind_from_name(std::string_view s);
AttrKind kind_of(const tensorflow::AttrValue& v);
// The kind the exporter gives `v` without a record: the schema's (hint: an attribute type of the
// python type system, "tensorflow.DType", "List[int]", ...) when `v` fits it, else the value's own.
AttrKind implied_kind(const ir::Value& v, std::string_view hint);
// Whether `v` can be written as an AttrValue of kind `k`.
bool fits_kind(const ir::Value& v, AttrKind k);
// A double as float32 (an attribute's `f`), overflowing to infinity.
float to_float32(double v);

struct AttrOut {
  ir::Value value;
  ir::Value tensor_meta;  // per-tensor TensorMeta values (a tensor: a map; list(tensor): a list)
};
// AttrValue -> IR value; nullopt when it has no exact readable form (the caller keeps the bytes).
std::optional<AttrOut> attr_from_proto(const tensorflow::AttrValue& v, const std::string& where, std::string* content = nullptr);
// IR value of a kind -> AttrValue; false when the value does not fit the kind.
bool attr_to_proto(const ir::Value& v, AttrKind kind, const ir::Value* tensor_meta, tensorflow::AttrValue& out,
                   bool without_content = false);

// The wire-format fast paths (wire.h). attr_from_wire reads an AttrValue's bytes when they are
// one plain field of a common kind (a scalar, a shape, a tensor of tensor_content, a packed list
// of ints/floats/bools/types, strings or shapes) that converts exactly; false for anything else
// (the caller parses those bytes with protobuf and takes the general path). `ival` is the int of
// an `i` attribute, `ntypes` the number of types of a list (0 for a list of another kind), both -1
// otherwise: what list_length needs.
struct WireAttr {
  AttrOut out;
  AttrKind kind = AttrKind::Unsupported;
  int64_t ival = -1;
  int64_t ntypes = -1;
};
bool attr_from_wire(std::string_view bytes, WireAttr& w);
// Appends the AttrValue's deterministic bytes to `out`, as serialize(attr_to_proto(...)) would;
// false when the value does not fit the kind. With `splice` (a tensor of at least `splice_min`
// bytes kept as tensor_content, whose content is the last field of the AttrValue), the tensor's
// bytes are left out and *splice points at the tensor: they follow `out`'s bytes.
bool attr_to_wire(const ir::Value& v, AttrKind kind, const ir::Value* tensor_meta, std::string& out,
                  const ir::Tensor** splice = nullptr, size_t splice_min = 0);

// Deterministic bytes (map entries sorted), for comparing messages.
std::string serialize(const google::protobuf::MessageLite& m);

}  // namespace amanda::tf_frontend::detail
