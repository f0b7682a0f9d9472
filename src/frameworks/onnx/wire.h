// Reading and writing ONNX protobufs without copying tensor bytes. protobuf 3.21's C++ classes
// always copy a `bytes` field into a std::string (the open-source runtime has no aliasing
// `ctype`), so the big `raw_data` of the root graph's initializers is routed around them:
//  - reading: protobuf's own CodedInputStream walks the fields of ModelProto, its GraphProto and
//    each initializer TensorProto; every other run of fields is parsed by the generated classes
//    (merging field runs in file order is what parsing the whole message does), and a tensor's
//    single raw_data field is left out of its proto and handed back as a span of the input;
//  - writing: the generated classes serialise every part, and the raw bytes of the root
//    initializers are spliced in with WireFormatLite tags at their field position (protobuf
//    writes fields in field-number order, so a message splits at a field number exactly).
// See docs/onnx.md ("How the bytes are read and written").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "amanda/ir/tensor.h"

namespace amanda::onnx_frontend::detail {

struct RawSpan {
  const uint8_t* data = nullptr;  // the raw_data payload inside the input
  size_t size = 0;
  bool present = false;           // the tensor had (exactly one) raw_data field, left out of its proto
  const uint8_t* tensor = nullptr;  // the whole TensorProto's bytes (for the rare proto fallback)
  size_t tensor_size = 0;
  std::shared_ptr<const Buffer> owner;  // holds `data` when it is not the input (a copy of it)
};

// Parses `bytes` into `m`, leaving out the raw_data of the root graph's initializers, whose spans
// go to raw[i] for m.graph().initializer(i). Returns false (m then undefined) when the bytes are
// not a message this fast path handles (malformed, no or several graph fields, ...): the caller
// then parses with protobuf alone, which also gives the error.
bool parse_model_borrowing(const uint8_t* bytes, size_t n, onnx::ModelProto& m, std::vector<RawSpan>& raw);

// Where serialised bytes go.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(const void* p, size_t n) = 0;
  // The bytes of a tensor (may be a mapped file: a file sink writes them without keeping them resident).
  virtual void write_tensor(const ir::Tensor& t) { write(t.data, t.size); }
  virtual void reserve(uint64_t total) {}  // called once, before the first write
};

// Writes `m` (whose root initializer i lacks its raw_data when deferred[i] is set: those bytes
// are spliced in from the tensor) exactly as m.SerializeToString would with the bytes in place.
// Consumes m's graph (fields are moved out). Returns the number of bytes written; throws
// amanda::Error when the result would exceed protobuf's 2 GiB limit.
uint64_t serialize_model_spliced(onnx::ModelProto& m, const std::vector<const ir::Tensor*>& deferred, Sink& out,
                                 const std::string& what);

}  // namespace amanda::onnx_frontend::detail
