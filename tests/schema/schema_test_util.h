// Helpers shared by the schema tests: data folders, registries, graphs from text, running the
// amanda binary.
#pragma once

#include <gtest/gtest.h>

#include "test_files.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "amanda/frameworks/onnx/namespaces.h"
#include "amanda/io/io.h"
#include "amanda/schema/registry.h"
#include "amanda/schema/validate.h"
#include "amanda/text/document.h"
#include "amanda/text/tree.h"

namespace amanda::schema::testing {

namespace fs = std::filesystem;

using test_files::slurp;
using test_files::spit;

inline fs::path test_data() { return fs::path(AMANDA_TEST_DATA); }
inline fs::path golden_seed_dir() { return test_data() / "golden" / "seed"; }
inline fs::path golden_schema_dir() { return test_data() / "golden" / "schema"; }
inline fs::path shipped_namespaces() { return test_data().parent_path() / "namespaces"; }

// A fresh folder under the system's temporary folder, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "amanda-schema-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

// The registry the tool builds (amanda/io): shipped namespaces, ONNX's, PyTorch's, $AMANDA_SCHEMA_PATH.
inline std::unique_ptr<Registry> tool_registry() { return io::default_registry(); }

inline std::unique_ptr<NamespaceSchema> parse_schema(std::string_view yaml, const TypeSystems& types,
                                                     const std::string& file = "schema.yaml") {
  return parse_namespace(text::parse_tree(yaml, text::Format::Yaml, file), types);
}

inline text::Document parse_graph(std::string_view yaml, const std::string& file = "graph.yaml") {
  Diagnostics d;
  return text::parse(yaml, text::Format::Yaml, file, d);
}

struct Validated {
  ValidationResult result;
  Diagnostics diags;
  std::string messages() const { return diags.str(); }
};

inline Validated validate_text(std::string_view yaml, Registry& reg, const ValidateOptions& opt = {}) {
  text::Document doc = parse_graph(yaml);
  Validated v;
  v.result = validate(doc.graph, reg, v.diags, opt);
  return v;
}

// Runs the amanda binary with the arguments (each one quoted) and optional environment
// assignments ("NAME=value"). Output and errors are captured separately.
struct RunResult {
  int code = -1;
  std::string out, err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline RunResult run_amanda(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  TempDir tmp;
  std::string cmd = "env";
  for (const auto& e : env) cmd += " " + shell_quote(e);
  cmd += " " + shell_quote(AMANDA_BINARY);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote((tmp / "out").string()) + " 2>" + shell_quote((tmp / "err").string()) + " </dev/null";
  int status = std::system(cmd.c_str());
  RunResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(tmp / "out");
  r.err = slurp(tmp / "err");
  return r;
}

// Drops `prefix` wherever it occurs (absolute folders in messages, so golden files are portable).
inline std::string strip(std::string s, const std::string& prefix) {
  if (prefix.empty()) return s;
  for (size_t p; (p = s.find(prefix)) != std::string::npos;) s.erase(p, prefix.size());
  return s;
}

inline bool update_golden() {
  const char* u = std::getenv("AMANDA_UPDATE_GOLDEN");
  return u && *u && std::string(u) != "0";
}

}  // namespace amanda::schema::testing
