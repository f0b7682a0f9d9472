// The subgraph matcher (amanda/passes/matcher.h) and the pass registry: predicates, counts,
// optional and star inputs, boundary (non-terminal) nodes, DAG sharing, the debug answer, no
// mutation while matching, rollback of a failed replacement, exclusion, and linear matching.
#include <gtest/gtest.h>

#include <chrono>

#include "amanda/ir/conventions.h"
#include "amanda/ir/value.h"
#include "amanda/passes/matcher.h"
#include "amanda/passes/pattern_text.h"
#include "amanda/support/diagnostics.h"
#include "amanda/passes/registry.h"
#include "amanda/text/document.h"

namespace amanda::passes {
namespace {

using ir::Graph;
using ir::OpId;
using ir::PortId;

std::string yaml(const text::Document& d) { return text::to_text(d, text::Format::Yaml); }

// A small graph builder: ops of one output "y", inputs "a", "b", ... wired from values.
struct Builder {
  text::Document doc;
  Graph& g = doc.graph;
  Builder() {
    g.set_graph_namespace(g.root(), g.sym("amanda/onnx/17"));
    g.set_name(g.root(), g.sym("g"));
  }
  PortId input(std::string_view name) { return g.add_input(g.root(), g.sym(name)); }
  PortId constant(std::string_view name, float v) {
    OpId c = g.create_op(g.root(), "Constant", name, {}, {"output"});
    std::string bytes(4, '\0');
    std::memcpy(bytes.data(), &v, 4);
    g.set_attr(c, g.sym("value"), ir::Value(ir::Tensor::from_bytes(ir::DType::Float32, {}, bytes)));
    PortId out = g.output(c, 0);
    g.set_port_role(out, ir::PortRole::Constant);
    return out;
  }
  PortId op(std::string_view type, std::string_view name, std::initializer_list<PortId> ins) {
    OpId o = g.create_op(g.root(), type, name);
    char n = 'a';
    for (PortId p : ins) {
      PortId in = g.add_input(o, g.sym(std::string(1, n++)));
      if (p) g.connect(p, in);
    }
    PortId out = g.add_output(o, g.sym("y"));
    g.set_attr(out, g.sym("@value"), ir::Value(std::string(name)));
    return out;
  }
  void output(std::string_view name, PortId v) { g.connect(v, g.add_output(g.root(), g.sym(name))); }
};

TEST(Matcher, TypesInputsAndUses) {
  Builder b;
  PortId x = b.input("x");
  PortId r = b.op("Relu", "r", {x});
  PortId e = b.op("Exp", "e", {r});
  b.output("out", e);
  OpId exp = b.g.port_op(e);
  Pat relu = op("Relu|Sigmoid").in(any()).uses(1);
  Match m = match(b.g, exp, op("Exp").in(relu));
  ASSERT_TRUE(m) << m.why;
  EXPECT_EQ(m.ops.size(), 2u);
  EXPECT_EQ(m.value(relu), r);
  EXPECT_EQ(m.op(b.g, relu), b.g.port_op(r));
  EXPECT_TRUE(m.closed(b.g));
  // a type that is not there: the answer names the op and the pattern node
  Match no = match(b.g, exp, op("Exp").in(op("Tanh")));
  ASSERT_FALSE(no);
  EXPECT_NE(no.why.find("'r' (Relu) is not a"), std::string::npos) << no.why;
  EXPECT_NE(no.why.find("Tanh"), std::string::npos) << no.why;
  // a use count that does not hold
  b.output("out2", r);
  Match two = match(b.g, exp, op("Exp").in(op("Relu").uses(1)));
  ASSERT_FALSE(two);
  EXPECT_NE(two.why.find("has 2 uses"), std::string::npos) << two.why;
  EXPECT_TRUE(match(b.g, exp, op("Exp").in(op("Relu").max_uses(2))));
  EXPECT_FALSE(match(b.g, exp, op("Exp").in(op("Relu").not_scope_output())));
}

TEST(Matcher, DagSharingOptionalStarAndBoundary) {
  Builder b;
  PortId x = b.input("x"), y = b.input("y");
  PortId mean = b.op("ReduceMean", "mean", {x});
  PortId d = b.op("Sub", "d", {x, mean});
  PortId d2 = b.op("Sub", "d2", {y, mean});  // the other operand is not the same x
  b.output("o1", d);
  b.output("o2", d2);
  Pat xv = any();
  Pat pat = op("Sub").in(xv).in(op("ReduceMean").in(xv));
  Match ok = match(b.g, b.g.port_op(d), pat);
  ASSERT_TRUE(ok) << ok.why;
  EXPECT_EQ(ok.value(xv), x);
  Match bad = match(b.g, b.g.port_op(d2), pat);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.why.find("is shared"), std::string::npos) << bad.why;

