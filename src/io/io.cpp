#include "amanda/io/io.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "amanda/core/namespace.h"
#include "amanda/frameworks/onnx/functions.h"
#include "amanda/frameworks/onnx/infer.h"
#include "amanda/frameworks/onnx/model.h"
#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/frameworks/tensorflow/from_graph_ports.h"
#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/namespaces.h"
#include "amanda/frameworks/tensorflow/onnx_boundary.h"
#include "amanda/frameworks/tensorflow/savedmodel.h"
#include "amanda/frameworks/tensorflow/tfjs.h"

namespace amanda::io {

void install_conventions() {
  static std::once_flag once;
  std::call_once(once, [] {
    ir::Conventions& c = ir::conventions();
    onnx_frontend::register_conventions(c);
    torch_frontend::register_conventions(c);
    tf_frontend::register_conventions(c);
  });
}

text::Document read_any(const std::string& path, Diagnostics& diags, std::optional<text::Format> format) {
  install_conventions();
  if (!format && onnx_frontend::is_onnx_path(path)) return onnx_frontend::read_model(path);
  if (!format && torch_frontend::is_torchscript_path(path)) return torch_frontend::read_torchscript(path);
  if (!format && tf_frontend::is_graphdef_path(path)) return tf_frontend::read_graph(path);
  if (!format && tf_frontend::is_tfjs_file(path)) return tf_frontend::read_tfjs(path);
  return text::read_file(path, diags, format);
}

text::Document read_any(const std::string& path, Diagnostics& diags, const torch_frontend::ImportOptions& torch,
                        schema::Registry* registry) {
  install_conventions();
  if (torch_frontend::is_torchscript_path(path)) return torch_frontend::read_torchscript(path, torch, registry);
  return read_any(path, diags);
}

std::string write_any(const text::Document& doc, const std::string& path, text::Format format, const WriteOptions& options) {
  if (onnx_frontend::is_onnx_path(path)) {
    onnx_frontend::ExportOptions o;
    o.external_data = options.external_data;
    o.threshold = options.threshold;
    return onnx_frontend::write_model(doc, path, o);
  }
  if (tf_frontend::is_tfjs_output_path(path) && doc.kind == text::Document::Kind::Graph &&
      doc.graph.type_str(doc.graph.root()).starts_with("amanda/tensorflow/")) {
    tf_frontend::write_tfjs(doc, path);  // a TensorFlow graph written to model.json: a TF.js graph model
    return "";
  }
  if (tf_frontend::is_saved_model_output_path(path) && doc.kind == text::Document::Kind::Graph &&
      doc.graph.type_str(doc.graph.root()).starts_with("amanda/tensorflow/")) {
    tf_frontend::write_saved_model(doc, path);  // a TensorFlow graph written to a folder: a SavedModel
    return "";
  }
  if (tf_frontend::is_graphdef_path(path)) {
    tf_frontend::write_graph(doc, path);
    return "";
  }
  return text::write_file(doc, path, format, options.text);
}

std::string write_any(const text::Document& doc, const std::string& path, const WriteOptions& options) {
  return write_any(doc, path, text::format_for_path(path), options);
}

std::unique_ptr<schema::Registry> default_registry() {
  install_conventions();
  auto r = schema::make_default_registry();
  r->add_provider(onnx_frontend::make_onnx_namespace_provider());
  r->add_provider(torch_frontend::make_torch_namespace_provider());
  r->add_provider(tf_frontend::make_tf_namespace_provider());
  r->add_provider(core::make_core_namespace_provider());
  return r;
}

void add_default_tables(mapping::TableSet& set, const std::vector<std::string>& extra) {
  // The shipped tables are read when a plan needs them (a conversion between ONNX opsets does not
  // pay for the PyTorch tables); tables a user names are read at once, so their errors show now.
  set.add_folder(mapping::shipped_table_dir(), /*lazy=*/true);
  if (const char* p = std::getenv("AMANDA_TABLE_PATH")) {
    std::string s = p;
    size_t start = 0;
    while (start <= s.size()) {
      size_t e = s.find(':', start);
      if (e == std::string::npos) e = s.size();
      if (e > start) set.add_folder(s.substr(start, e - start));
      start = e + 1;
    }
  }
  for (const auto& d : extra) {
    std::error_code ec;
    if (std::filesystem::is_directory(d, ec)) set.add_folder(d);
    else set.add(mapping::read_table(d));
  }
}

std::string full_namespace(const std::string& ns) { return ns.starts_with("amanda/") ? ns : "amanda/" + ns; }

void prepare_for_conversion(ir::Graph& g, const std::string& to, bool data_propagation) {
  install_conventions();
  // A TensorFlow graph bound for ONNX gets graph ports from its placeholders and outputs.
  if (g.type_str(g.root()).starts_with("amanda/tensorflow/") && (to.empty() || full_namespace(to).starts_with("amanda/onnx/")))
    tf_frontend::make_onnx_boundary(g);
  if (g.type_str(g.root()).starts_with("amanda/pytorch/")) {
    // Op outputs without a type (a graph from a text file, or from the libtorch reader where
    // libtorch's own propagation knew no shape): the PyTorch namespace's inference (the
    // libtorch-free reader's shape rules over the IR) types them, so that rules that read a rank or
    // an element type apply. Graphs the readers typed in full pay only this scan.
    bool untyped = false;
    auto type_key = g.sym("@type");
    for (ir::OpId op = g.first_child(g.root()); op && !untyped; op = g.next_sibling(op)) {
      std::string_view t = g.type_str(op);
      if (t == "prim::Constant" || t == "prim::ListConstruct") continue;
      for (ir::PortId p : g.outputs(op))
        if (!g.is_control(p) && !g.port_type(p) && !g.attr(p, type_key)) untyped = true;
    }
    if (untyped) {
      static const std::unique_ptr<schema::Registry> reg = default_registry();
      if (const schema::NamespaceSchema* ns = reg->find(g.type_str(g.root()))) torch_frontend::infer_types(g, *ns);
    }
    return;
  }
  if (!g.type_str(g.root()).starts_with("amanda/onnx/")) return;
  onnx_frontend::InferOptions o;
  o.write_attrs = false;
  // The core table needs every shape it broadcasts to or reshapes to, and torch computes many
  // of them (Shape -> Gather -> Concat -> Reshape): carry the values of those small tensors.
  o.data_propagation = data_propagation || full_namespace(to) == "amanda/core";
  try {
    onnx_frontend::infer_types(g, o);
  } catch (const std::exception&) {
    // A model libonnx cannot infer converts as before, with the types its file records.
  }
}

void finish_conversion(ir::Graph& g, const std::string& from) {
  install_conventions();
  if (!from.starts_with("amanda/tensorflow/") || !g.type_str(g.root()).starts_with("amanda/onnx/")) return;
  // The ops the tables made have no value names or types yet: the graph outputs need both.
  tf_frontend::name_onnx_outputs(g);
  if (!g.ops_of_type("Loop").empty()) {
    // TF1 loops: the bodies' inputs and the Loops' outputs take the ranks inference gives around them.
    onnx_frontend::InferOptions first;
    first.write_attrs = false;
    for (int round = 0; round < 4; ++round) {
      try {
        onnx_frontend::infer_types(g, first);
      } catch (const std::exception&) {
      }
      if (!tf_frontend::type_loop_bodies(g)) break;
    }
  }
  onnx_frontend::InferOptions o;
  o.write_attrs = true;
  try {
    onnx_frontend::infer_types(g, o);
  } catch (const std::exception&) {
  }
}

mapping::ConvertOptions default_convert_options() {
  install_conventions();
  mapping::ConvertOptions co;
  co.expand = onnx_frontend::expand_function;
  co.lowers_refused = onnx_frontend::lowers_refused;
  co.between_steps = [](ir::Graph& g) { prepare_for_conversion(g); };  // the ops a step made get types
  co.after_steps = [](ir::Graph& g) {
    // Into TensorFlow: graph inputs, initializers and outputs become Placeholder, Const and the
    // TF.js signature (a GraphDef has no graph ports).
    if (g.type_str(g.root()).starts_with("amanda/tensorflow/")) tf_frontend::graph_ports_to_ops(g);
  };
  return co;
}

}  // namespace amanda::io
