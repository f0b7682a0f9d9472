// The module `amanda._amanda` (the package `amanda` re-exports it): files in and out by the
// library's I/O layer, conversion with the tool's options and report, validation, and the
// exceptions that carry a path.
#include <mutex>

#include <pybind11/stl.h>

#include "amanda/io/io.h"
#include "amanda/pipeline/pipeline.h"
#include "amanda/ir/verify.h"
#include "amanda/schema/validate.h"
#include "handles.h"
#include "schema.h"

namespace amanda::python {

namespace {

py::object make_graph(std::shared_ptr<DocHolder> d) { return py::cast(PyGraph{d, d->g().root()}); }

void warn(const Diagnostics& diags) {
  for (const auto& d : diags.items())
    if (d.severity == Severity::Warning) PyErr_WarnEx(PyExc_UserWarning, d.str().c_str(), 1);
}

std::optional<text::Format> format_arg(const std::optional<std::string>& f) {
  if (!f) return std::nullopt;
  if (*f == "yaml") return text::Format::Yaml;
  if (*f == "json") return text::Format::Json;
  throw py::value_error("format is 'yaml' or 'json', not '" + *f + "'");
}

py::object load(const std::string& path, std::optional<std::string> format, std::vector<std::vector<int64_t>> input_shapes,
                const std::string& input_type, const std::string& reader, std::map<std::string, std::string> options) {
  Diagnostics diags;
  std::shared_ptr<DocHolder> d;
  io::Options o;
  if (format) {
    format_arg(format);
    o.set("format", {*format});
  }
  // The reader options the tool's flags give (--input-shape 1,3,224,224, ...), by key.
  for (const auto& shape : input_shapes) {
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    o.add("input_shape", s);
  }
  o.set("input_type", {input_type});
  o.set("reader", {reader});
  for (const auto& [k, v] : options) o.add(k, v);
  {
    py::gil_scoped_release nogil;
    d = std::make_shared<DocHolder>(io::read_any(path, diags, o, default_registry().get()));
  }
  d->source = path;
  warn(diags);
  return make_graph(d);
}

DocHolder& root_doc(const PyGraph& g) {
  live(g);
  return *g.d;
}

std::optional<std::string> save(const PyGraph& g, const std::string& path, std::optional<std::string> format,
                                bool external_data, size_t threshold, size_t inline_limit, std::map<std::string, std::string> options) {
  DocHolder& d = root_doc(g);
  io::WriteOptions w;
  w.external_data = external_data;
  w.threshold = threshold;
  w.text.inline_limit = inline_limit;
  io::Options o = io::to_options(w);
  if (format) {
    format_arg(format);
    o.set("format", {*format});
  }
  for (const auto& [k, v] : options) o.set(k, {v});
  std::vector<std::string> side;
  {
    py::gil_scoped_release nogil;
    side = io::write_document(d.doc, path, o);
  }
  if (side.empty()) return std::nullopt;
  return side.front();
}

// The default tables are read once per process (as the tool reads them once per command).
mapping::TableSet& shared_tables() {
  static mapping::TableSet* set = [] {
    auto* s = new mapping::TableSet();
    io::add_default_tables(*s);
    return s;
  }();
  return *set;
}
std::mutex tables_mutex;  // TableSet::plan caches reversed tables

py::handle conversion_error;  // amanda.ConversionError (a handle: nothing to release after the interpreter is gone)

py::object convert(const PyGraph& g, const std::string& to, const std::vector<std::string>& tables,
                   const std::vector<std::string>& tags, bool keep_unmapped, const std::string& explain, bool in_place,
                   py::object registry, const std::vector<std::string>& optimize, std::map<std::string, std::string> options) {
  DocHolder& src = root_doc(g);
  auto reg = registry_arg(registry);
  std::shared_ptr<DocHolder> out;
  std::optional<pipeline::PassContext> ctx;
  {
    py::gil_scoped_release nogil;
    std::lock_guard lock(tables_mutex);
    std::unique_ptr<mapping::TableSet> own;
    if (!tables.empty()) {
      own = std::make_unique<mapping::TableSet>();
      io::add_default_tables(*own, tables);
    }
    // The tool's pipeline, on a copy (or the graph itself): the same passes, so the same bytes.
    ctx.emplace(in_place ? std::move(src.doc) : copy_document(src.doc), *reg, own ? *own : shared_tables());
    ctx->request.to = to;
    ctx->request.tags = tags;
    ctx->request.keep_unmapped = keep_unmapped;
    ctx->request.explain = explain;
    ctx->request.optimize = optimize;
    for (const auto& [k, v] : options) ctx->request.options.add(k, v);
    try {
      pipeline::convert(*ctx);
    } catch (...) {
      if (in_place) src.doc = std::move(ctx->doc);
      throw;
    }
    if (in_place) {
      src.doc = std::move(ctx->doc);
      out = g.d;
    } else {
      out = std::make_shared<DocHolder>(std::move(ctx->doc));
      out->source = src.source;
    }
  }
  const mapping::Report& rep = ctx->report;
  if (ctx->failed && rep.ops == 0 && rep.tables.empty() && rep.errors.empty()) {
    // As the tool does: a structurally broken graph (a data-edge cycle, duplicate value names) is
    // refused before any rule runs, never converted into a model onnx.checker rejects.
    std::string where = ctx->diags.items().empty() ? std::string() : ctx->diags.items().front().where;
    throw GraphError(where, ctx->failure + ":\n" + ctx->diags.str());
  }
  out->report = rep;
  if (ctx->failed && !(keep_unmapped && rep.errors.empty())) {
    py::object e = conversion_error(rep.text());
    e.attr("report") = py::cast(rep);
    PyErr_SetObject(conversion_error.ptr(), e.ptr());
    throw py::error_already_set();
  }
  return make_graph(out);
}

}  // namespace

}  // namespace amanda::python

