// The seed examples in tests/golden/seed are verbatim copies of the ```yaml blocks of the "Graph
// Abstraction" section of amanda-design.md. When the design document is at hand (AMANDA_SEEDS;
// not in CI), every block is extracted again: each must load, and the copies must not drift.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "text_test_util.h"

namespace amanda::text {
namespace {

using namespace testing;

struct Block {
  std::string heading;  // the ### heading the block is under
  uint32_t line;        // first line of its content in the design document
  std::string text;
};

// The ```yaml blocks between "## Graph Abstraction" and the next "## " heading.
std::vector<Block> graph_abstraction_blocks(const std::string& md) {
  std::vector<Block> out;
  std::istringstream in(md);
  std::string line, heading;
  bool in_section = false, in_block = false;
  uint32_t n = 0;
  Block cur;
  while (std::getline(in, line)) {
    ++n;
    if (in_block) {
      if (line.rfind("```", 0) == 0) {
        in_block = false;
        out.push_back(cur);
      } else {
        cur.text += line + "\n";
      }
      continue;
    }
    if (line.rfind("## ", 0) == 0) {
      in_section = line == "## Graph Abstraction";
      continue;
    }
    if (!in_section) continue;
    if (line.rfind("### ", 0) == 0) heading = line.substr(4);
    if (line.rfind("```", 0) == 0) {
      if (line == "```yaml") {
        in_block = true;
        cur = Block{heading, n + 1, ""};
      } else {
        // another language: skip to its closing fence
        while (std::getline(in, line) && line.rfind("```", 0) != 0) ++n;
        ++n;
      }
    }
  }
  return out;
}

TEST(SeedSync, EveryGraphAbstractionExampleLoadsAndMatchesItsCopy) {
  fs::path design = fs::path(AMANDA_SEEDS) / "amanda-design.md";
  if (!fs::exists(design)) GTEST_SKIP() << design << " is not here (CI has no seeds folder)";
  std::vector<Block> blocks = graph_abstraction_blocks(slurp(design));
  // The copies, by content.
  std::map<std::string, std::string> copies;
  for (const fs::path& p : seed_examples()) copies.emplace(slurp(p), p.filename().string());

  std::set<std::string> matched;
  size_t checked = 0;
  for (const Block& b : blocks) {
    if (b.heading == "Full Specification") continue;  // a grammar, not a document
    SCOPED_TRACE("amanda-design.md:" + std::to_string(b.line) + " (" + b.heading + ")");
    ++checked;
    Diagnostics diags;
    Document doc = parse(b.text, Format::Yaml, "amanda-design.md", diags);
    EXPECT_EQ(diags.error_count(), 0u) << diags.str();
    // Only the PyTorch example is misspelt (`input_ports` in its edges).
    size_t expected_warnings = b.text.find("aten::") == std::string::npos ? 0 : 5;
    EXPECT_EQ(diags.warning_count(), expected_warnings) << diags.str();
    auto it = copies.find(b.text);
    if (it == copies.end()) {
      ADD_FAILURE() << "no verbatim copy of this block in tests/golden/seed:\n" << b.text;
      continue;
    }
    matched.insert(it->second);
  }
  EXPECT_EQ(checked, 9u) << "the section had 9 example documents besides the grammar";
  for (const auto& [text, name] : copies) EXPECT_TRUE(matched.count(name)) << name << " is not in the design document any more";
}

// The extraction itself, on a small document (this part runs everywhere).
TEST(SeedSync, ExtractsOnlyYamlBlocksOfTheSection) {
  std::string md =
      "# T\n## Other\n```yaml\nop: {name: no}\n```\n## Graph Abstraction\n### A\n```yaml\nop: {name: a}\n```\n"
      "```python\nx = 1\n```\n### Full Specification\n```yaml\ngraph:\n  ops: [ op ]\n```\n## Namespace\n"
      "```yaml\nop: {name: later}\n```\n";
  auto blocks = graph_abstraction_blocks(md);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].heading, "A");
  EXPECT_EQ(blocks[0].text, "op: {name: a}\n");
  EXPECT_EQ(blocks[0].line, 9u);
  EXPECT_EQ(blocks[1].heading, "Full Specification");
}

}  // namespace
}  // namespace amanda::text
