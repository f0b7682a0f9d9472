// The amanda tool, run as a program (AMANDA_BINARY) in a temporary folder: exit codes (0 fine,
// 1 invalid input, 2 wrong usage), errors that name file:line:column, and no output file, not
// even a temporary one, when the input is bad.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "amanda-tool-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& n) const { return path_ / n; }
  std::set<std::string> files() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.insert(e.path().filename().string());
    return out;
  }

 private:
  fs::path path_;
};

struct Result {
  int code = -1;
  std::string out, err;
};

// Runs `amanda ARGS` inside `dir` (ARGS is shell text written by the tests themselves).
Result amanda(const TempDir& dir, const std::string& args) {
  fs::path out = fs::temp_directory_path() / ("amanda-out-" + std::to_string(getpid()));
  fs::path err = fs::temp_directory_path() / ("amanda-err-" + std::to_string(getpid()));
  std::string cmd = "cd '" + dir.path().string() + "' && '" AMANDA_BINARY "' " + args + " >'" + out.string() + "' 2>'" +
                    err.string() + "'";
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

fs::path golden(const std::string& rel) { return fs::path(AMANDA_TEST_DATA) / "golden" / rel; }

// ------------------------------------------------------------------------- usage

TEST(ToolUsage, HelpOnEverySubcommandExitsZero) {
  TempDir dir;
  for (std::string args : {"--help", "-h", "fmt --help", "inspect --help", "verify --help", "fmt -h"}) {
    Result r = amanda(dir, args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    EXPECT_NE(r.out.find("Usage: amanda"), std::string::npos) << args << "\n" << r.out;
  }
  Result top = amanda(dir, "--help");
  for (const char* sub : {"fmt", "inspect", "verify"}) EXPECT_NE(top.out.find(sub), std::string::npos) << sub;
  EXPECT_NE(top.out.find("Exit codes"), std::string::npos);
  Result version = amanda(dir, "--version");
  EXPECT_EQ(version.code, 0);
  EXPECT_NE(version.out.find("amanda 0."), std::string::npos);
}

TEST(ToolUsage, WrongUsageExitsTwo) {
  TempDir dir;
  spit(dir / "g.yaml", "op: {name: a}\n");
  for (std::string args : {"", "bogus", "fmt", "inspect", "verify", "fmt g.yaml extra", "fmt g.yaml --to xml",
                           "fmt g.yaml --from toml", "fmt g.yaml --inline-limit lots", "fmt g.yaml --no-such-flag",
                           "inspect g.yaml -o x", "verify"}) {
    Result r = amanda(dir, args);
    EXPECT_EQ(r.code, 2) << "'" << args << "'\n" << r.out << r.err;
    EXPECT_FALSE(r.err.empty()) << "'" << args << "' must say what is wrong";
    EXPECT_EQ(dir.files(), std::set<std::string>{"g.yaml"}) << args;
  }
}

// ------------------------------------------------------------------------- good input

TEST(ToolFmt, WritesTheCanonicalFormOfEverySeedExample) {
  TempDir dir;
  for (const auto& e : fs::directory_iterator(golden("seed"))) {
    std::string n = e.path().filename().string();
    if (n.find(".expected.") != std::string::npos) continue;
    std::string stem = e.path().stem().string();
    Result y = amanda(dir, "fmt '" + e.path().string() + "' -o out.yaml");
    EXPECT_EQ(y.code, 0) << n << y.err;
    EXPECT_EQ(slurp(dir / "out.yaml"), slurp(golden("seed/" + stem + ".expected.yaml"))) << n;
    Result j = amanda(dir, "fmt '" + e.path().string() + "' -o out.json");  // the format follows the extension
    EXPECT_EQ(j.code, 0) << n << j.err;
    EXPECT_EQ(slurp(dir / "out.json"), slurp(golden("seed/" + stem + ".expected.json"))) << n;
    Result s = amanda(dir, "fmt '" + e.path().string() + "' --to json");  // standard output
    EXPECT_EQ(s.code, 0);
    EXPECT_EQ(s.out, slurp(golden("seed/" + stem + ".expected.json"))) << n;
    // JSON in, YAML out.
    Result back = amanda(dir, "fmt out.json -o back.yaml");
    EXPECT_EQ(back.code, 0) << back.err;
    EXPECT_EQ(slurp(dir / "back.yaml"), slurp(dir / "out.yaml")) << n;
  }
  EXPECT_EQ(dir.files(), (std::set<std::string>{"back.yaml", "out.json", "out.yaml"}));
}

TEST(ToolFmt, SeedMisspellingIsAWarningNotAnError) {
  TempDir dir;
  Result r = amanda(dir, "fmt '" + golden("seed/pytorch_graph.yaml").string() + "' -o out.yaml");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.err.find("pytorch_graph.yaml:44:7: warning: edge key 'input_ports' should be 'input_port'"),
            std::string::npos)
      << r.err;
  Result v = amanda(dir, "verify '" + golden("seed/pytorch_graph.yaml").string() + "'");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("ok (4 ops, 5 edges)"), std::string::npos) << v.out;
}

