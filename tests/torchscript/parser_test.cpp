// The parser of TorchScript's serialized Python (frameworks/torchscript/ast.h): tree structure of
// excerpts of real archives' code/ files, to_source round trips, errors with their positions,
// robustness (prefixes, deep nesting), and every code file of real archives (the fuzz corpus's,
// and extracted archives under AMANDA_TEST_PT_DIR when it names a folder of them).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "frameworks/torchscript/ast.h"
#include "frameworks/torchscript/zip.h"
#include "test_files.h"

namespace amanda::torchscript {
namespace {

using K = Expr::Kind;
using S = Stmt::Kind;

// From swin_t's code/__torch__/torch/nn/modules/container.py and swin_transformer.py (traced).
constexpr const char* kTraced = R"(class Sequential(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  __annotations__["0"] = __torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d
  __annotations__["1"] = __torch__.torchvision.ops.misc.Permute
  def forward(self: __torch__.torch.nn.modules.container.Sequential,
    x: Tensor) -> Tensor:
    _0 = getattr(self, "0")
    _1 = getattr(self, "1")
    _2 = (_0).forward(x, )
    return (_1).forward(_2, )
class ShiftedWindowAttention(Module):
  __parameters__ = ["relative_position_bias_table", ]
  __buffers__ = ["relative_position_index", ]
  relative_position_bias_table : Tensor
  def forward(self: __torch__.torchvision.models.swin_transformer.ShiftedWindowAttention,
    argument_1: Tensor) -> Tensor:
    _7 = annotate(List[Optional[Tensor]], [relative_position_index])
    relative_position_bias0 = torch.view(relative_position_bias, [49, 49, -1])
    B = ops.prim.NumToTensor(torch.size(argument_1, 0))
    _24 = torch.floor_divide(pad_H, CONSTANTS.c0)
    _37 = torch.pow(torch.floor_divide(C, CONSTANTS.c1), -0.5)
    attn0 = torch.dropout(input0, 0., True)
    _46 = torch.slice(x5, 0, 0, 9223372036854775807)
    x = torch.layer_norm(x4, [96], weight, bias, 1.0000000000000001e-05)
    return torch.contiguous(_48)
)";

// From a scripted module (torch.jit.script, torch 1.13): control flow and annotations.
constexpr const char* kScripted = R"(class Sub(Module):
  __parameters__ = []
  __buffers__ = ["buf", ]
  buf : Tensor
  names : List[str]
  lin : __torch__.torch.nn.modules.linear.Linear
  k : Final[int] = 3
  def forward(self: __torch__.Sub,
    x: Tensor,
    y: Optional[Tensor]=None,
    scale: float=1.0000000000000001e-05) -> Tuple[Tensor, int]:
    if torch.__isnot__(y, None):
      y2 = unchecked_cast(Tensor, y)
      x0, y1 = torch.add(x, y2), y2
    else:
      if torch.gt(torch.dim(x), 3):
        x1 = torch.neg(x)
      else:
        x1 = torch.mul(x, 2.)
      x0, y1 = x1, y
    _6 = True
    while _6:
      _6, x2, _5 = _9, x3, _8
    for _14 in range(torch.len(names)):
      s = names[_14]
    d = {"a": x2, "b": torch.add(x2, 1)}
    d2 = {1: 2.5, 3: -100.}
    if torch.ge(n1, 0):
      pass
    else:
      _15 = torch.add("AssertionError: ", torch.format("n negative {}", n1))
      ops.prim.RaiseException(_15, "builtins.ValueError")
    if _19:
      e : Optional[int] = 1
    else:
      e = None
    lst = annotate(List[Tuple[int, Tensor]], [])
    _0 = uninitialized(Tuple[int, __torch__.Pair, str])
    a, b, = lst[i]
    return (_22, torch.add(_23, n2))
class Pair(NamedTuple):
  a : int
  b : Tensor
class Acc:
  v : int
  def __init__(self: __torch__.Acc,
    v: int) -> NoneType:
    self.v = v
    return None
def dropout(input: Tensor,
    p: float=0.5) -> Tensor:
  _0 = "dropout probability has to be between 0 and 1, but got {}"
  if torch.lt(p, 0.):
    _1 = True
  else:
    _1 = torch.gt(p, 1.)
  return torch.dropout(input, p, True)
)";

SourceFile parse(const std::string& text, const ParseLimits& limits = {}) { return parse_source(text, "t.py", limits); }

// The value of `_ = <expr>` (kept alive in `file`).
const Expr& value_of(SourceFile& file, const std::string& expr) {
  file = parse("_ = " + expr + "\n");
  return *file.statements.at(0)->value;
}

