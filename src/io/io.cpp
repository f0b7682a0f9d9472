#include "amanda/io/io.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "amanda/pipeline/pipeline.h"

namespace amanda::io {

using pipeline::FrameworkRegistry;

void install_conventions() { (void)FrameworkRegistry::instance(); }

pipeline::Probe probe(const std::string& path) {
  ReadGate gate(path);
  pipeline::Probe p;
  p.path = path;
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  p.extension = std::filesystem::path(trimmed).extension().string();
  for (auto& c : p.extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  p.is_folder = gate.model_is_folder();
  p.head = gate.peek(4096);
  return p;
}

text::Document read_any(const std::string& path, Diagnostics& diags, const Options& options, schema::Registry* registry) {
  FrameworkRegistry& reg = FrameworkRegistry::instance();
  pipeline::Probe p = probe(path);
  const pipeline::Framework* f = options.has("format") ? reg.find("text") : reg.for_reading(p);
  if (!f && p.is_folder) throw Error(path + ": error: is a directory, and no framework reads such a folder (see `amanda formats`)");
  if (!f) throw Error(path + ": error: no framework reads this file (see `amanda formats`)");
  ReadGate gate(path);
  pipeline::ReadContext ctx{gate, options, diags, registry};
  return f->read(ctx);
}

text::Document read_any(const std::string& path, Diagnostics& diags, std::optional<text::Format> format) {
  Options o;
  if (format) o.set("format", {*format == text::Format::Json ? "json" : "yaml"});
  return read_any(path, diags, o);
}

Options to_options(const WriteOptions& w) {
  Options o;
  if (w.external_data) o.set("external_data", {"1"});
  o.set("threshold", {std::to_string(w.threshold)});
  o.set("inline_limit", {std::to_string(w.text.inline_limit)});
  return o;
}

std::vector<std::string> write_document(const text::Document& doc, const std::string& path, const Options& options) {
  FrameworkRegistry& reg = FrameworkRegistry::instance();
  std::string_view ns = doc.kind == text::Document::Kind::Edge ? std::string_view() : doc.graph.type_str(doc.graph.root());
  const pipeline::Framework* f = reg.for_writing(path, ns);
  if (!f) throw Error(path + ": no framework writes this file (see `amanda formats`)");
  WriteGate gate(path);
  Diagnostics diags;
  pipeline::WriteContext ctx{gate, options, diags, {}};
  f->write(doc, ctx);
  gate.commit();
  return ctx.side_files;
}

std::string write_any(const text::Document& doc, const std::string& path, text::Format format, const WriteOptions& options) {
  Options o = to_options(options);
  o.set("format", {format == text::Format::Json ? "json" : "yaml"});
  auto side = write_document(doc, path, o);
  return side.empty() ? std::string() : side.front();
}

std::string write_any(const text::Document& doc, const std::string& path, const WriteOptions& options) {
  return write_any(doc, path, text::format_for_path(path), options);
}

const pipeline::Framework* value_reader(const std::string& path) {
  pipeline::Probe p = probe(path);
  for (const auto& f : FrameworkRegistry::instance().frameworks())
    if (f->reads_values(p)) return f.get();
  return nullptr;
}

std::unique_ptr<schema::Registry> default_registry() { return pipeline::default_registry(); }
void add_default_tables(mapping::TableSet& set, const std::vector<std::string>& extra) { pipeline::add_default_tables(set, extra); }
std::string full_namespace(const std::string& ns) { return pipeline::full_namespace(ns); }

}  // namespace amanda::io
