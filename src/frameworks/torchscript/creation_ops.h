// Tensors made from sizes and numbers (creation_ops.cpp): zeros, ones, full, eye, arange,
// linspace, scalar_tensor, tensor, *_like / new_* of a typed tensor. Their results are known, so
// they fold into constants as torch.onnx.export folds them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frameworks/torchscript/runtime.h"

namespace amanda::torchscript {

// nullopt when the op is not a creation op or an argument is not a known number or list.
std::optional<std::vector<VRef>> evaluate_creation(const std::string& op_type, const Args& a, const std::string& where);

}  // namespace amanda::torchscript
