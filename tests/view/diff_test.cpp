// What `amanda view --diff` colours: ops matched by path, grouped into the changes rules made.
#include <gtest/gtest.h>

#include <algorithm>

#include "amanda/view/diff.h"

namespace amanda::view {
namespace {

using ir::Graph;
using ir::OpId;

void chain(Graph& g, const std::vector<OpId>& ops) {
  for (size_t i = 1; i < ops.size(); ++i) g.connect(g.output(ops[i - 1], 0), g.input(ops[i], 0));
}

TEST(Diff, RuleThatReplacesOneOpByThreeIsOneChange) {
  Graph a;
  OpId x = a.create_op(a.root(), "Relu", "relu", {"X"}, {"Y"});
  OpId s = a.create_op(a.root(), "Softmax", "softmax", {"input"}, {"output"});
  OpId n = a.create_op(a.root(), "Neg", "neg", {"X"}, {"Y"});
  a.set_attr(s, a.sym("axis"), ir::Value(1));
  chain(a, {x, s, n});

  Graph b;
  OpId bx = b.create_op(b.root(), "Relu", "relu", {"X"}, {"Y"});
  OpId flat = b.create_op(b.root(), "Flatten", "softmax/Flatten", {"input"}, {"output"});
  OpId sm = b.create_op(b.root(), "Softmax", "softmax/Softmax", {"input"}, {"output"});
  OpId back = b.create_op(b.root(), "Reshape", "softmax", {"data"}, {"reshaped"});
  OpId bn = b.create_op(b.root(), "Neg", "neg", {"X"}, {"Y"});
  b.set_attr(bn, b.sym("note"), ir::Value("changed"));
  chain(b, {bx, flat, sm, back, bn});

  Diff d = diff_graphs(a, b);
  EXPECT_EQ(d.of(bx), Mark::Same);
  EXPECT_EQ(d.of(back), Mark::Retyped);
  EXPECT_EQ(d.of(flat), Mark::Added);
  EXPECT_EQ(d.of(sm), Mark::Added);
  EXPECT_EQ(d.of(bn), Mark::Modified);
  EXPECT_EQ(d.same, 1u);
  EXPECT_EQ(d.added, 2u);
  EXPECT_EQ(d.removed, 0u);
  // Two changes: softmax -> {Flatten, Softmax, Reshape}, and neg's new attribute on its own.
  ASSERT_EQ(d.changes.size(), 2u);
  auto softmax = std::find_if(d.changes.begin(), d.changes.end(), [](const Change& c) { return c.after.size() == 3; });
  ASSERT_NE(softmax, d.changes.end());
  ASSERT_EQ(softmax->before.size(), 1u);
  EXPECT_EQ(softmax->before[0].path, "softmax");
  EXPECT_EQ(softmax->before[0].type, "Softmax");
}

TEST(Diff, RemovedConstantJoinsTheOpThatTookItsValue) {
  Graph a;
  OpId c = a.create_op(a.root(), "Constant", "axes", {}, {"output"});
  OpId sq = a.create_op(a.root(), "Squeeze", "sq", {"data", "axes"}, {"squeezed"});
  a.connect(a.output(c, 0), a.input(sq, 1));
  OpId other = a.create_op(a.root(), "Constant", "unused", {}, {"output"});
  (void)other;

  Graph b;
  OpId bsq = b.create_op(b.root(), "Squeeze", "sq", {"data"}, {"squeezed"});
  b.set_attr(bsq, b.sym("axes"), ir::Value(ir::Value::List{ir::Value(0)}));
  b.create_op(b.root(), "Constant", "unused", {}, {"output"});

  Diff d = diff_graphs(a, b);
  EXPECT_EQ(d.of(bsq), Mark::Modified);
  EXPECT_EQ(d.removed, 1u);
  ASSERT_EQ(d.changes.size(), 1u);
  ASSERT_EQ(d.changes[0].before.size(), 2u);  // sq and the constant it absorbed
  EXPECT_EQ(d.changes[0].after.size(), 1u);
}

TEST(Diff, IdenticalGraphsHaveNoChanges) {
  Graph a, b;
  for (Graph* g : {&a, &b}) chain(*g, {g->create_op(g->root(), "A", "a", {"x"}, {"y"}), g->create_op(g->root(), "B", "b", {"x"}, {"y"})});
  Diff d = diff_graphs(a, b);
  EXPECT_EQ(d.same, 2u);
  EXPECT_TRUE(d.changes.empty());
}

}  // namespace
}  // namespace amanda::view
