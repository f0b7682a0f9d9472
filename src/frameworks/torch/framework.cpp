// PyTorch as a framework plug-in: TorchScript archives (.pt), read without libtorch (the default) or
// by the libtorch plugin; the PyTorch namespace; the libtorch-free reader's shape rules as the
// namespace's type inference; libtorch (in a child process) as the runtime `convert --check` runs
// a source with.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "amanda/frameworks/torch/torchscript.h"
#include "amanda/pipeline/framework.h"
#include "amanda/schema/registry.h"
#include "frameworks/torch/script_writer.h"
#include "frameworks/torchscript/namespace_file.h"

namespace amanda::frameworks {

namespace {

constexpr std::string_view kPrefix = "amanda/pytorch/";

bool is_name(const std::string& s) {
  return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// "1,3,224,224", "N,3,224,224" (a name is a symbolic dimension), "" or "[]" (a 0-d tensor).
std::vector<int64_t> parse_shape(const std::string& s, std::vector<std::string>& dim_names) {
  std::vector<int64_t> dims;
  if (s.empty() || s == "[]") return dims;
  size_t start = 0;
  while (start <= s.size()) {
    size_t e = s.find(',', start);
    if (e == std::string::npos) e = s.size();
    std::string part = s.substr(start, e - start);
    start = e + 1;
    if (is_name(part)) {
      auto at = std::find(dim_names.begin(), dim_names.end(), part);
      if (at == dim_names.end()) at = dim_names.insert(dim_names.end(), part);
      dims.push_back(-1 - (at - dim_names.begin()));
      continue;
    }
    char* end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || v < 0)
      throw UsageError("--input-shape '" + s +
                       "': dimensions are non-negative integers or names (a symbolic dimension) separated by commas");
    dims.push_back(v);
  }
  return dims;
}

class PyTorchFramework final : public pipeline::Framework {
 public:
  std::string_view name() const override { return "pytorch"; }
  std::string_view description() const override { return "TorchScript archives (.pt, .pth, .ptl, .torchscript) saved by torch.jit.save"; }
  std::vector<std::string> namespace_prefixes() const override { return {std::string(kPrefix)}; }
  std::vector<pipeline::OptionInfo> options() const override {
    return {{"input_shape", "the shape of forward()'s tensor inputs, one per input (1,3,224,224; a name is a symbolic dimension)"},
            {"input_type", "the element type of forward()'s tensor inputs: once for all, or one per input"},
            {"reader", "script (no libtorch), libtorch (the plugin), auto (the first, else the second)"}};
  }

  int detect_read(const pipeline::Probe& p) const override {
    if (p.is_folder) return 0;
    const std::string& e = p.extension;
    if (e == ".pt" || e == ".pth" || e == ".ptl" || e == ".torchscript") return 50;
    if (e == ".onnx" || e == ".yaml" || e == ".yml" || e == ".json") return 0;
    return p.head.size() >= 4 && p.head.compare(0, 4, "PK\x03\x04") == 0 ? 40 : 0;  // a zip archive
  }
  text::Document read(pipeline::ReadContext& ctx) const override {
    torch_frontend::ImportOptions io;
    const auto& types = ctx.options.all("input_type");
    if (types.size() == 1) io.input_dtype = types[0];
    else io.input_dtypes = types;
    io.reader = ctx.options.get("reader", "auto");
    for (const auto& s : ctx.options.all("input_shape")) io.input_shapes.push_back(parse_shape(s, io.dim_names));
    return torch_frontend::read_torchscript(ctx.files.model_path(), io, ctx.registry);
  }

