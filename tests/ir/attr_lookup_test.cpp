// ir::get_attr: attribute lookup by name on a const graph, without interning the name.
#include <gtest/gtest.h>

#include "amanda/ir/attr_lookup.h"
#include "ir_test_util.h"

namespace amanda::ir {
namespace {

TEST(AttrLookup, FindsByNameOnAConstGraphWithoutInterning) {
  Graph g;
  OpId f = g.create_op(g.root(), "Conv", "f", {"x"}, {"y"});
  PortId y = g.outputs(f)[0];
  g.set_attr(f, g.sym("group"), Value(2));
  g.set_attr(y, g.sym("@type"), Value("float32"));
  const Graph& cg = g;
  ASSERT_NE(get_attr(cg, f, "group"), nullptr);
  EXPECT_EQ(get_attr(cg, f, "group")->as_int(), 2);
  ASSERT_NE(get_attr(cg, y, "@type"), nullptr);
  EXPECT_EQ(get_attr(cg, y, "@type")->as_string(), "float32");
  // A key on another entity, and one never interned: absent, and the symbol table does not grow.
  size_t symbols = cg.symbols().size();
  EXPECT_EQ(get_attr(cg, f, "@type"), nullptr);
  EXPECT_EQ(get_attr(cg, y, "group"), nullptr);
  EXPECT_EQ(get_attr(cg, f, "dilations_never_seen"), nullptr);
  EXPECT_EQ(cg.symbols().size(), symbols);
  EXPECT_EQ(cg.symbols().find("dilations_never_seen"), SymbolTable::kNone);
}

}  // namespace
}  // namespace amanda::ir
