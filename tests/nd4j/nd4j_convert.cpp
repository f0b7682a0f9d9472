// nd4j_convert IN OUT [--to NS] [--report] [--explain OP] [--validate]: `amanda convert` through the
// same pipeline (io::read_any, pipeline::convert, io::write_document: the nd4j plug-in is one of the
// registry's frameworks), plus what the nd4j tests need in one process: the report as JSON, and the
// result validated against its namespace with nd4j's ordered-argument check.
#include <cstring>
#include <iostream>

#include "amanda/io/io.h"
#include "amanda/pipeline/pipeline.h"
#include "amanda/schema/validate.h"
#include "frameworks/nd4j/nd4j.h"

using namespace amanda;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: nd4j_convert IN OUT [--to NS] [--report] [--explain OP] [--validate]\n";
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
    auto reg = io::default_registry();
    mapping::TableSet tables;
    io::add_default_tables(tables);
    pipeline::PassContext ctx(io::read_any(in, diags), *reg, tables);
    ctx.request.to = to;
    ctx.request.output = out;
    ctx.request.explain = explain;
    bool ok = pipeline::convert(ctx);
    for (const auto& line : ctx.report.explain) std::cerr << line << "\n";
    if (report) std::cout << ctx.report.json() << "\n";
    if (!ok) {
      std::cerr << ctx.report.text();
      for (const auto& d : ctx.diags.items()) std::cerr << d.str() << "\n";
      if (!ctx.failure.empty()) std::cerr << ctx.failure << "\n";
      return 1;
    }
    if (validate) {  // the result against its namespace (amanda validate), ordered arguments included
      Diagnostics problems;
      schema::ValidationResult v = schema::validate(ctx.doc.graph, *reg, problems);
      size_t args = nd4j::check_ordered_args(ctx.doc.graph, problems);
      for (const auto& d : problems.items()) std::cerr << d.str() << "\n";
      std::cout << "validated: " << v.ops_checked << " ops, " << v.problems + args << " problems\n";
      if (!v.ok() || args) return 1;
    }
    io::write_document(ctx.doc, out);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
