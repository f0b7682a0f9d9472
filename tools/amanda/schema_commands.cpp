// amanda schema list|show|export, amanda validate.
#include "amanda/core/builder.h"
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "amanda/schema/validate.h"
#include "amanda/ir/verify.h"
#include "amanda/support/file.h"
#include "amanda/text/value_text.h"
#include "amanda/pipeline/framework.h"
#include "commands.h"

namespace amanda::tool {

namespace {

// Loads --schema files into the registry; prints the error and returns false on failure.
bool add_schema_files(schema::Registry& reg, const std::vector<std::string>& files) {
  for (const auto& f : files) {
    try {
      reg.add(schema::read_namespace(f, reg.type_systems()));
    } catch (const std::exception& e) {
      std::cerr << e.what() << '\n';
      return false;
    }
  }
  return true;
}

// A value on one line, as JSON ("NOTSET" with quotes, 0.0001, [1, 1]).
std::string one_line(const ir::Value& v) {
  std::string s = text::value_to_text(ir::Value(ir::Value::List{v}), text::Format::Json);
  std::string out;
  bool in_string = false, space = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < s.size()) out += s[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '\n' || c == ' ') {
      space = true;
      continue;
    }
    if (space && !out.empty() && out.back() != '[' && out.back() != '{' && c != ']' && c != '}') out += ' ';
    space = false;
    if (c == '"') in_string = true;
    out += c;
  }
  // The value was wrapped in a one-element list: unwrap it.
  if (out.size() >= 2 && out.front() == '[' && out.back() == ']') out = out.substr(1, out.size() - 2);
  return out;
}

std::string describe(const schema::AttrType& at) {
  using F = schema::AttrType::Form;
  std::string s;
  switch (at.form) {
    case F::Type: s = at.type; break;
    case F::Default: s = at.type + " = " + one_line(at.value); break;
    case F::Constant: s = at.type + " constant " + one_line(at.value); break;
    case F::OneOf: {
      s = "one of (";
      for (size_t i = 0; i < at.options.size(); ++i) {
        const auto& o = at.options[i];
        s += (i ? ", " : "") + (o.form == F::Constant ? one_line(o.value) : describe(o));
      }
      s += ")";
      if (at.one_of_default) s += " = " + one_line(*at.one_of_default);
      break;
    }
  }
  while (!s.empty() && s.back() == '\n') s.pop_back();
  if (at.required()) s += " (required)";
  if (at.optional) s += " (optional)";
  return s;
}

int run_list(const std::string& prefix, const std::vector<std::string>& schemas) {
  auto reg = tool_registry();
  if (!add_schema_files(*reg, schemas)) return kInvalid;
  auto names = reg->list(prefix);
  if (names.empty()) {
    std::cerr << "amanda: error: no namespace " << (prefix.empty() ? "is known" : "under '" + prefix + "'") << '\n';
    return kInvalid;
  }
  for (const auto& n : names) std::cout << n << '\n';
  return kOk;
}

int run_show(const std::string& op, const std::string& ns, const std::vector<std::string>& schemas) {
  auto reg = tool_registry();
  if (!add_schema_files(*reg, schemas)) return kInvalid;
  if (!reg->known(ns)) {
    std::cerr << "amanda: error: unknown namespace '" << ns << "' (see `amanda schema list`)\n";
    return kInvalid;
  }
  const schema::OpSchema* s = reg->resolve(ns, op);
  if (!s) {
    std::cerr << "amanda: error: namespace " << ns << " has no op '" << op << "'\n";
    return kInvalid;
  }
  std::cout << "op: " << s->type << "\nnamespace: " << ns << "\ndeclared in: " << s->declared_in << '\n';
  if (!s->domain.empty()) std::cout << "domain: " << s->domain << '\n';
  if (s->since_version) std::cout << "since_version: " << *s->since_version << '\n';
  if (s->deprecated) std::cout << "deprecated: true\n";
  std::cout << "attrs:" << (s->attrs.empty() ? " (none)" : "") << '\n';
  for (const auto& a : s->attrs) std::cout << "  " << a.name << ": " << describe(a.type) << '\n';
  for (auto [label, ports] : {std::pair{"input_ports", &s->inputs}, std::pair{"output_ports", &s->outputs}}) {
    std::cout << label << ":" << (ports->empty() ? " (none)" : "") << '\n';
    for (size_t i = 0; i < ports->size(); ++i) {
      const auto& p = (*ports)[i];
      std::cout << "  #" << i << " " << p.expected_name().value_or("(any name)") << " [" << schema::arity_name(p.arity)
                << (p.arity == schema::Arity::Variadic ? ", min " + std::to_string(p.min_arity) : "") << "]"
                << (p.type.empty() ? "" : " : " + p.type) << '\n';
      for (const auto& a : p.attrs)
        if (a.name != "name") std::cout << "      " << a.name << ": " << describe(a.type) << '\n';
    }
  }
  for (const auto& tc : s->type_constraints) {
    std::string allowed;
    for (const auto& t : tc.allowed) allowed += (allowed.empty() ? "" : ", ") + t;
    std::cout << "type constraint " << tc.name << ": " << allowed << '\n';
  }
  return kOk;
}