  // star and optional inputs
  PortId c1 = b.constant("c1", 1), c2 = b.constant("c2", 2);
  PortId cat = b.op("Concat", "cat", {c1, c2, x});
  b.output("o3", cat);
  Pat cs = constant();
  Match st = match(b.g, b.g.port_op(cat), op("Concat").star(cs).in(scope_input()).exact());
  ASSERT_TRUE(st) << st.why;
  EXPECT_EQ(st.values(cs).size(), 2u);
  EXPECT_FALSE(match(b.g, b.g.port_op(cat), op("Concat").star(cs).exact()));  // x is left over
  EXPECT_TRUE(match(b.g, b.g.port_op(cat), op("Concat").in(constant()).opt(constant()).opt(any()).opt(any())));
  // an omitted optional input
  PortId clip = b.op("Clip", "clip", {x, PortId(), c2});
  b.output("o4", clip);
  EXPECT_TRUE(match(b.g, b.g.port_op(clip), op("Clip").in(any()).opt(constant()).opt(constant()).exact()));
  Match need = match(b.g, b.g.port_op(clip), op("Clip").in(any()).in(constant()));
  ASSERT_FALSE(need);
  EXPECT_NE(need.why.find("omitted"), std::string::npos) << need.why;

  // a boundary node is checked but not part of the match, and its inputs are not examined
  Match bd = match(b.g, b.g.port_op(d), op("Sub").in(any()).in(op("ReduceMean").in(op("Tanh")).boundary()));
  ASSERT_TRUE(bd) << bd.why;
  EXPECT_EQ(bd.ops.size(), 1u);
}

TEST(Matcher, AttributesAndTypes) {
  Builder b;
  PortId x = b.input("x");
  b.g.set_port_type(x, b.g.types().tensor(ir::DType::Float32, {ir::Dim::known(2), ir::Dim::known(3)}));
  PortId t = b.op("Transpose", "t", {x});
  b.g.set_attr(b.g.port_op(t), b.g.sym("perm"), ir::Value(ir::Value::List{ir::Value(int64_t(1)), ir::Value(int64_t(0))}));
  b.output("o", t);
  OpId op_t = b.g.port_op(t);
  ir::Value perm(ir::Value::List{ir::Value(int64_t(1)), ir::Value(int64_t(0))});
  EXPECT_TRUE(match(b.g, op_t, op("Transpose").attr("perm", perm).in(any().rank(2).dtype(ir::DType::Float32).static_shape())));
  EXPECT_FALSE(match(b.g, op_t, op("Transpose").in(any().rank(3))));
  EXPECT_TRUE(match(b.g, op_t, op("Transpose").attr_or("axis", ir::Value(int64_t(0)), ir::Value(int64_t(0)))));
  Match m = match(b.g, op_t, op("Transpose").no_attr("perm"));
  ASSERT_FALSE(m);
  EXPECT_NE(m.why.find("no attribute perm"), std::string::npos) << m.why;
  Match w = match(b.g, op_t, op("Transpose").where("two dims", [](const Graph&, OpId) { return false; }));
  EXPECT_NE(w.why.find("two dims"), std::string::npos);
}

// The text form (amanda/passes/pattern_text.h) says what the C++ builders say: the same graphs
// match and fail alike, with the same debug answers.
Match text_match(const Graph& g, OpId root, std::string_view text) { return match(g, root, parse_pattern(text).root); }

TEST(PatternText, SameAnswersAsTheBuilders) {
  Builder b;
  PortId x = b.input("x"), y = b.input("y");
  PortId mean = b.op("ReduceMean", "mean", {x});
  PortId d = b.op("Sub", "d", {x, mean});
  PortId d2 = b.op("Sub", "d2", {y, mean});
  b.output("o1", d);
  b.output("o2", d2);
  const char* shared = "xv = any\nSub(xv, ReduceMean(xv))  # x twice: the same value\n";
  TextPattern tp = parse_pattern(shared);
  Match ok = match(b.g, b.g.port_op(d), tp.root);
  ASSERT_TRUE(ok) << ok.why;
  EXPECT_EQ(ok.value(tp.names.at("xv")), x);
  Match bad = text_match(b.g, b.g.port_op(d2), shared);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.why.find("is shared"), std::string::npos) << bad.why;
  // uses, star, optional, exact, boundary
  EXPECT_FALSE(text_match(b.g, b.g.port_op(d), "Sub(any, ReduceMean(any) [uses=1])"));  // mean has 2 uses
  EXPECT_TRUE(text_match(b.g, b.g.port_op(d), "Sub(any, ReduceMean(any) [uses=2])"));
  PortId c1 = b.constant("c1", 1), c2 = b.constant("c2", 2);
  PortId cat = b.op("Concat", "cat", {c1, c2, x});
  b.output("o3", cat);
  EXPECT_TRUE(text_match(b.g, b.g.port_op(cat), "Concat(const*, input) [exact]"));
  EXPECT_FALSE(text_match(b.g, b.g.port_op(cat), "Concat(const*) [exact]"));
  EXPECT_TRUE(text_match(b.g, b.g.port_op(cat), "Concat(const, const?, any?, any?)"));
  PortId clip = b.op("Clip", "clip", {x, PortId(), c2});
  b.output("o4", clip);
  EXPECT_TRUE(text_match(b.g, b.g.port_op(clip), "Clip(any, const?, const?) [exact]"));
  Match need = text_match(b.g, b.g.port_op(clip), "Clip(any, const)");
  ASSERT_FALSE(need);
  EXPECT_NE(need.why.find("omitted"), std::string::npos) << need.why;
  Match bd = text_match(b.g, b.g.port_op(d), "Sub(any, ReduceMean(Tanh()) [boundary])");
  ASSERT_TRUE(bd) << bd.why;
  EXPECT_EQ(bd.ops.size(), 1u);
  EXPECT_FALSE(text_match(b.g, b.g.port_op(d), "Sub(any, Tanh|Exp(any))"));
  EXPECT_TRUE(text_match(b.g, b.g.port_op(d), "Sub(any, Tanh|ReduceMean(any))"));
}

