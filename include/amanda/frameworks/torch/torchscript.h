// TorchScript (PyTorch) frontend: a module saved with torch.jit.save -> a graph in the namespace
// amanda/pytorch/<libtorch major.minor>, and that namespace generated from libtorch's own operator
// registry. See docs/pytorch.md.
//
// libtorch is optional and heavy (loading it costs about 0.5 s and 160 MB), so it lives in a
// plugin, libamanda_torch.so, built when CMake finds Torch and loaded only when a TorchScript file
// is read or the PyTorch namespace is needed. Without the plugin these functions throw
// amanda::Error saying so; everything else in Amanda works as before.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "amanda/ir/conventions.h"
#include "amanda/ir/tensor.h"
#include "amanda/schema/registry.h"
#include "amanda/text/document.h"

namespace amanda::torch_frontend {

struct ImportOptions {
  // Replace aten::size of tensors whose traced type has concrete sizes by constants, then fold
  // constants (as torch.onnx.export does without dynamic_axes). Off: shape arithmetic stays.
  bool specialize_shapes = true;
  // Run torch.jit.freeze's numeric optimisations (conv + batch-norm folding, ...).
  bool optimize = true;
  // Shapes of forward()'s tensor inputs, in order (a saved module does not keep the traced ones).
  // With them, shapes are propagated through the graph and shape arithmetic folds away.
  std::vector<std::vector<int64_t>> input_shapes;
  // Symbolic dimensions: an entry -(k+1) in input_shapes is the dimension named dim_names[k]
  // (`--input-shape N,3,224,224`), kept symbolic and written as an ONNX dim_param.
  std::vector<std::string> dim_names;
  // Element type of forward()'s tensor inputs (an Amanda dtype name).
  std::string input_dtype = "float32";
  // One element type per tensor input of forward(), in order (overrides input_dtype when given;
  // a float tensor with an int64 lengths tensor is common).
  std::vector<std::string> input_dtypes;
  // The element type of input k: input_dtypes[k] when given, else input_dtype.
  const std::string& dtype_of_input(size_t k) const { return k < input_dtypes.size() ? input_dtypes[k] : input_dtype; }
  // Which reader: "script" reads the archive without libtorch (fast; traced modules and scripted
  // ones whose control flow depends on shapes only), "libtorch" uses the plugin, "auto" tries
  // the first and falls back to the second for what it does not handle.
  std::string reader = "auto";
};

// A file that looks like a TorchScript archive: a .pt/.pth/.ptl/.torchscript name or a zip header.
bool is_torchscript_path(const std::string& path);
// Reads a TorchScript module (inlined; frozen by the libtorch reader). Throws amanda::Error naming
// the file on failure. `registry` supplies the PyTorch namespace to the libtorch-free reader (a
// default registry when null). `used` (optional) says which reader produced the graph.
text::Document read_torchscript(const std::string& path, const ImportOptions& o = {}, schema::Registry* registry = nullptr,
                                std::string* used = nullptr);
// "amanda/pytorch/1.13" (from the libtorch the plugin was built with), or "" without the plugin.
std::string torch_namespace_name();
// Whether the plugin can be loaded; `why` says why not.
bool torch_available(std::string* why = nullptr);
// Runs the module's forward() in libtorch on `inputs` (forward's tensor arguments, in order) and
// returns its tensor results, flattened (a tuple or list of tensors in order, nested ones too).
// libtorch never runs in this process: a child loads the plugin under the libtorch reader's memory
// and time limits, and a crash there is an error here. Throws amanda::Error (no plugin, a module
// libtorch cannot load or run, an output that is not a tensor). What `convert --check` runs a
// TorchScript source with.
std::vector<ir::Tensor> run_torchscript_isolated(const std::string& path, const std::vector<ir::Tensor>& inputs);
// The namespace provider: the namespaces shipped as namespaces/pytorch/<version>.ops (read without
// libtorch), and the plugin's own namespace when no file has its name. Lists without loading anything.
std::shared_ptr<schema::Provider> make_torch_namespace_provider();

// Types for a graph in the PyTorch namespace from the libtorch-free reader's shape rules
// (src/frameworks/torchscript/graph_infer.cpp), op after op: every tensor output whose inputs'
// element types and shapes are known (from port types, type attributes, initializers, constants)
// gets its type, written as `@type`/`@shape` too. Needs no plugin. Counts what it could not type.
struct TypeInferResult {
  size_t ops = 0, inferred = 0, no_schema = 0, no_rule = 0, untyped_inputs = 0;
  std::vector<std::string> errors;  // a shape rule that refused its arguments (the op's path)
};
TypeInferResult infer_types(ir::Graph& g, const schema::NamespaceSchema& ns);
// Registers PyTorch's conventions (amanda/ir/conventions.h): element type numbering "torch"
// (c10::ScalarType) and the constant op `prim::Constant`.
void register_conventions(ir::Conventions& c);
// The plugin's namespace built from libtorch's operator registry, whatever .ops file exists: what
// generates namespaces/pytorch/<version>.ops and checks it. Throws amanda::Error without the plugin.
std::unique_ptr<schema::NamespaceSchema> plugin_namespace(const schema::TypeSystems& types);

// ---- the plugin's interface (libamanda_torch.so exports amanda_torch_plugin_v1)
struct PluginApi {
  int version;               // 1
  const char* torch_version;  // "1.13.1"
  // false with *err set on failure; never throws.
  bool (*read)(const char* path, const ImportOptions* o, text::Document* out, std::string* err);
  bool (*namespace_schema)(const schema::TypeSystems* types, std::unique_ptr<schema::NamespaceSchema>* out,
                           std::string* err);
  // forward() on `inputs`; its tensor results flattened into *outputs. false with *err set on failure.
  bool (*run)(const char* path, const std::vector<ir::Tensor>* inputs, std::vector<ir::Tensor>* outputs, std::string* err);
};

}  // namespace amanda::torch_frontend

extern "C" const amanda::torch_frontend::PluginApi* amanda_torch_plugin_v1();
