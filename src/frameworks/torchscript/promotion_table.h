// Which aten ops promote their operands to one element type, and how (torch's result_type rules
// decide the type). The one table both TorchScript readers use: the libtorch-free reader in
// promotion.cpp, the libtorch reader in src/frameworks/torch/promotion_pass.cpp. Header-only (the
// libtorch plugin does not link the reader).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace amanda::torchscript {

struct Promoted {
  std::vector<size_t> operands;  // argument positions that share ONNX's type parameter
  bool true_division = false;    // integers divide as floats (torch.div without rounding_mode)
  bool compare = false;          // the result is bool; the operands still promote together
};

inline const std::unordered_map<std::string, Promoted>& promotion_table() {
  static const std::unordered_map<std::string, Promoted> t = [] {
    std::unordered_map<std::string, Promoted> m;
    for (const char* b : {"add", "sub", "mul", "rsub", "remainder", "fmod", "floor_divide", "maximum", "minimum", "atan2",
                          "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor", "__and__", "__or__", "__xor__", "pow"})
      m[b] = {{0, 1}};
    for (const char* b : {"div", "true_divide"}) m[b] = {{0, 1}, true};
    for (const char* b : {"eq", "ne", "lt", "le", "gt", "ge"}) m[b] = {{0, 1}, false, true};
    // integer (and bool) operands compute as the default float type (torch.reciprocal(int64) is float32)
    for (const char* b : {"reciprocal", "sqrt", "rsqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
                          "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc"})
      m[b] = {{0}, true};
    for (const char* b : {"outer", "ger"}) m[b] = {{0, 1}};
    m["where"] = {{1, 2}};
    m["lerp"] = {{0, 1, 2}};
    m["addcmul"] = {{0, 1, 2}};
    m["addcdiv"] = {{0, 1, 2}};
    return m;
  }();
  return t;
}

// The rule of an op type ("aten::add_.Tensor"), and whether it is the in-place form.
struct PromotionOf {
  const Promoted* rule = nullptr;
  bool in_place = false;
  bool rounding_mode = false;  // div with rounding_mode: no true division
};

inline PromotionOf promotion_of(std::string_view op_type) {
  PromotionOf r;
  std::string base(op_type.substr(0, op_type.find('.')));
  if (base.rfind("aten::", 0) != 0) return r;
  base = base.substr(6);
  r.in_place = !base.empty() && base.back() == '_' && base.find("__") == std::string::npos;
  if (r.in_place) base.pop_back();
  auto it = promotion_table().find(base);
  if (it == promotion_table().end()) return r;
  r.rule = &it->second;
  r.rounding_mode = op_type.find("Tensor_mode") != std::string_view::npos || op_type.find("Scalar_mode") != std::string_view::npos;
  return r;
}

}  // namespace amanda::torchscript
