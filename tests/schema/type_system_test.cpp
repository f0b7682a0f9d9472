// The pluggable type systems: the six built-in ones answer is_instance, is_subtype and equal, and
// a user's own type system registers from C++ without changing the library.
#include <gtest/gtest.h>

#include "schema_test_util.h"

namespace amanda::schema::testing {
namespace {

using ir::Value;
using L = Value::List;

class BuiltIn : public ::testing::Test {
 protected:
  const TypeSystem& ts(const char* name) {
    const TypeSystem* t = systems_.find(name);
    if (!t) throw std::runtime_error(std::string("no type system ") + name);
    return *t;
  }
  TypeRef parse(const char* system, const char* expr) {
    std::string err;
    TypeRef t = ts(system).parse(expr, &err);
    EXPECT_NE(t, nullptr) << system << " '" << expr << "': " << err;
    return t;
  }
  std::string parse_error(const char* system, const char* expr) {
    std::string err;
    TypeRef t = ts(system).parse(expr, &err);
    EXPECT_EQ(t, nullptr) << system << " '" << expr << "' parsed";
    return err;
  }
  bool equal(const char* system, const Value& a, const Value& b, const char* type) {
    return ts(system).equal(a, b, *parse(system, type));
  }
  TypeSystems systems_;
};

TEST_F(BuiltIn, AllSixAreRegistered) {
  EXPECT_EQ(systems_.names(), (std::vector<std::string>{"cpp", "flatbuffers", "onnx", "protobuf", "python", "torchscript"}));
  for (const auto& n : systems_.names()) EXPECT_EQ(systems_.find(n)->name(), n);
  EXPECT_EQ(systems_.find("java"), nullptr);
}

TEST_F(BuiltIn, Python) {
  const TypeSystem& py = ts("python");
  EXPECT_TRUE(py.is_instance(Value(12), "int"));
  EXPECT_FALSE(py.is_instance(Value(1.5), "int"));
  EXPECT_TRUE(py.is_instance(Value(3), "float"));  // an int is a float
  EXPECT_TRUE(py.is_instance(Value("x"), "str"));
  EXPECT_FALSE(py.is_instance(Value(1), "bool"));
  EXPECT_TRUE(py.is_instance(Value(L{1, 784}), "tensorflow.TensorShape"));
  EXPECT_TRUE(py.is_instance(Value(L{Value(), 784}), "tensorflow.TensorShape"));  // unknown dimension
  EXPECT_FALSE(py.is_instance(Value("784x10"), "tensorflow.TensorShape"));
  EXPECT_TRUE(py.is_instance(Value("float32"), "tensorflow.DType"));
  EXPECT_TRUE(py.is_instance(Value("float"), "tensorflow.DType"));
  EXPECT_FALSE(py.is_instance(Value("float33"), "tensorflow.DType"));
  EXPECT_TRUE(py.is_instance(Value(L{1, 2}), "List[int]"));
  EXPECT_FALSE(py.is_instance(Value(L{1, "a"}), "List[int]"));
  EXPECT_TRUE(py.is_instance(Value(L{1, 2}), "int[]"));
  EXPECT_TRUE(py.is_instance(Value(), "Optional[int]"));
  EXPECT_TRUE(py.is_instance(Value("a"), "Union[int, str]"));
  EXPECT_FALSE(py.is_instance(Value(1.5), "Union[int, str]"));
  EXPECT_TRUE(py.is_instance(Value(Value::Map{{"a", Value(1)}}), "Dict[str, int]"));
  EXPECT_TRUE(py.is_instance(Value(L{}), "object"));

  EXPECT_TRUE(py.is_subtype("int", "float"));
  EXPECT_FALSE(py.is_subtype("float", "int"));
  EXPECT_TRUE(py.is_subtype("List[int]", "List[float]"));
  EXPECT_TRUE(py.is_subtype("int", "Optional[int]"));
  EXPECT_TRUE(py.is_subtype("None", "Optional[int]"));
  EXPECT_TRUE(py.is_subtype("int", "Union[int, str]"));
  EXPECT_TRUE(py.is_subtype("Union[int, bool]", "Union[int, bool, str]"));
  EXPECT_FALSE(py.is_subtype("Union[int, float]", "int"));
  EXPECT_TRUE(py.is_subtype("str", "Any"));
  EXPECT_FALSE(py.is_subtype("str", "int"));

  // `float` and `float32` are one tensorflow.DType; as strings they differ.
  EXPECT_TRUE(equal("python", Value("float"), Value("float32"), "tensorflow.DType"));
  EXPECT_TRUE(equal("python", Value("half"), Value("float16"), "tensorflow.DType"));
  EXPECT_TRUE(equal("python", Value("double"), Value("float64"), "numpy.dtype"));
  EXPECT_FALSE(equal("python", Value("float"), Value("float64"), "tensorflow.DType"));
  EXPECT_FALSE(equal("python", Value("float"), Value("float32"), "str"));
  EXPECT_TRUE(equal("python", Value(1), Value(1.0), "float"));
  EXPECT_FALSE(equal("python", Value(1), Value(2), "int"));

  EXPECT_NE(parse_error("python", "tensorflow.Shapey").find("unknown python type 'tensorflow.Shapey'"), std::string::npos);
  EXPECT_NE(parse_error("python", "List[Nope]").find("Nope"), std::string::npos);
  EXPECT_NE(parse_error("python", "").find("empty"), std::string::npos);
}

TEST_F(BuiltIn, TorchScript) {
  const TypeSystem& t = ts("torchscript");
  // The seed's example: `Float(1, 100)` is a `Float`, and a Tensor.
  EXPECT_TRUE(t.is_subtype("Float(1, 100)", "Float"));
  EXPECT_TRUE(t.is_subtype("Float(1, 100)", "Tensor"));
  EXPECT_TRUE(t.is_subtype("Float(1, 100)", "Float(1, 100)"));
  EXPECT_TRUE(t.is_subtype("Float(1,100)", "Float(1, 100)"));  // spacing does not matter
  EXPECT_FALSE(t.is_subtype("Float(1, 100)", "Float(100, 1)"));
  EXPECT_FALSE(t.is_subtype("Float", "Float(1, 100)"));
  EXPECT_FALSE(t.is_subtype("Float(1, 100)", "Double"));
  EXPECT_FALSE(t.is_subtype("Tensor", "Float"));
  EXPECT_TRUE(t.is_subtype("int", "Scalar"));
  EXPECT_TRUE(t.is_subtype("Tensor", "Tensor?"));
  EXPECT_TRUE(t.is_subtype("int[]", "List[int]"));
  EXPECT_TRUE(t.is_subtype("int[2]", "int[]"));
  TypeRef f = parse("torchscript", "Float(1, 784, strides=[784, 1])");
  EXPECT_EQ(f->dims, (std::vector<std::string>{"1", "784"}));
  EXPECT_TRUE(f->has_dims);
  // `type` values are TorchScript types written as strings (the seed's output ports).
  EXPECT_TRUE(t.is_instance(Value("Float(1, 100)"), "type"));
  EXPECT_TRUE(t.is_instance(Value("int[]"), "type"));
  EXPECT_FALSE(t.is_instance(Value("Floaty(1, 100)"), "type"));
  EXPECT_FALSE(t.is_instance(Value(3), "type"));
  EXPECT_TRUE(t.is_instance(Value(L{1, 2}), "int[]"));
  EXPECT_TRUE(t.is_instance(Value(), "int?"));
  EXPECT_TRUE(t.is_instance(Value("x"), "str"));
  EXPECT_TRUE(equal("torchscript", Value("Float(1,100)"), Value("Float(1, 100)"), "type"));
  EXPECT_FALSE(equal("torchscript", Value("Float(1, 100)"), Value("Float(1, 10)"), "type"));
  EXPECT_NE(parse_error("torchscript", "Floaty(1, 2)").find("Floaty"), std::string::npos);
}

TEST_F(BuiltIn, Cpp) {
  const TypeSystem& c = ts("cpp");
  EXPECT_TRUE(c.is_instance(Value(L{1, 2}), "std::vector<int64_t>"));
  EXPECT_FALSE(c.is_instance(Value(L{1.5}), "std::vector<int64_t>"));
  EXPECT_TRUE(c.is_instance(Value(L{1.5, 2}), "std::vector<double>"));
  EXPECT_TRUE(c.is_instance(Value(), "std::optional<double>"));
  EXPECT_TRUE(c.is_instance(Value("s"), "std::string"));
  EXPECT_TRUE(c.is_instance(Value(Value::Map{}), "std::map<std::string, int>"));
  EXPECT_TRUE(c.is_instance(Value(L{1}), "int[]"));
  EXPECT_TRUE(c.is_subtype("int32_t", "double"));
  EXPECT_TRUE(c.is_subtype("std::vector<int>", "std::vector<double>"));
  EXPECT_FALSE(c.is_subtype("std::string", "int"));
  EXPECT_TRUE(c.is_subtype("int", "std::variant<int, std::string>"));
  EXPECT_TRUE(equal("cpp", Value(2), Value(2.0), "double"));
  EXPECT_NE(parse_error("cpp", "std::unordered_set<int>").find("std::unordered_set"), std::string::npos);
}

TEST_F(BuiltIn, Protobuf) {
  const TypeSystem& p = ts("protobuf");
  EXPECT_TRUE(p.is_instance(Value(L{1, 2}), "repeated int64"));
  EXPECT_FALSE(p.is_instance(Value(L{"a"}), "repeated int64"));
  EXPECT_TRUE(p.is_instance(Value("abc"), "bytes"));
  EXPECT_TRUE(p.is_instance(Value(Value::Map{{"k", Value(1)}}), "map<string, int32>"));
  // Message types are mappings (their fields).
  EXPECT_TRUE(p.is_instance(Value(Value::Map{{"dims", Value(L{1})}}), "onnx.TensorProto"));
  EXPECT_FALSE(p.is_instance(Value(3), "onnx.TensorProto"));
  EXPECT_TRUE(p.is_instance(Value(3), "google.protobuf.Any"));
  EXPECT_TRUE(p.is_subtype("int32", "double"));
  EXPECT_TRUE(p.is_subtype("repeated int32", "repeated double"));  // integers widen to floats
  EXPECT_FALSE(p.is_subtype("repeated int32", "repeated int64"));  // distinct scalar types
  EXPECT_FALSE(p.is_subtype("string", "int64"));
  EXPECT_TRUE(equal("protobuf", Value(L{1, 2}), Value(L{1, 2}), "repeated int32"));
  EXPECT_FALSE(equal("protobuf", Value(L{1, 2}), Value(L{2, 1}), "repeated int32"));
}

TEST_F(BuiltIn, FlatBuffers) {
  const TypeSystem& f = ts("flatbuffers");
  EXPECT_TRUE(f.is_instance(Value(L{1, 2}), "[int]"));
  EXPECT_TRUE(f.is_instance(Value(L{1.5}), "[float]"));
  EXPECT_FALSE(f.is_instance(Value(L{"x"}), "[ubyte]"));
  EXPECT_TRUE(f.is_instance(Value(7), "ubyte"));
  EXPECT_TRUE(f.is_instance(Value(Value::Map{}), "tflite.Tensor"));  // tables are mappings
  EXPECT_TRUE(f.is_subtype("[short]", "[double]"));
  EXPECT_FALSE(f.is_subtype("[short]", "[long]"));
  EXPECT_TRUE(f.is_subtype("int", "double"));
  EXPECT_FALSE(f.is_subtype("string", "[ubyte]"));
  EXPECT_TRUE(equal("flatbuffers", Value("a"), Value("a"), "string"));
}

TEST_F(BuiltIn, Onnx) {
  const TypeSystem& o = ts("onnx");
  EXPECT_TRUE(o.is_instance(Value(L{1, 2}), "ints"));
  EXPECT_FALSE(o.is_instance(Value(L{1.5}), "ints"));
  EXPECT_TRUE(o.is_instance(Value(L{1.5, 2}), "floats"));
  EXPECT_TRUE(o.is_instance(Value(L{"a"}), "strings"));
  EXPECT_TRUE(o.is_instance(Value(3), "int"));
  EXPECT_FALSE(o.is_instance(Value("3"), "int"));
  // Value types: tensor(float), seq(...), map(K, V), optional(...) written as strings.
  EXPECT_TRUE(o.is_instance(Value("tensor(float)"), "type_proto"));
  EXPECT_TRUE(o.is_instance(Value("seq(tensor(int64))"), "type_proto"));
  EXPECT_TRUE(o.is_instance(Value("map(int64, tensor(float))"), "type_proto"));
  EXPECT_TRUE(o.is_instance(Value("optional(seq(tensor(bool)))"), "type_proto"));
  EXPECT_FALSE(o.is_instance(Value("tensor(floaty)"), "type_proto"));
  EXPECT_FALSE(o.is_instance(Value("map(int64)"), "type_proto"));
  EXPECT_TRUE(o.is_subtype("int", "float"));
  EXPECT_TRUE(o.is_subtype("ints", "floats"));
  EXPECT_FALSE(o.is_subtype("strings", "ints"));
  // ONNX floats are float32: 0.0001 and float32(0.0001) are one value.
  double f32 = static_cast<double>(0.0001f);
  EXPECT_NE(f32, 0.0001);
  EXPECT_TRUE(equal("onnx", Value(0.0001), Value(f32), "float"));
  EXPECT_FALSE(equal("onnx", Value(0.0001), Value(0.0002), "float"));
  EXPECT_TRUE(equal("onnx", Value(L{0.1, 1}), Value(L{static_cast<double>(0.1f), 1.0}), "floats"));
  EXPECT_FALSE(equal("onnx", Value(L{0.1}), Value(L{0.1, 0.1}), "floats"));
  EXPECT_FALSE(equal("python", Value(0.0001), Value(f32), "float"));  // python floats are doubles
  EXPECT_NE(parse_error("onnx", "tensor(floaty)").find("tensor(floaty)"), std::string::npos);
}

// ---------------------------------------------------------------- a user's type system

// Lengths with units: "3m", "30cm", "2ft". Types: meters (values in m), length (any unit), count
// (an int). meters is a length; equal compares lengths in metres.
class UnitTypes final : public TypeSystem {
 public:
  std::string_view name() const override { return "units"; }
  TypeRef parse(std::string_view expr, std::string* error) const override {
    auto t = std::make_shared<Type>();
    t->text = std::string(expr);
    t->name = t->text;
    if (expr == "meters" || expr == "length") {
      t->kind = Type::Kind::Custom;
    } else if (expr == "count") {
      t->kind = Type::Kind::Int;
    } else {
      if (error) *error = "unknown units type '" + std::string(expr) + "'";
      return nullptr;
    }
    return t;
  }
  static std::optional<double> metres(const Value& v) {
    if (!v.is_string()) return std::nullopt;
    const std::string& s = v.as_string();
    struct U {
      const char* suffix;
      double scale;
    };
    for (U u : {U{"cm", 0.01}, U{"ft", 0.3048}, U{"m", 1.0}}) {
      std::string suf = u.suffix;
      if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0) {
        try {
          return std::stod(s.substr(0, s.size() - suf.size())) * u.scale;
        } catch (...) {
          return std::nullopt;
        }
      }
    }
    return std::nullopt;
  }
  bool is_instance(const Value& v, const Type& t) const override {
    if (t.kind != Type::Kind::Custom) return TypeSystem::is_instance(v, t);
    if (!metres(v)) return false;
    if (t.name == "meters") return v.as_string().back() == 'm' && v.as_string().find("cm") == std::string::npos;
    return true;
  }
  bool is_subtype(const Type& a, const Type& b) const override {
    if (a.kind == Type::Kind::Custom && b.kind == Type::Kind::Custom) return a.name == b.name || b.name == "length";
    return TypeSystem::is_subtype(a, b);
  }
  bool equal(const Value& a, const Value& b, const Type& t) const override {
    if (t.kind == Type::Kind::Custom) {
      auto x = metres(a), y = metres(b);
      return x && y && std::abs(*x - *y) < 1e-9;
    }
    return TypeSystem::equal(a, b, t);
  }
};

constexpr const char* kUnitSchema = R"(
namespace:
  name: amanda/units/1
  type_system: units
  op_schemas:
    - type: Wall
      attrs:
        height: meters
        width: { type: length, default: 1m }
        thickness: { type: length, constant: 20cm }
        bricks: count
)";