std::string round_trip(const std::string& expr) {
  SourceFile f;
  return to_source(value_of(f, expr));
}

// "line:column message" of the ParseError `text` throws, "" if it parses.
std::string error_of(const std::string& text, const ParseLimits& limits = {}) {
  try {
    parse(text, limits);
  } catch (const ParseError& e) {
    EXPECT_EQ(e.loc().file, "t.py");
    return std::to_string(e.loc().line) + ":" + std::to_string(e.loc().column) + " " + e.message();
  }
  return "";
}

TEST(TorchScriptParser, TracedClasses) {
  const SourceFile f = parse(kTraced);
  EXPECT_EQ(f.path, "t.py");
  ASSERT_EQ(f.classes.size(), 2u);
  const ClassDef& seq = f.classes[0];
  EXPECT_EQ(seq.name, "Sequential");
  EXPECT_EQ(seq.bases, std::vector<std::string>{"Module"});
  EXPECT_TRUE(seq.parameters.empty());
  EXPECT_TRUE(seq.buffers.empty());
  ASSERT_EQ(seq.attributes.size(), 4u);
  EXPECT_EQ(seq.attributes[0].name, "training");
  EXPECT_EQ(seq.attributes[0].type, "bool");
  EXPECT_EQ(seq.attributes[1].type, "Optional[bool]");
  EXPECT_EQ(seq.attributes[2].name, "0");
  EXPECT_EQ(seq.attributes[2].type, "__torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d");
  EXPECT_EQ(seq.attributes[2].pos.line, 6u);
  EXPECT_EQ(seq.attributes[2].pos.column, 3u);
  EXPECT_EQ(seq.attributes[3].name, "1");

  ASSERT_EQ(seq.methods.size(), 1u);
  const FunctionDef& fwd = seq.methods[0];
  EXPECT_EQ(fwd.name, "forward");
  EXPECT_EQ(fwd.pos.line, 8u);
  ASSERT_EQ(fwd.params.size(), 2u);
  EXPECT_EQ(fwd.params[0].name, "self");
  EXPECT_EQ(fwd.params[0].type, "__torch__.torch.nn.modules.container.Sequential");
  EXPECT_EQ(fwd.params[1].name, "x");
  EXPECT_EQ(fwd.params[1].type, "Tensor");
  EXPECT_EQ(fwd.params[1].pos.line, 9u);
  EXPECT_EQ(fwd.params[1].pos.column, 5u);
  EXPECT_EQ(fwd.return_type, "Tensor");
  ASSERT_EQ(fwd.body.size(), 4u);

  // _0 = getattr(self, "0")
  const Stmt& s0 = *fwd.body[0];
  EXPECT_EQ(s0.kind, S::Assign);
  EXPECT_EQ(s0.pos.line, 10u);
  EXPECT_EQ(s0.pos.column, 5u);
  ASSERT_EQ(s0.targets.size(), 1u);
  EXPECT_EQ(s0.targets[0]->kind, K::Name);
  EXPECT_EQ(s0.targets[0]->text, "_0");
  const Expr& call = *s0.value;
  EXPECT_EQ(call.kind, K::Call);
  EXPECT_EQ(call.pos.column, 10u);
  ASSERT_EQ(call.args.size(), 3u);
  EXPECT_EQ(call.args[0]->text, "getattr");
  EXPECT_EQ(call.args[2]->kind, K::Str);
  EXPECT_EQ(call.args[2]->text, "0");
  EXPECT_EQ(call.args[2]->pos.column, 24u);

  // _2 = (_0).forward(x, ): the parentheses leave no trace; the trailing comma adds no argument.
  const Expr& fwd_call = *fwd.body[2]->value;
  ASSERT_EQ(fwd_call.kind, K::Call);
  ASSERT_EQ(fwd_call.args.size(), 2u);
  EXPECT_EQ(fwd_call.args[0]->kind, K::Attribute);
  EXPECT_EQ(fwd_call.args[0]->text, "forward");
  EXPECT_EQ(fwd_call.args[0]->args[0]->text, "_0");
  EXPECT_EQ(to_source(fwd_call), "_0.forward(x)");
  EXPECT_EQ(fwd.body[3]->kind, S::Return);
  EXPECT_EQ(fwd.body[3]->value->kind, K::Call);

  const ClassDef& swa = f.classes[1];
  EXPECT_EQ(swa.parameters, std::vector<std::string>{"relative_position_bias_table"});
  EXPECT_EQ(swa.buffers, std::vector<std::string>{"relative_position_index"});
  const auto& body = swa.methods.at(0).body;
  ASSERT_EQ(body.size(), 9u);
  // annotate(List[Optional[Tensor]], [relative_position_index])
  const Expr& annotate = *body[0]->value;
  ASSERT_EQ(annotate.args.size(), 3u);
  EXPECT_EQ(annotate.args[1]->kind, K::Subscript);
  EXPECT_EQ(annotate.args[1]->args[1]->kind, K::Subscript);
  EXPECT_EQ(annotate.args[2]->kind, K::List);
  EXPECT_EQ(annotate.args[2]->args.size(), 1u);
  // [49, 49, -1]
  const Expr& shape = *body[1]->value->args[2];
  ASSERT_EQ(shape.kind, K::List);
  ASSERT_EQ(shape.args.size(), 3u);
  EXPECT_EQ(shape.args[0]->i, 49);
  EXPECT_EQ(shape.args[2]->kind, K::Unary);
  EXPECT_EQ(shape.args[2]->text, "-");
  EXPECT_EQ(shape.args[2]->args[0]->i, 1);
  // ops.prim.NumToTensor(...)
  EXPECT_EQ(to_source(*body[2]->value->args[0]), "ops.prim.NumToTensor");
  // CONSTANTS.c0
  const Expr& c0 = *body[3]->value->args[2];
  EXPECT_EQ(c0.kind, K::Attribute);
  EXPECT_EQ(c0.text, "c0");
  EXPECT_EQ(c0.args[0]->text, "CONSTANTS");
  // -0.5, 0., True, 9223372036854775807, 1.0000000000000001e-05
  EXPECT_EQ(body[4]->value->args[2]->args[0]->f, 0.5);
  EXPECT_EQ(body[5]->value->args[2]->kind, K::Float);
  EXPECT_EQ(body[5]->value->args[2]->f, 0.0);
  EXPECT_EQ(body[5]->value->args[3]->kind, K::True);
  EXPECT_EQ(body[6]->value->args[4]->i, INT64_MAX);
  EXPECT_EQ(body[7]->value->args[5]->f, 1.0000000000000001e-05);
}

