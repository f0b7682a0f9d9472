// Amanda's own text forms (the seed's YAML, and the same tree as JSON) as a framework plug-in: the
// reader of last resort (any file no other framework claims is read as YAML), and the writer of
// .yaml/.yml/.json outputs and of anything no other framework claims.
#include "amanda/pipeline/framework.h"
#include "amanda/text/document.h"

namespace amanda::frameworks {

namespace {

std::optional<text::Format> format_option(const pipeline::Options& o) {
  std::string f = o.get("format");
  if (f.empty()) return std::nullopt;
  if (f == "yaml") return text::Format::Yaml;
  if (f == "json") return text::Format::Json;
  throw UsageError("format is 'yaml' or 'json', not '" + f + "'");
}

class TextFramework final : public pipeline::Framework {
 public:
  std::string_view name() const override { return "text"; }
  std::string_view description() const override { return "Amanda's YAML (.yaml, .yml; any other name) and JSON (.json) forms of the graph"; }
  std::vector<std::string> namespace_prefixes() const override { return {}; }  // any namespace
  std::vector<pipeline::OptionInfo> options() const override {
    return {{"format", "yaml or json: the text form to read or write, whatever the extension"},
            {"inline_limit", "tensors of more bytes go to a side file beside the output (default 4096)"}};
  }

  int detect_read(const pipeline::Probe& p) const override {
    if (p.is_folder) return 0;
    return p.extension == ".yaml" || p.extension == ".yml" || p.extension == ".json" ? 5 : 1;
  }
  text::Document read(pipeline::ReadContext& ctx) const override {
    return text::read_file(ctx.files.model_path(), ctx.diags, format_option(ctx.options));
  }
  int detect_write(std::string_view, std::string_view) const override { return 1; }
  void write(const text::Document& doc, pipeline::WriteContext& ctx) const override {
    const std::string& path = ctx.files.output_path();
    auto f = format_option(ctx.options);
    text::WriteOptions o;
    if (ctx.options.has("inline_limit")) o.inline_limit = std::stoull(ctx.options.get("inline_limit"));
    std::string side = text::write_file(doc, path, f ? *f : text::format_for_path(path), o);
    if (!side.empty()) ctx.side_files.push_back(side);
  }
};

}  // namespace

std::unique_ptr<pipeline::Framework> make_text() { return std::make_unique<TextFramework>(); }

}  // namespace amanda::frameworks
