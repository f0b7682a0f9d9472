// `amanda view MODEL -o model.html|model.svg|model.dot [--diff CONVERTED]`: a picture of a graph.
// The HTML page stands alone (its script and the laid-out scene are inside it); SVG comes from
// Graphviz's `dot` command run on the DOT text.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "amanda/support/file.h"
#include "amanda/support/progress.h"
#include "amanda/view/diff.h"
#include "amanda/view/scene.h"
#include "commands.h"

extern char** environ;

namespace amanda::tool {

namespace {

struct ViewOpts {
  std::string in, out, diff, format;
  bool quiet = false;
};

std::string output_format(const ViewOpts& o) {
  if (!o.format.empty()) return o.format;
  std::string ext = std::filesystem::path(o.out).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".svg") return "svg";
  if (ext == ".dot" || ext == ".gv") return "dot";
  if (ext == ".html" || ext == ".htm") return "html";
  return "";
}

// Runs Graphviz: dot -Tsvg DOT -o OUT, through temporary files, so a failure leaves no output.
void run_dot(const std::string& dot_text, const std::string& out) {
  const char* dot = std::getenv("AMANDA_DOT");
  std::string exe = dot && *dot ? dot : "dot";
  std::string base = out + ".tmp-" + std::to_string(::getpid());
  std::string dot_file = base + ".dot", svg_file = base + ".svg";
  write_file_atomic(dot_file, dot_text);
  std::vector<std::string> args = {exe, "-Tsvg", dot_file, "-o", svg_file};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, exe.c_str(), nullptr, nullptr, argv.data(), environ);
  int status = 0;
  if (rc == 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  std::remove(dot_file.c_str());
  if (rc != 0) {
    std::remove(svg_file.c_str());
    throw Error(fmt::format("cannot run Graphviz's '{}' ({}): SVG output needs it (Debian: apt install graphviz); "
                            "or write .html, or .dot", exe, std::strerror(rc)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::remove(svg_file.c_str());
    throw Error(fmt::format("Graphviz's '{}' failed (status {}) on the graph's DOT", exe, status));
  }
  std::error_code ec;
  std::filesystem::rename(svg_file, out, ec);
  if (ec) {
    std::remove(svg_file.c_str());
    throw Error(fmt::format("cannot write {}: {}", out, ec.message()));
  }
}

int run_view(const ViewOpts& o) {
  if (o.quiet) set_progress_sink(nullptr);
  std::string format = output_format(o);
  if (format.empty()) {
    std::cerr << "amanda: error: -o " << o.out << ": say the format by the extension (.html, .svg, .dot) or --format\n";
    return kUsage;
  }
  Diagnostics diags;
  text::Document doc = read_any(o.in, diags);
  view::SceneOptions so;
  so.title = std::filesystem::path(o.in).filename().string();
  std::optional<text::Document> after;
  view::Diff diff;
  if (!o.diff.empty()) {
    after.emplace(read_any(o.diff, diags));
    diff = view::diff_graphs(doc.graph, after->graph);
    so.diff = &diff;
    so.title += " -> " + std::filesystem::path(o.diff).filename().string();
    if (!o.quiet)
      std::cout << fmt::format("{} ops the same, {} modified, {} retyped, {} added, {} removed ({} changes)\n", diff.same,
                               diff.modified, diff.retyped, diff.added, diff.removed, diff.changes.size());
  }
  const ir::Graph& shown = after ? after->graph : doc.graph;
  if (format == "html") {
    write_file_atomic(o.out, view::scene_html(shown, so));
  } else if (format == "dot") {
    write_file_atomic(o.out, view::scene_dot(shown, so));
  } else {
    if (shown.op_count() > 5000 && !o.quiet)
      std::cerr << fmt::format("amanda: note: Graphviz may take minutes on {} ops; the .html view lays out 100,000 in seconds\n",
                               shown.op_count());
    run_dot(view::scene_dot(shown, so), o.out);
  }
  if (!o.quiet) std::cout << "wrote " << o.out << " (" << shown.op_count() << " ops)\n";
  return kOk;
}

}  // namespace

void register_view_commands(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ViewOpts>();
  auto* c = app.add_subcommand("view",
                               "Draw a graph: a self-contained HTML page (layered layout, nested graphs that expand, click an op "
                               "for its attributes, ports, types and shapes, search), an SVG picture (Graphviz), or DOT. "
                               "With --diff, the converted graph coloured by what the conversion did");
  c->add_option("MODEL", o->in, "Input document (ONNX, YAML or JSON)")->required();
  c->add_option("-o,--output", o->out, "Output: .html, .svg (needs Graphviz's dot) or .dot")->required();
  c->add_option("--diff", o->diff,
                "A converted version of MODEL (e.g. from amanda convert): draw it, ops coloured as added, retyped or "
                "modified, with the list of what each rule replaced");
  c->add_option("--format", o->format, "html, svg or dot (default: by the output's extension)")
      ->check(CLI::IsMember({"html", "svg", "dot"}));
  c->add_flag("-q,--quiet", o->quiet, "Print nothing (no progress line either)");
  c->callback([o, &exit_code] {
    try {
      exit_code = run_view(*o);
    } catch (const ParseError& e) {
      std::cerr << e.what() << '\n';
      exit_code = kInvalid;
    } catch (const std::exception& e) {
      std::cerr << "amanda: error: " << e.what() << '\n';
      exit_code = kInvalid;
    }
  });
}

}  // namespace amanda::tool
