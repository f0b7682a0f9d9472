// Writes a large generated graph, to try the tool and the text readers on:
//   make_big_graph [--kind tf|dag] [--ops N] [--edges N] [--seed S] OUT.yaml|OUT.json
// tf (default): the TensorFlow-like conv-block graph of the text benchmark (100,000 ops).
// dag: the random DAG of the build benchmark (--edges defaults to --ops).
// The format follows the extension (.json, else YAML); the file is written atomically.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "graph_gen.h"

namespace {

[[noreturn]] void usage(const char* msg) {
  if (msg) std::fprintf(stderr, "make_big_graph: %s\n", msg);
  std::fprintf(stderr, "usage: make_big_graph [--kind tf|dag] [--ops N] [--edges N] [--seed S] OUT.yaml|OUT.json\n");
  std::exit(2);
}

uint64_t number(const char* s, const char* what) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (!*s || *end) usage((std::string(what) + " must be a non-negative integer").c_str());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kind = "tf", out;
  uint64_t ops = 100'000, seed = 1;
  int64_t edges = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage((a + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--kind") kind = value();
    else if (a == "--ops") ops = number(value(), "--ops");
    else if (a == "--edges") edges = static_cast<int64_t>(number(value(), "--edges"));
    else if (a == "--seed") seed = number(value(), "--seed");
    else if (a == "-h" || a == "--help") usage(nullptr);
    else if (!a.empty() && a[0] == '-') usage(("unknown option " + a).c_str());
    else if (out.empty()) out = a;
    else usage("only one output file");
  }
  if (out.empty()) usage("no output file given");
  if (kind != "tf" && kind != "dag") usage("--kind must be tf or dag");
  if (ops > UINT32_MAX / 4) usage("--ops is too large");
  try {
    amanda::text::Document doc =
        kind == "tf" ? amanda::bench::make_tf_document(ops, seed)
                     : amanda::bench::make_dag_document(static_cast<uint32_t>(ops),
                                                        static_cast<uint32_t>(edges < 0 ? ops : edges), seed);
    amanda::text::write_file(doc, out, amanda::text::format_for_path(out));
    std::printf("%s: %zu ops, %zu edges\n", out.c_str(), doc.graph.op_count(), doc.graph.edge_count());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_big_graph: %s\n", e.what());
    return 1;
  }
  return 0;
}