TEST(TorchScriptParser, ScriptedControlFlow) {
  const SourceFile f = parse(kScripted);
  ASSERT_EQ(f.classes.size(), 3u);
  ASSERT_EQ(f.functions.size(), 1u);
  const ClassDef& sub = f.classes[0];
  ASSERT_EQ(sub.attributes.size(), 4u);
  EXPECT_EQ(sub.attributes[1].type, "List[str]");
  EXPECT_EQ(sub.attributes[3].name, "k");
  EXPECT_EQ(sub.attributes[3].type, "Final[int]");
  ASSERT_TRUE(sub.attributes[3].value);
  EXPECT_EQ(sub.attributes[3].value->i, 3);
  EXPECT_FALSE(sub.attributes[0].value);

  const FunctionDef& fwd = sub.methods.at(0);
  ASSERT_EQ(fwd.params.size(), 4u);
  EXPECT_EQ(fwd.params[2].type, "Optional[Tensor]");
  ASSERT_TRUE(fwd.params[2].default_value);
  EXPECT_EQ(fwd.params[2].default_value->kind, K::None);
  EXPECT_EQ(fwd.params[3].default_value->f, 1.0000000000000001e-05);
  EXPECT_FALSE(fwd.params[1].default_value);
  EXPECT_EQ(fwd.return_type, "Tuple[Tensor, int]");

  const auto& b = fwd.body;
  ASSERT_EQ(b.size(), 12u);
  // if ...: ... else: nested if/else
  const Stmt& if0 = *b[0];
  EXPECT_EQ(if0.kind, S::If);
  EXPECT_EQ(to_source(*if0.value), "torch.__isnot__(y, None)");
  ASSERT_EQ(if0.body.size(), 2u);
  // x0, y1 = torch.add(x, y2), y2
  const Stmt& tuple_assign = *if0.body[1];
  EXPECT_EQ(tuple_assign.targets.at(0)->kind, K::Tuple);
  EXPECT_EQ(tuple_assign.targets[0]->args.size(), 2u);
  EXPECT_EQ(tuple_assign.value->kind, K::Tuple);
  EXPECT_EQ(tuple_assign.value->args.size(), 2u);
  ASSERT_EQ(if0.orelse.size(), 2u);
  EXPECT_EQ(if0.orelse[0]->kind, S::If);
  EXPECT_EQ(if0.orelse[0]->orelse.size(), 1u);
  EXPECT_EQ(if0.orelse[0]->pos.line, 16u);
  EXPECT_EQ(if0.orelse[0]->pos.column, 7u);
  // while _6: _6, x2, _5 = _9, x3, _8
  EXPECT_EQ(b[2]->kind, S::While);
  EXPECT_EQ(b[2]->value->text, "_6");
  ASSERT_EQ(b[2]->body.size(), 1u);
  EXPECT_EQ(b[2]->body[0]->targets[0]->args.size(), 3u);
  // for _14 in range(torch.len(names)):
  EXPECT_EQ(b[3]->kind, S::For);
  EXPECT_EQ(b[3]->targets.at(0)->text, "_14");
  EXPECT_EQ(to_source(*b[3]->value), "range(torch.len(names))");
  EXPECT_EQ(b[3]->body.at(0)->value->kind, K::Subscript);
  // dict literals
  const Expr& d = *b[4]->value;
  EXPECT_EQ(d.kind, K::Dict);
  ASSERT_EQ(d.args.size(), 4u);
  EXPECT_EQ(d.args[2]->text, "b");
  EXPECT_EQ(to_source(*b[5]->value), "{1: 2.5, 3: -100.0}");
  // if/pass/else with RaiseException
  EXPECT_EQ(b[6]->body.at(0)->kind, S::Pass);
  const Stmt& raise = *b[6]->orelse.at(1);
  EXPECT_EQ(raise.kind, S::Expr);
  EXPECT_EQ(raise.value->args.size(), 3u);
  EXPECT_EQ(raise.value->args[2]->text, "builtins.ValueError");
  // e : Optional[int] = 1
  const Stmt& ann = *b[7]->body.at(0);
  EXPECT_EQ(ann.kind, S::AnnAssign);
  EXPECT_EQ(ann.text, "Optional[int]");
  EXPECT_EQ(ann.targets.at(0)->text, "e");
  EXPECT_EQ(ann.value->i, 1);
  EXPECT_EQ(b[7]->orelse.at(0)->value->kind, K::None);
  // annotate(List[Tuple[int, Tensor]], []) and uninitialized(...)
  const Expr& type = *b[8]->value->args.at(1);
  EXPECT_EQ(to_source(type), "List[Tuple[int, Tensor]]");
  EXPECT_EQ(type.args[1]->args[1]->kind, K::Tuple);
  EXPECT_EQ(b[9]->value->args.at(0)->text, "uninitialized");
  // a, b, = lst[i]
  EXPECT_EQ(b[10]->targets.at(0)->kind, K::Tuple);
  EXPECT_EQ(b[10]->targets[0]->args.size(), 2u);
  // return (_22, torch.add(_23, n2))
  EXPECT_EQ(b[11]->kind, S::Return);
  EXPECT_EQ(b[11]->value->kind, K::Tuple);
  EXPECT_EQ(b[11]->value->pos.column, 12u);

  EXPECT_EQ(f.classes[1].bases, std::vector<std::string>{"NamedTuple"});
  EXPECT_EQ(f.classes[1].attributes.size(), 2u);
  EXPECT_TRUE(f.classes[2].bases.empty());
  EXPECT_EQ(f.classes[2].methods.at(0).name, "__init__");
  EXPECT_EQ(f.classes[2].methods[0].return_type, "NoneType");
  EXPECT_EQ(f.classes[2].methods[0].body.at(0)->targets.at(0)->kind, K::Attribute);

  const FunctionDef& drop = f.functions[0];
  EXPECT_EQ(drop.name, "dropout");
  EXPECT_EQ(drop.params.at(1).default_value->f, 0.5);
  ASSERT_EQ(drop.body.size(), 3u);
  EXPECT_EQ(drop.body[0]->value->kind, K::Str);
  EXPECT_EQ(drop.body[1]->orelse.size(), 1u);
}

