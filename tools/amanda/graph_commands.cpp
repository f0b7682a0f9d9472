// amanda: the command-line tool. Thin: parse arguments, call the library, print.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "amanda/ir/verify.h"
#include "commands.h"

namespace amanda::tool {
namespace {

std::optional<text::Format> parse_format(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s == "json" ? text::Format::Json : text::Format::Yaml;
}

// Reads a document; prints warnings; on failure prints the error and returns nullopt.
std::optional<text::Document> load(const std::string& path, const std::string& from, Diagnostics& diags,
                                   const std::string& torch_reader = "auto") {
  try {
    auto doc = read_input(path, diags, parse_format(from), torch_reader);
    return doc;
  } catch (const ParseError& e) {
    std::cerr << e.what() << '\n';
  } catch (const Error& e) {
    std::cerr << e.what() << '\n';
  } catch (const std::bad_alloc&) {
    std::cerr << path << ": error: out of memory while reading\n";
  }
  for (const auto& d : diags.items()) std::cerr << d.str() << '\n';
  diags.clear();
  return std::nullopt;
}

void print_warnings(Diagnostics& diags) {
  for (const auto& d : diags.items())
    if (d.severity != Severity::Error) std::cerr << d.str() << '\n';
}

// Structural problems of a document; an edge fragment names ops that are not in it.
Diagnostics check(const text::Document& doc, const std::string& path) {
  Diagnostics problems;
  if (doc.kind == text::Document::Kind::Edge) {
    problems.error(path, "edge fragment: op '" + doc.edge.src_op + "' (output_port) is not in this document");
    problems.error(path, "edge fragment: op '" + doc.edge.dst_op + "' (input_port) is not in this document");
    return problems;
  }
  ir::verify(doc.graph, problems);
  return problems;
}

int run_inspect(const std::string& file, const std::string& from) {
  Diagnostics diags;
  auto doc = load(file, from, diags);
  if (!doc) return kInvalid;
  print_warnings(diags);
  Diagnostics problems = doc->kind == text::Document::Kind::Edge ? Diagnostics() : check(*doc, file);
  std::cout << inspect_report(*doc, problems);
  return problems.has_errors() ? kInvalid : kOk;
}

int run_verify(const std::string& file, const std::string& from) {
  Diagnostics diags;
  auto doc = load(file, from, diags);
  if (!doc) return kInvalid;
  print_warnings(diags);
  Diagnostics problems = check(*doc, file);
  for (const auto& d : problems.items()) std::cerr << d.str() << '\n';
  if (problems.has_errors()) {
    std::cerr << file << ": " << problems.error_count() << " problem" << (problems.error_count() == 1 ? "" : "s") << '\n';
    return kInvalid;
  }
  size_t ops = doc->graph.op_count(), edges = doc->graph.edge_count();
  std::cout << file << ": ok (" << ops << (ops == 1 ? " op, " : " ops, ") << edges << (edges == 1 ? " edge)\n" : " edges)\n");
  return kOk;
}

int run_fmt(const std::string& file, const std::string& from, std::string out, std::string to, size_t inline_limit,
            bool external_data, size_t threshold) {
  Diagnostics diags;
  auto doc = load(file, from, diags, "auto");
  if (!doc) return kInvalid;
  print_warnings(diags);
  if (doc->kind != text::Document::Kind::Edge) {
    Diagnostics problems = check(*doc, file);
    if (problems.has_errors()) {
      for (const auto& d : problems.items()) std::cerr << d.str() << '\n';
      std::cerr << file << ": not written: " << problems.error_count() << " structural problem"
                << (problems.error_count() == 1 ? "" : "s") << '\n';
      return kInvalid;
    }
  }
  text::Format format = to.empty() ? (out.empty() || out == "-" ? text::format_for_path(file) : text::format_for_path(out))
                                   : *parse_format(to);
  text::WriteOptions opt;
  opt.inline_limit = inline_limit;
  try {
    if (out.empty() || out == "-") {
      std::cout << text::to_text(*doc, format, opt);
    } else {
      WriteAnyOptions wo;
      wo.text = opt;
      wo.external_data = external_data;
      wo.threshold = threshold;
      std::string side = write_any(*doc, out, format, wo);
      if (!side.empty()) std::cerr << "note: large tensors written to " << side << '\n';
    }
  } catch (const Error& e) {
    std::cerr << e.what() << '\n';
    return kInvalid;
  }
  return kOk;
}

}  // namespace

void register_graph_commands(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string file, from, out, to;
    size_t inline_limit = 4096;
    bool external_data = false;
    size_t threshold = 1024;
  };
  auto o = std::make_shared<Opts>();
  auto guard = [&exit_code](auto fn) {
    return [&exit_code, fn] {
      try {
        exit_code = fn();
      } catch (const std::exception& e) {
        std::cerr << "amanda: error: " << e.what() << '\n';
        exit_code = kInvalid;
      }
    };
  };

  auto* inspect = app.add_subcommand("inspect", "Summarise a document: ops by type, namespaces, nested graphs, edges, problems");
  inspect->add_option("FILE", o->file, "YAML (.yaml/.yml), JSON (.json) or ONNX (.onnx) document")->required();
  inspect->add_option("--from", o->from, "Input format when the extension does not tell")->check(CLI::IsMember({"yaml", "json"}));
  inspect->callback(guard([o] { return run_inspect(o->file, o->from); }));

  auto* fmt = app.add_subcommand("fmt", "Read a document and write it in canonical form (YAML or JSON)");
  fmt->add_option("FILE", o->file, "YAML, JSON or ONNX (.onnx) document")->required();
  fmt->add_option("-o,--output", o->out, "Output file (written atomically); '-' or none: standard output");
  fmt->add_option("--to", o->to, "Output format (default: from the output's extension, else the input's)")
      ->check(CLI::IsMember({"yaml", "json"}));
  fmt->add_option("--from", o->from, "Input format when the extension does not tell")->check(CLI::IsMember({"yaml", "json"}));
  fmt->add_option("--inline-limit", o->inline_limit,
                  "Tensors over this many bytes go to a side file OUTPUT.data when writing a file")
      ->capture_default_str();
  fmt->add_flag("--external-data", o->external_data, "Writing .onnx: tensors of at least --threshold bytes go to OUTPUT.data (4 KiB aligned)");
  fmt->add_option("--threshold", o->threshold, "Bytes from which --external-data moves a tensor out")->capture_default_str();
  fmt->callback(guard([o] { return run_fmt(o->file, o->from, o->out, o->to, o->inline_limit, o->external_data, o->threshold); }));

  auto* verify = app.add_subcommand("verify", "Check a document's structure; report every problem with its path");
  verify->add_option("FILE", o->file, "YAML, JSON or ONNX (.onnx) document")->required();
  verify->add_option("--from", o->from, "Input format when the extension does not tell")->check(CLI::IsMember({"yaml", "json"}));
  verify->callback(guard([o] { return run_verify(o->file, o->from); }));
}

}  // namespace amanda::tool