TEST(UserTypeSystem, RegistersFromCppAndValidates) {
  Registry reg;
  // Before registering, a schema naming it is refused.
  EXPECT_THROW(reg.add(parse_schema(kUnitSchema, reg.type_systems())), ParseError);
  reg.type_systems().add(std::make_unique<UnitTypes>());
  EXPECT_NE(reg.type_systems().find("units"), nullptr);
  auto names = reg.type_systems().names();
  EXPECT_NE(std::find(names.begin(), names.end(), "units"), names.end());

  const TypeSystem& u = *reg.type_systems().find("units");
  EXPECT_TRUE(u.is_subtype("meters", "length"));
  EXPECT_FALSE(u.is_subtype("length", "meters"));
  EXPECT_TRUE(u.is_instance(Value("3m"), "meters"));
  EXPECT_FALSE(u.is_instance(Value("3ft"), "meters"));
  EXPECT_TRUE(u.is_instance(Value("3ft"), "length"));
  EXPECT_TRUE(u.is_instance(Value(3), "count"));  // built-in kinds keep working

  reg.add(parse_schema(kUnitSchema, reg.type_systems()));
  Validated ok = validate_text(R"(
graph:
  namespace: amanda/units/1
  ops:
    - { type: Wall, name: w1, attrs: { height: 2.5m, width: 300cm, thickness: 0.2m, bricks: 400 } }
    - { type: Wall, name: w2, attrs: { height: 3m, bricks: 10 } }
)", reg);
  EXPECT_TRUE(ok.result.ok()) << ok.messages();  // 0.2m is the constant 20cm under `equal`

  Validated bad = validate_text(R"(
graph:
  namespace: amanda/units/1
  ops:
    - { type: Wall, name: w, attrs: { height: 8ft, width: wide, thickness: 25cm, bricks: many } }
)", reg);
  EXPECT_EQ(bad.messages(),
            "w: error: attribute 'height': wrong type: '8ft' is not of type 'meters'\n"
            "w: error: attribute 'width': wrong type: 'wide' is not of type 'length'\n"
            "w: error: attribute 'thickness': constant mismatch: must be '20cm', found '25cm'\n"
            "w: error: attribute 'bricks': wrong type: 'many' is not of type 'count'\n");

  // The schema's own defaults and constants are checked with the user's type system too.
  try {
    parse_schema(R"(
namespace:
  name: amanda/units/2
  type_system: units
  op_schemas:
    - type: Wall
      attrs:
        width: { type: meters, default: 3ft }
)", reg.type_systems(), "units2.yaml");
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "units2.yaml:8:41: error: attribute 'width': default '3ft' is not of type 'meters' in the units type system");
  }
}

