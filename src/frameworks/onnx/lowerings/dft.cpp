#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/conventions.h"
#include "lowering.h"

namespace amanda::onnx_frontend::lowering {

// DFT (new in 17) as one product with a constant matrix, for a signal whose shape is known and a
// dft_length that is absent or constant: the signal axis moved last and the real and imaginary
// parts laid side by side ([rest, 1, C*L]), times W [C*L, 2K] whose columns are the real and the
// imaginary part of each of the K output frequencies (cos and sin of 2*pi*k*n/N, the sign of the
// sine and a 1/N for the inverse; rows n >= N zero: dft_length's truncation; N > L: zero padding
// adds nothing), then reshaped to [rest, 2, K] and transposed to the output's order. The matrix
// and the product are double (a float input is cast there and back). O(N^2) where an FFT is
// O(N log N): exact to rounding, and the opsets before 17 have nothing faster.
std::string lower_dft(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                      const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  auto int_attr = [&](const char* name, int64_t dflt) {
    const ir::Value* v = ir::get_attr(g, op, name);
    return v && v->is_int() ? v->as_int() : dflt;
  };
  if (ins.empty() || !types[0].has_tensor_type() || !types[0].tensor_type().has_shape()) return "the input's shape";
  int elem = types[0].tensor_type().elem_type();
  if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::DOUBLE) return "a float or double input";
  std::vector<int64_t> dims;
  for (const auto& d : types[0].tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return "every input dimension known";
    dims.push_back(d.dim_value());
  }
  int64_t r = int64_t(dims.size());
  if (r < 3) return "an input of rank 3 or more";
  int64_t C = dims.back();
  if (C != 1 && C != 2) return "a last dimension of 1 (real) or 2 (complex)";
  int64_t a = int_attr("axis", 1);
  if (a < 0) a += r;
  if (a < 1 || a > r - 2) return "an axis between the batch and the last dimension";
  bool inverse = int_attr("inverse", 0) != 0, onesided = int_attr("onesided", 0) != 0;
  if (onesided && C == 2) return "a real input when onesided (ONNX defines no onesided complex DFT)";
  int64_t L = dims[size_t(a)], N = L;
  if (ins.size() > 1 && g.producer(ins[1])) {
    const ir::Value* v = ir::constant_tensor(g, g.producer(ins[1]));
    if (!v || !v->is_tensor()) return "dft_length a constant";
    const ir::Tensor& t = v->as_tensor();
    if (t.dtype != ir::DType::Int64 && t.dtype != ir::DType::Int32) return "dft_length an int32 or int64 constant";
    if (t.size < ir::dtype_size(t.dtype)) return "dft_length a scalar";
    if (t.dtype == ir::DType::Int64) {  // (memcpy: a borrowed tensor may sit at any byte offset of the file)
      std::memcpy(&N, t.data, 8);
    } else {
      int32_t n32;
      std::memcpy(&n32, t.data, 4);
      N = n32;
    }
    if (N < 1) return "dft_length at least 1";
  }
  int64_t K = onesided ? N / 2 + 1 : N;
  if (C * L * 2 * K > (int64_t(1) << 26)) return "a signal short enough for a dense DFT matrix (2^26 entries)";
  BodyBuilder b{body, kExpansionNames};
  std::vector<int64_t> perm, rest;
  for (int64_t d = 0; d < r; ++d)
    if (d != a) perm.push_back(d);
  perm.push_back(a);  // [rest..., C, L]
  for (int64_t d = 0; d < r - 1; ++d)
    if (d != a) rest.push_back(dims[size_t(d)]);
  std::string x = b.transpose(kIn + "0", perm);
  std::vector<int64_t> s1 = rest;
  s1.push_back(1);
  s1.push_back(C * L);
  x = b.reshape(x, s1);
  // The product in double: a float32 sum of N terms of the signal's size loses more than 1e-5 on
  // the outputs near zero, where the transforms of onnxruntime and numpy are exact to rounding.
  if (elem == onnx::TensorProto::FLOAT) x = b.cast(x, onnx::TensorProto::DOUBLE);
  // W[c*L + n][j*K + k]: c = input part (re, im), j = output part (re, im).
  std::vector<double> w(size_t(C * L * 2 * K), 0.0);
  const double pi = 3.14159265358979323846;
  for (int64_t n = 0; n < std::min(L, N); ++n)
    for (int64_t k = 0; k < K; ++k) {
      double th = 2 * pi * double((n * k) % N) / double(N), c = std::cos(th), sn = std::sin(th);
      double scale = inverse ? 1.0 / double(N) : 1.0, sg = inverse ? 1.0 : -1.0;  // e^{sg i th}
      auto at = [&](int64_t ci, int64_t j) -> double& { return w[size_t((ci * L + n) * 2 * K + j * K + k)]; };
      at(0, 0) = c * scale;        // re(x) -> re(y)
      at(0, 1) = sg * sn * scale;  // re(x) -> im(y)
      if (C == 2) {
        at(1, 0) = -sg * sn * scale;  // im(x) -> re(y)
        at(1, 1) = c * scale;         // im(x) -> im(y)
      }
    }
  std::string wname = b.constant(b.fresh("w"), onnx::TensorProto::DOUBLE, {C * L, 2 * K}, w);
  std::string y = b.op("MatMul", {x, wname});
  if (elem == onnx::TensorProto::FLOAT) y = b.cast(y, onnx::TensorProto::FLOAT);
  std::vector<int64_t> s2 = rest;
  s2.push_back(2);
  s2.push_back(K);
  y = b.reshape(y, s2);  // [rest..., 2, K]
  std::vector<int64_t> back;
  for (int64_t p = 0, ri = 0; p < r; ++p) back.push_back(p == a ? r - 1 : p == r - 1 ? r - 2 : ri++);
  std::string out = b.transpose(y, back);
  b.op("Identity", {out}, kOut + "0");
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