TEST(ToolFmt, FormatFlagsAndStandardOutput) {
  TempDir dir;
  spit(dir / "doc.txt", "{\"op\": {\"name\": \"a\", \"attrs\": {\"x\": 1}}}");
  Result r = amanda(dir, "fmt doc.txt --from json --to yaml");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "op:\n  name: a\n  attrs:\n    x: 1\n");
  Result dash = amanda(dir, "fmt doc.txt --from json -o - --to json");
  EXPECT_EQ(dash.code, 0);
  EXPECT_EQ(dash.out, "{\n  \"op\": {\n    \"name\": \"a\",\n    \"attrs\": {\n      \"x\": 1\n    }\n  }\n}\n");
  // Without --from, a .txt file is read as YAML; JSON is YAML-compatible enough here.
  EXPECT_EQ(amanda(dir, "fmt doc.txt").code, 0);
}

TEST(ToolFmt, LargeTensorsGoToASideFile) {
  TempDir dir;
  std::string data;
  for (int i = 0; i < 64; ++i) data += (i ? ", " : "") + std::to_string(i);
  spit(dir / "t.yaml", "op:\n  name: c\n  attrs:\n    w: !tensor {dtype: int32, shape: [64], data: [" + data + "]}\n");
  Result r = amanda(dir, "fmt t.yaml -o out.yaml --inline-limit 16");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("out.yaml.data"), std::string::npos);
  EXPECT_EQ(fs::file_size(dir / "out.yaml.data"), 256u);
  EXPECT_NE(slurp(dir / "out.yaml").find("file: out.yaml.data, offset: 0, length: 256"), std::string::npos);
  // Reading it back borrows the side file; written inline again it is the original document.
  Result back = amanda(dir, "fmt out.yaml");
  EXPECT_EQ(back.code, 0) << back.err;
  EXPECT_EQ(back.out, "op:\n  name: c\n  attrs:\n    w: !tensor {dtype: int32, shape: [64], data: [" + data + "]}\n");
  EXPECT_EQ(dir.files(), (std::set<std::string>{"out.yaml", "out.yaml.data", "t.yaml"}));
}

TEST(ToolInspect, SummarisesADocument) {
  TempDir dir;
  Result r = amanda(dir, "inspect '" + golden("seed/tf_dense_op.yaml").string() + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("document: op\nname: fc\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ops: 4\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("edges: 4 (4 data, 0 control)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("problems: 0\n"), std::string::npos) << r.out;
  Result c = amanda(dir, "inspect '" + golden("features/control_edges.yaml").string() + "'");
  EXPECT_NE(c.out.find("edges: 7 (3 data, 4 control)\n"), std::string::npos) << c.out;
  // An op that only holds graph-valued attributes is not listed as a body.
  Result a = amanda(dir, "inspect '" + golden("features/json_input.json").string() + "'");
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.out.find("nested graphs: 1\n  relu/<graph> (graph attribute of relu)\n"), std::string::npos) << a.out;
  Result e = amanda(dir, "inspect '" + golden("seed/edge_data.yaml").string() + "'");
  EXPECT_EQ(e.code, 0);
  EXPECT_NE(e.out.find("edge: f:m -> g:z"), std::string::npos) << e.out;
}

