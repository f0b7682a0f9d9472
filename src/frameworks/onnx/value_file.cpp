#include "amanda/support/gate.h"
#include "amanda/frameworks/onnx/value_file.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, which onnx-data.pb.h needs

#include <onnx/onnx-data.pb.h>

#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "proto_util.h"

namespace amanda::onnx_frontend {

namespace {

std::shared_ptr<const ir::Tensor> tensor_of(const onnx::TensorProto& t, const std::string& path) {
  detail::TensorContext ctx;
  ctx.file_name = path;
  ir::Value::Map meta;
  ir::Value v = detail::tensor_from_proto(t, ctx, meta);
  if (!v.is_tensor()) throw Error(path + ": the tensor has no readable data");
  return v.tensor_ptr();
}

ValueFile from_sequence(const onnx::SequenceProto& s, const std::string& path) {
  ValueFile r;
  r.kind = ValueFile::Kind::Sequence;
  for (const auto& t : s.tensor_values()) r.seq.push_back(tensor_of(t, path));
  return r;
}

}  // namespace

ValueFile read_value_file(const std::string& path, std::string_view type) {
  auto buf = ReadGate(path).map_model();  // a regular file, opened without blocking
  auto bytes = buf->view();
  ValueFile r;
  if (type.starts_with("optional(")) {
    onnx::OptionalProto o;
    if (!o.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) throw Error(path + ": not an ONNX OptionalProto");
    if (o.has_tensor_value()) r.tensor = tensor_of(o.tensor_value(), path);
    else if (o.has_sequence_value()) r = from_sequence(o.sequence_value(), path);
    else r.kind = ValueFile::Kind::None;
    return r;
  }
  if (type.starts_with("seq(")) {
    onnx::SequenceProto s;
    if (!s.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) throw Error(path + ": not an ONNX SequenceProto");
    return from_sequence(s, path);
  }
  onnx::TensorProto t;
  if (!t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) throw Error(path + ": not an ONNX TensorProto");
  r.tensor = tensor_of(t, path);
  return r;
}

}  // namespace amanda::onnx_frontend
