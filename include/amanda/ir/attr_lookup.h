// Attribute lookup by name on a const graph. Graph::attr takes an interned Symbol, and interning
// needs a mutable graph; but a key that was never interned is on no entity, so a lookup only has
// to find the symbol, never add it (no const_cast<Graph&> to look an attribute up).
#pragma once

#include <string_view>

#include "amanda/ir/graph.h"

namespace amanda::ir {

inline const Value* get_attr(const Graph& g, OpId op, std::string_view key) {
  Symbol s = g.symbols().find(key);
  return s == SymbolTable::kNone ? nullptr : g.attr(op, s);
}
inline const Value* get_attr(const Graph& g, PortId p, std::string_view key) {
  Symbol s = g.symbols().find(key);
  return s == SymbolTable::kNone ? nullptr : g.attr(p, s);
}
inline const Value* get_attr(const Graph& g, EdgeId e, std::string_view key) {
  Symbol s = g.symbols().find(key);
  return s == SymbolTable::kNone ? nullptr : g.attr(e, s);
}

}  // namespace amanda::ir