TEST(PatternText, AttributesTypesAndTheLayerNormPattern) {
  Builder b;
  PortId x = b.input("x");
  b.g.set_port_type(x, b.g.types().tensor(ir::DType::Float32, {ir::Dim::known(2), ir::Dim::known(3)}));
  PortId t = b.op("Transpose", "t", {x});
  b.g.set_attr(b.g.port_op(t), b.g.sym("perm"), ir::Value(ir::Value::List{ir::Value(int64_t(1)), ir::Value(int64_t(0))}));
  b.output("o", t);
  OpId op_t = b.g.port_op(t);
  EXPECT_TRUE(text_match(b.g, op_t, "Transpose(any [rank=2, dtype=float32, static_shape]) [perm=[1, 0]]"));
  EXPECT_FALSE(text_match(b.g, op_t, "Transpose(any) [perm=[0, 1]]"));
  EXPECT_FALSE(text_match(b.g, op_t, "Transpose(any [rank=3])"));
  EXPECT_TRUE(text_match(b.g, op_t, "Transpose(any) [axis=0 default 0]"));
  EXPECT_FALSE(text_match(b.g, op_t, "Transpose(any) [axis=1 default 0]"));
  Match m = text_match(b.g, op_t, "Transpose() [!perm]");
  ASSERT_FALSE(m);
  EXPECT_NE(m.why.find("no attribute perm"), std::string::npos) << m.why;

  // x - mean(x), its square's mean, + eps, sqrt, divide: the pattern of fuse_layer_norm
  Builder l;
  PortId in = l.input("x");
  PortId mu = l.op("ReduceMean", "mu", {in});
  PortId dd = l.op("Sub", "dd", {in, mu});
  PortId sq = l.op("Pow", "sq", {dd, l.constant("two", 2)});
  PortId var = l.op("ReduceMean", "var", {sq});
  PortId add = l.op("Add", "add", {var, l.constant("eps", 1e-5f)});
  PortId sd = l.op("Sqrt", "sd", {add});
  PortId div = l.op("Div", "div", {dd, sd});
  l.output("y", div);
  const char* ln = R"(# LayerNormalization written out
x = any
mean = ReduceMean(x, const?) [uses=1]
d = Sub(x, mean) [uses=2]
var = ReduceMean(Pow(d, const) [uses=1], const?) [uses=1]
Div(d, Sqrt(Add(var, const) [uses=1])
       [uses=1])
)";
  Match lm = text_match(l.g, l.g.port_op(div), ln);
  ASSERT_TRUE(lm) << lm.why;
  EXPECT_EQ(lm.ops.size(), 7u);
  EXPECT_TRUE(lm.closed(l.g));
  l.output("y2", mu);  // the mean now has another reader: the answer names it
  Match no = text_match(l.g, l.g.port_op(div), ln);
  ASSERT_FALSE(no);
  EXPECT_NE(no.why.find("mu:output y has 2 uses; pattern node 'mean' wants 1"), std::string::npos) << no.why;
}

