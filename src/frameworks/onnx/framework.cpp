// ONNX as a framework plug-in: .onnx files (external data beside them), the ONNX namespaces from
// libonnx's registry, libonnx's type inference, and the expansion of ops an older opset lacks into
// their function bodies or C++ lowerings.
#include <filesystem>
#include "amanda/frameworks/onnx/functions.h"
#include "amanda/ir/graph.h"
#include "amanda/ir/value.h"
#include "amanda/frameworks/onnx/infer.h"
#include "amanda/frameworks/onnx/model.h"
#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/frameworks/onnx/value_file.h"
#include "amanda/pipeline/framework.h"
#include "amanda/schema/registry.h"

namespace amanda::frameworks {

namespace {

constexpr std::string_view kPrefix = "amanda/onnx/";

// Both TorchScript readers name themselves in the root's producer_version.
bool from_torchscript(const text::Document& doc) {
  const ir::Graph& g = doc.graph;
  const ir::Value* v = g.attr(g.root(), const_cast<ir::Graph&>(g).sym("producer_version"));
  return v && v->is_string() && v->as_string().rfind("torchscript import", 0) == 0;
}

class OnnxFramework final : public pipeline::Framework {
 public:
  OnnxFramework() { onnx_frontend::keep_schema_registry_at_exit(); }

  std::string_view name() const override { return "onnx"; }
  std::string_view description() const override { return "ONNX models (.onnx, external data beside them), opsets 1-17"; }
  std::vector<std::string> namespace_prefixes() const override { return {std::string(kPrefix)}; }
  std::vector<pipeline::OptionInfo> options() const override {
    return {{"external_data", "write tensors of at least `threshold` bytes to OUT.data"},
            {"threshold", "the size in bytes from which a tensor goes to the external data file (default 1024)"},
            {"check", "run the ONNX checker's full check before writing (a failure is an error, nothing written); default 1 for PyTorch sources, 0 otherwise"}};
  }

  int detect_read(const pipeline::Probe& p) const override { return !p.is_folder && p.extension == ".onnx" ? 50 : 0; }
  text::Document read(pipeline::ReadContext& ctx) const override { return onnx_frontend::read_model(ctx.files); }

  int detect_write(std::string_view path, std::string_view) const override { return path.ends_with(".onnx") ? 50 : 0; }
  void write(const text::Document& doc, pipeline::WriteContext& ctx) const override {
    onnx_frontend::ExportOptions o;
    o.external_data = ctx.options.flag("external_data");
    if (ctx.options.has("threshold")) o.threshold = std::stoull(ctx.options.get("threshold"));
    o.check = ctx.options.has("check") ? ctx.options.flag("check") : from_torchscript(doc);
    std::string side = onnx_frontend::write_model(doc, ctx.files, o);  // staged; the caller commits
    if (!side.empty()) {
      std::filesystem::path p(ctx.files.output_path());
      ctx.side_files.push_back(p.has_parent_path() ? (p.parent_path() / side).string() : side);
    }
  }
  std::vector<std::string> default_targets(std::string_view, std::string_view source_ns) const override {
    if (source_ns.starts_with(kPrefix)) return {std::string(source_ns)};
    std::vector<std::string> v;
    for (int opset = 13; opset <= 17; ++opset) v.push_back(std::string(kPrefix) + std::to_string(opset));
    return v;
  }

  std::vector<std::string> versions() const override {
    std::vector<std::string> v;
    for (int opset = 1; opset <= 17; ++opset) v.push_back(std::string(kPrefix) + std::to_string(opset));
    return v;
  }
  void add_namespaces(schema::Registry& r) const override { r.add_provider(onnx_frontend::make_onnx_namespace_provider()); }
  void register_conventions(ir::Conventions& c) const override { onnx_frontend::register_conventions(c); }

  pipeline::InferReport infer_types(ir::Graph& g, const pipeline::InferRequest& request) const override {
    onnx_frontend::InferOptions o;
    o.write_attrs = request.write_attrs;
    o.data_propagation = request.propagate_values;
    pipeline::InferReport rep;
    rep.ran = true;
    try {
      onnx_frontend::InferResult r = onnx_frontend::infer_types(g, o);
      rep.errors = std::move(r.errors);
      rep.complete = rep.errors.empty();
      rep.summary = std::to_string(r.ops) + " ops, " + std::to_string(r.inferred) + " inferred, " + std::to_string(r.no_schema) +
                    " without a schema, " + std::to_string(r.typed_ports) + " typed outputs, " + std::to_string(rep.errors.size()) +
                    " errors";
    } catch (const std::exception& e) {
      // A model libonnx cannot infer converts as before, with the types its file records.
      rep.complete = false;
      rep.errors.push_back(e.what());
      rep.summary = std::string("inference failed: ") + e.what();
    }
    return rep;
  }
  std::string expand(ir::Graph& g, ir::OpId op, const std::string& ns) const override {
    return onnx_frontend::expand_function(g, op, ns);
  }
  bool can_expand(const std::string& type, const std::string& ns) const override { return onnx_frontend::has_function_body(type, ns); }
  bool lowers_refused(const std::string& type, const std::string& ns) const override { return onnx_frontend::lowers_refused(type, ns); }
  bool retry_after_folding() const override { return true; }

  bool reads_values(const pipeline::Probe& p) const override { return p.extension == ".pb"; }
  ir::Value read_values(ReadGate& files, const std::string& type) const override {
    onnx_frontend::ValueFile vf = onnx_frontend::read_value_file(files.model_path(), type);
    switch (vf.kind) {
      case onnx_frontend::ValueFile::Kind::Tensor: return ir::Value(vf.tensor);
      case onnx_frontend::ValueFile::Kind::None: return ir::Value();
      case onnx_frontend::ValueFile::Kind::Sequence: {
        ir::Value::List l;
        for (auto& t : vf.seq) l.push_back(ir::Value(t));
        return ir::Value(std::move(l));
      }
    }
    return ir::Value();
  }
};

}  // namespace

std::unique_ptr<pipeline::Framework> make_onnx() { return std::make_unique<OnnxFramework>(); }

}  // namespace amanda::frameworks
