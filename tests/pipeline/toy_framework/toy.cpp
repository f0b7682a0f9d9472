// A framework made only for the test (tests/pipeline/toy_framework_test.py): the "toy" format, one
// line per value, built as a plug-in outside the source tree's frameworks and registered through
// $AMANDA_PLUGINS. That `amanda convert` and `amanda.convert` then read, convert and write it with
// no other change is what proves the plug-in design (docs/architecture.md, "Adding a framework").
//
//   toy 1                 the header
//   input x 2,3           a float32 graph input and its shape
//   relu h x              an op (relu, add, matmul): its output value, then its inputs
//   add y h x
//   output y              a graph output
#include <sstream>

#include "amanda/pipeline/framework.h"
#include "amanda/support/file.h"
#include "amanda/text/document.h"

namespace {

using namespace amanda;

const char* const kOps[][4] = {{"relu", "x", nullptr, nullptr}, {"add", "a", "b", nullptr}, {"matmul", "a", "b", nullptr}};

class ToyFramework final : public pipeline::Framework {
 public:
  std::string_view name() const override { return "toy"; }
  std::string_view description() const override { return "the test's toy format (.toy)"; }
  std::vector<std::string> namespace_prefixes() const override { return {"amanda/toy/"}; }

  int detect_read(const pipeline::Probe& p) const override {
    if (p.head.rfind("toy 1\n", 0) == 0) return 100;  // by content, whatever the extension
    return p.extension == ".toy" ? 10 : 0;
  }
  text::Document read(pipeline::ReadContext& ctx) const override {
    auto bytes = ctx.files.map_model();
    std::istringstream in{std::string(bytes->view())};
    std::string line, yaml_inputs, yaml_outputs, yaml_ops, yaml_edges;
    std::getline(in, line);
    if (line != "toy 1") throw Error(ctx.files.model_path() + ":1: not a toy file (the header is 'toy 1')");
    std::map<std::string, std::pair<std::string, std::string>> producer;  // value -> (op or graph, port)
    int n = 1;
    while (std::getline(in, line)) {
      ++n;
      std::istringstream ls(line);
      std::string kw, name;
      ls >> kw >> name;
      if (kw.empty()) continue;
      std::string where = ctx.files.model_path() + ":" + std::to_string(n) + ": ";
      if (kw == "input") {
        std::string shape;
        ls >> shape;
        yaml_inputs += "    - name: " + name + "\n      attrs: {type: tensor(float), shape: [" + shape + "]}\n";
        producer[name] = {"toy", name};
      } else if (kw == "output") {
        if (!producer.count(name)) throw Error(where + "output '" + name + "' is not a value");
        yaml_outputs += "    - name: " + name + "\n      attrs: {type: tensor(float)}\n";
        yaml_edges += "    - output_port: {op: " + producer[name].first + ", port: " + producer[name].second + "}\n      input_port: {op: toy, port: " + name + "}\n";
      } else {
        const char* const* op = nullptr;
        for (const auto& o : kOps)
          if (kw == o[0]) op = o;
        if (!op) throw Error(where + "unknown op '" + kw + "'");
        yaml_ops += "    - type: " + kw + "\n      name: " + name + "\n      input_ports: [";
        for (int i = 1; op[i]; ++i) {
          std::string v;
          ls >> v;
          if (!producer.count(v)) throw Error(where + "'" + v + "' is not a value");
          yaml_ops += std::string(i > 1 ? ", " : "") + "{name: " + op[i] + "}";
          yaml_edges += "    - output_port: {op: " + producer[v].first + ", port: " + producer[v].second + "}\n      input_port: {op: " + name + ", port: " + op[i] + "}\n";
        }
        yaml_ops += "]\n      output_ports: [{name: y, attrs: {\"@value\": " + name + "}}]\n";
        producer[name] = {name, "y"};
      }
    }
    std::string yaml = "graph:\n  name: toy\n  namespace: amanda/toy/1\n  input_ports:\n" + yaml_inputs + "  output_ports:\n" + yaml_outputs +
                       "  ops:\n" + yaml_ops + "  edges:\n" + yaml_edges;
    return text::parse(yaml, text::Format::Yaml, ctx.files.model_path(), ctx.diags);
  }

  int detect_write(std::string_view path, std::string_view ns) const override { return path.ends_with(".toy") ? 50 : 0; }
  void write(const text::Document& doc, pipeline::WriteContext& ctx) const override {
    const ir::Graph& g = doc.graph;
    if (!g.type_str(g.root()).starts_with("amanda/toy/"))
      throw Error(ctx.files.output_path() + ": a toy file holds a graph of amanda/toy/1, not " + std::string(g.type_str(g.root())));
    auto value = [&](ir::PortId in) {
      ir::PortId p = g.producer(in);
      if (!p) throw Error("an input without a producer");
      return std::string(g.port_op(p) == g.root() ? g.str(g.port_name(p)) : g.str(g.name(g.port_op(p))));
    };
    std::string out = "toy 1\n";
    for (ir::PortId p : g.inputs(g.root())) {
      out += "input " + std::string(g.str(g.port_name(p))) + " ";
      for (const auto& [k, v] : g.attrs(p))
        if (g.str(k) == "shape")
          for (size_t i = 0; i < v.as_list().size(); ++i) out += (i ? "," : "") + std::to_string(v.as_list()[i].as_int());
      out += "\n";
    }
    for (ir::OpId op : g.topo_order(g.root()).order) {
      out += std::string(g.type_str(op)) + " " + std::string(g.str(g.name(op)));
      for (ir::PortId in : g.inputs(op)) out += " " + value(in);
      out += "\n";
    }
    for (ir::PortId p : g.outputs(g.root())) out += "output " + value(p) + "\n";
    ctx.files.main().write(out);
  }
};

}  // namespace

extern "C" void amanda_register_frameworks(amanda::pipeline::FrameworkRegistry& r) { r.add(std::make_unique<ToyFramework>()); }