int run_export(const std::string& ns, const std::string& out, const std::string& to, const std::vector<std::string>& schemas,
               bool from_libtorch) {
  auto reg = tool_registry();
  if (!add_schema_files(*reg, schemas)) return kInvalid;
  // The namespace from its framework's runtime registry (PyTorch's: libtorch's operator registry).
  const pipeline::Framework* fw = pipeline::FrameworkRegistry::instance().for_namespace(ns);
  std::unique_ptr<schema::NamespaceSchema> runtime_ns;
  if (from_libtorch) {
    std::string why = "no framework provides it";
    if (fw) runtime_ns = fw->runtime_namespace(reg->type_systems(), &why);
    if (!runtime_ns) {
      std::cerr << "amanda: error: --from-runtime: no runtime registry gives namespace '" << ns << "': " << why << "\n";
      return kInvalid;
    }
    if (runtime_ns->name != ns) {
      std::cerr << "amanda: error: --from-runtime: the runtime gives namespace '" << runtime_ns->name << "', not '" << ns << "'\n";
      return kInvalid;
    }
  }
  const schema::NamespaceSchema* n = runtime_ns ? runtime_ns.get() : reg->find(ns);
  if (!n) {
    std::cerr << "amanda: error: unknown namespace '" << ns << "' (see `amanda schema list`)\n";
    return kInvalid;
  }
  std::string t;
  std::string ext = std::filesystem::path(out).extension().string();
  if (!to.empty() && to != "yaml" && to != "json") ext = "." + to;
  if (fw && (to.empty() || ext == "." + to)) t = fw->compact_namespace(*n, ext);  // a compact form (PyTorch's .ops)
  if (t.empty()) {
    if (!to.empty() && to != "yaml" && to != "json") {
      std::cerr << "amanda: error: namespace '" << ns << "' has no '" << to << "' form\n";
      return kUsage;
    }
    text::Format f = to.empty() ? (out.empty() || out == "-" ? text::Format::Yaml : text::format_for_path(out))
                                : (to == "json" ? text::Format::Json : text::Format::Yaml);
    t = schema::namespace_to_text(*n, f);
  }
  if (out.empty() || out == "-")
    std::cout << t;
  else
    write_file_atomic(out, t);
  return kOk;
}

int run_validate(const std::string& file, const std::string& ns, const std::vector<std::string>& schemas,
                 bool fill, bool drop, const std::string& out, bool summary) {
  auto reg = tool_registry();
  if (!add_schema_files(*reg, schemas)) return kInvalid;
  Diagnostics diags;
  std::optional<text::Document> doc;
  try {
    doc = read_input(file, diags, std::nullopt, "auto");  // a .pt: libtorch only in a child process
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    for (const auto& d : diags.items()) std::cerr << d.str() << '\n';
    return kInvalid;
  }
  for (const auto& d : diags.items()) std::cerr << d.str() << '\n';
  if (doc->kind == text::Document::Kind::Edge) {
    std::cerr << file << ": error: an edge fragment has no ops to validate\n";
    return kInvalid;
  }
  if (!ns.empty() && !reg->known(ns)) {
    std::cerr << "amanda: error: unknown namespace '" << ns << "' (see `amanda schema list`)\n";
    return kUsage;
  }
  if (ns.empty() && doc->graph.root_kind() == ir::Graph::RootKind::Op) {
    std::cerr << file << ": error: an op document names no namespace; give one with --namespace NS\n";
    return kInvalid;
  }
  if (ns.empty() && !doc->graph.graph_namespace(doc->graph.root())) {
    std::cerr << file << ": error: the graph names no namespace; give one with --namespace NS\n";
    return kInvalid;
  }
  Diagnostics problems;
  ir::verify(doc->graph, problems);
  schema::ValidateOptions opt;
  opt.namespace_override = ns;
  opt.fill_defaults = fill;
  opt.drop_defaults = drop;
  schema::ValidationResult r = schema::validate(doc->graph, *reg, problems, opt);
  // A graph of the typed core must also type-check: every op's inputs as its rule wants them.
  std::string_view graph_ns = ns.empty() ? doc->graph.str(doc->graph.graph_namespace(doc->graph.root())) : std::string_view(ns);
  if (graph_ns == core::kNamespace && doc->graph.root_kind() != ir::Graph::RootKind::Op) core::infer_types(doc->graph, problems);
  // The framework's own checks beyond the schema (nd4j's ordered arguments).
  if (doc->graph.root_kind() != ir::Graph::RootKind::Op)
    if (const pipeline::Framework* f = pipeline::FrameworkRegistry::instance().for_namespace(graph_ns)) f->validate(doc->graph, problems);
  for (const auto& d : problems.items()) std::cerr << d.str() << '\n';
  if (summary || !r.ok()) {
    std::cout << fmt::format("{:>8} {:>8}  {}\n", "ops", "problems", "namespace op-type");
    for (const auto& [k, s] : r.by_type)
      if (summary || s.problems) std::cout << fmt::format("{:>8} {:>8}  {}\n", s.ops, s.problems, k);
  }
  size_t total = problems.error_count();
  if (total) {
    std::cerr << file << ": " << total << " problem" << (total == 1 ? "" : "s") << " in " << r.ops_checked << " ops\n";
    return kInvalid;
  }
  if (!out.empty()) {
    write_any(*doc, out, text::format_for_path(out), WriteAnyOptions{});
    std::cerr << "wrote " << out << " (" << r.filled << " defaults filled, " << r.dropped << " dropped)\n";
  }
  std::cout << file << ": valid (" << r.ops_checked << " ops)\n";
  return kOk;
}

}  // namespace