TEST(TorchScriptParser, ModuleLevel) {
  const SourceFile f = parse(
      "import torch\n"
      "from torch import (nn, Tensor as T, )\n"
      "# a comment\n"
      "\n"
      "op_version_set = 1  # trailing comment\n"
      "CONSTANTS = None\n");
  EXPECT_EQ(f.imports, (std::vector<std::string>{"import torch", "from torch import (nn, Tensor as T, )"}));
  ASSERT_EQ(f.statements.size(), 2u);
  EXPECT_EQ(f.statements[0]->targets.at(0)->text, "op_version_set");
  EXPECT_EQ(f.statements[1]->pos.line, 6u);
  EXPECT_TRUE(parse("").classes.empty());
  EXPECT_TRUE(parse("\n\n  # indented comment\n").statements.empty());
  EXPECT_EQ(parse("x = 1").statements.size(), 1u);  // no final newline
  EXPECT_EQ(parse("x = 1\r\ny = 2\r\n").statements.size(), 2u);
  EXPECT_EQ(to_source(*parse("x = 1 + \\\n  2\n").statements.at(0)->value), "1 + 2");
  // Comment lines do not count for indentation.
  const SourceFile g = parse("def f():\n  x = 1\n# at column 1\n      # deeper\n  return x\ny = 0\n");
  EXPECT_EQ(g.functions.at(0).body.size(), 2u);
  EXPECT_EQ(g.statements.size(), 1u);
}

