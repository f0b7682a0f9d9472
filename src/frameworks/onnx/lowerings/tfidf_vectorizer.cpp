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

// TfIdfVectorizer (new in 9) below 9, for an integer input of known shape: every n-gram length n in
// [min_gram_length, max_gram_length] and skip s (0 only for unigrams, else 0..max_skip_count) is a
// set of constant positions; the n shifted copies of the input (Gather at constant indices, one row
// at a time: n-grams do not cross rows) are compared with each pool n-gram's tokens (Equal, And),
// and the matches counted (ReduceSum). A constant 0/1 matrix puts each pool entry's count at its
// ngram_indexes column (MatMul: exact for counts below 2^24); IDF keeps 1 where the count is
// positive, IDF and TFIDF multiply by the weights. String pools: no op before 9 compares strings.
std::string lower_tfidf(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                        const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  auto ints = [&](const char* name) {
    std::vector<int64_t> v;
    if (const ir::Value* a = ir::get_attr(g, op, name); a && a->is_list())
      for (const auto& x : a->as_list())
        if (x.is_int()) v.push_back(x.as_int());
    return v;
  };
  auto one = [&](const char* name, int64_t d) {
    const ir::Value* a = ir::get_attr(g, op, name);
    return a && a->is_int() ? a->as_int() : d;
  };
  std::vector<int64_t> pool = ints("pool_int64s"), counts = ints("ngram_counts"), indexes = ints("ngram_indexes");
  if (pool.empty()) return "pool_int64s (a string pool: no op before 9 compares strings)";
  if (ins.empty() || !types[0].has_tensor_type() || !types[0].tensor_type().has_shape()) return "the input's shape";
  const auto& sh = types[0].tensor_type().shape();
  int rank = sh.dim_size();
  if (rank < 1 || rank > 2 || !sh.dim(rank - 1).has_dim_value()) return "a 1-D or 2-D input whose rows' length is known";
  int elem = types[0].tensor_type().elem_type();
  if (elem != onnx::TensorProto::INT64 && elem != onnx::TensorProto::INT32) return "an int32 or int64 input";
  const int64_t L = sh.dim(rank - 1).dim_value();
  const int64_t lo = one("min_gram_length", 1), hi = one("max_gram_length", 1), skips = one("max_skip_count", 0);
  std::string mode = "TF";
  if (const ir::Value* m = ir::get_attr(g, op, "mode"); m && m->is_string()) mode = m->as_string();
  std::vector<double> weights;
  if (const ir::Value* w = ir::get_attr(g, op, "weights"); w && w->is_list())
    for (const auto& x : w->as_list()) weights.push_back(x.is_float() ? x.as_float() : x.is_int() ? double(x.as_int()) : 1.0);
  // Pool entries: (n, first token offset) in pool order.
  std::vector<std::pair<int64_t, int64_t>> entries;
  for (size_t k = 0; k < counts.size(); ++k) {
    int64_t n = int64_t(k) + 1, from = counts[k], to = k + 1 < counts.size() ? counts[k + 1] : int64_t(pool.size());
    if (from < 0 || to > int64_t(pool.size()) || (to - from) % n) return "ngram_counts consistent with pool_int64s";
    for (int64_t at = from; at < to; at += n) entries.push_back({n, at});
  }
  if (entries.size() != indexes.size()) return "one ngram_indexes entry per pool n-gram";
  int64_t width = 0;
  for (int64_t x : indexes) width = std::max(width, x + 1);
  BodyBuilder b{body, kExpansionNames};
  auto last = [&]() -> onnx::NodeProto& { return *body.mutable_node(body.node_size() - 1); };
  auto tensor_const = [&](int type, const std::vector<int64_t>& dims, const std::vector<double>& v) {
    return b.constant(b.fresh("k"), type, dims, v);
  };
  std::string x = b.reshape(kIn + "0", {-1, L});  // [B, L]
  std::vector<std::string> per_entry_counts(entries.size());
  for (int64_t n = lo; n <= hi; ++n) {
    std::vector<size_t> of_n;
    for (size_t k = 0; k < entries.size(); ++k)
      if (entries[k].first == n) of_n.push_back(k);
    if (of_n.empty()) continue;
    const int64_t G = int64_t(of_n.size());
    std::string total;
    for (int64_t s = 0; s <= (n == 1 ? 0 : skips); ++s) {
      const int64_t dist = s + 1, npos = L - (n - 1) * dist;
      if (npos <= 0) continue;
      std::string match;
      for (int64_t m = 0; m < n; ++m) {
        std::vector<int64_t> at(npos);
        for (int64_t i = 0; i < npos; ++i) at[i] = i + m * dist;
        std::string xm = b.op("Gather", {x, b.constant_i64(at)});  // [B, npos]
        BodyBuilder::one_int(last(), "axis", 1);
        std::string xm3 = b.op("Unsqueeze", {xm});  // [B, 1, npos]
        BodyBuilder::ints(last(), "axes", {1});
        std::vector<double> tok(G);
        for (int64_t k = 0; k < G; ++k) tok[k] = double(pool[entries[of_n[k]].second + m]);
        std::string eq = b.op("Equal", {xm3, tensor_const(elem, {1, G, 1}, tok)});  // [B, G, npos]
        match = match.empty() ? eq : b.op("And", {match, eq});
      }
      std::string c = b.op("ReduceSum", {b.op("Cast", {match})});
      BodyBuilder::one_int(*body.mutable_node(body.node_size() - 2), "to", onnx::TensorProto::FLOAT);
      BodyBuilder::ints(last(), "axes", {2});
      BodyBuilder::one_int(last(), "keepdims", 0);  // [B, G]
      total = total.empty() ? c : b.op("Add", {total, c});
    }
    if (total.empty()) continue;
    // Place the G counts at their columns: [B, G] x [G, width].
    std::vector<double> place(size_t(G * width), 0.0);
    for (int64_t k = 0; k < G; ++k) {
      size_t e = of_n[k];
      double w = e < weights.size() ? weights[e] : 1.0;
      place[size_t(k * width + indexes[e])] = mode == "TF" ? 1.0 : w;
    }
    std::string cnt = total;
    if (mode == "IDF") {
      std::string pos = b.op("Greater", {cnt, tensor_const(onnx::TensorProto::FLOAT, {}, {0.0})});
      cnt = b.op("Cast", {pos});
      BodyBuilder::one_int(last(), "to", onnx::TensorProto::FLOAT);
    }
    per_entry_counts[of_n[0]] = b.op("MatMul", {cnt, tensor_const(onnx::TensorProto::FLOAT, {G, width}, place)});
  }
  std::string out;
  for (const auto& c : per_entry_counts)
    if (!c.empty()) out = out.empty() ? c : b.op("Add", {out, c});
  if (out.empty()) {  // no n-gram length in range: zeros
    std::string xf = b.op("Cast", {x});
    BodyBuilder::one_int(last(), "to", onnx::TensorProto::FLOAT);
    out = b.op("MatMul", {xf, tensor_const(onnx::TensorProto::FLOAT, {L, width}, std::vector<double>(size_t(L * width), 0.0))});
  }
  if (rank == 1) out = b.reshape(out, {width});
  b.op("Identity", {out}, kOut + "0");
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
