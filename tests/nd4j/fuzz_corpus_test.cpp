// Replays the nd4j fuzz target's seed corpus (fuzz/corpus/nd4j: four of libnd4j's test graphs, a reproducer) and
// mutations of it through the fuzz target's property, in every build (the fuzz target itself needs
// clang's libFuzzer).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../../fuzz/nd4j_roundtrip_check.h"

TEST(Nd4jFuzzCorpus, SeedsAndMutationsHoldTheProperty) {
  namespace fs = std::filesystem;
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(std::string(AMANDA_TEST_DATA) + "/../fuzz/corpus/nd4j")) {
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    std::string bytes = s.str();
    EXPECT_EQ(amanda::fuzz::nd4j_roundtrip_problem(bytes), "") << e.path();
    // Every byte changed once, a few ways: refused or round-tripped, never a crash.
    for (size_t i = 0; i < bytes.size(); ++i)
      for (int x : {0x01, 0x10, 0xff}) {
        std::string b = bytes;
        b[i] = static_cast<char>(b[i] ^ x);
        EXPECT_EQ(amanda::fuzz::nd4j_roundtrip_problem(b), "") << e.path() << " byte " << i << " ^ " << x;
      }
    ++n;
  }
  EXPECT_GE(n, 5u);  // four of libnd4j's test graphs and the reproducers of nd4j_fuzz's findings
}