// A user's type system may build on a built-in one.
class MyPython final : public TypeSystem {
 public:
  std::string_view name() const override { return "mypython"; }
  TypeRef parse(std::string_view expr, std::string* error) const override {
    if (expr == "Celsius") {
      auto t = std::make_shared<Type>();
      t->kind = Type::Kind::Float;
      t->text = t->name = "Celsius";
      return t;
    }
    return base_->parse(expr, error);
  }

 private:
  std::unique_ptr<TypeSystem> base_ = make_python_type_system();
};

TEST(UserTypeSystem, CanExtendABuiltInOne) {
  TypeSystems systems;
  systems.add(std::make_unique<MyPython>());
  const TypeSystem& t = *systems.find("mypython");
  EXPECT_TRUE(t.is_instance(Value(21.5), "Celsius"));
  EXPECT_TRUE(t.is_instance(Value(L{1, 2}), "List[int]"));
  EXPECT_TRUE(t.is_subtype("int", "Celsius"));
  EXPECT_TRUE(t.equal(Value("float"), Value("float32"), *t.parse("tensorflow.DType", nullptr)));
}

TEST(UserTypeSystem, AddingOneOfTheSameNameReplacesIt) {
  TypeSystems systems;
  const TypeSystem* python = systems.find("python");
  systems.add(std::make_unique<UnitTypes>());
  auto second = std::make_unique<UnitTypes>();
  const TypeSystem* raw = second.get();
  systems.add(std::move(second));
  EXPECT_EQ(systems.names().size(), 7u);
  EXPECT_EQ(systems.find("units"), raw);
  EXPECT_EQ(systems.find("python"), python);
}

}  // namespace
}  // namespace amanda::schema::testing
