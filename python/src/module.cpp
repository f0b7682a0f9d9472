// The module `amanda._amanda` (the package `amanda` re-exports it): files in and out by the
// library's I/O layer, conversion with the tool's options and report, validation, and the
// exceptions that carry a path.
#include <mutex>

#include <pybind11/stl.h>

#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/io/io.h"
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
                const std::string& input_type, const std::string& reader) {
  Diagnostics diags;
  std::shared_ptr<DocHolder> d;
  auto fmt = format_arg(format);
  {
    py::gil_scoped_release nogil;
    if (!fmt && torch_frontend::is_torchscript_path(path)) {
      torch_frontend::ImportOptions o;
      o.input_shapes = std::move(input_shapes);
      o.input_dtype = input_type;
      o.reader = reader;
      d = std::make_shared<DocHolder>(io::read_any(path, diags, o, default_registry().get()));
    } else {
      d = std::make_shared<DocHolder>(io::read_any(path, diags, fmt));
    }
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
                                bool external_data, size_t threshold, size_t inline_limit) {
  DocHolder& d = root_doc(g);
  io::WriteOptions o;
  o.external_data = external_data;
  o.threshold = threshold;
  o.text.inline_limit = inline_limit;
  auto fmt = format_arg(format);
  std::string side;
  {
    py::gil_scoped_release nogil;
    side = io::write_any(d.doc, path, fmt ? *fmt : text::format_for_path(path), o);
  }
  if (side.empty()) return std::nullopt;
  return side;
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
                   py::object registry) {
  DocHolder& src = root_doc(g);
  auto reg = registry_arg(registry);
  {
    // As the tool does: a structurally broken graph (a data-edge cycle, duplicate value names) is
    // refused before any rule runs, never converted into a model onnx.checker rejects.
    Diagnostics problems;
    if (!ir::verify(src.g(), problems)) {
      const Diagnostic& first = problems.items().front();
      throw GraphError(first.where, "not converted: the graph has " + std::to_string(problems.error_count()) +
                                        " structural problem" + (problems.error_count() == 1 ? "" : "s") + ":\n" +
                                        problems.str());
    }
  }
  std::shared_ptr<DocHolder> out;
  mapping::Report rep;
  {
    py::gil_scoped_release nogil;
    out = in_place ? g.d : std::make_shared<DocHolder>(copy_document(src.doc));
    out->source = src.source;
    const std::string from(out->g().type_str(out->g().root()));
    io::prepare_for_conversion(out->g(), to);
    mapping::ConvertOptions co = io::default_convert_options();
    co.tags = tags;
    co.keep_unmapped = keep_unmapped;
    co.explain = explain;
    std::lock_guard lock(tables_mutex);
    std::unique_ptr<mapping::TableSet> own;
    if (!tables.empty()) {
      own = std::make_unique<mapping::TableSet>();
      io::add_default_tables(*own, tables);
    }
    rep = mapping::convert(out->g(), io::full_namespace(to), own ? *own : shared_tables(), *reg, co);
    if (rep.ok()) io::finish_conversion(out->g(), from);  // (a TensorFlow graph: its outputs' names and types)
  }
  out->report = rep;
  if (!rep.ok() && !keep_unmapped) {
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
  // Leaving Python does not spend milliseconds freeing libonnx's operator registry.
  amanda::onnx_frontend::keep_schema_registry_at_exit();
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
  register_optimize(m);

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
        py::arg("input_type") = "float32", py::arg("reader") = "auto",
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
        py::arg("threshold") = 1024, py::arg("inline_limit") = 4096,
        "Writes the graph's document atomically: ONNX by the .onnx extension (external_data: tensors of at least "
        "threshold bytes in PATH.data), else YAML or JSON (tensors over inline_limit bytes in a side file). Returns "
        "the side file written, or None");
  m.def("convert", &convert, py::arg("graph"), py::arg("to"), py::arg("tables") = std::vector<std::string>{},
        py::arg("tags") = std::vector<std::string>{}, py::arg("keep_unmapped") = false, py::arg("explain") = "",
        py::arg("in_place") = false, py::arg("registry") = py::none(),
        "Converts a graph to namespace `to` (e.g. 'onnx/11') with the mapping tables the planner chains, as `amanda "
        "convert` does (tables: more table files or folders; tags: optional rules; keep_unmapped; explain: an op name). "
        "Returns the converted graph (a copy unless in_place) with .report; raises ConversionError (with .report) "
        "when an op cannot be mapped and keep_unmapped is False");
  m.def("torch_available", [] { return torch_frontend::torch_available(); },
        "Whether the libtorch plugin can be loaded (the libtorch-free TorchScript reader needs no plugin)");
}
