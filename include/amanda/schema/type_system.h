// Pluggable type systems. A namespace schema names its type system (`type_system: python`); the
// type system compiles the schema's type expressions once and then answers, per value:
//  - is this value of this type        (is_instance: 12 is an `int`, [1, 784] a `tensorflow.TensorShape`)
//  - is one type an instance of another (is_subtype: `Float(1, 100)` is a `Float`)
//  - are two values equal under a type  (equal: `float` and `float32` are one `tensorflow.DType`)
// Users add their own by deriving from TypeSystem and calling TypeSystems::add; the library
// needs no change.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/ir/value.h"

namespace amanda::schema {

// A compiled type expression. Built-in type systems describe values with these kinds; a user's
// type system may use Kind::Custom and keep its own data in `name`/`args`.
struct Type {
  enum class Kind {
    Any,       // everything
    Null,
    Bool,
    Int,
    Float,     // also accepts ints
    String,
    List,      // args[0] = element type (Any when unknown)
    Map,
    Tensor,    // a tensor value
    Graph,     // a graph value
    DType,     // a string naming an element type ("float32", "float", "half", "qint8", ...)
    Shape,     // a list of dimensions: ints (-1 = unknown), nulls or strings (symbolic)
    TypeValue, // a string that is itself a type expression of this type system
    Optional,  // args[0] or null
    Union,     // any of args
    Custom,
  };
  Kind kind = Kind::Any;
  std::string text;  // the expression as written, normalised
  std::string name;  // head name, e.g. "Float" of "Float(1, 100)"
  std::vector<std::shared_ptr<const Type>> args;
  std::vector<std::string> dims;  // "Float(1, 100)" -> {"1", "100"}; empty = any shape
  bool has_dims = false;
};
using TypeRef = std::shared_ptr<const Type>;

class TypeSystem {
 public:
  virtual ~TypeSystem() = default;
  virtual std::string_view name() const = 0;
  // Compiles a type expression; returns nullptr and sets *error when it is not a type here.
  virtual TypeRef parse(std::string_view expr, std::string* error) const = 0;
  virtual bool is_instance(const ir::Value& v, const Type& t) const;
  virtual bool is_subtype(const Type& a, const Type& b) const;
  virtual bool equal(const ir::Value& a, const ir::Value& b, const Type& t) const;
  // Convenience: parse both and compare ("Float(1, 100)" is a "Float").
  bool is_subtype(std::string_view a, std::string_view b) const;
  bool is_instance(const ir::Value& v, std::string_view type) const;
};

class TypeSystems {
 public:
  TypeSystems();  // with python, cpp, protobuf, flatbuffers, torchscript and onnx
  void add(std::unique_ptr<TypeSystem> ts);  // replaces one of the same name
  const TypeSystem* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::unique_ptr<TypeSystem>, std::less<>> systems_;
};

// The built-in ones, for reuse by users' type systems.
std::unique_ptr<TypeSystem> make_python_type_system();
std::unique_ptr<TypeSystem> make_cpp_type_system();
std::unique_ptr<TypeSystem> make_protobuf_type_system();
std::unique_ptr<TypeSystem> make_flatbuffers_type_system();
std::unique_ptr<TypeSystem> make_torchscript_type_system();
std::unique_ptr<TypeSystem> make_onnx_type_system();

}  // namespace amanda::schema