PYBIND11_MODULE(_amanda, m) {
  using namespace amanda;
  using namespace amanda::python;
  // Every framework's conventions, once (and the registry's at-exit choices, such as not freeing
  // libonnx's operator registry).
  io::install_conventions();
  m.doc() = "Amanda: one graph abstraction for every framework, namespaces, and conversion by mapping tables";

  // ---- exceptions: amanda.Error and its kinds, each carrying where the problem is
  static py::exception<amanda::Error> error(m, "Error");
  static py::exception<ParseError> parse_error(m, "ParseError", error.ptr());
  static py::exception<GraphError> graph_error(m, "GraphError", error.ptr());
  static py::exception<amanda::Error> conv_error(m, "ConversionError", error.ptr());
  static py::exception<amanda::Error> validation_error(m, "ValidationError", error.ptr());
  conversion_error = conv_error;
  m.attr("ParseError").attr("__doc__") = "A file that cannot be read: .file, .line, .column say where";
  m.attr("GraphError").attr("__doc__") = "Misuse of the graph API: .path names the entity";
  m.attr("ConversionError").attr("__doc__") = "A conversion that could not map every op: .report says which";
  m.attr("ValidationError").attr("__doc__") = "Graph.validate(strict=True) found problems: .problems lists them";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ParseError& e) {
      py::object x = py::handle(parse_error.ptr())(e.what());
      x.attr("file") = e.loc().file;
      x.attr("line") = e.loc().line;
      x.attr("column") = e.loc().column;
      x.attr("path") = e.loc().str();
      PyErr_SetObject(parse_error.ptr(), x.ptr());
    } catch (const GraphError& e) {
      py::object x = py::handle(graph_error.ptr())(e.what());
      x.attr("path") = e.path;
      PyErr_SetObject(graph_error.ptr(), x.ptr());
    } catch (const amanda::Error& e) {
      py::object x = py::handle(error.ptr())(e.what());
      x.attr("path") = "";
      PyErr_SetObject(error.ptr(), x.ptr());
    }
  });

  register_values(m);
  register_graph(m);
  register_schema(m);

  // ---- conversion reports
  py::class_<mapping::OpCount>(m, "OpCount", "Ops of one type that a conversion could not map")
      .def_readonly("type", &mapping::OpCount::type)
      .def_readonly("reason", &mapping::OpCount::reason)
      .def_readonly("rule", &mapping::OpCount::rule)
      .def_readonly("count", &mapping::OpCount::count)
      .def_readonly("names", &mapping::OpCount::names, "The first few op names")
      .def("__repr__", [](const mapping::OpCount& c) { return "<amanda.OpCount " + c.type + " x" + std::to_string(c.count) + ">"; });
  py::class_<mapping::Report>(m, "Report", "What a conversion did: the same report as `amanda convert` prints")
      .def_readonly("tables", &mapping::Report::tables, "The chain of tables applied, 'src -> dst' each")
      .def_readonly("ops", &mapping::Report::ops)
      .def_readonly("mapped", &mapping::Report::mapped)
      .def_readonly("passed", &mapping::Report::passed, "Ops whose schema did not change, passed through")
      .def_readonly("by_rule", &mapping::Report::by_rule)
      .def_readonly("unmapped", &mapping::Report::unmapped)
      .def_readonly("unsupported", &mapping::Report::unsupported)
      .def_readonly("errors", &mapping::Report::errors)
      .def_readonly("explain", &mapping::Report::explain)
      .def_property_readonly("ok", &mapping::Report::ok)
      .def("text", &mapping::Report::text, "The tool's text report")
      .def("json", &mapping::Report::json, "The tool's --report json")
      .def("__str__", &mapping::Report::text)
      .def("__repr__", [](const mapping::Report& r) {
        return "<amanda.Report " + std::string(r.ok() ? "ok" : "failed") + ": " + std::to_string(r.mapped) + " mapped, " +
               std::to_string(r.passed) + " passed of " + std::to_string(r.ops) + " ops>";
      });

  // ---- Graph extras that need the I/O layer or the registry
  py::object graph_cls = m.attr("Graph");
  graph_cls.attr("validate") = py::cpp_function(
      [](const PyGraph& g, py::object registry, const std::string& ns, bool fill_defaults, bool drop_defaults, bool strict) {
        auto reg = registry_arg(registry);
        Diagnostics diags;
        schema::ValidateOptions o;
        o.namespace_override = ns.empty() ? ns : io::full_namespace(ns);
        o.fill_defaults = fill_defaults;
        o.drop_defaults = drop_defaults;
        schema::ValidationResult r = schema::validate(live(g), *reg, diags, o);
        if (strict && diags.has_errors()) {
          py::object e = py::handle(validation_error.ptr())(diags.str());
          e.attr("problems") = py::cast(diags.items());
          PyErr_SetObject(validation_error.ptr(), e.ptr());
          throw py::error_already_set();
        }
        return py::make_tuple(r, diags.items());
      },
      py::name("validate"), py::is_method(graph_cls), py::arg("registry") = py::none(), py::arg("namespace") = "",
      py::arg("fill_defaults") = false, py::arg("drop_defaults") = false, py::arg("strict") = false,
      "Checks the whole document against its namespaces' schemas: (ValidationResult, [Diagnostic]) listing every "
      "problem with its path; strict=True raises ValidationError instead when there is one. fill_defaults adds "
      "missing attributes that have a default, drop_defaults removes those equal to it");
  graph_cls.attr("to_text") = py::cpp_function(
      [](const PyGraph& g, const std::string& format) {
        return text::to_text(root_doc(g).doc, *format_arg(format));
      },
      py::name("to_text"), py::is_method(graph_cls), py::arg("format") = "yaml", "The document in the seed's YAML (or JSON)");

  m.def("load", &load, py::arg("path"), py::arg("format") = py::none(), py::arg("input_shapes") = std::vector<std::vector<int64_t>>{},
        py::arg("input_type") = "float32", py::arg("reader") = "auto", py::arg("options") = std::map<std::string, std::string>{},
        "Reads any supported file: ONNX (.onnx, external data mapped), TorchScript (.pt; input_shapes, input_type and "
        "reader as `amanda convert` takes them), YAML or JSON (format forces the text reader). Tensors borrow the "
        "mapped file's bytes. Raises ParseError or Error naming the file");
  m.def("loads", [](const std::string& s, const std::string& format) {
    Diagnostics diags;
    auto d = std::make_shared<DocHolder>(text::parse(s, *format_arg(format), "<string>", diags));
    warn(diags);
    return make_graph(d);
  }, py::arg("text"), py::arg("format") = "yaml", "Parses the seed's YAML (or JSON) text");
  m.def("save", &save, py::arg("graph"), py::arg("path"), py::arg("format") = py::none(), py::arg("external_data") = false,
        py::arg("threshold") = 1024, py::arg("inline_limit") = 4096, py::arg("options") = std::map<std::string, std::string>{},
        "Writes the graph's document atomically: ONNX by the .onnx extension (external_data: tensors of at least "
        "threshold bytes in PATH.data), else YAML or JSON (tensors over inline_limit bytes in a side file). Returns "
        "the side file written, or None");
  m.def("convert", &convert, py::arg("graph"), py::arg("to"), py::arg("tables") = std::vector<std::string>{},
        py::arg("tags") = std::vector<std::string>{}, py::arg("keep_unmapped") = false, py::arg("explain") = "",
        py::arg("in_place") = false, py::arg("registry") = py::none(), py::arg("optimize") = std::vector<std::string>{},
        py::arg("options") = std::map<std::string, std::string>{},
        "Converts a graph to namespace `to` (e.g. 'onnx/11') with the mapping tables the planner chains, as `amanda "
        "convert` does (tables: more table files or folders; tags: optional rules; keep_unmapped; explain: an op name). "
        "Returns the converted graph (a copy unless in_place) with .report; raises ConversionError (with .report) "
        "when an op cannot be mapped and keep_unmapped is False");
  m.def("torch_available", [] {
    const pipeline::Framework* f = pipeline::FrameworkRegistry::instance().find("pytorch");
    return f && f->can_run(nullptr);
  }, "Whether the libtorch plugin can be loaded (the libtorch-free TorchScript reader needs no plugin)");
  m.def("formats", [] {
    std::vector<std::pair<std::string, std::string>> v;
    for (const auto& f : pipeline::FrameworkRegistry::instance().frameworks()) v.emplace_back(std::string(f->name()), std::string(f->description()));
    return v;
  }, "The registered frameworks: (name, description) each");
  m.def("load_plugin", [](const std::string& path) { pipeline::FrameworkRegistry::instance().load_plugin(path); },
        py::arg("path"), "Loads a framework plug-in (a shared object exporting amanda_register_frameworks), as $AMANDA_PLUGINS does");
}
