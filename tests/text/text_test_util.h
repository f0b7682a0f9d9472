// Helpers shared by the text tests: read files, parse and write strings, temporary folders.
#pragma once

#include <gtest/gtest.h>

#include "test_files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "amanda/ir/equal.h"
#include "amanda/text/document.h"

namespace amanda::text::testing {

namespace fs = std::filesystem;

using test_files::slurp;
using test_files::spit;

inline fs::path test_data() { return fs::path(AMANDA_TEST_DATA); }
inline fs::path golden_seed_dir() { return test_data() / "golden" / "seed"; }

// The seed examples: tests/golden/seed/NAME.yaml (not the .expected.* files), sorted.
inline std::vector<fs::path> seed_examples() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(golden_seed_dir())) {
    std::string n = e.path().filename().string();
    if (e.path().extension() == ".yaml" && n.find(".expected.") == std::string::npos) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline Document parse_yaml(std::string_view text, Diagnostics* diags = nullptr, const ReadOptions& opt = {}) {
  Diagnostics local;
  return parse(text, Format::Yaml, "test.yaml", diags ? *diags : local, opt);
}
inline Document parse_json(std::string_view text, Diagnostics* diags = nullptr, const ReadOptions& opt = {}) {
  Diagnostics local;
  return parse(text, Format::Json, "test.json", diags ? *diags : local, opt);
}
inline Document parse_as(std::string_view text, Format f) { return f == Format::Yaml ? parse_yaml(text) : parse_json(text); }

// The ParseError a text raises ("" message when it parses).
inline ParseError parse_error(std::string_view text, Format f = Format::Yaml, const ReadOptions& opt = {},
                              Diagnostics* diags = nullptr) {
  Diagnostics local;
  try {
    parse(text, f, f == Format::Yaml ? "in.yaml" : "in.json", diags ? *diags : local, opt);
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a parse error for:\n" << text;
  return ParseError(SourceLoc{}, "");
}

// Same document: same kind, and the graph (or the edge fragment) is structurally equal.
inline ::testing::AssertionResult same_document(const Document& a, const Document& b) {
  if (a.kind != b.kind) return ::testing::AssertionFailure() << "kinds differ";
  if (a.kind == Document::Kind::Edge) {
    const auto &x = a.edge, &y = b.edge;
    if (x.src_op != y.src_op || x.src_port != y.src_port || x.dst_op != y.dst_op || x.dst_port != y.dst_port)
      return ::testing::AssertionFailure() << "edge endpoints differ";
    if (x.attrs.size() != y.attrs.size()) return ::testing::AssertionFailure() << "edge attrs differ";
    for (size_t i = 0; i < x.attrs.size(); ++i)
      if (x.attrs[i].first != y.attrs[i].first || x.attrs[i].second != y.attrs[i].second)
        return ::testing::AssertionFailure() << "edge attr " << x.attrs[i].first << " differs";
    return ::testing::AssertionSuccess();
  }
  std::string d = ir::first_difference(a.graph, b.graph);
  if (!d.empty()) return ::testing::AssertionFailure() << d;
  return ::testing::AssertionSuccess();
}

// A fresh folder under the system temp dir, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "amanda-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  // File names in the folder, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

}  // namespace amanda::text::testing
