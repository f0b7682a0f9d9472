// Value types of ports: an element type and a shape (dimensions that are known sizes, named
// symbols or unknown; the rank itself may be unknown), or a sequence / optional / map of such.
//
// Types are interned per graph (TypeTable): a port stores a 4-byte TypeId, and two ports have the
// same type exactly when their ids are equal. Symbolic dimensions are the graph's interned
// symbols, so `N` on two ports means the same size everywhere in the graph (nGraph's and ONNX's
// reading of a dim_param).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "amanda/ir/ids.h"
#include "amanda/ir/tensor.h"
#include "amanda/support/symbols.h"

namespace amanda::ir {

using ElemType = DType;

struct TypeTag;
using TypeId = Id<TypeTag>;  // 0: no type known

// One dimension in 8 bytes: >= 0 a known size, -1 unknown, <= -2 the symbol -(raw + 2).
class Dim {
 public:
  constexpr Dim() = default;
  static constexpr Dim known(int64_t n) { return Dim(n); }
  static constexpr Dim unknown() { return Dim(-1); }
  static constexpr Dim symbol(Symbol s) { return Dim(-2 - static_cast<int64_t>(s)); }
  bool is_known() const { return raw_ >= 0; }
  bool is_unknown() const { return raw_ == -1; }
  bool is_symbol() const { return raw_ <= -2; }
  int64_t value() const { return raw_; }  // when is_known()
  Symbol sym() const { return static_cast<Symbol>(-2 - raw_); }
  int64_t raw() const { return raw_; }
  friend bool operator==(Dim a, Dim b) { return a.raw_ == b.raw_; }

 private:
  constexpr explicit Dim(int64_t r) : raw_(r) {}
  int64_t raw_ = -1;
};

enum class TypeKind : uint8_t { Tensor, SparseTensor, Sequence, Optional, Map };

struct TypeData {
  TypeKind kind = TypeKind::Tensor;
  ElemType elem = ElemType::Undefined;  // tensor / sparse tensor element; a map's key
  bool ranked = false;                  // tensors: the rank (dims.size()) is known
  std::vector<Dim> dims;
  TypeId inner;  // sequence / optional element, map value
  bool operator==(const TypeData&) const = default;
};

class TypeTable {
 public:
  TypeTable();
  TypeId intern(const TypeData& t);
  const TypeData& get(TypeId id) const { return types_[id.value]; }
  size_t size() const { return types_.size() - 1; }
  TypeId tensor(ElemType e, std::span<const Dim> dims);
  TypeId tensor(ElemType e, std::initializer_list<Dim> dims) { return tensor(e, std::span<const Dim>(dims.begin(), dims.size())); }
  TypeId unranked(ElemType e);
  size_t memory_bytes() const;

 private:
  std::vector<TypeData> types_;  // [0] is a placeholder for "no type"
  absl::flat_hash_map<std::string, uint32_t> index_;
};

// Convenience for static shapes.
inline std::vector<Dim> dims_of(std::span<const int64_t> s) {
  std::vector<Dim> d;
  d.reserve(s.size());
  for (int64_t x : s) d.push_back(x < 0 ? Dim::unknown() : Dim::known(x));
  return d;
}

// Text. The canonical form is `float32[N, 3, 224, 224]` (`float32[?]` an unknown dimension,
// `float32[*]` an unknown rank, `float32[]` a scalar), `seq(T)`, `optional(T)`, `map(K, T)`,
// `sparse(T)`. parse_type also reads the forms frontends and the seed write:
// `tensor(float)`, `seq(tensor(int64))`, `map(int64, tensor(float))`, a bare element type
// (`float32`, `float`, ...: unknown rank), and the seed's `Float(1, 784)`.
class Graph;
class Value;
std::string format_type(const Graph& g, TypeId t);
std::optional<TypeId> parse_type(Graph& g, std::string_view s);
// An element type by any of the names frameworks use (float32, float, Float, half, double, ...).
std::optional<ElemType> elem_from_any_name(std::string_view s);

// The type that a port's `type`/`shape` attributes (`@type`/`@shape` on op ports) describe, as
// every reader and the seed write them; TypeId() when they describe none.
TypeId type_from_attrs(Graph& g, const Value* type, const Value* shape);
// Sets every port's type from its type attributes (after a text reader has built the graph).
void derive_port_types(Graph& g);
// Writes `t` as the attributes above (`@type`, `@shape` on op ports, `type`, `shape` on graph
// ports) in the canonical spelling; used when a typed port has no such attributes yet.
void write_type_attrs(Graph& g, PortId p, TypeId t);

}  // namespace amanda::ir
