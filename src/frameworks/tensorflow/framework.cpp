// TensorFlow as a framework plug-in: GraphDefs (.pb, .pbtxt), SavedModel folders and TF.js graph
// models (model.json + weight shards), the TensorFlow namespaces, and the placeholders and
// signature a graph needs when tables bring it into TensorFlow. What belongs to a conversion
// between TensorFlow and ONNX lives in src/conversions/.
#include <filesystem>

#include <fmt/format.h>

#include "amanda/frameworks/tensorflow/from_graph_ports.h"
#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/namespaces.h"
#include "amanda/ir/conventions.h"
#include "amanda/frameworks/tensorflow/savedmodel.h"
#include "amanda/frameworks/tensorflow/tfjs.h"
#include "amanda/pipeline/framework.h"
#include "amanda/schema/registry.h"

namespace amanda::frameworks {

namespace {

constexpr std::string_view kPrefix = "amanda/tensorflow/";

class TensorFlowFramework final : public pipeline::Framework {
 public:
  std::string_view name() const override { return "tensorflow"; }
  std::string_view description() const override {
    return "TensorFlow GraphDefs (.pb, .pbtxt), SavedModel folders, TF.js graph models (model.json + shards)";
  }
  std::vector<std::string> namespace_prefixes() const override { return {std::string(kPrefix)}; }
  std::vector<pipeline::OptionInfo> options() const override {
    return {{"outputs", "the tensors that become the ONNX graph's outputs (node or node:k)"}};
  }

  int detect_read(const pipeline::Probe& p) const override {
    if (tf_frontend::is_saved_model_path(p.path)) return 60;
    if (p.is_folder) return 0;
    if (p.extension == ".json" && tf_frontend::is_tfjs_head(p.head)) return 60;
    if (p.extension == ".pb" || p.extension == ".pbtxt") return 10;  // an extension other formats share
    return 0;
  }
  text::Document read(pipeline::ReadContext& ctx) const override {
    // Through the gate (SavedModel folders, TF.js shards: no link, FIFO or name leaving the folder).
    const std::string& path = ctx.files.model_path();
    if (!ctx.files.model_is_folder() && std::filesystem::path(path).extension() == ".json") {
      text::Document doc = tf_frontend::read_tfjs(ctx.files);
      // Weights whose manifest dtype differs from their Const node's: read as TF.js reads them.
      ir::Graph& g = doc.graph;
      if (Symbol k = g.symbols().find("@tfjs_topology_dtype"); k != SymbolTable::kNone)
        for (ir::OpId op = g.first_child(g.root()); op; op = g.next_sibling(op))
          if (const ir::Value* d = g.attr(op, k); d && d->is_string()) {
            const ir::Value* v = g.attr(op, g.sym("value"));
            ctx.diags.warning(path, fmt::format("weight '{}': the manifest says {}, its Const node {}; decoded as {}, as TF.js does",
                                                g.name_str(op), v && v->is_tensor() ? ir::dtype_name(v->as_tensor().dtype) : "?",
                                                d->as_string(), v && v->is_tensor() ? ir::dtype_name(v->as_tensor().dtype) : "?"));
          }
      return doc;
    }
    if (ctx.files.model_is_folder() || std::filesystem::path(path).filename() == "saved_model.pb")
      return tf_frontend::read_saved_model(ctx.files);
    return tf_frontend::read_graph(ctx.files);
  }

  int detect_write(std::string_view path, std::string_view graph_ns) const override {
    bool tf = graph_ns.starts_with(kPrefix);
    if (tf && tf_frontend::is_tfjs_output_path(path)) return 60;
    // A folder (a SavedModel) only when no format's extension says otherwise (-o a.onnx naming an
    // existing folder is an ONNX output, refused as such).
    if (tf && tf_frontend::is_saved_model_output_path(path)) return 40;
    if (tf_frontend::is_graphdef_path(path)) return tf ? 40 : 20;
    return 0;
  }
  void write(const text::Document& doc, pipeline::WriteContext& ctx) const override {
    const std::string& path = ctx.files.output_path();
    bool tf = doc.kind == text::Document::Kind::Graph && doc.graph.type_str(doc.graph.root()).starts_with(kPrefix);
    // Through the gate (staged, committed by the caller); shard names are the writer's.
    if (tf && tf_frontend::is_tfjs_output_path(path)) return tf_frontend::write_tfjs(doc, ctx.files);
    if (tf && tf_frontend::is_saved_model_output_path(path)) {
      // A folder named: the gate is the folder. A path named .../saved_model.pb: its folder's own gate.
      if (std::filesystem::path(ctx.files.output_path()).filename() == "saved_model.pb") return tf_frontend::write_saved_model(doc, path);
      return tf_frontend::write_saved_model(doc, ctx.files);
    }
    tf_frontend::write_graph(doc, ctx.files);
  }
  std::vector<std::string> default_targets(std::string_view, std::string_view) const override { return {"amanda/tensorflow/2.2"}; }

  void add_namespaces(schema::Registry& r) const override { r.add_provider(tf_frontend::make_tf_namespace_provider()); }
  // TensorFlow's conventions for the framework-neutral layers: `Const` makes a constant (so that
  // mapping rules can read its tensor with `const:` and shape()).
  void register_conventions(ir::Conventions& c) const override { c.add_constant_op("Const"); }
  // Into TensorFlow: graph inputs, initializers and outputs become Placeholder, Const and the TF.js
  // signature (a GraphDef has no graph ports).
  void arrive(ir::Graph& g) const override { tf_frontend::graph_ports_to_ops(g); }
};

}  // namespace

std::unique_ptr<pipeline::Framework> make_tensorflow() { return std::make_unique<TensorFlowFramework>(); }

}  // namespace amanda::frameworks
