// The library's one entry point for files and defaults, shared by the tool, the Python module,
// the tests and the benchmarks: read and write any supported file by its extension (or content),
// the default registry of namespaces, and the default set of mapping tables.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amanda/frameworks/torch/torchscript.h"
#include "amanda/mapping/engine.h"
#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"
#include "amanda/text/document.h"

namespace amanda::io {

// Reads a document: ONNX (.onnx) or TorchScript (.pt, a zip archive) by extension or content,
// else YAML or JSON (an explicit `format` forces the text reader). Throws ParseError or Error
// naming the file; warnings (accepted misspellings) go to diags.
text::Document read_any(const std::string& path, Diagnostics& diags, std::optional<text::Format> format = std::nullopt);

// The same with the TorchScript reader's options; `registry` supplies the PyTorch namespace to it
// (a default registry when null).
text::Document read_any(const std::string& path, Diagnostics& diags, const torch_frontend::ImportOptions& torch,
                        schema::Registry* registry = nullptr);

struct WriteOptions {
  text::WriteOptions text;     // YAML/JSON: the side-file limit
  bool external_data = false;  // ONNX: big tensors in <path>.data
  size_t threshold = 1024;     // ONNX: what "big" means, in bytes
};

// Writes a document atomically: ONNX (.onnx) by extension, else text in `format`. Returns the side
// file written, or "". Throws Error when the document cannot be written in that format.
std::string write_any(const text::Document& doc, const std::string& path, text::Format format,
                      const WriteOptions& options = {});
// The same with the text format from the extension (.json, else YAML).
std::string write_any(const text::Document& doc, const std::string& path, const WriteOptions& options = {});

// The namespaces everything uses by default: those shipped in namespaces/, the folders of
// $AMANDA_SCHEMA_PATH, ONNX's from libonnx's registry and PyTorch's (loaded on first use).
std::unique_ptr<schema::Registry> default_registry();

// Adds the default tables to `set`: the shipped tables/ folder, the folders of $AMANDA_TABLE_PATH,
// then `extra` (table files or folders).
void add_default_tables(mapping::TableSet& set, const std::vector<std::string>& extra = {});

// Registers every built-in frontend's conventions (element type numberings, constant ops:
// amanda/ir/conventions.h) in ir::conventions(), once. The functions here that read files, make
// registries or prepare conversions call it; code that evaluates mapping expressions without them
// calls it first.
void install_conventions();

// "onnx/11" -> "amanda/onnx/11"; a name that already starts with "amanda/" is kept.
std::string full_namespace(const std::string& ns);

// What every front end (the tool, the Python module) does before mapping::convert: ONNX graphs get
// their values' inferred types on the ports (libonnx's inference; the attributes the exporter writes
// are left as they were), so that rules which need an element type see it; and the options carry
// the expansion of ONNX ops an older opset lacks into their function bodies.
// With `to` amanda/core, inference also propagates the values of small integer tensors (shapes
// computed in the graph), since the core table needs every shape.
void prepare_for_conversion(ir::Graph& g, const std::string& to = {}, bool data_propagation = false);
mapping::ConvertOptions default_convert_options();
// After a conversion from namespace `from`: a TensorFlow graph now in ONNX gets its outputs' value
// names and every value's inferred type and shape (value_info), which ONNX needs on graph outputs.
void finish_conversion(ir::Graph& g, const std::string& from);

}  // namespace amanda::io