TEST(ToolVerify, AnEdgeFragmentIsNotAGraph) {
  TempDir dir;
  Result r = amanda(dir, "verify '" + golden("seed/edge_data.yaml").string() + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("edge fragment: op 'f' (output_port) is not in this document"), std::string::npos) << r.err;
}

// ------------------------------------------------------------------------- bad input

struct Bad {
  const char* name;
  const char* file;
  std::string text;
  const char* where;    // "line:column"
  const char* message;  // a part of the first error
  bool slow = false;    // takes seconds in the sanitizer build: run once only
};

void PrintTo(const Bad& b, std::ostream* os) { *os << b.name; }

std::string deep_ops_yaml(int depth) {
  std::string s = "graph: {ops: [";
  for (int i = 0; i < depth; ++i) s += "{name: a, ops: [";
  for (int i = 0; i < depth; ++i) s += "]}";
  return s + "]}\n";
}

std::string deep_ops_json(int depth) {
  std::string s = R"({"graph": {"ops": [)";
  for (int i = 0; i < depth; ++i) s += R"({"name": "a", "ops": [)";
  for (int i = 0; i < depth; ++i) s += "]}";
  return s + "]}}";
}

std::string deep_list(int depth, bool json) {
  std::string s = json ? R"({"op": {"attrs": {"x": )" : "op: {attrs: {x: ";
  s.append(depth, '[');
  s.append(depth, ']');
  return s + (json ? "}}}" : "}}\n");
}

std::string alias_bomb() {
  std::string s = "op:\n  attrs:\n    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    s += "    a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) s += (k ? ", *a" : "*a") + std::to_string(i - 1);
    s += "]\n";
  }
  return s;
}

