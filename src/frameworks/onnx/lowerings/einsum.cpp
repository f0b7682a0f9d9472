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

std::string lower_einsum(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins,
                         const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body) {
  const ir::Value* eqv = ir::get_attr(g, op, "equation");
  if (!eqv || !eqv->is_string()) return "the equation";
  std::string eq;
  for (char c : eqv->as_string())
    if (c != ' ') eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t b = 0;;) {
    size_t e = lhs.find(',', b);
    terms.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (terms.size() != ins.size()) return "as many operands as the equation has terms";
  if (terms.size() > 2) return "one or two operands (" + std::to_string(terms.size()) + " given)";
  std::vector<std::vector<int64_t>> dims(ins.size());
  for (size_t k = 0; k < ins.size(); ++k) {
    if (!types[k].has_tensor_type() || !types[k].tensor_type().has_shape()) return "every input's shape";
    for (const auto& d : types[k].tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return "every input's dimensions known";
      dims[k].push_back(d.dim_value());
    }
  }
  // Ellipsis letters: '0'.. (not letters of the equation), right-aligned.
  size_t ell = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t at = terms[k].find("...");
    size_t letters = terms[k].size() - (at == std::string::npos ? 0 : 3);
    if (at == std::string::npos) {
      if (letters != dims[k].size()) return "the equation's terms to match the inputs' ranks";
      continue;
    }
    if (dims[k].size() < letters) return "the equation's terms to match the inputs' ranks";
    ell = std::max(ell, dims[k].size() - letters);
  }
  if (ell > 10) return "at most 10 axes under an ellipsis";
  std::string ell_letters;
  for (size_t k = 0; k < ell; ++k) ell_letters += char('0' + k);
  std::vector<std::string> lt(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t at = terms[k].find("...");
    if (at == std::string::npos) {
      lt[k] = terms[k];
      continue;
    }
    size_t n = dims[k].size() - (terms[k].size() - 3);
    lt[k] = terms[k].substr(0, at) + ell_letters.substr(ell - n) + terms[k].substr(at + 3);
  }
  std::string out;
  if (arrow != std::string::npos) {
    std::string r = eq.substr(arrow + 2);
    size_t at = r.find("...");
    out = at == std::string::npos ? r : r.substr(0, at) + ell_letters + r.substr(at + 3);
  } else {
    std::map<char, int> count;
    for (const auto& t : lt)
      for (char c : t) count[c]++;
    out = ell_letters;
    for (auto [c, n] : count)
      if (n == 1 && !(c >= '0' && c <= '9')) out += c;
  }
  for (char c : out)
    if (!std::isalpha(static_cast<unsigned char>(c)) && !(c >= '0' && c <= '9')) return "an equation of letters, ',', '->' and '...'";
  // Each letter's dimension: equal wherever it appears (broadcasting a 1 is not lowered).
  std::map<char, int64_t> size;
  for (size_t k = 0; k < lt.size(); ++k)
    for (size_t a = 0; a < lt[k].size(); ++a) {
      char c = lt[k][a];
      if (!std::isalpha(static_cast<unsigned char>(c)) && !(c >= '0' && c <= '9')) return "an equation of letters, ',', '->' and '...'";
      auto [it, fresh] = size.insert({c, dims[k][a]});
      if (!fresh && it->second != dims[k][a]) return std::string("the same dimension wherever index '") + c + "' appears (broadcasting is not lowered)";
    }
  for (char c : out)
    if (!size.count(c)) return std::string("output index '") + c + "' among the inputs'";
  BodyBuilder b{body, kExpansionNames};
  std::vector<std::string> val(ins.size());
  for (size_t k = 0; k < ins.size(); ++k) val[k] = kIn + std::to_string(k);
  auto prod = [&](const std::string& letters) {
    int64_t p = 1;
    for (char c : letters) p *= size[c];
    return p;
  };
  auto shape_of = [&](const std::string& letters) {
    std::vector<int64_t> v;
    for (char c : letters) v.push_back(size[c]);
    return v;
  };
  // Diagonals: a letter twice in one operand, its two axes moved last, merged, Gather at i * (n + 1).
  for (size_t k = 0; k < lt.size(); ++k) {
    for (;;) {
      size_t p = std::string::npos, q = std::string::npos;
      for (size_t a = 0; a < lt[k].size() && p == std::string::npos; ++a)
        for (size_t c = a + 1; c < lt[k].size(); ++c)
          if (lt[k][a] == lt[k][c]) {
            p = a;
            q = c;
            break;
          }
      if (p == std::string::npos) break;
      std::vector<int64_t> perm;
      std::string rest;
      for (size_t a = 0; a < lt[k].size(); ++a)
        if (a != p && a != q) {
          perm.push_back(int64_t(a));
          rest += lt[k][a];
        }
      perm.push_back(int64_t(p));
      perm.push_back(int64_t(q));
      char c = lt[k][p];
      int64_t n = size[c];
      std::string t = b.transpose(val[k], perm);
      std::vector<int64_t> sh = shape_of(rest);
      sh.push_back(n * n);
      std::string r = b.reshape(t, sh);
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < n; ++i) idx.push_back(i * (n + 1));
      std::string gi = b.op("Gather", {r, b.constant_i64(idx)});
      BodyBuilder::one_int(*body.mutable_node(body.node_size() - 1), "axis", int64_t(rest.size()));
      val[k] = gi;
      lt[k] = rest + c;
    }
  }
  // Letters of one operand that neither the output nor the other operand has: summed away.
  for (size_t k = 0; k < lt.size(); ++k) {
    std::vector<int64_t> axes;
    std::string kept;
    for (size_t a = 0; a < lt[k].size(); ++a) {
      char c = lt[k][a];
      bool other = lt.size() == 2 && lt[1 - k].find(c) != std::string::npos;
      if (out.find(c) == std::string::npos && !other) axes.push_back(int64_t(a));
      else kept += c;
    }
    if (!axes.empty()) {
      val[k] = b.reduce_sum(val[k], axes);
      lt[k] = kept;
    }
  }
  auto perm_to = [&](const std::string& from, const std::string& to) {
    std::vector<int64_t> perm;
    for (char c : to) perm.push_back(int64_t(from.find(c)));
    return perm;
  };
  std::string res, res_letters;
  if (lt.size() == 1) {
    res = val[0];
    res_letters = lt[0];
  } else {
    std::string batch, a_only, b_only, contract;
    for (char c : lt[0]) {
      bool in_b = lt[1].find(c) != std::string::npos, in_out = out.find(c) != std::string::npos;
      if (in_b && in_out) batch += c;
      else if (in_b) contract += c;
      else a_only += c;
    }
    for (char c : lt[1])
      if (lt[0].find(c) == std::string::npos) b_only += c;
    std::string ta = b.transpose(val[0], perm_to(lt[0], batch + a_only + contract));
    std::string tb = b.transpose(val[1], perm_to(lt[1], batch + contract + b_only));
    std::vector<int64_t> sa = shape_of(batch), sb = shape_of(batch);
    sa.push_back(prod(a_only));
    sa.push_back(prod(contract));
    sb.push_back(prod(contract));
    sb.push_back(prod(b_only));
    std::string mm = b.op("MatMul", {b.reshape(ta, sa), b.reshape(tb, sb)});
    res = b.reshape(mm, shape_of(batch + a_only + b_only));
    res_letters = batch + a_only + b_only;
  }
  if (res_letters.size() != out.size()) return "every output index to come from the inputs once";
  std::string fin = b.transpose(res, perm_to(res_letters, out));
  b.op("Identity", {fin}, kOut + "0");
  return {};
}

}  // namespace amanda::onnx_frontend::lowering