TEST(TorchScriptParser, Statements) {
  const SourceFile f = parse(
      "def f(a: int,\n"
      "    b: List[int]=[1, 2, ]) -> int:\n"
      "  for i, (x, y) in zip(a, b):\n"
      "    if x: break\n"
      "    elif y:\n"
      "      continue\n"
      "    elif x is not y: pass\n"
      "    else:\n"
      "      raise\n"
      "  assert a, \"message\"\n"
      "  assert a\n"
      "  del b[0], a\n"
      "  a += 1\n"
      "  a = b = 3\n"
      "  self.x[1] //= 2\n"
      "  raise Exception(\"x\")\n"
      "  return\n");
  const auto& b = f.functions.at(0).body;
  ASSERT_EQ(b.size(), 9u);
  EXPECT_EQ(f.functions[0].params.at(1).default_value->args.size(), 2u);
  const Stmt& loop = *b[0];
  EXPECT_EQ(loop.kind, S::For);
  EXPECT_EQ(to_source(*loop.targets.at(0)), "(i, (x, y))");
  const Stmt& if0 = *loop.body.at(0);
  EXPECT_EQ(if0.body.at(0)->kind, S::Break);
  ASSERT_EQ(if0.orelse.size(), 1u);
  const Stmt& elif1 = *if0.orelse[0];
  EXPECT_EQ(elif1.kind, S::If);
  EXPECT_EQ(elif1.pos.line, 5u);
  EXPECT_EQ(elif1.body.at(0)->kind, S::Continue);
  const Stmt& elif2 = *elif1.orelse.at(0);
  EXPECT_EQ(elif2.value->kind, K::Compare);
  EXPECT_EQ(elif2.value->text, "is not");
  EXPECT_EQ(elif2.orelse.at(0)->kind, S::Raise);
  EXPECT_FALSE(elif2.orelse[0]->value);
  EXPECT_EQ(b[1]->kind, S::Assert);
  EXPECT_EQ(b[1]->targets.at(0)->text, "message");
  EXPECT_EQ(b[2]->kind, S::Assert);
  ASSERT_EQ(b[2]->targets.size(), 1u);
  EXPECT_FALSE(b[2]->targets[0]);
  EXPECT_EQ(b[3]->kind, S::Del);
  EXPECT_EQ(b[3]->targets.size(), 2u);
  EXPECT_EQ(b[4]->kind, S::AugAssign);
  EXPECT_EQ(b[4]->text, "+");
  EXPECT_EQ(b[5]->targets.size(), 2u);
  EXPECT_EQ(b[5]->value->i, 3);
  EXPECT_EQ(b[6]->text, "//");
  EXPECT_EQ(b[6]->targets.at(0)->kind, K::Subscript);
  EXPECT_EQ(b[7]->kind, S::Raise);
  EXPECT_EQ(b[7]->value->kind, K::Call);
  EXPECT_EQ(b[8]->kind, S::Return);
  EXPECT_FALSE(b[8]->value);
}