std::string random_bytes_with_nul() {
  std::mt19937 rng(42);
  std::string s(4096, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  std::replace(s.begin(), s.begin() + 100, '\n', 'x');  // so that the NUL is on line 3
  s[100] = '\0';
  return "graph:\n  ops: []\n" + s;  // starts like a document, then binary
}

std::vector<Bad> bad_inputs() {
  return {
      {"malformed YAML", "in.yaml", "graph:\n  ops: [\n", "3:1", "malformed YAML"},
      {"malformed JSON", "in.json", "{\"graph\": {\"ops\": [}}", "1:20", "malformed JSON"},
      {"edge to a missing op", "in.yaml",
       "graph:\n  ops: [{name: a, output_ports: [o]}]\n  edges:\n    - {output_port: {op: a, port: o}, input_port: {op: b, port: i}}\n",
       "4:51", "edge refers to op 'b', which is not in the top-level graph"},
      {"edge to a missing port", "in.yaml",
       "graph:\n  ops: [{name: a, output_ports: [o]}, {name: b, input_ports: [i]}]\n  edges:\n"
       "    - {output_port: {op: a, port: x}, input_port: {op: b, port: i}}\n",
       "4:21", "op 'a' has no output port 'x'"},
      {"two producers into one input port", "in.yaml",
       "graph:\n  ops: [{name: a, output_ports: [o, p]}, {name: b, input_ports: [i]}]\n  edges:\n"
       "    - {output_port: {op: a, port: o}, input_port: {op: b, port: i}}\n"
       "    - {output_port: {op: a, port: p}, input_port: {op: b, port: i}}\n",
       "5:51", "already receives a value from 'a:o'"},
      {"duplicate names in one scope", "in.yaml", "graph:\n  ops:\n    - name: a\n    - name: a\n", "4:13",
       "duplicate op name 'a' in the top-level graph"},
      {"edge that crosses scopes", "in.yaml",
       "graph:\n  ops:\n    - {name: a, output_ports: [o]}\n    - name: h\n      ops: [{name: b, input_ports: [i]}]\n"
       "      edges: [{output_port: {op: a, port: o}, input_port: {op: b, port: i}}]\n",
       "6:29", "'a' lies outside the body of 'h'"},
      {"100,000 nested ops (YAML)", "in.yaml", deep_ops_yaml(100'000), "1:4094", "nesting deeper than 512 levels"},
      {"100,000 nested ops (JSON)", "in.json", deep_ops_json(100'000), "1:5629", "nesting deeper than 512 levels"},
      {"100,000 nested lists (YAML)", "in.yaml", deep_list(100'000, false), "1:526", "nesting deeper than 512 levels"},
      {"100,000 nested lists (JSON)", "in.json", deep_list(100'000, true), "1:533", "nesting deeper than 512 levels"},
      {"alias bomb", "in.yaml", alias_bomb(), "9:14", "an alias bomb?", true},
      {"empty file", "in.yaml", "", "1:1", "empty file"},
      {"empty JSON file", "in.json", "", "1:1", "empty file"},
      {"binary file", "in.yaml", random_bytes_with_nul(), "3:101", "binary data"},
      {"tensor data list of the wrong length", "in.yaml",
       "op:\n  attrs:\n    w: !tensor {dtype: float32, shape: [2, 2], data: [1, 2, 3]}\n", "3:54",
       "float32[2, 2] has 4 elements but data has 3"},
      {"tensor base64 of the wrong length", "in.yaml",
       "op:\n  attrs:\n    w: !tensor {dtype: float32, shape: [3], base64: AAAAAAAAAAA=}\n", "3:53",
       "needs 12 bytes but its data has 8"},
      {"tensor side file length", "in.yaml",
       "op:\n  attrs:\n    w: !tensor {dtype: float32, shape: [2], file: side.bin, offset: 0, length: 4}\n", "3:8",
       "needs 8 bytes but its length is 4"},
      {"tensor side file too short", "in.yaml",
       "op:\n  attrs:\n    w: !tensor {dtype: float32, shape: [4], file: side.bin, offset: 0, length: 16}\n", "3:8",
       "lie outside side file 'side.bin' (12 bytes)"},
      {"unknown key", "in.yaml", "graph:\n  opz: []\n", "2:3", "unknown key 'opz' in a graph"},
      {"duplicate key", "in.yaml", "op:\n  name: a\n  name: b\n", "3:3", "duplicate key 'name'"},
      {"two top-level keys", "in.yaml", "graph: {ops: []}\nop: {name: a}\n", "2:1", "exactly one top-level key"},
  };
}

class ToolBadInput : public ::testing::TestWithParam<Bad> {};

TEST_P(ToolBadInput, ExitsOneWritesNothingAndNamesThePlace) {
  const Bad& b = GetParam();
  TempDir dir;
  spit(dir / b.file, b.text);
  spit(dir / "side.bin", std::string(12, '\0'));
  std::set<std::string> before = dir.files();
  std::string where = std::string(b.file) + ":" + b.where + ": error: ";
  std::vector<std::string> runs = {"fmt " + std::string(b.file) + " -o out.yaml"};
  if (!b.slow) {
    runs.push_back("fmt " + std::string(b.file) + " -o out.json --inline-limit 0");
    runs.push_back("verify " + std::string(b.file));
    runs.push_back("inspect " + std::string(b.file));
  }
  for (const std::string& args : runs) {
    SCOPED_TRACE(args);
    Result r = amanda(dir, args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    // The first line names the place; nothing from a sanitizer follows.
    EXPECT_EQ(r.err.substr(0, where.size()), where) << r.err.substr(0, 400);
    EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err.substr(0, 400);
    EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
    EXPECT_EQ(dir.files(), before) << "no output and no temporary file may be left";
  }
}

std::string bad_name(const ::testing::TestParamInfo<Bad>& info) {
  std::string s = info.param.name;
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Cases, ToolBadInput, ::testing::ValuesIn(bad_inputs()), bad_name);

TEST(ToolErrors, AFailedRunLeavesAnExistingOutputUntouched) {
  TempDir dir;
  spit(dir / "bad.yaml", "graph:\n  ops: [\n");
  spit(dir / "out.yaml", "previous content\n");
  spit(dir / "out.yaml.data", "previous side file\n");
  Result r = amanda(dir, "fmt bad.yaml -o out.yaml --inline-limit 0");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(slurp(dir / "out.yaml"), "previous content\n");
  EXPECT_EQ(slurp(dir / "out.yaml.data"), "previous side file\n");
  EXPECT_EQ(dir.files(), (std::set<std::string>{"bad.yaml", "out.yaml", "out.yaml.data"}));
}

TEST(ToolErrors, EveryUnresolvedEdgeIsListed) {
  TempDir dir;
  spit(dir / "in.yaml",
       "graph:\n  ops: [{name: a, output_ports: [o]}]\n  edges:\n"
       "    - {output_port: {op: a, port: o}, input_port: {op: b, port: i}}\n"
       "    - {output_port: {op: c, port: o}, input_port: {op: a, port: o}}\n");
  Result r = amanda(dir, "fmt in.yaml -o out.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("in.yaml:4:51: error: edge refers to op 'b'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(and 2 more problems)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in.yaml:5:21: error: edge refers to op 'c'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in.yaml:5:51: error: op 'a' has no input port 'o'"), std::string::npos) << r.err;
  EXPECT_EQ(dir.files(), std::set<std::string>{"in.yaml"});
}

TEST(ToolErrors, UnreadableInputAndUnwritableOutput) {
  TempDir dir;
  Result missing = amanda(dir, "fmt missing.yaml -o out.yaml");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("missing.yaml: error: cannot open"), std::string::npos) << missing.err;
  fs::create_directory(dir / "folder");
  Result folder = amanda(dir, "fmt folder");
  EXPECT_EQ(folder.code, 1);
  EXPECT_NE(folder.err.find("is a directory"), std::string::npos) << folder.err;
  spit(dir / "ok.yaml", "op: {name: a}\n");
  Result nowhere = amanda(dir, "fmt ok.yaml -o no/such/folder/out.yaml");
  EXPECT_EQ(nowhere.code, 1);
  EXPECT_NE(nowhere.err.find("no/such/folder/out.yaml: error: cannot create"), std::string::npos) << nowhere.err;
  EXPECT_EQ(dir.files(), (std::set<std::string>{"folder", "ok.yaml"}));
}

}  // namespace

// A bad .pt file is the libtorch-free reader's refusal (it is not a zip archive), with or without
// the PyTorch plugin: the file named, exit 1, nothing written.
TEST(ToolTorch, ABadOrUnsupportedPtFileIsAClearError) {
  TempDir dir;
  spit(dir / "bad.pt", "this is not a TorchScript archive\n");
  Result r = amanda(dir, "convert bad.pt --input-shape 1,3 -o out.onnx");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(dir.files(), (std::set<std::string>{"bad.pt"}));
  EXPECT_NE(r.err.find("bad.pt: zip: byte "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a zip archive"), std::string::npos) << r.err;
  // A name is a symbolic dimension now (--input-shape N,3,224,224); a negative or fractional
  // size, or an empty one, is a usage error.
  for (const char* bad : {"1,-3", "1,3.5", "1,,3"}) {
    Result s = amanda(dir, std::string("convert bad.pt --input-shape ") + bad + " -o out.onnx");
    EXPECT_EQ(s.code, 2) << bad << ": " << s.err;
    EXPECT_NE(s.err.find(std::string("--input-shape '") + bad + "'"), std::string::npos) << s.err;
  }
}
