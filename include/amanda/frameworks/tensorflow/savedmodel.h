// TensorFlow SavedModel directories <-> the graph abstraction (docs/tensorflow.md, "SavedModel"):
// saved_model.pb (a SavedModel proto: meta graphs, each a GraphDef with its tags, signatures,
// saver and object graph) and variables/variables.{index,data-*} (a tensor-bundle checkpoint).
// One meta graph is read (chosen by tag); its GraphDef is imported as a .pb is, and the rest of
// the SavedModel is kept in the root attribute `saved_model` (signatures readable, variables as
// tensors), so that writing back gives the same SavedModel.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "amanda/support/file.h"
#include "amanda/support/gate.h"
#include "amanda/text/document.h"

namespace amanda::tf_frontend {

struct SavedModelOptions {
  std::string tag = "serve";  // the meta graph whose tags include this one
};

// `saved_model_pb`: the bytes of saved_model.pb; `index`/`data`: variables/variables.index and
// its single data shard (index empty: no variables). `dir`: for messages. Throws amanda::Error /
// ParseError naming the file and the entry.
text::Document import_saved_model(std::string_view saved_model_pb, std::string_view index, std::shared_ptr<const Buffer> data,
                                  const std::string& dir, const SavedModelOptions& options = {});
// Reads a SavedModel directory, or the directory of a file named saved_model.pb.
// Through the gate: its root is the SavedModel's folder (ReadGate(saved_model_dir(path) + "/")).
text::Document read_saved_model(ReadGate& files, const SavedModelOptions& options = {});
text::Document read_saved_model(const std::string& path, const SavedModelOptions& options = {});

struct SavedModelFiles {
  std::string saved_model_pb;
  bool has_variables = false;
  std::string index, data;  // variables/variables.index, variables/variables.data-00000-of-00001
};
SavedModelFiles export_saved_model(const text::Document& doc);
// Writes into the directory `path` names (see is_saved_model_output_path); every file is built
// before the first is written, each atomically.
// Stages the folder's files; `out` is the SavedModel's folder (WriteGate(saved_model_dir(path))),
// made a folder output here; the caller commits.
void write_saved_model(const text::Document& doc, WriteGate& out);
void write_saved_model(const text::Document& doc, const std::string& path);
// The SavedModel's folder for a path as named: the folder, or the folder of .../saved_model.pb.
std::string saved_model_dir(std::string_view path);

// Reading: an existing directory holding saved_model.pb, or a file named saved_model.pb.
bool is_saved_model_path(std::string_view path);
// Writing: a path ending in '/', an existing directory, or a file named saved_model.pb.
bool is_saved_model_output_path(std::string_view path);

}  // namespace amanda::tf_frontend
