#include "amanda/ir/value.h"

namespace amanda::ir {

const Value* Value::find(std::string_view key) const {
  if (!is_map()) return nullptr;
  for (const auto& e : as_map())
    if (e.key == key) return &e.value;
  return nullptr;
}

bool Value::operator==(const Value& o) const {
  if (kind() != o.kind()) return false;
  switch (kind()) {
    case Kind::Null: return true;
    case Kind::Bool: return as_bool() == o.as_bool();
    case Kind::Int: return as_int() == o.as_int();
    case Kind::Float: {
      double a = as_float(), b = o.as_float();
      return a == b || (a != a && b != b);
    }
    case Kind::String: return as_string() == o.as_string();
    case Kind::List: return as_list() == o.as_list();
    case Kind::Map: return as_map() == o.as_map();
    case Kind::Tensor: return as_tensor() == o.as_tensor();
    case Kind::Graph: return as_graph() == o.as_graph();
  }
  return false;
}

std::string_view kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::Null: return "null";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return "string";
    case Value::Kind::List: return "list";
    case Value::Kind::Map: return "map";
    case Value::Kind::Tensor: return "tensor";
    case Value::Kind::Graph: return "graph";
  }
  return "?";
}

}  // namespace amanda::ir
