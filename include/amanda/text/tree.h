// A small located tree read from YAML or JSON, for configuration-like documents (namespace
// schemas, mapping tables) whose readers want to walk a whole document and report positions.
// Graph documents do not use it: they are built straight from events (document.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "amanda/ir/value.h"
#include "amanda/text/document.h"
#include "amanda/text/events.h"

namespace amanda::text {

struct Tree {
  enum class Kind { Scalar, Seq, Map };
  Kind kind = Kind::Scalar;
  ir::Value scalar;          // resolved scalar (null, bool, int, float, string)
  std::string text;          // the scalar as written
  bool quoted = false;       // written quoted (a string whatever it looks like)
  std::string tag;
  std::vector<Tree> items;   // Seq
  std::vector<std::pair<std::string, Tree>> entries;  // Map, in order (duplicate keys refused)
  std::vector<SourceLoc> key_locs;                    // Map: where each key is
  SourceLoc loc;

  // Out of line: the member vectors hold Tree itself (clang with libstdc++ needs Tree complete).
  Tree();
  Tree(const Tree&);
  Tree(Tree&&) noexcept;
  Tree& operator=(const Tree&);
  Tree& operator=(Tree&&) noexcept;
  ~Tree();

  bool is_map() const { return kind == Kind::Map; }
  bool is_seq() const { return kind == Kind::Seq; }
  bool is_scalar() const { return kind == Kind::Scalar; }
  const Tree* find(std::string_view key) const;
  const SourceLoc* key_loc(std::string_view key) const;
  // The plain value (scalars, lists and maps of scalars; tags are refused).
  ir::Value to_value() const;
};

Tree parse_tree(std::string_view text, Format format, const std::string& file_name, const Limits& limits = {});
Tree read_tree(const std::string& path, std::optional<Format> format = std::nullopt);

}  // namespace amanda::text
