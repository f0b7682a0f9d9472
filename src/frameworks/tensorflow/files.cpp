// GraphDef files: `.pb` (binary, memory-mapped) and `.pbtxt` (text), by extension; and SavedModel
// directories (savedmodel.h), which are named by a folder or by their saved_model.pb.
#include <algorithm>
#include <filesystem>

#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/savedmodel.h"
#include "amanda/support/diagnostics.h"

namespace amanda::tf_frontend {

namespace {

std::string lower_ext(std::string_view path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace

bool is_graphdef_path(std::string_view path) {
  if (is_saved_model_path(path)) return true;
  std::string ext = lower_ext(path);
  return ext == ".pb" || ext == ".pbtxt";
}

text::Document read_graph(ReadGate& files) {
  const std::string& path = files.model_path();
  if (files.model_is_folder() || is_saved_model_path(path)) return read_saved_model(files);
  auto bytes = files.map_model();
  ImportOptions o;
  o.file_name = path;
  if (lower_ext(path) == ".pbtxt") return import_graph_text(bytes->view(), o);
  return import_graph_bytes(bytes->view(), o);
}

text::Document read_graph(const std::string& path) {
  if (is_saved_model_path(path)) return read_saved_model(path);
  ReadGate files(path);
  return read_graph(files);
}

void write_graph(const text::Document& doc, WriteGate& out) {
  const std::string& path = out.output_path();
  std::string bytes = lower_ext(path) == ".pbtxt" ? export_graph_text(doc) : export_graph_bytes(doc);
  out.main().write(bytes);
}

void write_graph(const text::Document& doc, const std::string& path) {
  if (is_saved_model_output_path(path)) return write_saved_model(doc, path);  // (a path named saved_model.pb)
  WriteGate out(path);
  write_graph(doc, out);
  out.commit();
}

}  // namespace amanda::tf_frontend
