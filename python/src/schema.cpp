// Namespaces and validation in Python: the registry of namespace schemas (the default one is the
// tool's: shipped namespaces, $AMANDA_SCHEMA_PATH, ONNX's and PyTorch's), op schemas, and
// Graph.validate with the validator's problems as Diagnostic objects.
#include <pybind11/stl.h>

#include "amanda/io/io.h"
#include "amanda/schema/validate.h"
#include "amanda/text/value_text.h"
#include "handles.h"
#include "schema.h"

namespace amanda::python {

std::shared_ptr<schema::Registry> default_registry() {
  // Never destroyed: freeing the loaded namespaces (many small allocations) at exit would cost a
  // short script more than its conversion does; the tool skips it the same way (kept_until_exit).
  static auto* reg = new std::shared_ptr<schema::Registry>(io::default_registry());
  return *reg;
}

namespace {

struct PyOpSchema {
  std::shared_ptr<schema::Registry> reg;  // keeps the schema alive
  const schema::OpSchema* s;
};

struct PyNamespace {
  std::shared_ptr<schema::Registry> reg;
  const schema::NamespaceSchema* ns;
};

py::object value_object(const ir::Value& v) { return to_python(nullptr, v); }

py::dict attr_type_dict(const schema::AttrType& t) {
  using F = schema::AttrType::Form;
  py::dict d;
  switch (t.form) {
    case F::Type: d["type"] = t.type; break;
    case F::Default: d["type"] = t.type, d["default"] = value_object(t.value); break;
    case F::Constant: d["type"] = t.type, d["constant"] = value_object(t.value); break;
    case F::OneOf: {
      py::list opts;
      for (const auto& o : t.options) opts.append(attr_type_dict(o));
      d["one_of"] = opts;
      if (t.one_of_default) d["default"] = value_object(*t.one_of_default);
      break;
    }
  }
  d["required"] = t.required();
  return d;
}

py::list ports_list(const std::vector<schema::PortSchema>& ports) {
  py::list l;
  for (const auto& p : ports) {
    py::dict d;
    auto name = p.expected_name();
    d["name"] = name ? py::object(py::str(*name)) : py::object(py::none());
    d["arity"] = std::string(schema::arity_name(p.arity));
    d["type"] = p.type;
    l.append(d);
  }
  return l;
}


}  // namespace

std::shared_ptr<schema::Registry> registry_arg(py::object r) {
  if (r.is_none()) return default_registry();
  return r.cast<std::shared_ptr<schema::Registry>>();
}

void register_schema(py::module_& m) {
  py::class_<Diagnostic>(m, "Diagnostic", "A problem (or warning) and where it is: an entity path or file:line:column")
      .def_property_readonly("severity", [](const Diagnostic& d) {
        return d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "note";
      })
      .def_readonly("where", &Diagnostic::where)
      .def_readonly("message", &Diagnostic::message)
      .def("__str__", &Diagnostic::str)
      .def("__repr__", [](const Diagnostic& d) { return "<amanda.Diagnostic " + d.str() + ">"; });

  py::class_<PyOpSchema>(m, "OpSchema", "The schema of one op type in a namespace")
      .def_property_readonly("type", [](const PyOpSchema& s) { return s.s->type; })
      .def_property_readonly("declared_in", [](const PyOpSchema& s) { return s.s->declared_in; })
      .def_property_readonly("since_version", [](const PyOpSchema& s) { return s.s->since_version; })
      .def_property_readonly("domain", [](const PyOpSchema& s) { return s.s->domain; })
      .def_property_readonly("deprecated", [](const PyOpSchema& s) { return s.s->deprecated; })
      .def_property_readonly("attrs", [](const PyOpSchema& s) {
        py::dict d;
        for (const auto& a : s.s->attrs) d[py::str(a.name)] = attr_type_dict(a.type);
        return d;
      }, "name -> {type | one_of, default?, constant?, required}")
      .def_property_readonly("inputs", [](const PyOpSchema& s) { return ports_list(s.s->inputs); })
      .def_property_readonly("outputs", [](const PyOpSchema& s) { return ports_list(s.s->outputs); })
      .def("__repr__", [](const PyOpSchema& s) { return "<amanda.OpSchema " + s.s->type + " (" + s.s->declared_in + ")>"; });

  py::class_<PyNamespace>(m, "Namespace", "A namespace schema: the vocabulary of one framework version")
      .def_property_readonly("name", [](const PyNamespace& n) { return n.ns->name; })
      .def_property_readonly("type_system", [](const PyNamespace& n) { return n.ns->type_system; })
      .def_property_readonly("op_types", [](const PyNamespace& n) {
        std::vector<std::string> out;
        for (const auto& o : n.ns->ops) out.push_back(o->type);
        return out;
      }, "The op types declared here (a versioned namespace also inherits earlier versions' ops: Registry.resolve)")
      .def("__getitem__", [](const PyNamespace& n, const std::string& type) {
        const schema::OpSchema* s = n.ns->find(type);
        if (!s) throw py::key_error(n.ns->name + " declares no op '" + type + "'");
        return PyOpSchema{n.reg, s};
      })
      .def("__contains__", [](const PyNamespace& n, const std::string& type) { return n.ns->find(type) != nullptr; })
      .def("__len__", [](const PyNamespace& n) { return n.ns->ops.size(); })
      .def("to_text", [](const PyNamespace& n, const std::string& format) {
        return schema::namespace_to_text(*n.ns, format == "json" ? text::Format::Json : text::Format::Yaml);
      }, py::arg("format") = "yaml", "The schema in the seed's YAML (or JSON)")
      .def("__repr__", [](const PyNamespace& n) { return "<amanda.Namespace " + n.ns->name + ">"; });

  py::class_<schema::Registry, std::shared_ptr<schema::Registry>>(m, "Registry",
      "Namespace schemas by name, loaded on first use; versioned names resolve like ONNX's opsets")
      .def(py::init([] { return std::shared_ptr<schema::Registry>(io::default_registry()); }),
           "A new default registry: shipped namespaces, $AMANDA_SCHEMA_PATH, ONNX's and PyTorch's")
      .def("names", [](const schema::Registry& r, const std::string& prefix) { return r.list(prefix); }, py::arg("prefix") = "",
           "Every known namespace name under prefix, sorted")
      .def("__contains__", [](const schema::Registry& r, const std::string& n) { return r.known(n); })
      .def("__getitem__", [](std::shared_ptr<schema::Registry> r, const std::string& name) {
        const schema::NamespaceSchema* ns = r->find(io::full_namespace(name));
        if (!ns) throw py::key_error("no namespace '" + name + "'");
        return PyNamespace{r, ns};
      }, "The namespace of this name ('onnx/13' means 'amanda/onnx/13')")
      .def("resolve", [](std::shared_ptr<schema::Registry> r, const std::string& ns, const std::string& type) -> py::object {
        const schema::OpSchema* s = r->resolve(io::full_namespace(ns), type);
        if (!s) return py::none();
        return py::cast(PyOpSchema{r, s});
      }, py::arg("namespace"), py::arg("type"), "The schema of an op type in a namespace (or the latest earlier version that declares it), or None")
      .def("add_file", [](schema::Registry& r, const std::string& path) {
        auto ns = schema::read_namespace(path, r.type_systems());
        std::string name = ns->name;
        r.add(std::move(ns));
        return name;
      }, py::arg("path"), "Adds a namespace schema file (YAML or JSON); returns its name")
      .def("add_folder", &schema::Registry::add_folder, py::arg("path"), "Adds every schema file of a folder (loaded on first use)");

  py::class_<schema::ValidationResult>(m, "ValidationResult")
      .def_readonly("ops_checked", &schema::ValidationResult::ops_checked)
      .def_readonly("filled", &schema::ValidationResult::filled)
      .def_readonly("dropped", &schema::ValidationResult::dropped)
      .def_property_readonly("ok", &schema::ValidationResult::ok)
      .def_property_readonly("by_type", [](const schema::ValidationResult& r) {
        py::dict d;
        for (const auto& [k, v] : r.by_type) d[py::str(k)] = py::make_tuple(v.ops, v.problems);
        return d;
      }, "'namespace op-type' -> (ops, problems)");

  m.def("default_registry", &default_registry, "The registry amanda.load/convert/validate use unless given another (shared)");
}

}  // namespace amanda::python
