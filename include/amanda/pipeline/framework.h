// Frameworks as plug-ins (DESIGN.md, layers 8-9). A framework translates one family of file
// formats to the graph abstraction and back, provides its namespaces and conventions, and may
// contribute passes around a conversion; it never changes meaning. The I/O layer, the pipeline,
// the tool and the Python module loop over the registry and name no framework.
//
// Adding a framework (docs/architecture.md, "Adding a framework"):
//   1. src/frameworks/NAME/ with a class deriving from Framework (framework.cpp);
//   2. one line in src/frameworks/registration.cpp (or, outside the source tree, a shared object
//      that exports `amanda_register_frameworks` and is named in $AMANDA_PLUGINS);
//   3. its library in CMakeLists.txt, linked into amanda_frameworks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/tensor.h"
#include "amanda/ir/value.h"
#include "amanda/schema/schema.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/gate.h"
#include "amanda/text/document.h"

namespace amanda::ir {
struct Conventions;
}
namespace amanda::schema {
class Registry;
class TypeSystems;
}
namespace amanda::mapping {
class TableSet;
}

namespace amanda::pipeline {

// Options that a reader, a writer or a framework's passes consult, by key. The tool's flags and
// Python's keyword arguments fill them (--input-shape 1,3,224,224 -> "input_shape": ["1,3,224,224"]);
// each framework lists the keys it reads (Framework::options) and no other layer interprets them.
class Options {
 public:
  void set(const std::string& key, std::vector<std::string> values) { values_[key] = std::move(values); }
  void add(const std::string& key, std::string value) { values_[key].push_back(std::move(value)); }
  bool has(std::string_view key) const { return values_.find(std::string(key)) != values_.end(); }
  // Every value of key (none when absent).
  const std::vector<std::string>& all(std::string_view key) const;
  // The last value of key, or `fallback`.
  std::string get(std::string_view key, std::string fallback = {}) const;
  bool flag(std::string_view key) const;  // present with no value, or "1"/"true"/"yes"
  const std::map<std::string, std::vector<std::string>>& values() const { return values_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

struct OptionInfo {
  std::string key;   // "input_shape"
  std::string help;  // for --help and docs
};

// What format detection sees: the path as named and the first bytes of a regular file (through
// the gate: a FIFO or a device gives none and never blocks).
struct Probe {
  std::string path;
  std::string extension;  // lower case, with the dot: ".pb"; "" for none
  bool is_folder = false;
  std::string head;  // up to 4 KB
};

struct ReadContext {
  ReadGate& files;  // the model's folder: the only way a reader reaches bytes
  const Options& options;
  Diagnostics& diags;
  schema::Registry* registry;  // namespaces a reader needs (may be null: the reader makes its own)
};

struct WriteContext {
  WriteGate& files;  // the output: the only way a writer creates files; committed by the caller
  const Options& options;
  Diagnostics& diags;
  std::vector<std::string> side_files;  // files written beside the output (ONNX's .data), for messages
};

class PassList;
struct ConversionInfo;

struct InferRequest {
  bool propagate_values = false;  // also carry small integer values (shapes computed in the graph)
  bool write_attrs = false;       // also spell the results as @type/@shape (what exporters read)
  schema::Registry* registry = nullptr;
};
struct InferReport {
  bool ran = false;                 // the framework has an inference for this graph
  bool complete = true;             // every op typed (strict mode's test)
  std::vector<std::string> errors;  // "path: message", one per failing op
  std::string summary;              // "N ops, M inferred, ..." for `amanda infer`
};

class Framework {
 public:
  virtual ~Framework() = default;

  // "onnx", "tensorflow", "pytorch", "caffe2": what --from/--to and messages call it.
  virtual std::string_view name() const = 0;
  // One line for `amanda formats` and --help: the formats and extensions.
  virtual std::string_view description() const = 0;
  // The namespace families it provides ("amanda/onnx/"): a graph whose root namespace starts with
  // one of these belongs to this framework.
  virtual std::vector<std::string> namespace_prefixes() const = 0;

  // How sure the framework is that it reads this file: 0 not at all; higher wins. Content beats
  // extension (100 for a recognised signature, 10 for an extension alone).
  virtual int detect_read(const Probe& probe) const = 0;
  virtual text::Document read(ReadContext& ctx) const = 0;

  // How sure it is that it should write a graph of namespace `graph_ns` to `path` (0: no). An
  // extension two formats share (.pb) is settled by the graph's namespace.
  virtual int detect_write(std::string_view path, std::string_view graph_ns) const { return 0; }
  // Writes through ctx.files (throws amanda::Error when the graph cannot be written so). (Inline, as
  // every member here: a plug-in built outside the tool needs no symbol of the tool's own.)
  virtual void write(const text::Document& doc, WriteContext& ctx) const {
    throw Error(ctx.files.output_path() + ": the " + std::string(name()) + " framework cannot write files");
  }
  // The namespaces a conversion with no --to should aim at for an output this framework writes,
  // best first (the pipeline takes the first the planner reaches from `source_ns`).
  virtual std::vector<std::string> default_targets(std::string_view path, std::string_view source_ns) const { return {}; }

  virtual void add_namespaces(schema::Registry& registry) const {}
  // Its versioned namespaces in order, when they form one line of integer versions (ONNX's opsets
  // amanda/onnx/1 .. 17): `amanda table coverage --matrix` shows every step between neighbours.
  virtual std::vector<std::string> versions() const { return {}; }
  virtual void register_conventions(ir::Conventions& conventions) const {}
  virtual std::vector<OptionInfo> options() const { return {}; }

  // Types the ports of a graph in one of its namespaces (between table steps, in the pipeline's
  // fold/infer fixed point, `amanda infer`). Never throws for a graph it cannot type: the report
  // says so and the graph keeps the types it had.
  virtual InferReport infer_types(ir::Graph& g, const InferRequest& request) const { return {}; }
  // Checks beyond the namespace schema that `amanda validate` runs on a graph of its namespaces
  // (nd4j: every op's ordered arguments complete, each of its descriptor's type). Adds each problem,
  // with its path, to `problems` and returns how many it added.
  virtual size_t validate(const ir::Graph& g, Diagnostics& problems) const { return 0; }
  // What a conversion does to a graph of its namespaces before the tables (and between two tables
  // of a chain): by default infer_types.
  virtual void prepare(ir::Graph& g, const InferRequest& request) const { infer_types(g, request); }
  // Whether a conversion between two of its namespaces that a rule refused is tried again after
  // folding the values no graph input changes into constants (what the interpreter can run).
  virtual bool retry_after_folding() const { return false; }
  // Whether a conversion into this framework from a source of another framework that retries after
  // folding (retry_after_folding) may retry too: its ops take as constants what the source computes
  // in the graph (PyTorch's int-list arguments: Slice bounds, Reshape shapes).
  virtual bool converts_after_folding() const { return false; }
  // Whether `expand` can replace ops of this type in namespace ns (`amanda table coverage`).
  virtual bool can_expand(const std::string& type, const std::string& ns) const { return false; }
  // Replaces an op a target namespace of this framework lacks by ops of the same namespace (ONNX
  // function bodies): "" when done, else why not. `refused_rule`: the only rule that applies is an
  // `unsupported:` one, and the framework may lower the op anyway (lowers_refused).
  virtual std::string expand(ir::Graph& g, ir::OpId op, const std::string& ns) const { return "no expansion"; }
  virtual bool lowers_refused(const std::string& type, const std::string& ns) const { return false; }

  // Called when the tables have brought a graph into one of its namespaces, before it is validated
  // (what the boundary needs that no table can say: graph inputs that become placeholder ops).
  virtual void arrive(ir::Graph& g) const {}
  // Passes this framework adds to a conversion (its boundary before the tables, its finish after).
  virtual void contribute_passes(PassList& passes, const ConversionInfo& info) const {}

  // The framework's own runtime, for `convert --check` of a source in its format (libtorch for
  // TorchScript, in a child process): whether it has one, whether it can run here (else *why), and a run.
  virtual bool has_runtime() const { return false; }
  virtual std::string_view runtime_name() const { return name(); }  // "libtorch"
  virtual bool can_run(std::string* why) const {
    if (why) *why = "no runtime";
    return false;
  }
  virtual std::vector<ir::Tensor> run(const std::string& path, const std::vector<ir::Tensor>& inputs) const { return {}; }
  // Reads one value file (`amanda run --input x=FILE`, `--check-input`) of a format this framework
  // defines (ONNX's TensorProto .pb): false when the file is not of its formats.
  virtual bool reads_values(const Probe& probe) const { return false; }
  virtual ir::Value read_values(ReadGate& files, const std::string& type) const { return {}; }
  // The framework's namespace from its runtime's registry (libtorch's operator registry), for
  // `amanda schema export --from-runtime`; null when it has none.
  virtual std::unique_ptr<schema::NamespaceSchema> runtime_namespace(const schema::TypeSystems& types, std::string* why) const {
    if (why) *why = "no runtime registry";
    return nullptr;
  }
  // A compact spelling of a namespace of this framework (`.ops` for PyTorch); "" when it has none.
  virtual std::string compact_namespace(const schema::NamespaceSchema& ns, std::string_view extension) const { return {}; }
};

// Code that belongs to a pair of frameworks and is not a table (TF1 loops -> ONNX Loop, the
// TensorFlow -> ONNX boundary): registered beside the frameworks, chosen by the conversion's ends.
class ConversionExtension {
 public:
  virtual ~ConversionExtension() = default;
  virtual std::string_view name() const = 0;
  virtual bool applies(std::string_view from_ns, std::string_view to_ns) const = 0;
  virtual void contribute_passes(PassList& passes, const ConversionInfo& info) const = 0;
  // What its passes do with an op of the source namespace before the tables run (a TF Placeholder
  // becomes a graph input, TF1 loop frames ONNX Loops): "" when they leave it to the tables.
  // `amanda table coverage --vocabulary` counts such ops as covered, with this as the reason.
  virtual std::string handles_before_tables(std::string_view type) const { return {}; }
  // Between two steps of a chain of tables (TF -> ONNX -> PyTorch), after the step's ops were
  // typed: the graph has just reached namespace `ns`. An extension types what its own finish pass
  // would when that namespace is not the target (TF loops' bodies and outputs: ONNX's inference
  // alone leaves their ranks unknown, and the next step's rules read them).
  virtual void between_steps(ir::Graph& g, std::string_view ns) const {}
};

class FrameworkRegistry {
 public:
  // The process's registry, with the built-in frameworks and those of $AMANDA_PLUGINS.
  static FrameworkRegistry& instance();

  // (add and find are inline: a plug-in built outside the tool calls them without the tool's symbols.)
  void add(std::unique_ptr<Framework> f) {
    if (find(f->name())) throw Error("framework '" + std::string(f->name()) + "' is registered twice");
    frameworks_.push_back(std::move(f));
  }
  void add(std::unique_ptr<ConversionExtension> e) { extensions_.push_back(std::move(e)); }
  // Loads a shared object that exports `extern "C" void amanda_register_frameworks(FrameworkRegistry&)`.
  void load_plugin(const std::string& path);

  const std::vector<std::unique_ptr<Framework>>& frameworks() const { return frameworks_; }
  const std::vector<std::unique_ptr<ConversionExtension>>& extensions() const { return extensions_; }
  const Framework* find(std::string_view name) const {
    for (const auto& f : frameworks_)
      if (f->name() == name) return f.get();
    return nullptr;
  }
  // The framework whose namespace family holds `ns` (null: none, e.g. amanda/core).
  const Framework* for_namespace(std::string_view ns) const;
  // The best reader of the probe (null: none claims it).
  const Framework* for_reading(const Probe& probe) const;
  // The best writer for the path and graph namespace (null: none claims it).
  const Framework* for_writing(std::string_view path, std::string_view graph_ns) const;
  // The framework a conversion aims at when neither --to nor an output says (registration.cpp).
  void set_default_target(std::string name) { default_target_ = std::move(name); }
  const Framework* default_target() const { return find(default_target_); }

 private:
  std::vector<std::unique_ptr<Framework>> frameworks_;
  std::vector<std::unique_ptr<ConversionExtension>> extensions_;
  std::vector<void*> plugins_;  // dlopen handles, never closed (their code stays registered)
  std::string default_target_;
};

// The built-in frameworks (src/frameworks/registration.cpp: the one file that names them).
void register_builtin_frameworks(FrameworkRegistry& r);

}  // namespace amanda::pipeline

// What a framework plug-in (a shared object named in $AMANDA_PLUGINS) exports.
extern "C" {
typedef void (*amanda_register_frameworks_fn)(amanda::pipeline::FrameworkRegistry&);
}
