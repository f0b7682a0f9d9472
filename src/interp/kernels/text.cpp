// Text ops: StringNormalizer and TfIdfVectorizer.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "families.h"

namespace amanda::interp::kernels {

namespace {

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

void k_string_normalizer(KernelContext& c) {
  const Tensor& x = c.input(0);
  std::string action = c.attr_string("case_change_action", "NONE");
  bool sensitive = c.attr_int("is_case_sensitive", 0);
  auto stop = c.attr_strings("stopwords").value_or(std::vector<std::string>{});
  std::set<std::string> stops;
  for (auto& s : stop) stops.insert(sensitive ? s : lower(s));
  std::vector<std::string> kept;
  for (const auto& s : x.strings()) {
    if (stops.count(sensitive ? s : lower(s))) continue;
    kept.push_back(action == "LOWER" ? lower(s) : action == "UPPER" ? upper(s) : s);
  }
  if (kept.empty()) kept.push_back("");
  Shape out = x.rank() == 2 ? Shape{1, static_cast<int64_t>(kept.size())} : Shape{static_cast<int64_t>(kept.size())};
  Tensor y = Tensor::uninit(DType::String, out);
  y.strings() = kept;
  c.set_output(0, y);
}

void k_tfidf(KernelContext& c) {
  const Tensor& x = c.input(0);
  std::string mode = c.attr_string("mode", "TF");
  int64_t mn = c.attr_int("min_gram_length", 1), mx = c.attr_int("max_gram_length", 1), skip = c.attr_int("max_skip_count", 0);
  auto counts = c.attr_ints("ngram_counts").value_or(std::vector<int64_t>{});
  auto indexes = c.attr_ints("ngram_indexes").value_or(std::vector<int64_t>{});
  auto weights = c.attr_floats("weights");
  auto pool_i = c.attr_ints("pool_int64s");
  auto pool_s = c.attr_strings("pool_strings");
  bool strings = x.dtype() == DType::String;
  // Every n-gram of the pool as a key -> its output index.
  std::map<std::vector<std::string>, int64_t> grams;
  size_t pool_size = strings ? (pool_s ? pool_s->size() : 0) : (pool_i ? pool_i->size() : 0);
  auto pool_at = [&](size_t i) { return strings ? (*pool_s)[i] : std::to_string((*pool_i)[i]); };
  int64_t gram_no = 0;
  for (size_t n = 1; n <= counts.size(); ++n) {
    size_t start = static_cast<size_t>(counts[n - 1]);
    size_t end = n < counts.size() ? static_cast<size_t>(counts[n]) : pool_size;
    for (size_t i = start; i + n <= end; i += n) {
      std::vector<std::string> key;
      for (size_t k = 0; k < n; ++k) key.push_back(pool_at(i + k));
      grams[key] = indexes.at(static_cast<size_t>(gram_no++));
    }
  }
  int64_t width = 0;
  for (int64_t i : indexes) width = std::max(width, i + 1);
  int64_t rows = x.rank() == 2 ? x.dim(0) : 1, cols = x.rank() == 2 ? x.dim(1) : x.numel();
  Tensor y(DType::Float32, x.rank() == 2 ? Shape{rows, width} : Shape{width});
  auto item = [&](int64_t i) { return strings ? x.strings()[i] : std::to_string(x.get_i64(i)); };
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> cnt(width, 0);
    for (int64_t n = mn; n <= mx; ++n)
      for (int64_t s = 0; s <= (n == 1 ? 0 : skip); ++s)
        for (int64_t st = 0; st + (n - 1) * (s + 1) < cols; ++st) {
          std::vector<std::string> key;
          for (int64_t k = 0; k < n; ++k) key.push_back(item(r * cols + st + k * (s + 1)));
          if (auto it = grams.find(key); it != grams.end()) cnt[it->second] += 1;
        }
    for (int64_t k = 0; k < width; ++k) {
      double w = weights && static_cast<size_t>(k) < weights->size() ? (*weights)[k] : 1;
      double v = mode == "TF" ? cnt[k] : mode == "IDF" ? (cnt[k] > 0 ? w : 0) : cnt[k] * w;
      y.mutable_data<float>()[r * width + k] = static_cast<float>(v);
    }
  }
  c.set_output(0, y);
}

}  // namespace

void register_text(KernelRegistry& r) {
  r.add("StringNormalizer", 10, k_string_normalizer);
  r.add("TfIdfVectorizer", 9, k_tfidf);
}

}  // namespace amanda::interp::kernels