TEST(PatternText, MalformedTextIsRefusedWithLineAndColumn) {
  auto where = [](std::string_view text) -> std::string {
    try {
      parse_pattern(text, "p.pat");
    } catch (const ParseError& e) {
      return e.loc().str() + ": " + e.message();
    }
    return "accepted";
  };
  EXPECT_EQ(where("x = any\nSub(x, y)"), "p.pat:2:8: 'y' is not bound (a name is bound by an earlier line 'NAME = ...'), nor any, const, input or TYPE(...)");
  EXPECT_EQ(where("Sub(any, any"), "p.pat:1:13: expected ')' to close the inputs, found the end");
  EXPECT_EQ(where("x = any\nx = const\nRelu(x)"), "p.pat:2:1: 'x' is bound twice");
  EXPECT_EQ(where("Relu(any) [uses=-1]"), "p.pat:1:12: uses must not be negative");
  EXPECT_EQ(where("Relu(any) [dtype=float99]"), "p.pat:1:12: unknown element type 'float99'");
  EXPECT_EQ(where("Relu(any) [frobnicate]"), "p.pat:1:12: unknown predicate 'frobnicate' (a flag is static_shape, not_output, exact or boundary; else KEY=VALUE)");
  EXPECT_EQ(where("Relu(any) [perm=[1, 2]"), "p.pat:1:23: expected ']' to close the predicates, found the end");
  EXPECT_EQ(where("  # only a comment\n"), "p.pat:2:1: empty pattern");
  EXPECT_EQ(where("Relu(any) Exp(any)"), "p.pat:1:11: unexpected 'E' after the node");
  EXPECT_EQ(where("any = Relu(any)"), "p.pat:1:1: 'any' is a keyword, not a name to bind");
  EXPECT_EQ(where("Relu(any) [axis='abc]"), "p.pat:1:22: unterminated string");
  EXPECT_EQ(where("Relu(any) [axis=99999999999999999999]"), "p.pat:1:17: integer '99999999999999999999' out of range");
  // nesting is bounded: an error, not a stack overflow
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "Relu(";
  EXPECT_NE(where(deep).find("nested deeper than 200"), std::string::npos);
  std::string deep_list = "Relu(any) [a=";
  for (int i = 0; i < 5000; ++i) deep_list += "[";
  EXPECT_NE(where(deep_list).find("nested deeper than 200"), std::string::npos);
}

