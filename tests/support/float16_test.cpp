// The shared float16 / bfloat16 conversions (amanda/support/float16.h). Expected bits are numpy's
// (np.float32 -> np.float16) and torch's (torch.float32 -> torch.bfloat16), printed by:
//   /usr/bin/python3 -c "import numpy as np; print(hex(np.float32(V).astype(np.float16).view(np.uint16)))"
//   /usr/bin/python3 -c "import torch; print(hex(torch.tensor([V]).to(torch.bfloat16).view(torch.int16).item() & 0xffff))"
#include "amanda/support/float16.h"

#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

namespace amanda {
namespace {

TEST(Float16, MatchesNumpy) {
  struct Case {
    float v;
    uint16_t bits;
  } cases[] = {{0.1f, 0x2e66},          {1.0f / 3, 0x3555},     {65504.f, 0x7bff}, {65519.f, 0x7bff}, {65520.f, 0x7c00},
               {0x1p-24f, 0x0001},      {0x1p-25f, 0x0000},     {3 * 0x1p-25f, 0x0002},  // ties to even, subnormal
               {1e-8f, 0x0000},         {-2.5f, 0xc100},        {6.103515625e-05f, 0x0400}, {6.1e-05f, 0x03ff}};
  for (const Case& c : cases) EXPECT_EQ(float_to_half(c.v), c.bits) << c.v;
}

TEST(Float16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = half_to_float(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << h;
      continue;
    }
    EXPECT_EQ(float_to_half(f), h) << h;
  }
  EXPECT_EQ(half_to_float(0x0001), 0x1p-24f);  // the smallest subnormal
  EXPECT_EQ(half_to_float(0x7bff), 65504.f);
  EXPECT_TRUE(std::isinf(half_to_float(0xfc00)) && half_to_float(0xfc00) < 0);
}

TEST(BFloat16, MatchesTorch) {
  struct Case {
    float v;
    uint16_t bits;
  } cases[] = {{0.1f, 0x3dcd}, {1.0f / 3, 0x3eab}, {3.0e38f, 0x7f62}, {-2.5f, 0xc020}, {1.00390625f, 0x3f80}, {1.01171875f, 0x3f82}};
  for (const Case& c : cases) EXPECT_EQ(float_to_bf16(c.v), c.bits) << c.v;
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
}

}  // namespace
}  // namespace amanda
