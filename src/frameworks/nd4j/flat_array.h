// FlatArray <-> IR values (flat_array.cpp). An array is kept as its element type, shape and
// little-endian bytes (an ir::Tensor, what conversions read) plus what the file said about it:
// `shape_info` (nd4j's shape information: rank, dimensions, strides, the dtype flags, the element
// stride and the order) and `byte_order`, so that writing gives the same bytes back. An array
// Amanda cannot decode (UTF-8 strings, Fortran order, an INHERIT dtype) is kept as `raw` bytes.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include "amanda/ir/value.h"
#include "samediff_generated.h"

namespace amanda::nd4j {

// The map {tensor | raw, shape_info, dtype, byte_order} of an array; `owner` keeps borrowed bytes alive.
ir::Value array_to_value(const sd::graph::FlatArray* a, const std::shared_ptr<const Buffer>& owner, const std::string& where);
// The array of such a map, or of a bare tensor (a new array: C order, little-endian).
flatbuffers::Offset<sd::graph::FlatArray> value_to_array(flatbuffers::FlatBufferBuilder& fbb, const ir::Value& v,
                                                         const std::string& where);

}  // namespace amanda::nd4j
