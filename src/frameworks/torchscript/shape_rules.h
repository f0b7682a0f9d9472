// More shape rules of the libtorch-free reader (shape_rules.cpp), one registry entry per op:
// element types and shapes of graph ops tensor_ops.cpp's infer() has no rule for.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frameworks/torchscript/runtime.h"

namespace amanda::torchscript {

// nullopt when no rule here knows the op (or an argument is not what the rule needs).
std::optional<std::vector<OutInfo>> infer_more(const std::string& op_type, const Args& a, const std::string& where);

}  // namespace amanda::torchscript