TEST(Matcher, MatchingNeverMutatesAndAFailedReplacementRollsBack) {
  Builder b;
  PortId x = b.input("x");
  PortId r = b.op("Relu", "r", {x});
  PortId e = b.op("Exp", "e", {r});
  b.output("out", e);
  std::string before = yaml(b.doc);
  Pat pat = op("Exp").in(op("Relu").in(any()));
  for (int i = 0; i < 3; ++i) (void)match_all(b.g, b.g.root(), pat);
  EXPECT_EQ(yaml(b.doc), before);
  // a replacement that changes things, then gives up: the graph is as it was
  auto res = replace_all(b.g, b.g.root(), pat, [](const Match& m, ir::Rewriter& rw) {
    rw.set_attr(m.root, "touched", ir::Value(int64_t(1)));
    rw.set_insertion_point_before(m.root);
    rw.create_op("Neg", "junk");
    return false;
  });
  EXPECT_EQ(res.rewrites, 0u);
  EXPECT_EQ(yaml(b.doc), before);
  // and one that throws half-way
  res = replace_all(b.g, b.g.root(), pat, [](const Match& m, ir::Rewriter& rw) -> bool {
    rw.set_attr(m.root, "touched", ir::Value(int64_t(1)));
    throw Error("half-way");
  });
  EXPECT_EQ(res.errors.size(), 1u);
  EXPECT_EQ(yaml(b.doc), before);
}

TEST(Registry, NamesDocsUnknownAndExclusion) {
  const PassRegistry& reg = PassRegistry::builtin();
  for (const char* n : {"eliminate_deadend", "eliminate_common_subexpression", "constant_folding", "shape_folding",
                        "eliminate_identity", "fuse_bn_into_conv", "fuse_matmul_add_bias_into_gemm", "fuse_layer_norm",
                        "eliminate_if_with_const_cond", "fuse_consecutive_transposes", "fuse_pad_into_conv"}) {
    const PassInfo* p = reg.find(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_FALSE(p->doc.empty());
  }
  Builder b;
  PortId x = b.input("x");
  PortId i1 = b.op("Identity", "keep_me", {x});
  PortId i2 = b.op("Identity", "drop_me", {i1});
  b.output("out", b.op("Relu", "r", {i2}));
  try {
    run_pipeline(b.g, {"no_such_pass"});
    FAIL() << "an unknown pass was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("eliminate_identity"), std::string::npos);
  }
  PassOptions o;
  o.exclude = {"keep_*"};
  auto r = run_pipeline(b.g, {"eliminate_identity"}, o);
  EXPECT_EQ(r.ops_before, 3u);
  EXPECT_EQ(r.ops_after, 2u);
  EXPECT_TRUE(b.g.find_op(b.g.root(), "keep_me"));
  EXPECT_FALSE(b.g.find_op(b.g.root(), "drop_me"));
}

TEST(Registry, ExclusionRollsBackFusionsThatReachAnExcludedOp) {
  Builder b;
  PortId x = b.input("x");
  PortId t1 = b.op("Transpose", "first", {x});
  PortId t2 = b.op("Transpose", "second", {t1});
  ir::Value perm(ir::Value::List{ir::Value(int64_t(1)), ir::Value(int64_t(0))});
  b.g.set_attr(b.g.port_op(t1), b.g.sym("perm"), perm);
  b.g.set_attr(b.g.port_op(t2), b.g.sym("perm"), perm);
  b.output("out", b.op("Relu", "r", {t2}));
  std::string before = yaml(b.doc);
  PassOptions o;
  o.exclude = {"first"};  // the pattern is rooted at "second"; the rewrite would erase "first"
  run_pipeline(b.g, {"fuse_consecutive_transposes"}, o);
  EXPECT_EQ(yaml(b.doc), before);
  run_pipeline(b.g, {"fuse_consecutive_transposes", "eliminate_nop_transpose"});
  EXPECT_EQ(count_ops(b.g), 1u);  // the Relu: the two transposes cancel
}

// Matching every op of a chain is linear: 8x the ops take about 8x the time (not 64x).
TEST(Matcher, LinearInTheGraph) {
  auto time_for = [](size_t n) {
    Builder b;
    PortId v = b.input("x");
    for (size_t i = 0; i < n; ++i) v = b.op(i % 2 ? "Exp" : "Relu", "", {v});
    b.output("out", v);
    Pat pat = op("Exp").in(op("Relu").in(any()).uses(1));
    auto t0 = std::chrono::steady_clock::now();
    size_t found = match_all(b.g, b.g.root(), pat).size();
    EXPECT_EQ(found, n / 2);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  double small = time_for(20000), big = time_for(160000);
  EXPECT_LT(big / small, 24.0) << small << " s for 20k ops, " << big << " s for 160k";
}

}  // namespace
}  // namespace amanda::passes
