// File helpers shared by the test binaries.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace amanda::test_files {

// The whole file; a test failure when it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot read " << p;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes bytes to p, creating its folder; a test failure when it cannot.
inline void spit(const std::filesystem::path& p, std::string_view bytes) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) ADD_FAILURE() << "cannot write " << p;
}

}  // namespace amanda::test_files
