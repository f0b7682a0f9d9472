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

// Det (new in 11) below 11, for square matrices of a known size n (any batch shape): Gaussian
// elimination with partial pivoting, unrolled over the n - 1 columns, as the LU factorization
// onnxruntime (Eigen) computes. Column k: the row of the largest |a| among rows k.. (ArgMax, the
// first of equals) is swapped with row k (Where with one-hot masks per matrix: exact), the sign
// flips where a swap happened; rows below k lose f * row k with f = a[r][k] / pivot (0 where the
// pivot is 0: nothing to eliminate, the determinant is then 0). The determinant is the sign times
// the product of the diagonal (ReduceProd). n = 1 is the element itself.
std::string lower_det(const ir::Graph&, ir::OpId, const std::vector<ir::PortId>& ins,
                      const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  if (ins.empty() || !types[0].has_tensor_type() || !types[0].tensor_type().has_shape()) return "the input's shape";
  const auto& tt = types[0].tensor_type();
  int elem = tt.elem_type();
  if (elem != onnx::TensorProto::FLOAT && elem != onnx::TensorProto::DOUBLE && elem != onnx::TensorProto::FLOAT16)
    return "a float16, float or double input";
  int rank = tt.shape().dim_size();
  if (rank < 2) return "an input of rank 2 or more";
  const auto& dn = tt.shape().dim(rank - 1);
  const auto& dm = tt.shape().dim(rank - 2);
  if (!dn.has_dim_value() || !dm.has_dim_value() || dn.dim_value() != dm.dim_value() || dn.dim_value() < 1)
    return "square matrices of a known size";
  const int64_t n = dn.dim_value();
  BodyBuilder b{body, kExpansionNames};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto typed = [&](double v) {  // float16 as its bits: 0, 1, -1
    double x = elem == onnx::TensorProto::FLOAT16 ? (v == 0 ? 0 : v == 1 ? 0x3C00 : 0xBC00) : v;
    return b.constant(b.fresh("c"), elem, {}, {x});
  };
  auto bools = [&](const std::vector<int64_t>& shape, const std::vector<bool>& v) {
    return b.constant(b.fresh("m"), onnx::TensorProto::BOOL, shape, std::vector<double>(v.begin(), v.end()));
  };
  std::string x = kIn + "0";
  std::string a = b.reshape(x, {-1, n, n});
  std::string det;
  if (n == 1) {
    det = b.reshape(a, {-1});
  } else {
    std::string zero = typed(0), one = typed(1), minus = typed(-1);
    std::string sign;
    std::vector<int64_t> rows(n);
    for (int64_t r = 0; r < n; ++r) rows[r] = r;
    std::string row_ids = b.constant_i64(std::vector<int64_t>{rows});
    std::string row_ids2 = b.reshape(row_ids, {1, n});
    for (int64_t k = 0; k + 1 < n; ++k) {
      std::string kk = b.constant_i64({k}, false);
      std::string col = b.gather(a, kk, 2);  // [B, n]
      std::string mag = b.op("Abs", {col});
      std::vector<bool> ge(n), gt(n), is_k(n);
      for (int64_t r = 0; r < n; ++r) ge[r] = r >= k, gt[r] = r > k, is_k[r] = r == k;
      std::string cand = b.op("Where", {bools({1, n}, ge), mag, minus});
      std::string p = b.op("ArgMax", {cand});  // [B, 1]
      BodyBuilder::one_int(last(), "axis", 1);
      BodyBuilder::one_int(last(), "keepdims", 1);
      std::string hot = b.op("Equal", {p, row_ids2});  // [B, n]
      std::string hot3 = b.op("Unsqueeze", {hot});
      BodyBuilder::ints(last(), "axes", {2});
      std::string picked = b.op("Where", {hot3, a, zero});
      std::string rowp = b.op("ReduceSum", {picked});  // [B, 1, n]
      BodyBuilder::ints(last(), "axes", {1});
      BodyBuilder::one_int(last(), "keepdims", 1);
      std::string rowk = b.gather(a, b.constant_i64({k}), 1);  // [B, 1, n]
      std::string swapped_rows = b.op("Where", {hot3, rowk, a});
      std::string sw = b.op("Where", {bools({1, n, 1}, is_k), rowp, swapped_rows});
      std::string same = b.op("Equal", {p, b.constant_i64({k}, false)});  // [B, 1]
      std::string flip = b.op("Where", {same, one, minus});
      sign = sign.empty() ? flip : b.op("Mul", {sign, flip});
      std::string pivot = b.gather(rowp, kk, 2);  // [B, 1]
      std::string col2 = b.gather(sw, kk, 2);     // [B, n]
      std::string f = b.op("Div", {col2, pivot});
      std::string pz = b.op("Equal", {pivot, zero});
      std::string pnz = b.op("Not", {pz});
      std::string below = b.op("And", {bools({1, n}, gt), pnz});  // [B, n]
      std::string f0 = b.op("Where", {below, f, zero});
      std::string f3 = b.op("Unsqueeze", {f0});
      BodyBuilder::ints(last(), "axes", {2});
      std::string prod = b.op("Mul", {f3, rowp});
      std::string sub = b.op("Sub", {sw, prod});
      std::string below3 = b.op("Unsqueeze", {below});
      BodyBuilder::ints(last(), "axes", {2});
      a = b.op("Where", {below3, sub, sw});
    }
    std::vector<int64_t> diag(n);
    for (int64_t r = 0; r < n; ++r) diag[r] = r * (n + 1);
    std::string flat = b.reshape(a, {-1, n * n});
    std::string d = b.gather(flat, b.constant_i64(diag), 1);
    std::string pr = b.op("ReduceProd", {d});
    BodyBuilder::ints(last(), "axes", {1});
    BodyBuilder::one_int(last(), "keepdims", 1);
    det = b.reshape(b.op("Mul", {pr, sign}), {-1});
  }
  // The batch shape: the input's without its last two axes.
  std::vector<int64_t> batch;
  bool known = true;
  for (int k = 0; k + 2 < rank; ++k) {
    if (!tt.shape().dim(k).has_dim_value()) known = false;
    else batch.push_back(tt.shape().dim(k).dim_value());
  }
  if (known) {
    b.op("Reshape", {det, b.constant_i64(batch)}, kOut + "0");
  } else {
    std::string sh = b.op("Shape", {x});
    std::string bs = b.op("Slice", {sh, b.constant_i64({0}), b.constant_i64({rank - 2})});
    b.op("Reshape", {det, bs}, kOut + "0");
  }
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