void register_schema_commands(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string ns, op, out, to, file, prefix;
    std::vector<std::string> schemas;
    bool fill = false, drop = false, summary = false, from_libtorch = false;
  };
  auto o = std::make_shared<Opts>();
  auto guard = [&exit_code](auto fn) {
    return [&exit_code, fn] {
      try {
        exit_code = fn();
      } catch (const std::exception& e) {
        std::cerr << e.what() << '\n';
        exit_code = kInvalid;
      }
    };
  };
  auto* schema = app.add_subcommand("schema", "Namespace schemas: list, show and export the vocabulary of each framework version");
  schema->require_subcommand(1);
  auto* list = schema->add_subcommand("list", "List the known namespaces (under NS when given)");
  list->add_option("NS", o->prefix, "A namespace or a prefix such as amanda/onnx");
  list->add_option("--schema", o->schemas, "A namespace schema file to add for this run (repeatable)");
  list->callback(guard([o] { return run_list(o->prefix, o->schemas); }));

  auto* show = schema->add_subcommand("show", "Show the schema of one op type as a namespace resolves it");
  show->add_option("OP", o->op, "Op type, e.g. Conv")->required();
  show->add_option("--namespace,-n", o->ns, "Namespace, e.g. amanda/onnx/13")->required();
  show->add_option("--schema", o->schemas, "A namespace schema file to add for this run (repeatable)");
  show->callback(guard([o] { return run_show(o->op, o->ns, o->schemas); }));

  auto* exp = schema->add_subcommand("export", "Write a namespace as a seed-format schema file that loads back");
  exp->add_option("NS", o->ns, "Namespace, e.g. amanda/onnx/13")->required();
  exp->add_option("-o,--output", o->out, "Output file (written atomically); none: standard output");
  exp->add_option("--to", o->to, "yaml, json or ops (the compact form of a PyTorch namespace, docs/pytorch.md; default: from the extension)")
      ->check(CLI::IsMember({"yaml", "json", "ops"}));
  exp->add_option("--schema", o->schemas, "A namespace schema file to add for this run (repeatable)");
  exp->add_flag("--from-runtime,--from-libtorch", o->from_libtorch,
                "Build the namespace from its framework runtime's registry (PyTorch: libtorch's operator registry, the plugin), not from the shipped "
                "namespaces/pytorch/<version>.ops; regenerates that file with --to ops");
  exp->callback(guard([o] { return run_export(o->ns, o->out, o->to, o->schemas, o->from_libtorch); }));

  auto* val = app.add_subcommand("validate",
                                 "Validate a graph against its namespace schema: unknown ops and attributes, missing "
                                 "or mistyped attributes, constants, one_of, ports.\nSchema folders may also be named "
                                 "in $AMANDA_SCHEMA_PATH (':'-separated; FOLDER/tensorflow/1.13.1.yaml is amanda/tensorflow/1.13.1).");
  val->add_option("FILE", o->file, "Graph document (YAML or JSON)")->required();
  val->add_option("--namespace,-n", o->ns, "Validate as this namespace (default: the graph's own)");
  val->add_option("--schema", o->schemas, "A namespace schema file to add for this run (repeatable)");
  val->add_flag("--fill-defaults", o->fill, "Add missing attributes that have a default (with -o)");
  val->add_flag("--drop-defaults", o->drop, "Remove attributes equal to their default (with -o)");
  val->add_option("-o,--output", o->out, "Write the (normalised) graph here when it is valid");
  val->add_flag("--summary", o->summary, "Print the per-op-type table even when everything is valid");
  val->callback(guard([o] { return run_validate(o->file, o->ns, o->schemas, o->fill, o->drop, o->out, o->summary); }));
}

}  // namespace amanda::tool
