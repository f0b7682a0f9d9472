// Stable integer ids for the entities of a graph. An id is never reused while its graph lives,
// so ids (not pointers) decide every output order. Id 0 means "none".
#pragma once

#include <cstdint>
#include <functional>

namespace amanda::ir {

template <class Tag>
struct Id {
  uint32_t value = 0;
  constexpr Id() = default;
  constexpr explicit Id(uint32_t v) : value(v) {}
  constexpr explicit operator bool() const { return value != 0; }
  friend constexpr bool operator==(Id a, Id b) { return a.value == b.value; }
  friend constexpr bool operator!=(Id a, Id b) { return a.value != b.value; }
  friend constexpr bool operator<(Id a, Id b) { return a.value < b.value; }
};

struct OpTag;
struct PortTag;
struct EdgeTag;
// An op, or a graph: a graph is an op-like node that owns ports and a body (the root graph, or a
// graph held in an attribute value).
using OpId = Id<OpTag>;
using PortId = Id<PortTag>;
using EdgeId = Id<EdgeTag>;

}  // namespace amanda::ir

template <class Tag>
struct std::hash<amanda::ir::Id<Tag>> {
  size_t operator()(amanda::ir::Id<Tag> id) const noexcept { return std::hash<uint32_t>{}(id.value); }
};
