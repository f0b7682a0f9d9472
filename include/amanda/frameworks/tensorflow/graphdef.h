// TensorFlow GraphDefs <-> the graph abstraction (docs/tensorflow.md). A frozen GraphDef (`.pb`,
// or its text form `.pbtxt`) imports into a document whose root graph is in namespace
// amanda/tensorflow/2.2 (TF.js's own ops in amanda/tensorflow/tfjs/4.22, op type `tfjs::OP`);
// export gives back the same GraphDef. What has no readable form is kept in '@' annotations.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "amanda/support/file.h"
#include "amanda/support/gate.h"
#include "amanda/text/document.h"

namespace tensorflow {
class GraphDef;
}

namespace amanda::tf_frontend {

struct ImportOptions {
  std::string file_name = "<graphdef>";  // for messages
};

// Throws amanda::ParseError / amanda::Error with the file and node in the message.
text::Document import_graph(const tensorflow::GraphDef& g, const ImportOptions& options = {});
text::Document import_graph_bytes(std::string_view bytes, const ImportOptions& options = {});
text::Document import_graph_text(std::string_view text, const ImportOptions& options = {});
// Reads a .pb (binary) or .pbtxt (text) file, by extension.
// A .pb / .pbtxt (by the model path's extension) or a SavedModel folder, through the gate.
text::Document read_graph(ReadGate& files);
text::Document read_graph(const std::string& path);

// Throws amanda::Error when the document is not of a shape it can write (an op input without an
// edge, an attribute value that fits no AttrValue, ...).
void export_graph(const text::Document& doc, tensorflow::GraphDef& g);
std::string export_graph_bytes(const text::Document& doc);  // deterministic (map keys sorted)
std::string export_graph_text(const text::Document& doc);
// Writes atomically; .pbtxt as text, anything else binary.
// Stages a .pb or .pbtxt (by the output's extension) as out.main(); the caller commits. (A
// SavedModel output: write_saved_model.)
void write_graph(const text::Document& doc, WriteGate& out);
void write_graph(const text::Document& doc, const std::string& path);

// .pb / .pbtxt (the TensorFlow frontend's file extensions).
bool is_graphdef_path(std::string_view path);

}  // namespace amanda::tf_frontend