TEST(TorchScriptParser, Expressions) {
  SourceFile f;
  // Precedence: ** binds tighter than unary minus, which binds tighter than *.
  const Expr& e = value_of(f, "a + b * -c ** 2");
  ASSERT_EQ(e.kind, K::Binary);
  EXPECT_EQ(e.text, "+");
  const Expr& mul = *e.args[1];
  EXPECT_EQ(mul.text, "*");
  EXPECT_EQ(mul.args[1]->kind, K::Unary);
  EXPECT_EQ(mul.args[1]->args[0]->text, "**");
  EXPECT_EQ(value_of(f, "a - b - c").args[0]->text, "-");        // left-associative
  EXPECT_EQ(value_of(f, "a ** b ** c").args[1]->text, "**");     // right-associative
  EXPECT_EQ(value_of(f, "a | b ^ c & d << e").args[1]->text, "^");
  // not binds looser than comparisons; `not in` and `is not` are one operator.
  const Expr& n = value_of(f, "not a not in b");
  EXPECT_EQ(n.kind, K::Unary);
  EXPECT_EQ(n.args[0]->text, "not in");
  // Chains: a < b <= c is (a < b) and (b <= c).
  const Expr& chain = value_of(f, "a < b <= c");
  ASSERT_EQ(chain.kind, K::BoolOp);
  EXPECT_EQ(chain.text, "and");
  EXPECT_EQ(to_source(chain), "a < b and b <= c");
  const Expr& ifexp = value_of(f, "x if c or d else y");
  ASSERT_EQ(ifexp.kind, K::IfExp);
  EXPECT_EQ(ifexp.args[0]->kind, K::BoolOp);
  EXPECT_EQ(ifexp.args[1]->text, "x");
  // Subscripts, slices, tuples.
  const Expr& sub = value_of(f, "x[1:, ::2, i]");
  ASSERT_EQ(sub.args.at(1)->kind, K::Tuple);
  const Expr& s0 = *sub.args[1]->args.at(0);
  EXPECT_EQ(s0.kind, K::Slice);
  ASSERT_EQ(s0.args.size(), 3u);
  EXPECT_EQ(s0.args[0]->i, 1);
  EXPECT_FALSE(s0.args[1]);
  EXPECT_FALSE(s0.args[2]);
  EXPECT_EQ(sub.args[1]->args[1]->args[2]->i, 2);
  EXPECT_EQ(value_of(f, "()").args.size(), 0u);
  EXPECT_EQ(value_of(f, "(a,)").kind, K::Tuple);
  EXPECT_EQ(value_of(f, "(a)").kind, K::Name);
  // Keywords.
  const Expr& call = value_of(f, "torch.add(x, y, alpha=1, )");
  EXPECT_EQ(call.args.size(), 3u);
  ASSERT_EQ(call.keywords.size(), 1u);
  EXPECT_EQ(call.keywords[0].first, "alpha");
  EXPECT_EQ(call.keywords[0].second->i, 1);
  // Literals.
  EXPECT_EQ(value_of(f, "0x7fffffffffffffff").i, INT64_MAX);
  EXPECT_EQ(value_of(f, "-9223372036854775808").i, INT64_MIN);
  EXPECT_EQ(value_of(f, ".5").f, 0.5);
  EXPECT_EQ(value_of(f, "1e3").kind, K::Float);
  EXPECT_EQ(value_of(f, "inf").kind, K::Name);
  EXPECT_EQ(value_of(f, R"('it\'s "q"\n\x41\101\u00e9' "!")").text, "it's \"q\"\nAA\xc3\xa9!");
  EXPECT_EQ(value_of(f, R"("a\\b\d")").text, "a\\b\\d");
  EXPECT_EQ(value_of(f, "None").kind, K::None);
  EXPECT_EQ(value_of(f, "False").kind, K::False);
  // Implicit line joining inside brackets, comments included.
  EXPECT_EQ(value_of(f, "f(a,  # first\n\n      b)").args.size(), 3u);
}

