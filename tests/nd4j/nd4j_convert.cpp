// nd4j_convert IN OUT [--to NS] [--report]: what `amanda convert` does for .fb files until the
// framework registry (issue 26) wires the nd4j plug-in into the tool; the nd4j tests drive it.
// Reads .fb with the nd4j reader and anything else with io::read_any; converts with the default
// tables (tables/nd4j included) through mapping::convert; writes .fb or via io::write_any.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "amanda/io/io.h"
#include "amanda/schema/validate.h"
#include "amanda/support/file.h"
#include "frameworks/nd4j/nd4j.h"

using namespace amanda;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: nd4j_convert IN OUT [--to NS] [--report]\n";
    return 2;
  }
  std::string in = argv[1], out = argv[2], to, explain;
  bool report = false, validate = false;
  for (int i = 3; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--to") && i + 1 < argc) to = argv[++i];
    else if (!std::strcmp(argv[i], "--report")) report = true;
    else if (!std::strcmp(argv[i], "--validate")) validate = true;
    else if (!std::strcmp(argv[i], "--explain") && i + 1 < argc) explain = argv[++i];
  }
  try {
    Diagnostics diags;
    auto ends = [](const std::string& s, const char* e) { return s.size() >= std::strlen(e) && s.compare(s.size() - std::strlen(e), std::string::npos, e) == 0; };
    text::Document doc = ends(in, ".fb") ? nd4j::read_flatgraph(map_file(in), in) : io::read_any(in, diags);
    if (to.empty()) to = ends(out, ".fb") ? std::string(nd4j::kNamespace) : ends(out, ".onnx") ? "amanda/onnx/13" : "";
    to = io::full_namespace(to);
    auto reg = io::default_registry();
    nd4j::add_to(*reg);
    std::string from(doc.graph.str(doc.graph.graph_namespace(doc.graph.root())));
    if (!to.empty() && to != from) {
      if (to.starts_with("amanda/nd4j")) nd4j::constants_to_initializers(doc.graph);
      if (from.starts_with("amanda/nd4j")) nd4j::drop_unused_noops(doc.graph);
      io::prepare_for_conversion(doc.graph, to);
      mapping::TableSet tables;
      io::add_default_tables(tables);
      mapping::ConvertOptions o = io::default_convert_options();
      o.explain = explain;
      nd4j::TypeMemo memo = nd4j::remember_types(doc.graph);
      mapping::Report r = mapping::convert(doc.graph, to, tables, *reg, o);
      if (to.starts_with("amanda/nd4j")) nd4j::restore_types(doc.graph, memo);
      for (const auto& line : r.explain) std::cerr << line << "\n";
      if (report) std::cout << r.json() << "\n";
      if (!r.ok()) {
        std::cerr << r.text();
        return 1;
      }
      io::finish_conversion(doc.graph, from);
      if (from.starts_with("amanda/nd4j") && to.starts_with("amanda/onnx/")) nd4j::finish_onnx(doc.graph);
    }
    if (to.starts_with("amanda/nd4j") || from.starts_with("amanda/nd4j")) {
      if (nd4j::check_ordered_args(doc.graph, diags)) {
        for (const auto& d : diags.items()) std::cerr << d.str() << "\n";
        return 1;
      }
    }
    if (validate) {  // the result against its namespace (amanda validate), ordered arguments included
      schema::ValidationResult v = schema::validate(doc.graph, *reg, diags);
      size_t args = nd4j::check_ordered_args(doc.graph, diags);
      for (const auto& d : diags.items()) std::cerr << d.str() << "\n";
      std::cout << "validated: " << v.ops_checked << " ops, " << v.problems + args << " problems\n";
      if (!v.ok() || args) return 1;
    }
    if (ends(out, ".fb")) {
      std::string bytes = nd4j::write_flatgraph(doc);
      std::ofstream(out, std::ios::binary) << bytes;
    } else {
      io::write_any(doc, out);
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
