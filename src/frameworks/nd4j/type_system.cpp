// nd4j's type system: the types of ordered arguments. An argument of type int64 (int32) holds an
// integer, double (float) a number, bool a boolean, dtype an element type's name, string a string;
// each may also hold a list of them (an array argument: it fills its index and the ones after it,
// check_ordered_args makes sure it is the last of its list). `[T]` is a list of T (the rest_*
// attributes); tensor is the value of Amanda's `constant` op.
#include "frameworks/nd4j/nd4j.h"

#include "amanda/ir/conventions.h"

#include <algorithm>

namespace amanda::nd4j {

namespace {

using schema::Type;

class Nd4jTypes final : public schema::TypeSystem {
 public:
  std::string_view name() const override { return "nd4j"; }

  schema::TypeRef parse(std::string_view expr, std::string* error) const override {
    std::string s(expr);
    bool list = s.size() > 2 && s.front() == '[' && s.back() == ']';
    std::string base = list ? s.substr(1, s.size() - 2) : s;
    static const char* known[] = {"int64", "int32", "double", "float", "bool", "dtype", "string", "tensor"};
    if (std::find(std::begin(known), std::end(known), base) == std::end(known)) {
      if (error) *error = "unknown nd4j type '" + s + "' (int64, int32, double, float, bool, dtype, string, or [T])";
      return nullptr;
    }
    auto t = std::make_shared<Type>();
    t->kind = Type::Kind::Custom;
    t->text = s;
    t->name = base;
    t->has_dims = list;  // marks the list form
    return t;
  }

  bool is_instance(const ir::Value& v, const Type& t) const override {
    if (t.kind != Type::Kind::Custom) return schema::TypeSystem::is_instance(v, t);
    auto one = [&](const ir::Value& x) {
      if (t.name == "int64" || t.name == "int32") return x.is_int();
      if (t.name == "double" || t.name == "float") return x.is_float() || x.is_int();
      if (t.name == "bool") return x.is_bool();
      if (t.name == "dtype") return x.is_string() && dtype_to_sd(x.as_string()).has_value();
      if (t.name == "tensor") return x.is_tensor();
      return x.is_string();
    };
    bool all = v.is_list() && std::all_of(v.as_list().begin(), v.as_list().end(), one);
    return t.has_dims ? all : one(v) || all;
  }
};

}  // namespace

std::unique_ptr<schema::TypeSystem> make_type_system() { return std::make_unique<Nd4jTypes>(); }

void register_conventions(ir::Conventions& c) {
  c.add_constant_op(kConstantOp);
  c.add_loop_back_op("next_iteration");  // SameDiff's TensorFlow 1 loops (simplewhile_1.fb)
}

void add_to(schema::Registry& registry) {
  register_conventions(ir::conventions());
  if (!registry.type_systems().find("nd4j")) registry.type_systems().add(make_type_system());
  registry.add_provider(make_namespace_provider());
}

}  // namespace amanda::nd4j
