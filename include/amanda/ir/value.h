// Attribute values: null, bool, int, float, string, list, map (ordered), tensor, graph.
// A graph value names a graph node of the same ir::Graph (see Graph::create_attr_graph).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "amanda/ir/ids.h"
#include "amanda/ir/tensor.h"

namespace amanda::ir {

struct MapEntry;

class Value {
 public:
  enum class Kind : uint8_t { Null, Bool, Int, Float, String, List, Map, Tensor, Graph };
  using List = std::vector<Value>;
  using Map = std::vector<MapEntry>;

  // Constructors are defined below MapEntry: the variant needs both list types complete.
  Value();
  Value(std::nullptr_t);
  Value(bool b);
  Value(int v);
  Value(int64_t v);
  Value(double v);
  Value(const char* s);
  Value(std::string s);
  Value(std::string_view s);
  Value(List l);
  Value(Map m);
  Value(Tensor t);
  Value(std::shared_ptr<const Tensor> t);
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  ~Value();
  static Value graph(OpId g);

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_null() const { return kind() == Kind::Null; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_map() const { return kind() == Kind::Map; }
  bool is_tensor() const { return kind() == Kind::Tensor; }
  bool is_graph() const { return kind() == Kind::Graph; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const List& as_list() const { return std::get<List>(v_); }
  List& as_list() { return std::get<List>(v_); }
  const Map& as_map() const { return std::get<Map>(v_); }
  Map& as_map() { return std::get<Map>(v_); }
  const Tensor& as_tensor() const { return *std::get<std::shared_ptr<const Tensor>>(v_); }
  const std::shared_ptr<const Tensor>& tensor_ptr() const { return std::get<std::shared_ptr<const Tensor>>(v_); }
  OpId as_graph() const { return std::get<OpId>(v_); }

  const Value* find(std::string_view key) const;  // map lookup
  // Structural equality; graph values compare by id (use ir::equal for graphs of two IRs).
  bool operator==(const Value& o) const;
  bool operator!=(const Value& o) const { return !(*this == o); }

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, List, Map, std::shared_ptr<const Tensor>, OpId> v_;
};

struct MapEntry {
  std::string key;
  Value value;
  bool operator==(const MapEntry& o) const { return key == o.key && value == o.value; }
};

// Defined here, once MapEntry is complete (clang with libstdc++ needs it for the variant).
inline Value::Value() = default;
inline Value::Value(std::nullptr_t) {}
inline Value::Value(bool b) : v_(b) {}
inline Value::Value(int v) : v_(static_cast<int64_t>(v)) {}
inline Value::Value(int64_t v) : v_(v) {}
inline Value::Value(double v) : v_(v) {}
inline Value::Value(const char* s) : v_(std::string(s)) {}
inline Value::Value(std::string s) : v_(std::move(s)) {}
inline Value::Value(std::string_view s) : v_(std::string(s)) {}
inline Value::Value(List l) : v_(std::move(l)) {}
inline Value::Value(Map m) : v_(std::move(m)) {}
inline Value::Value(Tensor t) : v_(std::make_shared<const Tensor>(std::move(t))) {}
inline Value::Value(std::shared_ptr<const Tensor> t) : v_(std::move(t)) {}
inline Value::Value(const Value&) = default;
inline Value::Value(Value&&) noexcept = default;
inline Value& Value::operator=(const Value&) = default;
inline Value& Value::operator=(Value&&) noexcept = default;
inline Value::~Value() = default;
inline Value Value::graph(OpId g) {
  Value v;
  v.v_ = g;
  return v;
}

std::string_view kind_name(Value::Kind k);

}  // namespace amanda::ir
