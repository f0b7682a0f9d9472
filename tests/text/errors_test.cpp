// Bad input: every case gives one clear ParseError naming file:line:column, never a crash, a hang
// or an out-of-memory. (The sanitizer build runs these too.)
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "amanda/ir/verify.h"
#include "text_test_util.h"

namespace amanda::text {
namespace {

using namespace testing;

struct Case {
  const char* name;
  Format format;
  std::string text;
  uint32_t line, column;
  const char* message;  // a part of the message
};

void check(const Case& c) {
  SCOPED_TRACE(c.name);
  ParseError e = parse_error(c.text, c.format);
  std::string file = c.format == Format::Yaml ? "in.yaml" : "in.json";
  EXPECT_EQ(e.loc().file, file);
  EXPECT_EQ(e.loc().line, c.line) << e.what();
  EXPECT_EQ(e.loc().column, c.column) << e.what();
  EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  std::string prefix = file + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": error: ";
  EXPECT_EQ(std::string(e.what()).substr(0, prefix.size()), prefix);
}

const Case kCases[] = {
    // ---- malformed text
    {"malformed YAML", Format::Yaml, "graph:\n  ops: [\n", 3, 1, "malformed YAML: while parsing a flow node"},
    {"malformed YAML indentation", Format::Yaml, "graph:\n  ops:\n    - name: a\n   bad: 1\n", 4, 4, "malformed YAML"},
    {"malformed YAML tab", Format::Yaml, "graph:\n\tops: []\n", 2, 1, "malformed YAML"},
    {"YAML control character", Format::Yaml, "op:\n  name: \"a\xc2\x80\"\n", 2, 11, "control characters are not allowed"},
    {"YAML bad UTF-8", Format::Yaml, "op:\n  name: a\xff\n", 2, 10, "invalid leading UTF-8 octet"},
    {"malformed JSON", Format::Json, R"({"graph": {"ops": [}})", 1, 20, "malformed JSON: Invalid value"},
    {"malformed JSON missing brace", Format::Json, "{\"graph\": {\"ops\": []}\n", 2, 1, "malformed JSON"},
    {"JSON trailing comma", Format::Json, "{\"graph\": {\"ops\": [],}}", 1, 22, "malformed JSON"},
    {"JSON bad UTF-8", Format::Json, "{\"op\": {\"name\": \"a\xff\"}}", 1, 19, "malformed JSON: Invalid encoding"},
    {"JSON lone surrogate", Format::Json, R"({"op": {"name": "\ud800"}})", 1, 18, "malformed JSON"},
    // RapidJSON takes an unpaired low surrogate; the reader refuses it (found by json_fuzz).
    {"JSON lone low surrogate", Format::Json, R"({"op": {"name": "\udc00"}})", 1, 17, "unpaired UTF-16 surrogate"},
    {"JSON lone low surrogate in a key", Format::Json, R"({"op": {"attrs": {"k\udebb": 1}}})", 1, 19, "unpaired UTF-16 surrogate"},
    {"JSON two documents", Format::Json, R"({"op": {}} {"op": {}})", 1, 12, "malformed JSON"},
    // Found by json_fuzz: RapidJSON read a cut-off UTF-8 sequence past the end of the buffer.
    {"JSON ending inside a UTF-8 sequence", Format::Json, "{\"op\": {\"name\": \"\xf0", 1, 18, "Invalid encoding"},
    // A NUL would end RapidJSON's input early and hide what follows it.
    {"JSON NUL after the document", Format::Json, std::string("{\"op\": {}}\0{\"x\"", 14), 1, 11, "binary data"},

    // ---- the document's shape
    {"empty document", Format::Yaml, "", 1, 1, "empty document"},
    {"comments only", Format::Yaml, "# nothing here\n", 2, 1, "empty document"},
    {"empty JSON", Format::Json, "", 1, 1, "malformed JSON: The document is empty"},
    {"empty mapping", Format::Yaml, "{}\n", 1, 2, "empty mapping"},
    {"top-level list", Format::Yaml, "- graph\n", 1, 1, "expected a mapping with one key"},
    {"top-level scalar", Format::Json, "42", 1, 1, "expected a mapping with one key"},
    {"unknown top-level key", Format::Yaml, "model:\n  ops: []\n", 1, 1, "unknown top-level key 'model'"},
    {"two top-level keys", Format::Yaml, "graph:\n  ops: []\nop:\n  name: x\n", 3, 1, "exactly one top-level key"},
    {"two YAML documents", Format::Yaml, "op: {name: a}\n---\nop: {name: b}\n", 2, 1, "more than one YAML document"},
    {"unknown key in graph", Format::Yaml, "graph:\n  ops: []\n  nodes: []\n", 3, 3, "unknown key 'nodes' in a graph"},
    {"unknown key in op", Format::Yaml, "op:\n  name: a\n  inputs: [x]\n", 3, 3, "unknown key 'inputs' in an op"},
    {"unknown key in port", Format::Yaml, "op: {input_ports: [{name: a, shape: 1}]}\n", 1, 30, "unknown key 'shape' in a port"},
    {"unknown key in edge", Format::Yaml, "edge: {output_port: {op: a, port: b}, input_port: {op: c, port: d}, kind: x}\n", 1,
     69, "unknown key 'kind' in an edge"},
    {"unknown key in endpoint", Format::Yaml, "edge: {output_port: {op: a, name: b}, input_port: {op: c, port: d}}\n", 1, 29,
     "unknown key 'name' in an edge endpoint"},
    {"duplicate key", Format::Yaml, "graph:\n  ops: []\n  ops: []\n", 3, 3, "duplicate key 'ops'"},
    {"duplicate key in JSON", Format::Json, "{\"op\": {\"name\": \"a\",\n \"name\": \"b\"}}", 2, 2, "duplicate key 'name'"},
    {"duplicate attribute", Format::Yaml, "op:\n  attrs:\n    a: 1\n    a: 2\n", 4, 5, "duplicate key 'a'"},
    {"duplicate key in a map value", Format::Yaml, "op: {attrs: {m: {k: 1, k: 2}}}\n", 1, 24, "duplicate key 'k'"},
    {"ops is not a list", Format::Yaml, "graph:\n  ops: {a: 1}\n", 2, 8, "expected a list of ops, found a mapping"},
    {"op is not a mapping", Format::Yaml, "graph:\n  ops: [a]\n", 2, 9, "expected an op (a mapping), found a scalar"},
    {"name is not a scalar", Format::Yaml, "op: {name: [a]}\n", 1, 12, "expected a name (a string), found a sequence"},
    {"edge without input_port", Format::Yaml, "edge: {output_port: {op: a, port: b}}\n", 1, 7, "edge has no input_port"},
    {"endpoint without port", Format::Yaml, "edge: {output_port: {op: a}, input_port: {op: c, port: d}}\n", 1, 21,
     "edge endpoint has no 'port'"},
    {"mapping as a key", Format::Yaml, "op: {attrs: {? {a: 1} : 2}}\n", 1, 16, "expected a key, found a mapping"},

    // ---- edges that do not resolve
    {"edge to a missing op", Format::Yaml,
     "graph:\n  ops:\n    - {name: a, output_ports: [o]}\n  edges:\n"
     "    - output_port: {op: a, port: o}\n      input_port: {op: b, port: i}\n",
     6, 19, "edge refers to op 'b', which is not in the top-level graph"},
    {"edge to a missing port", Format::Yaml,
     "graph:\n  ops:\n    - {name: a, output_ports: [o]}\n    - {name: b, input_ports: [i]}\n  edges:\n"
     "    - output_port: {op: a, port: o}\n      input_port: {op: b, port: j}\n",
     7, 19, "op 'b' has no input port 'j'"},
    {"edge from an input port", Format::Yaml,
     "graph:\n  ops:\n    - {name: a, input_ports: [o]}\n    - {name: b, input_ports: [i]}\n  edges:\n"
     "    - output_port: {op: a, port: o}\n      input_port: {op: b, port: i}\n",
     6, 20, "op 'a' has no output port 'o' ('o' is one of its input ports; it can only be an edge's input_port)"},
    {"boundary port used the wrong way", Format::Yaml,
     "op:\n  name: h\n  output_ports: [out]\n  ops: [{name: a, input_ports: [i]}]\n"
     "  edges: [{output_port: {op: h, port: out}, input_port: {op: a, port: i}}]\n",
     5, 25, "op 'h' has no input port 'out' ('out' is one of its output ports; inside its body its output ports receive"},
    {"two producers into one input port", Format::Yaml,
     "graph:\n  ops:\n    - {name: a, output_ports: [o]}\n    - {name: c, output_ports: [o]}\n"
     "    - {name: b, input_ports: [i]}\n  edges:\n"
     "    - output_port: {op: a, port: o}\n      input_port: {op: b, port: i}\n"
     "    - output_port: {op: c, port: o}\n      input_port: {op: b, port: i}\n",
     10, 19, "input port 'b:input i' already receives a value from 'a:o' (edge at line 7, column 7)"},
    {"two producers into a graph output", Format::Yaml,
     "graph:\n  name: g\n  output_ports: [y]\n  ops: [{name: a, output_ports: [o, p]}]\n  edges:\n"
     "    - {output_port: {op: a, port: o}, input_port: {op: g, port: y}}\n"
     "    - {output_port: {op: a, port: p}, input_port: {op: g, port: y}}\n",
     7, 51, "already receives a value"},
    {"control to data", Format::Yaml,
     "graph:\n  ops: [{name: a}, {name: b, input_ports: [i]}]\n  edges:\n"
     "    - {output_port: {op: a, port: ^control}, input_port: {op: b, port: i}}\n",
     4, 7, "edge joins a control port (^control) to a data port"},
    {"duplicate op names in one scope", Format::Yaml, "graph:\n  ops:\n    - name: a\n    - name: b\n    - name: a\n", 5, 13,
     "duplicate op name 'a' in the top-level graph (first at line 3, column 13)"},
    {"duplicate op names in a body", Format::Yaml, "op:\n  name: h\n  ops: [{name: a}, {attrs: {name: a}}]\n", 3, 35,
     "duplicate op name 'a' in the top-level op"},
    {"duplicate op names in a nested body", Format::Yaml,
     "graph:\n  ops:\n    - name: h\n      ops: [{name: x}, {name: x}]\n", 4, 31, "duplicate op name 'x' in the body of 'h'"},
    {"duplicate port names", Format::Yaml, "op:\n  input_ports: [a, b, a]\n", 2, 23, "duplicate input port name 'a'"},
    {"edge into a nested body", Format::Yaml,
     "graph:\n  ops:\n    - {name: a, output_ports: [o]}\n    - name: h\n      ops: [{name: b, input_ports: [i]}]\n"
     "  edges:\n    - output_port: {op: a, port: o}\n      input_port: {op: b, port: i}\n",
     8, 19, "'h/b' lies inside another op's body, and an edge may enter a body only through that op's ports"},
    {"edge out of a nested body", Format::Yaml,
     "graph:\n  ops:\n    - {name: a, output_ports: [o]}\n    - name: h\n      ops: [{name: b, input_ports: [i]}]\n"
     "      edges:\n        - output_port: {op: a, port: o}\n          input_port: {op: b, port: i}\n",
     7, 24, "'a' lies outside the body of 'h', and an edge may leave a body only through its owner's ports"},
    {"edge out of two bodies", Format::Yaml,
     "op:\n  name: top\n  input_ports: [x]\n  ops:\n    - name: h\n      ops:\n        - name: k\n"
     "          ops: [{name: b, input_ports: [i]}]\n"
     "          edges: [{output_port: {op: top, port: x}, input_port: {op: b, port: i}}]\n",
     9, 33, "'top' lies outside the body of 'h/k'"},
    {"graph attribute sending to its owner", Format::Yaml,
     "op:\n  name: o\n  output_ports: [y]\n  attrs:\n    body: !graph\n      ops: [{name: a, output_ports: [z]}]\n"
     "      edges: [{output_port: {op: a, port: z}, input_port: {op: o, port: y}}]\n",
     7, 59, "may read its input ports but cannot send to it"},
};

TEST(ParseErrors, EachNamesFileLineColumn) {
  for (const Case& c : kCases) check(c);
}

TEST(ParseErrors, EveryUnresolvedEdgeIsReportedAtOnce) {
  Diagnostics diags;
  ParseError e = parse_error(R"(graph:
  ops: [{name: a, output_ports: [o]}, {name: b, input_ports: [i]}]
  edges:
    - {output_port: {op: a, port: o}, input_port: {op: b, port: i}}
    - {output_port: {op: x, port: o}, input_port: {op: b, port: i}}
    - {output_port: {op: a, port: q}, input_port: {op: y, port: i}}
)",
                             Format::Yaml, {}, &diags);
  EXPECT_EQ(e.loc().line, 5u);
  EXPECT_NE(e.message().find("(and 2 more problems)"), std::string::npos) << e.what();
  ASSERT_EQ(diags.error_count(), 2u) << diags.str();
  EXPECT_EQ(diags.items()[0].where, "in.yaml:6:21");
  EXPECT_EQ(diags.items()[1].where, "in.yaml:6:51");
}

// After a successful parse the verifier finds nothing: the reader already refused everything it
// would report, with a position.
TEST(ParseErrors, WhatParsesVerifies) {
  for (const fs::path& p : seed_examples()) {
    Diagnostics diags, problems;
    Document doc = read_file(p.string(), diags);
    if (doc.kind != Document::Kind::Edge) {
      EXPECT_TRUE(ir::verify(doc.graph, problems)) << p << problems.str();
    }
  }
}

// ------------------------------------------------------------------------- resource limits

std::string nested_ops_flow(int depth) {
  std::string s = "graph: {ops: [";
  for (int i = 0; i < depth; ++i) s += "{name: a, ops: [";
  for (int i = 0; i < depth; ++i) s += "]}";
  return s + "]}\n";
}

std::string nested_ops_json(int depth) {
  std::string s = R"({"graph": {"ops": [)";
  for (int i = 0; i < depth; ++i) s += R"({"name": "a", "ops": [)";
  for (int i = 0; i < depth; ++i) s += "]}";
  return s + "]}}";
}

std::string nested_list(int depth, Format f) {
  std::string s = f == Format::Yaml ? "op: {attrs: {x: " : R"({"op": {"attrs": {"x": )";
  s.append(depth, '[');
  s.append(depth, ']');
  return s + (f == Format::Yaml ? "}}\n" : "}}}");
}

std::string nested_ops_block(int depth) {
  std::string s = "graph:\n  ops:\n";
  std::string indent = "    ";
  for (int i = 0; i < depth; ++i) {
    s += indent + "- name: a\n" + indent + "  ops:\n";
    indent += "    ";
  }
  return s + indent + "- name: leaf\n";
}

std::string repeat(std::string_view s, int n) {
  std::string out;
  out.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

template <class F>
double seconds(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(Limits, HundredThousandLevelsOfOpsAndListsAreRefused) {
  const int kDeep = 100'000;
  struct Deep {
    const char* name;
    Format format;
    std::string text;
  } cases[] = {
      {"ops, YAML flow", Format::Yaml, nested_ops_flow(kDeep)},
      {"ops, JSON", Format::Json, nested_ops_json(kDeep)},
      {"lists, YAML", Format::Yaml, nested_list(kDeep, Format::Yaml)},
      {"lists, JSON", Format::Json, nested_list(kDeep, Format::Json)},
      {"maps, YAML", Format::Yaml, "op: {attrs: {x: " + repeat("{a: ", kDeep) + std::string(kDeep, '}') + "}}\n"},
      {"maps, JSON", Format::Json, R"({"op": {"attrs": {"x": )" + repeat(R"({"a": )", kDeep) + std::string(kDeep, '}') + "}}}"},
      {"ops, YAML block (2,000 levels)", Format::Yaml, nested_ops_block(2000)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    double t = seconds([&] {
      ParseError e = parse_error(c.text, c.format);
      EXPECT_NE(e.message().find("nesting deeper than 512 levels"), std::string::npos) << e.what();
      EXPECT_EQ(e.loc().line, c.format == Format::Yaml && c.text[6] == '\n' ? 513u : 1u);
      EXPECT_GT(e.loc().column, 256u);
    });
    EXPECT_LT(t, 5.0) << "refusing deep input must be quick";
  }
}

TEST(Limits, NestingJustInsideTheLimitIsRead) {
  // Levels: the top-level map, the graph, its ops list, then an op map and its ops list per op:
  // 3 + 2 * 254 = 511 levels are read, 255 ops deep (513 levels) are not.
  for (Format f : {Format::Yaml, Format::Json}) {
    SCOPED_TRACE(format_name(f));
    std::string ok = f == Format::Yaml ? nested_ops_flow(254) : nested_ops_json(254);
    Document doc = parse_as(ok, f);
    EXPECT_EQ(doc.graph.op_count(), 254u);
    std::string text = to_text(doc, f);
    EXPECT_TRUE(same_document(doc, parse_as(text, f)));
    std::string too_deep = f == Format::Yaml ? nested_ops_flow(255) : nested_ops_json(255);
    EXPECT_NE(parse_error(too_deep, f).message().find("nesting deeper than 512"), std::string::npos);
  }
  ReadOptions deeper;
  deeper.limits.max_depth = 1024;
  Diagnostics diags;
  EXPECT_NO_THROW(parse(nested_ops_flow(400), Format::Yaml, "deep.yaml", diags, deeper));
}

// "Billion laughs": nine levels of nine aliases each would replay 9^9 lists.
std::string alias_bomb() {
  std::string s = "op:\n  attrs:\n    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    s += "    a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) s += (k ? ", *a" : "*a") + std::to_string(i - 1);
    s += "]\n";
  }
  return s;
}

TEST(Limits, AliasBombIsRefusedAtTheAlias) {
  ReadOptions small;
  small.limits.max_alias_events = 20'000;
  double t = seconds([&] {
    ParseError e = parse_error(alias_bomb(), Format::Yaml, small);
    EXPECT_NE(e.message().find("YAML aliases expand to more than 20000 events in total (an alias bomb?)"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.loc().line, 7u);  // a4's second *a3 would pass the budget
  });
  EXPECT_LT(t, 2.0);
  // With the default budget the bomb still fails, at a later alias, in bounded time.
  ParseError e = parse_error(alias_bomb());
  EXPECT_NE(e.message().find("alias bomb"), std::string::npos) << e.what();
  EXPECT_EQ(e.loc().line, 9u);  // a6's first *a5
}

TEST(Limits, AliasesWithinTheBudgetAreExpanded) {
  Document doc = parse_yaml(R"(graph:
  ops:
    - {name: a, attrs: &common {k: [1, 2], s: x}, output_ports: [o]}
    - {name: b, attrs: *common, input_ports: [i]}
  edges:
    - {output_port: {op: a, port: o}, input_port: {op: b, port: i}}
)");
  const ir::Graph& g = doc.graph;
  EXPECT_EQ(g.attrs(g.find_op(g.root(), "a")).size(), 2u);
  EXPECT_EQ(g.attrs(g.find_op(g.root(), "b")).size(), 2u);
  EXPECT_EQ(*g.attr(g.find_op(g.root(), "b"), g.symbols().find("s")), ir::Value("x"));
}

TEST(Limits, RecursiveAndUnknownAliases) {
  EXPECT_NE(parse_error("op: {attrs: {a: &x [1, *x]}}\n").message().find("refers to its own anchor"), std::string::npos);
  ParseError e = parse_error("op: {attrs: {a: *nope}}\n");
  EXPECT_NE(e.message().find("alias *nope has no anchor"), std::string::npos) << e.what();
  // An anchor too large to replay costs nothing until an alias asks for it.
  ReadOptions small;
  small.limits.max_alias_events = 10;
  Diagnostics diags;
  std::string big = "op: {attrs: {a: &big [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]";
  EXPECT_NO_THROW(parse(big + "}}\n", Format::Yaml, "a.yaml", diags, small));
  try {
    parse(big + ", b: *big}}\n", Format::Yaml, "a.yaml", diags, small);
    ADD_FAILURE() << "expected an error";
  } catch (const ParseError& err) {
    EXPECT_NE(err.message().find("refers to an anchor of more than 10 events"), std::string::npos) << err.what();
  }
}

// ------------------------------------------------------------------------- not text at all

TEST(Binary, RandomBytesWithNulAreRefusedCleanly) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 200; ++round) {
    std::string bytes(1 + rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    bytes[rng() % bytes.size()] = '\0';
    for (Format f : {Format::Yaml, Format::Json}) {
      Diagnostics diags;
      try {
        parse(bytes, f, "bin", diags);
        ADD_FAILURE() << "random bytes parsed as " << format_name(f);
      } catch (const ParseError& e) {
        EXPECT_GE(e.loc().line, 1u);
        EXPECT_GE(e.loc().column, 1u);
      }
    }
  }
  ParseError y = parse_error(std::string("op:\n  name: a\0b\n", 16));
  EXPECT_EQ(y.loc().str(), "in.yaml:2:10");
  EXPECT_NE(y.message().find("binary data: the file contains a NUL byte"), std::string::npos);
  ParseError j = parse_error(std::string("{\"op\": {\"name\": \"a\0\"}}", 22), Format::Json);
  EXPECT_EQ(j.loc().str(), "in.json:1:19");
  EXPECT_NE(j.message().find("binary data"), std::string::npos) << j.what();
}

TEST(Files, EmptyMissingAndDirectory) {
  TempDir dir;
  spit(dir / "empty.yaml", "");
  Diagnostics diags;
  try {
    read_file((dir / "empty.yaml").string(), diags);
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.loc().line, 1u);
    EXPECT_NE(e.message().find("empty file"), std::string::npos);
  }
  EXPECT_THROW(read_file((dir / "missing.yaml").string(), diags), Error);
  EXPECT_THROW(read_file(dir.path().string(), diags), Error);
}

}  // namespace
}  // namespace amanda::text
