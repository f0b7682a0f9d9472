// Reading and writing ONNX protobufs without copying tensor bytes. protobuf 3.21's C++ classes
// always copy a `bytes` field into a std::string (the open-source runtime has no aliasing
// `ctype`), so the big `raw_data` of tensors is routed around them:
//  - reading: protobuf's own CodedInputStream walks the fields of ModelProto, its GraphProto and,
//    in every graph (If/Loop/Scan bodies too), the initializers and the nodes whose attributes
//    hold a tensor or a graph (a Constant node's `value`); every other run of fields is parsed by
//    the generated classes (merging field runs in file order is what parsing the whole message
//    does), and a tensor's single raw_data field is left out of its proto and handed back as a
//    span of the input;
//  - writing: the generated classes serialise every part, and the raw bytes of the root
//    initializers are spliced in with WireFormatLite tags at their field position (protobuf
//    writes fields in field-number order, so a message splits at a field number exactly).
// See docs/onnx.md ("How the bytes are read and written").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <onnx/onnx_pb.h>

#include "amanda/ir/tensor.h"

namespace amanda::onnx_frontend::detail {

struct RawSpan {
  const uint8_t* data = nullptr;  // the raw_data payload inside the input
  size_t size = 0;
  bool present = false;           // the tensor had (exactly one) raw_data field, left out of its proto
  const uint8_t* tensor = nullptr;  // the whole TensorProto's bytes (for the rare proto fallback)
  size_t tensor_size = 0;
};

// The tensors of a parsed model whose raw_data was left out, by the address of their proto (the
// protos live in the model's arena or heap and do not move while it lives).
class RawSpans {
 public:
  const RawSpan* find(const onnx::TensorProto& t) const {
    auto it = spans_.find(&t);
    return it == spans_.end() ? nullptr : &it->second;
  }
  void add(const onnx::TensorProto* t, const RawSpan& s) { spans_[t] = s; }
  void clear() { spans_.clear(); }
  size_t size() const { return spans_.size(); }
  // f(RawSpan&) for every span (to give each its own copy when the input is not kept).
  template <class F>
  void for_each(F&& f) {
    for (auto& [t, s] : spans_) f(s);
  }

 private:
  absl::flat_hash_map<const onnx::TensorProto*, RawSpan> spans_;
};

// Parses `bytes` into `m`, leaving out the raw_data of the tensors named above, whose spans go to
// `raw`. Returns false (m then undefined) when the bytes are not a message this fast path handles
// (malformed, no or several graph fields, a field of an unexpected wire type, nesting deeper than
// protobuf's limit, ...): the caller then parses with protobuf alone, which also gives the error.
bool parse_model_borrowing(const uint8_t* bytes, size_t n, onnx::ModelProto& m, RawSpans& raw);

// A copy of `a` with the raw_data of its borrowed tensors put back (its graphs' too), for the rare
// attribute kept whole as bytes: serialising `a` itself would leave them out.
onnx::AttributeProto complete_attribute(const onnx::AttributeProto& a, const RawSpans& raw);

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
