// The library's one entry point for files and defaults, shared by the tool, the Python module,
// the tests and the benchmarks: read and write any file a registered framework claims (content
// beats extension), through the gate; the default registry of namespaces and set of tables.
// It names no framework: the framework registry (amanda/pipeline/framework.h) decides.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amanda/mapping/engine.h"
#include "amanda/pipeline/framework.h"
#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"
#include "amanda/text/document.h"

namespace amanda::io {

using pipeline::Options;

// What format detection sees of `path` (through a ReadGate: never blocks on a FIFO).
pipeline::Probe probe(const std::string& path);

// Reads a document with the framework that claims it; `options` are the framework options
// (input_shape, reader, format=yaml|json forces the text reader, ...); `registry` supplies the
// namespaces a reader needs (it makes its own when null). Throws ParseError or Error naming the file.
text::Document read_any(const std::string& path, Diagnostics& diags, const Options& options = {},
                        schema::Registry* registry = nullptr);
// The same with the text reader forced to a format (or detection when nullopt).
text::Document read_any(const std::string& path, Diagnostics& diags, std::optional<text::Format> format);

struct WriteOptions {
  text::WriteOptions text;     // YAML/JSON: the side-file limit
  bool external_data = false;  // ONNX: big tensors in <path>.data
  size_t threshold = 1024;     // ONNX: what "big" means, in bytes
};
Options to_options(const WriteOptions& o);

// Writes a document with the framework that claims the path for its namespace; all or nothing.
// Returns the side files written beside it (ONNX's .data, YAML's tensor file).
std::vector<std::string> write_document(const text::Document& doc, const std::string& path, const Options& options = {});
// The same with a text format for outputs the text forms write. Returns the side file, or "".
std::string write_any(const text::Document& doc, const std::string& path, text::Format format, const WriteOptions& options = {});
std::string write_any(const text::Document& doc, const std::string& path, const WriteOptions& options = {});

// The framework that reads value files like `path` (`amanda run --input x=FILE.pb`), or null.
const pipeline::Framework* value_reader(const std::string& path);

// The namespaces everything uses by default (every framework's, namespaces/, $AMANDA_SCHEMA_PATH)
// and the default tables (tables/, $AMANDA_TABLE_PATH, then `extra`): pipeline's, re-exported.
std::unique_ptr<schema::Registry> default_registry();
void add_default_tables(mapping::TableSet& set, const std::vector<std::string>& extra = {});
// Registers every framework's conventions (element type numberings, constant ops) in
// ir::conventions(), once: code that evaluates mapping expressions without reading a file calls it.
void install_conventions();
// "onnx/11" -> "amanda/onnx/11"; a name that already starts with "amanda/" is kept.
std::string full_namespace(const std::string& ns);

}  // namespace amanda::io
