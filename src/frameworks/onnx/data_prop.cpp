#include "data_prop.h"

#include <algorithm>
#include <optional>
#include <string>

#include <absl/container/flat_hash_map.h>

namespace amanda::onnx_frontend::detail {

namespace {

// Elementwise integer arithmetic with ONNX's broadcasting of two 1-D (or scalar) operands, the
// way libonnx's MathOpDataPropagator does it for Add/Sub/Mul: an operand of one element
// broadcasts; a dimension either side does not know stays unknown.
template <class F>
void binary(onnx::DataPropagationContext& ctx, F f) {
  const onnx::TensorShapeProto* a = ctx.getInputData(0);
  const onnx::TensorShapeProto* b = ctx.getInputData(1);
  if (!a || !b) return;
  int na = a->dim_size(), nb = b->dim_size();
  if (na != nb && na != 1 && nb != 1) fail_shape_inference("cannot broadcast ", na, " and ", nb, " values");
  // An empty operand ([0] values) broadcast with one value gives no values: n is the other's
  // size only when neither is empty (handtrack's TF.js conversion has such a Mul; reading dim(0)
  // of the empty one crashed `amanda optimize`).
  int n = na == nb ? na : (na == 0 || nb == 0) ? 0 : std::max(na, nb);
  onnx::TensorShapeProto out;
  for (int i = 0; i < n; ++i) {
    const auto& x = a->dim(na == 1 ? 0 : i);
    const auto& y = b->dim(nb == 1 ? 0 : i);
    auto* d = out.add_dim();
    if (x.has_dim_value() && y.has_dim_value())
      if (auto v = f(x.dim_value(), y.dim_value())) d->set_dim_value(*v);
  }
  ctx.addOutputData(0, std::move(out));
}

const absl::flat_hash_map<std::string, DataPropFn>& table() {
  static const absl::flat_hash_map<std::string, DataPropFn> t = {
      // torch.onnx exports `h // patch` (ViT's grid size) as Div of a Gather(Shape); integer Div
      // truncates (onnxruntime propagates it too). Division by zero leaves the value unknown.
      {"Div",
       [](onnx::DataPropagationContext& ctx) {
         binary(ctx, [](int64_t x, int64_t y) -> std::optional<int64_t> {
           if (y == 0) return std::nullopt;
           return x / y;
         });
       }},
      // libonnx 1.12 gives Add, Sub and Mul a propagation function from opset 14 on only; the
      // same arithmetic for their earlier versions (torch exports opset 13: ViT's grid h * w).
      {"Add", [](onnx::DataPropagationContext& ctx) { binary(ctx, [](int64_t x, int64_t y) -> std::optional<int64_t> { return x + y; }); }},
      {"Sub", [](onnx::DataPropagationContext& ctx) { binary(ctx, [](int64_t x, int64_t y) -> std::optional<int64_t> { return x - y; }); }},
      {"Mul", [](onnx::DataPropagationContext& ctx) { binary(ctx, [](int64_t x, int64_t y) -> std::optional<int64_t> { return x * y; }); }},
      // The value passes through unchanged.
      {"Identity",
       [](onnx::DataPropagationContext& ctx) {
         if (const onnx::TensorShapeProto* a = ctx.getInputData(0)) {
           onnx::TensorShapeProto out = *a;
           ctx.addOutputData(0, std::move(out));
         }
       }},
  };
  return t;
}

// A product of dimensions: a known integer factor times named symbols (sorted).
struct Product {
  int64_t factor = 1;
  std::vector<std::string> symbols;
  bool known = true;  // false: some factor is unknown
  void mul(const onnx::TensorShapeProto::Dimension& d) {
    if (d.has_dim_value()) factor *= d.dim_value();
    else if (d.has_dim_param() && !d.dim_param().empty()) symbols.push_back(d.dim_param());
    else known = false;
  }
};

// Reshape's output from a propagated target shape, onnx's rules: 0 copies the input's dimension
// (unless allowzero), -1 is what makes the sizes equal, which with symbols means cancelling them:
// [N, 768, 14, 14] -> [N, 768, -1] gives [N, 768, 196].
void reshape_from_data(onnx::InferenceContext& ctx, onnx::TypeProto& out) {
  if (ctx.getNumInputs() < 2 || ctx.getInputData(1)) return;  // constant shapes are libonnx's
  const onnx::TensorShapeProto* target = ctx.getSymbolicInput(1);
  const onnx::TypeProto* in = ctx.getInputType(0);
  if (!target || !in || !in->has_tensor_type()) return;
  const auto* allow = ctx.getAttribute("allowzero");
  bool allowzero = allow && allow->i() != 0;
  const onnx::TensorShapeProto* ishape = in->tensor_type().has_shape() ? &in->tensor_type().shape() : nullptr;
  onnx::TensorShapeProto shape;
  int minus_one = -1;
  Product rest;
  for (int i = 0; i < target->dim_size(); ++i) {
    const auto& t = target->dim(i);
    auto* d = shape.add_dim();
    if (t.has_dim_value() && t.dim_value() == 0 && !allowzero) {
      if (ishape && i < ishape->dim_size()) *d = ishape->dim(i);
    } else if (t.has_dim_value() && t.dim_value() == -1) {
      if (minus_one >= 0) fail_shape_inference("Reshape: more than one -1 in the target shape");
      minus_one = i;
      continue;
    } else if (t.has_dim_value() && t.dim_value() < 0) {
      fail_shape_inference("Reshape: invalid dimension ", t.dim_value(), " in the target shape");
    } else {
      *d = t;
      d->clear_denotation();
    }
    rest.mul(*d);
  }
  if (minus_one >= 0 && ishape && rest.known && rest.factor != 0) {
    Product all;
    for (const auto& d : ishape->dim()) all.mul(d);
    if (all.known && all.factor % rest.factor == 0) {
      // Cancel the target's symbols against the input's; what is left (at most one symbol with
      // factor 1, or none) is the -1 dimension.
      std::vector<std::string> left = all.symbols;
      bool ok = true;
      for (const auto& s : rest.symbols) {
        auto it = std::find(left.begin(), left.end(), s);
        if (it == left.end()) {
          ok = false;
          break;
        }
        left.erase(it);
      }
      int64_t q = all.factor / rest.factor;
      auto* d = shape.mutable_dim(minus_one);
      if (ok && left.empty()) d->set_dim_value(q);
      else if (ok && left.size() == 1 && q == 1) d->set_dim_param(left[0]);
    }
  }
  out.mutable_tensor_type()->set_elem_type(in->tensor_type().elem_type());
  *out.mutable_tensor_type()->mutable_shape() = std::move(shape);
}

}  // namespace

const ShapeFromDataFn* shape_from_data(std::string_view op_type) {
  static const absl::flat_hash_map<std::string, ShapeFromDataFn> t = {{"Reshape", reshape_from_data}};
  auto it = t.find(std::string(op_type));
  return it == t.end() ? nullptr : &it->second;
}

const DataPropFn* extra_data_propagation(std::string_view op_type) {
  auto it = table().find(std::string(op_type));
  return it == table().end() ? nullptr : &it->second;
}

}  // namespace amanda::onnx_frontend::detail