  // Writing: a graph of the PyTorch namespace as a TorchScript archive (script_writer.h); a graph
  // of another framework gets there through the planner's tables (ONNX -> PyTorch).
  int detect_write(std::string_view path, std::string_view) const override {
    return path.ends_with(".pt") || path.ends_with(".pth") || path.ends_with(".torchscript") ? 50 : 0;
  }
  void write(const text::Document& doc, pipeline::WriteContext& ctx) const override {
    std::string_view ns = doc.graph.type_str(doc.graph.root());
    if (!ns.starts_with(kPrefix))
      throw Error(ctx.files.output_path() + ": a TorchScript archive holds a graph of the PyTorch namespace, not " +
                  std::string(ns) + " (convert it first: --to pytorch)");
    torch_frontend::write_torchscript(doc.graph, ctx.files);
  }
  std::vector<std::string> default_targets(std::string_view, std::string_view source_ns) const override {
    if (source_ns.starts_with(kPrefix)) return {std::string(source_ns)};
    return {std::string(kPrefix) + "1.13"};
  }
  // aten ops take strides, dims and shapes as values: an ONNX source computing them from constants
  // converts once they are folded.
  bool converts_after_folding() const override { return true; }

  void add_namespaces(schema::Registry& r) const override { r.add_provider(torch_frontend::make_torch_namespace_provider()); }
  void register_conventions(ir::Conventions& c) const override { torch_frontend::register_conventions(c); }

  pipeline::InferReport infer_types(ir::Graph& g, const pipeline::InferRequest& request) const override {
    pipeline::InferReport rep;
    const schema::NamespaceSchema* ns = request.registry ? request.registry->find(g.type_str(g.root())) : nullptr;
    if (!ns) {
      rep.complete = false;
      rep.summary = "namespace " + std::string(g.type_str(g.root())) + " is not known";
      rep.errors.push_back(rep.summary);
      return rep;
    }
    rep.ran = true;
    auto r = torch_frontend::infer_types(g, *ns);
    rep.errors = std::move(r.errors);
    rep.complete = rep.errors.empty() && !r.no_rule && !r.untyped_inputs && !r.no_schema;
    rep.summary = std::to_string(r.ops) + " ops, " + std::to_string(r.inferred) + " inferred, " + std::to_string(r.no_schema) +
                  " without a schema, " + std::to_string(r.no_rule) + " without a shape rule, " + std::to_string(r.untyped_inputs) +
                  " with inputs of unknown type, " + std::to_string(rep.errors.size()) + " errors";
    return rep;
  }

  // Op outputs without a type (a graph from a text file, or from the libtorch reader where
  // libtorch's own propagation knew no shape): the namespace's inference types them, so that rules
  // that read a rank or an element type apply. Graphs the readers typed in full pay only this scan.
  void prepare(ir::Graph& g, const pipeline::InferRequest& request) const override {
    auto type_key = g.sym("@type");
    for (ir::OpId op = g.first_child(g.root()); op; op = g.next_sibling(op)) {
      std::string_view t = g.type_str(op);
      if (t == "prim::Constant" || t == "prim::ListConstruct") continue;
      for (ir::PortId p : g.outputs(op))
        if (!g.is_control(p) && !g.port_type(p) && !g.attr(p, type_key)) {
          infer_types(g, request);
          return;
        }
    }
  }

  bool has_runtime() const override { return true; }
  std::string_view runtime_name() const override { return "libtorch"; }
  bool can_run(std::string* why) const override {
    if (torch_frontend::torch_namespace_name().empty()) {
      if (why) *why = "Amanda was built without libtorch";
      return false;
    }
    return torch_frontend::torch_available(why);
  }
  std::vector<ir::Tensor> run(const std::string& path, const std::vector<ir::Tensor>& inputs) const override {
    return torch_frontend::run_torchscript_isolated(path, inputs);
  }
  std::unique_ptr<schema::NamespaceSchema> runtime_namespace(const schema::TypeSystems& types, std::string* why) const override {
    if (!can_run(why)) return nullptr;
    return torch_frontend::plugin_namespace(types);
  }
  std::string compact_namespace(const schema::NamespaceSchema& ns, std::string_view extension) const override {
    return extension == ".ops" ? torchscript::write_namespace_file(ns) : std::string();
  }
};

}  // namespace

std::unique_ptr<pipeline::Framework> make_pytorch() { return std::make_unique<PyTorchFramework>(); }

}  // namespace amanda::frameworks
