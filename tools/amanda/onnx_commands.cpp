// `amanda diff A B`, the semantic comparison of two documents of any format; `amanda infer`.
#include <iostream>

#include "amanda/pipeline/framework.h"
#include "amanda/ir/equal.h"
#include "commands.h"

namespace amanda::tool {

namespace {

int run_diff(const std::string& a, const std::string& b) {
  Diagnostics diags;
  std::optional<text::Document> da, db;
  for (auto [path, doc] : {std::pair{&a, &da}, std::pair{&b, &db}}) {
    try {
      doc->emplace(read_input(*path, diags, std::nullopt, "auto"));
    } catch (const std::exception& e) {
      std::cerr << e.what() << '\n';
      return kInvalid;
    }
  }
  for (const auto& d : diags.items())
    if (d.severity != Severity::Error) std::cerr << d.str() << '\n';
  if (da->kind != db->kind) {
    std::cout << "document kinds differ: " << text::kind_name(da->kind) << " vs " << text::kind_name(db->kind) << '\n';
    return kInvalid;
  }
  std::string diff = ir::first_difference(da->graph, db->graph);
  if (diff.empty()) {
    std::cout << "equal\n";
    return kOk;
  }
  std::cout << diff << '\n';
  return kInvalid;
}

// `amanda infer FILE [-o OUT]`: every op output typed by the inference of the graph's framework
// (ONNX: libonnx's inference functions; PyTorch: the libtorch-free reader's shape rules).
int run_infer(const std::string& in, const std::string& out, bool strict, bool data_prop) {
  Diagnostics diags;
  text::Document doc = read_any(in, diags);
  std::string ns(doc.graph.str(doc.graph.graph_namespace(doc.graph.root())));
  // The framework of the graph's namespace; a graph whose root names none (an ONNX model that
  // imports only a training domain) is typed by the framework that read it.
  const pipeline::Framework* f = pipeline::FrameworkRegistry::instance().for_namespace(ns);
  if (!f) f = pipeline::FrameworkRegistry::instance().for_reading(io::probe(in));
  auto reg = tool_registry();
  pipeline::InferRequest request;
  request.propagate_values = data_prop;
  request.write_attrs = true;
  request.registry = reg.get();
  pipeline::InferReport r;
  if (f) r = f->infer_types(doc.graph, request);
  if (!r.ran) {
    std::cerr << in << ": error: no framework infers the types of namespace '" << ns << "'"
              << (r.summary.empty() ? "" : ": " + r.summary) << '\n';
    return kInvalid;
  }
  for (const auto& e : r.errors) std::cerr << in << ": " << (strict ? "error: " : "warning: ") << e << '\n';
  std::cerr << in << ": " << r.summary << '\n';
  if (strict && !r.complete) return kInvalid;
  if (out.empty()) {
    std::cout << text::to_text(doc, text::Format::Yaml);
    return kOk;
  }
  write_any(doc, out, text::format_for_path(out), {});
  return kOk;
}

}  // namespace

void register_onnx_commands(CLI::App& app, int& exit_code) {
  {
    struct InferOpts {
      std::string in, out;
      bool strict = false;
      bool no_data_prop = false;
    };
    auto io = std::make_shared<InferOpts>();
    auto* inf = app.add_subcommand("infer",
                                   "Infer the element type and shape of every value and write the typed graph (.onnx: as "
                                   "value_info; YAML/JSON: @type/@shape); without -o, YAML to standard output. ONNX "
                                   "graphs: libonnx's per-op inference functions, subgraphs included; PyTorch-namespace "
                                   "graphs: the libtorch-free reader's shape rules");
    inf->add_option("FILE", io->in, "Input (.onnx, .yaml, .json)")->required();
    inf->add_option("-o,--output", io->out, "Output file (format by extension)");
    inf->add_flag("--strict", io->strict, "Exit 1 (writing nothing) when an op's inference fails (PyTorch: or an op stays untyped)");
    inf->add_flag("--no-data-prop", io->no_data_prop,
                  "Do not propagate the values of shape tensors (Shape, Gather, Concat, ...; onnx's data_prop=True) "
                  "into the shapes of Reshape, Expand, ...: what onnx.shape_inference gives by default");
    inf->callback([io, &exit_code] {
      try {
        exit_code = run_infer(io->in, io->out, io->strict, !io->no_data_prop);
      } catch (const std::exception& e) {
        std::cerr << "amanda: error: " << e.what() << '\n';
        exit_code = kInvalid;
      }
    });
  }
  struct Opts {
    std::string a, b;
  };
  auto o = std::make_shared<Opts>();
  auto* diff = app.add_subcommand("diff",
                                  "Compare two documents semantically (YAML, JSON or ONNX, by extension): prints the first "
                                  "difference with its path. Exit 0 when equal, 1 when different or unreadable");
  diff->add_option("A", o->a, "First document")->required();
  diff->add_option("B", o->b, "Second document")->required();
  diff->callback([o, &exit_code] {
    try {
      exit_code = run_diff(o->a, o->b);
    } catch (const std::exception& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kInvalid;
    }
  });
}

}  // namespace amanda::tool
