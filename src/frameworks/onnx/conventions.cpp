// ONNX's conventions for the framework-neutral layers (amanda/ir/conventions.h).
#include "amanda/frameworks/onnx/namespaces.h"
#include "proto_util.h"

namespace amanda::onnx_frontend {

void register_conventions(ir::Conventions& c) {
  // TensorProto.DataType, from the importer's own table (proto_util.h), so there is one copy.
  ir::DTypeCodes codes;
  for (int e = 1; e <= 16; ++e)
    if (auto d = detail::dtype_of(e)) codes.emplace_back(e, std::string(ir::dtype_name(*d)));
  c.add_dtype_codes("onnx", std::move(codes));
  c.add_constant_op("Constant");
}

}  // namespace amanda::onnx_frontend