TEST(TorchScriptParser, ToSource) {
  EXPECT_EQ(round_trip("torch.add(x, y, alpha=1, )"), "torch.add(x, y, alpha=1)");
  EXPECT_EQ(round_trip("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(round_trip("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(round_trip("(a ** b) ** c"), "(a ** b) ** c");
  EXPECT_EQ(round_trip("(-a) ** -b"), "(-a) ** -b");
  EXPECT_EQ(round_trip("not (a and b) or c"), "not (a and b) or c");
  EXPECT_EQ(round_trip("(a if b else c) if d else e"), "(a if b else c) if d else e");
  EXPECT_EQ(round_trip("[1, (2,), (), {\"k\": 0.10000000000000001}]"), "[1, (2,), (), {\"k\": 0.1}]");
  EXPECT_EQ(round_trip("x[1:2, :, ::-1]"), "x[1:2, :, ::-1]");
  EXPECT_EQ(round_trip("x[(1, 2)]"), "x[1, 2]");
  EXPECT_EQ(round_trip("(1).real"), "(1).real");
  EXPECT_EQ(round_trip("'a\"\\n\\t'"), "\"a\\\"\\n\\t\"");
  EXPECT_EQ(round_trip("-100."), "-100.0");
  EXPECT_EQ(round_trip("-9223372036854775808"), "-9223372036854775808");
  // parse -> to_source -> parse -> to_source is stable.
  for (const char* src : {"a + b * -c ** 2", "a < b <= c", "x if c or d else y", "not a not in b",
                          "(conv1).forward(x, )", "annotate(List[Tuple[int, Tensor]], [])",
                          "torch.view(x, [_11, _27, 7, int(_28), 7, _18])", "a.b[c](d)(e=f)[g:h]",
                          "~x & 3 | 5 ^ y >> 1", "1.0000000000000001e-05", "-(-x)", "- - -x",
                          "{1: 2.5, 3: -100.}", "(a, b) == (c, d)", "a is not None and b in [1]"}) {
    const std::string once = round_trip(src);
    EXPECT_EQ(round_trip(once), once) << src;
  }
}

// Every expression of the excerpts survives the round trip.
TEST(TorchScriptParser, ToSourceRoundTripOfExcerpts) {
  size_t checked = 0;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    std::vector<const Expr*> exprs;
    if (s.value) exprs.push_back(s.value.get());
    for (const ExprPtr& t : s.targets)
      if (t) exprs.push_back(t.get());
    for (const Expr* e : exprs) {
      const std::string once = to_source(*e);
      EXPECT_EQ(round_trip(once), once);
      ++checked;
    }
    for (const StmtPtr& c : s.body) walk(*c);
    for (const StmtPtr& c : s.orelse) walk(*c);
  };
  for (const char* text : {kTraced, kScripted}) {
    const SourceFile f = parse(text);
    for (const ClassDef& c : f.classes)
      for (const FunctionDef& m : c.methods)
        for (const StmtPtr& s : m.body) walk(*s);
    for (const FunctionDef& fn : f.functions)
      for (const StmtPtr& s : fn.body) walk(*s);
  }
  EXPECT_GT(checked, 60u);
}

TEST(TorchScriptParser, Errors) {
  EXPECT_EQ(error_of("x = f(a b)\n"), "1:9 expected ')' after call arguments, found 'b'");
  EXPECT_EQ(error_of("x = f(a\n"), "2:1 expected ')' after call arguments, found end of file");
  EXPECT_EQ(error_of("x = f(a,\n"), "2:1 expected call argument or ')', found end of file");
  EXPECT_EQ(error_of("x = (a b)\n"), "1:8 expected ')' to close '(', found 'b'");
  EXPECT_EQ(error_of("x = [1, 2\ny = 3\n"), "2:1 expected ']' after list elements, found 'y'");
  EXPECT_EQ(error_of("x = 'abc\n"), "1:5 unterminated string literal");
  EXPECT_EQ(error_of("def f():\n\tpass\n"), "2:1 tab in indentation (only spaces are allowed)");
  EXPECT_EQ(error_of("def f():\n    a = 1\n  b = 2\n"), "3:3 inconsistent dedent: indentation matches no enclosing block");
  EXPECT_EQ(error_of("a = 1\n  b = 2\n"), "2:3 unexpected indent");
  EXPECT_EQ(error_of("def f():\npass\n"), "2:1 expected an indented block, found 'pass'");
  EXPECT_EQ(error_of("x = 9223372036854775808\n"), "1:5 integer literal out of the int64 range");
  EXPECT_EQ(error_of("x = 99999999999999999999\n"), "1:5 integer literal out of the int64 range");
  EXPECT_EQ(error_of("x = 1e999\n"), "1:5 float literal out of range");
  EXPECT_EQ(error_of("x = 12abc\n"), "1:7 invalid character in number literal");
  EXPECT_EQ(error_of("x = a $ b\n"), "1:7 unexpected character '$'");
  EXPECT_EQ(error_of("x = \xc3\xa9\n"), "1:5 unexpected character 0xC3");
  EXPECT_EQ(error_of("x = if\n"), "1:5 expected expression after '=', found 'if'");
  EXPECT_EQ(error_of("x = a b\n"), "1:7 expected NEWLINE after statement, found 'b'");
  EXPECT_EQ(error_of("f() = 1\n"), "1:1 cannot assign to f() (expected a name, attribute, subscript or tuple of them)");
  EXPECT_EQ(error_of("if x\n  pass\n"), "1:5 expected ':' after if condition, found NEWLINE");
  EXPECT_EQ(error_of("for x y:\n  pass\n"), "1:7 expected 'in' after for target, found 'y'");
  EXPECT_EQ(error_of("class A(Module):\n  x = 1\n  1 + 2\n"), "3:3 expected class attribute, annotation or method, found '1'");
  EXPECT_EQ(error_of("class A:\n  __parameters__ = [1]\n"), "2:21 expected a string in __parameters__");
  EXPECT_EQ(error_of("def f(x: int, 1):\n  pass\n"), "1:15 expected parameter name or ')', found '1'");
  EXPECT_EQ(error_of("x = f(a=1, b)\n"), "1:12 positional argument after keyword argument");
  EXPECT_EQ(error_of("x = \"\\x4\"\n"), "1:6 expected 2 hex digits in '\\x' escape");
  EXPECT_EQ(error_of("x = a if b\n"), "1:11 expected 'else' in conditional expression, found NEWLINE");
  EXPECT_EQ(error_of("x = y \\ z\n"), "1:7 expected a newline after '\\' (line continuation)");
  EXPECT_EQ(error_of("x = {1, 2}\n"), "1:7 expected ':' after dict key, found ','");
}

// Every prefix of a valid file either parses or throws ParseError.
TEST(TorchScriptParser, EveryPrefix) {
  const std::string text = std::string(kTraced) + kScripted;
  size_t parsed = 0, failed = 0;
  for (size_t n = 0; n <= text.size(); ++n) {
    try {
      parse(text.substr(0, n));
      ++parsed;
    } catch (const ParseError&) {
      ++failed;
    }
  }
  EXPECT_GT(parsed, 10u);
  EXPECT_GT(failed, 100u);
}

TEST(TorchScriptParser, NestingLimits) {
  const std::string parens = "x = " + std::string(10000, '(') + "1" + std::string(10000, ')') + "\n";
  EXPECT_NE(error_of(parens).find("nesting deeper than 200 levels"), std::string::npos);
  EXPECT_NE(error_of("x = " + std::string(10000, '[') + "\n").find("nesting deeper"), std::string::npos);
  EXPECT_NE(error_of("x = " + std::string(10000, '-') + "1\n").find("nesting deeper"), std::string::npos);
  EXPECT_NE(error_of("x = " + std::string(10000, '~') + "1\n").find("nesting deeper"), std::string::npos);
  std::string nots = "x = ";
  std::string pows = "x = 2";
  std::string ifs = "x = 1";
  std::string sum = "x = a";
  std::string attrs = "x = a";
  std::string calls = "x = f";
  for (int k = 0; k < 10000; ++k) {
    nots += "not ";
    pows += " ** 2";
    ifs += " if c else 1";
    sum += " + a";
    attrs += ".b";
    calls += "()";
  }
  EXPECT_NE(error_of(nots + "a\n").find("nesting deeper"), std::string::npos);
  EXPECT_NE(error_of(pows + "\n").find("nesting deeper"), std::string::npos);
  EXPECT_NE(error_of(ifs + "\n").find("nesting deeper"), std::string::npos);
  // Loops in the parser, but each step deepens the tree.
  EXPECT_EQ(error_of(sum + "\n"), "1:5 expression nested deeper than 200 levels");
  EXPECT_EQ(error_of(attrs + "\n"), "1:5 expression nested deeper than 200 levels");
  EXPECT_EQ(error_of(calls + "\n"), "1:5 expression nested deeper than 200 levels");
  // Blocks.
  std::string blocks = "def f():\n";
  for (int k = 1; k < 300; ++k) blocks += std::string(static_cast<size_t>(k), ' ') + "if x:\n";
  blocks += std::string(300, ' ') + "pass\n";
  EXPECT_NE(error_of(blocks).find("nesting deeper"), std::string::npos);
  // A smaller limit, and nesting just within it.
  EXPECT_NE(error_of("x = " + std::string(12, '(') + "1" + std::string(12, ')') + "\n", ParseLimits{10}).find("nesting deeper than 10 levels"), std::string::npos);
  EXPECT_EQ(error_of("x = " + std::string(50, '(') + "1" + std::string(50, ')') + "\n"), "");
  EXPECT_EQ(error_of(sum.substr(0, 5 + 4 * 150) + "\n"), "");
}

// Parses every code/**/*.py of the fuzz corpus's torch.jit.save archives (a traced CNN, a scripted
// module with control flow; fuzz/make_torchscript_seeds.py), and under AMANDA_TEST_PT_DIR
// (extracted archives) when it is set.
TEST(TorchScriptParser, RealArchives) {
  size_t files = 0, classes = 0;
  std::string corpus = std::string(AMANDA_TEST_DATA) + "/../fuzz/corpus/torchscript/";
  for (const char* seed : {"archive_traced_cnn", "archive_scripted"}) {
    std::string bytes = test_files::slurp(corpus + seed);
    ZipArchive z(make_buffer(bytes.substr(1)), seed);
    for (const ZipEntry& e : z.entries()) {
      if (e.name.find("/code/") == std::string::npos || e.name.size() < 3 || e.name.compare(e.name.size() - 3, 3, ".py"))
        continue;
      ++files;
      try {
        classes += parse_source(z.data(e), e.name).classes.size();
      } catch (const ParseError& x) {
        ADD_FAILURE() << x.what();
      }
    }
  }
  EXPECT_GE(files, 6u);  // 4 files in the traced archive, 2 in the scripted one
  const char* dir = std::getenv("AMANDA_TEST_PT_DIR");
  if (!dir || !*dir) {
    EXPECT_GT(classes, 0u);
    return;
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string p = entry.path().generic_string();
    if (!entry.is_regular_file() || entry.path().extension() != ".py" || p.find("/code/") == std::string::npos) continue;
    ++files;
    try {
      classes += parse_source(test_files::slurp(entry.path()), p).classes.size();
    } catch (const ParseError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GT(files, 0u);
  EXPECT_GT(classes, 0u);
}

}  // namespace
}  // namespace amanda::torchscript
