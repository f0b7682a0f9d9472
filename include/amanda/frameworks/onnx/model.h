// ONNX models <-> the graph abstraction. The importer turns a ModelProto into a text::Document
// whose root graph is in namespace amanda/onnx/<default-domain opset>; the exporter turns it back.
// Nothing the file says is dropped: what has no readable form is kept in '@' annotations (see
// docs/onnx.md for the mapping).
#pragma once

#include <string>
#include <string_view>

#include "amanda/support/gate.h"
#include "amanda/support/file.h"
#include "amanda/text/document.h"

namespace onnx {
class ModelProto;
}

namespace amanda::onnx_frontend {

struct ImportOptions {
  // Folder that external-data locations are relative to; empty: external data is refused.
  std::string base_dir;
  std::string file_name = "<onnx>";  // for messages
};

// Throws amanda::ParseError (bad protobuf, not a model) or amanda::Error (external data refused).
text::Document import_model(const onnx::ModelProto& model, const ImportOptions& options = {});
text::Document import_model_bytes(std::string_view bytes, const ImportOptions& options = {});
// (Each tensor's bytes are copied once, as protobuf would.)
// The same without copying: the root graph's initializers borrow their raw_data from `bytes`
// (which the tensors keep alive). read_model does this with the mapped file.
text::Document import_model_buffer(std::shared_ptr<const Buffer> bytes, const ImportOptions& options = {});
// Reads a .onnx file; external data is relative to the file's folder.
text::Document read_model(const std::string& path);

struct ExportOptions {
  // With external_data, tensors of at least `threshold` bytes go to `<output>.data` (4 KiB aligned).
  bool external_data = false;
  size_t threshold = 1024;
  // Run the ONNX checker's full check (structure, then strict typed shape inference) before
  // writing; a failure throws and nothing is written (check.cpp).
  bool check = false;
};

// Throws amanda::Error when the document is not an imported model shape it can write.
void export_model(const text::Document& doc, onnx::ModelProto& model);
std::string export_model_bytes(const text::Document& doc);
// Writes atomically (and the side file, with external_data); returns the side file's path, or "".
std::string write_model(const text::Document& doc, const std::string& path, const ExportOptions& options = {});
// Stages the model as out.main() and, with external_data, OUTPUT.data beside it; the caller
// commits. Returns the side file's name ("model.onnx.data"), or "".
std::string write_model(const text::Document& doc, WriteGate& out, const ExportOptions& options = {});
// Reads a model through the gate (external data under its policy).
text::Document read_model(ReadGate& files);

bool is_onnx_path(std::string_view path);

}  // namespace amanda::onnx_frontend
