// ONNX value files: a serialized TensorProto, SequenceProto or OptionalProto (the input_k.pb and
// output_k.pb files of ONNX's backend test data). `amanda run --input NAME=FILE.pb` reads them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/tensor.h"

namespace amanda::onnx_frontend {

struct ValueFile {
  enum class Kind { Tensor, Sequence, None };
  Kind kind = Kind::Tensor;
  std::shared_ptr<const ir::Tensor> tensor;
  std::vector<std::shared_ptr<const ir::Tensor>> seq;
};

// `type` is the ONNX type the value should have ("tensor(float)", "seq(tensor(float))",
// "optional(...)"); it decides which message the file holds. Throws amanda::Error naming the file.
ValueFile read_value_file(const std::string& path, std::string_view type);

}  // namespace amanda::onnx_frontend
