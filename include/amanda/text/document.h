// The text forms of the graph abstraction: the YAML of amanda-design.md and the same tree as
// JSON. A document's top level is `graph:`, `op:` or `edge:`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/support/diagnostics.h"
#include "amanda/text/events.h"

namespace amanda::text {

enum class Format { Yaml, Json };
std::string_view format_name(Format f);

// A lone `edge:` document is a fragment: its ops live elsewhere, so it keeps names only.
struct EdgeFragment {
  std::string src_op, src_port, dst_op, dst_port;
  std::vector<std::pair<std::string, ir::Value>> attrs;
};

struct Document {
  enum class Kind { Graph, Op, Edge };
  Kind kind = Kind::Graph;
  ir::Graph graph;  // Graph and Op documents: the root node is the graph or the op
  EdgeFragment edge;
  explicit Document(Kind k = Kind::Graph)
      : kind(k), graph(k == Kind::Op ? ir::Graph::RootKind::Op : ir::Graph::RootKind::Graph) {}
};
std::string_view kind_name(Document::Kind k);
// A copy of a whole document (every scope, port, attribute and attribute graph; tensors shared).
Document copy_document(const Document& src);

struct ReadOptions {
  Limits limits;
  // Folder that side files (tensor bytes stored outside the YAML) are relative to; empty: side
  // files are refused.
  std::string base_dir;
};

// Parses text. Throws ParseError (file:line:column) on the first fatal problem; collects every
// unresolved edge before throwing; warnings (accepted misspellings) go to diags.
Document parse(std::string_view text, Format format, const std::string& file_name, Diagnostics& diags,
               const ReadOptions& options = {});
// Reads a file (memory-mapped); the format comes from the extension (.json, else YAML).
Document read_file(const std::string& path, Diagnostics& diags, std::optional<Format> format = std::nullopt,
                   ReadOptions options = {});
Format format_for_path(const std::string& path);

struct WriteOptions {
  // Tensors with more bytes than this go to a side file next to the output (when writing a file);
  // smaller ones are written inline.
  size_t inline_limit = 4096;
};

// Serialises; every tensor inline. Throws amanda::Error if the document cannot be written.
std::string to_text(const Document& doc, Format format, const WriteOptions& options = {});
// Writes atomically. Tensors over the limit go to "<path>.data" (64-byte aligned), written
// atomically too; returns the side file's path, or "" when none was needed.
std::string write_file(const Document& doc, const std::string& path, Format format, const WriteOptions& options = {});

}  // namespace amanda::text
