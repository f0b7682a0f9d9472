// transpose_tensor (src/passes/util.cpp), the byte-level transpose constant folding and
// push_transpose_down use on weights: axes of size 1 dropped, consecutive axes merged, 2-D tiles.
// Checked against the definition written out here (out[i] = in[i permuted], one element at a time),
// on every permutation of ranks 0-5 with shapes that have axes of size 1, axes longer than a tile
// (32) and not a multiple of it, every element size, and an input that starts at an odd address
// (a weight in a mapped file is not aligned).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "../../src/passes/util.h"

namespace {

using amanda::ir::DType;
using amanda::ir::Tensor;

// The definition: the output element at multi-index o is the input element at o's axes put back
// in input order.
std::string reference(const std::string& bytes, size_t es, const std::vector<int64_t>& in, const std::vector<int64_t>& perm) {
  size_t rank = in.size();
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) out[i] = in[static_cast<size_t>(perm[i])];
  int64_t total = 1;
  for (int64_t d : in) total *= d;
  std::string r(bytes.size(), '\0');
  std::vector<int64_t> o(rank, 0), src_idx(rank);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat;
    for (size_t k = rank; k-- > 0;) {
      o[k] = rem % out[k];
      rem /= out[k];
    }
    for (size_t k = 0; k < rank; ++k) src_idx[static_cast<size_t>(perm[k])] = o[k];
    int64_t s = 0;
    for (size_t i = 0; i < rank; ++i) s = s * in[i] + src_idx[i];
    std::memcpy(r.data() + flat * es, bytes.data() + s * es, es);
  }
  return r;
}

TEST(TransposeTensor, EveryPermutationMatchesTheDefinition) {
  std::mt19937 rng(7);
  const std::vector<std::pair<DType, size_t>> types{{DType::UInt8, 1}, {DType::Float16, 2}, {DType::Float32, 4}, {DType::Float64, 8}};
  const std::vector<int64_t> sizes{1, 2, 3, 5, 33, 40};
  int checked = 0, moved = 0;
  for (size_t rank = 0; rank <= 5; ++rank) {
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    do {
      for (int trial = 0; trial < (rank <= 3 ? 6 : 2); ++trial) {
        std::vector<int64_t> in(rank);
        int64_t total = 1;
        for (auto& d : in) {
          d = sizes[rng() % sizes.size()];
          if (total * d > 20000) d = rng() % 2 + 1;  // keep the tensor small
          total *= d;
        }
        auto [dt, es] = types[rng() % types.size()];
        std::string bytes(static_cast<size_t>(total) * es, '\0');
        for (auto& c : bytes) c = static_cast<char>(rng());
        // At an odd address, as in a mapped file.
        std::string holder = "x" + bytes;
        auto buf = std::make_shared<std::string>(holder);
        struct Owner : amanda::Buffer {
          std::shared_ptr<std::string> s;
          const uint8_t* data() const override { return reinterpret_cast<const uint8_t*>(s->data()); }
          size_t size() const override { return s->size(); }
        };
        auto owner = std::make_shared<Owner>();
        owner->s = buf;
        Tensor t = Tensor::borrow(dt, in, owner, owner->data() + 1, bytes.size());
        auto r = amanda::passes::detail::transpose_tensor(t, perm);
        ASSERT_TRUE(r.has_value());
        std::vector<int64_t> want_shape(rank);
        for (size_t i = 0; i < rank; ++i) want_shape[i] = in[static_cast<size_t>(perm[i])];
        EXPECT_EQ(r->shape, want_shape);
        std::string want = reference(bytes, es, in, perm);
        ASSERT_EQ(r->size, want.size());
        std::string got(reinterpret_cast<const char*>(r->data), r->size);
        EXPECT_EQ(got, want) << "rank " << rank << " element size " << es << " shape " << ::testing::PrintToString(in)
                             << " perm " << ::testing::PrintToString(perm);
        ++checked;
        moved += got != bytes;
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  EXPECT_EQ(checked, 348);  // 6 + 6 + 2 x 6 + 6 x 6 + 24 x 2 + 120 x 2
  EXPECT_GT(moved, 200);  // most cases really move bytes: the check is not of identities
}

TEST(TransposeTensor, RefusesBadPermutations) {
  Tensor t = Tensor::from_bytes(DType::Float32, {2, 3}, std::string(24, '\1'));
  EXPECT_FALSE(amanda::passes::detail::transpose_tensor(t, {0, 0}).has_value());
  EXPECT_FALSE(amanda::passes::detail::transpose_tensor(t, {0, 2}).has_value());
  EXPECT_FALSE(amanda::passes::detail::transpose_tensor(t, {0}).has_value());
}

}  // namespace
