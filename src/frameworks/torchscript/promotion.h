// torch's type promotion made explicit for ONNX (promotion.cpp).
#pragma once

#include <functional>
#include <string>

#include "frameworks/torchscript/runtime.h"

namespace amanda::torchscript {

// torch.result_type of the operands (dimensioned tensors first; zero-dim tensors and Python
// numbers only lift the category). Defined in tensor_ops.cpp.
ir::DType promoted_type(const std::vector<const Val*>& operands);

// Before an elementwise op becomes a graph op: its tensor operands get the element type torch
// computes in, since ONNX's Add, Equal, Where, ... take one type for all of them. A known operand
// (a Python number the tracer recorded as a 0-d double or int64 constant) is converted in place;
// a graph tensor gets `cast(v, type)` (the importer makes an aten::to). Ops that are not
// elementwise are left alone.
// torch's ScalarType number of an element type (the inverse of dtype_from_scalar_type).
int64_t scalar_type_code(ir::DType t);

void make_promotion_explicit(const std::string& op_type, Args& args, const std::function<VRef(const VRef&, ir::DType)>& cast);

}  // namespace amanda::torchscript
