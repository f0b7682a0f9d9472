// The one builder of the lowerings' ONNX bodies (src/frameworks/onnx/lowerings/*.cpp): nodes with
// attributes, constants, value infos, and If / Loop whose branches and bodies callbacks write.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace amanda::onnx_frontend::lowering {

// How a builder names the values it makes: prefix + what + a counter. A nested graph may not reuse
// an outer value's name, so nested builders share their parent's counter or start at another one.
// The names are part of the converted files: the two schemes below are the ones those files have
// always carried (the expansion lowerings' and those of refused cases), kept so that outputs stay
// byte-identical.
struct Naming {
  const char* prefix;
  const char* unnamed;  // what an op output with no given name is called; nullptr: the op's type
};
inline constexpr Naming kExpansionNames{"einsum_", "v"};
inline constexpr Naming kRefusalNames{"lw_", nullptr};

class BodyBuilder {
 public:
  // A builder with a counter of its own, starting at `start`.
  BodyBuilder(onnx::GraphProto& g, const Naming& names, int start = 0) : g(g), names_(names), own_(start), n_(&own_) {}
  // A builder sharing `counter` (a nested graph's builder, or one the caller keeps).
  BodyBuilder(onnx::GraphProto& g, const Naming& names, int* counter) : g(g), names_(names), n_(counter) {}
  BodyBuilder(const BodyBuilder&) = delete;
  BodyBuilder& operator=(const BodyBuilder&) = delete;

  onnx::GraphProto& g;
  onnx::NodeProto* last = nullptr;  // the node op(), if_() or loop() added last

  std::string fresh(const std::string& what) { return names_.prefix + what + std::to_string((*n_)++); }

  // A node of `type` reading `ins`, writing `out` (a fresh name when empty).
  std::string op(const std::string& type, const std::vector<std::string>& ins, const std::string& out = "");

  // Attributes of the last node, chained: b.op("Concat", xs); b.i("axis", 0).
  BodyBuilder& i(const char* name, int64_t v) {
    one_int(*last, name, v);
    return *this;
  }
  BodyBuilder& is(const char* name, const std::vector<int64_t>& v) {
    ints(*last, name, v);
    return *this;
  }
  BodyBuilder& f(const char* name, float v);
  BodyBuilder& s(const char* name, const std::string& v);
  static void ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
  static void one_int(onnx::NodeProto& n, const std::string& name, int64_t v);

  // Constants. c: of `type` (ONNX's element type code), dims {} a scalar, the values in the
  // typed field the element type uses. constant_i64: an int64 vector (as_vector) or scalar,
  // exact for every int64.
  std::string c(int type, const std::vector<int64_t>& dims, const std::vector<double>& v);
  std::string ci(const std::vector<int64_t>& v) { return c(onnx::TensorProto::INT64, {int64_t(v.size())}, std::vector<double>(v.begin(), v.end())); }
  std::string si(int64_t v) { return c(onnx::TensorProto::INT64, {}, {double(v)}); }
  std::string constant_i64(const std::vector<int64_t>& v, bool as_vector = true);
  // A constant like c()'s, writing `name` (a lowering's own names: "true", "empty", "f", ...).
  std::string constant(const std::string& name, int type, const std::vector<int64_t>& dims, const std::vector<double>& v) {
    return constant_in(g, name, type, dims, v);
  }
  // The same in any graph (a body the caller writes by hand).
  static std::string constant_in(onnx::GraphProto& g, const std::string& name, int type, const std::vector<int64_t>& dims,
                                 const std::vector<double>& v);

  // Ops with their one attribute.
  std::string cast(const std::string& x, int to) {
    std::string o = op("Cast", {x});
    one_int(*last, "to", to);
    return o;
  }
  std::string unsqueeze(const std::string& x, int64_t axis) {  // axes as an attribute (before 13)
    std::string o = op("Unsqueeze", {x});
    ints(*last, "axes", {axis});
    return o;
  }
  std::string gather(const std::string& x, const std::string& i, int64_t axis) {
    std::string o = op("Gather", {x, i});
    one_int(*last, "axis", axis);
    return o;
  }

  // Shape ops on int64 constants.
  std::string reshape(const std::string& x, const std::vector<int64_t>& shape) { return op("Reshape", {x, constant_i64(shape)}); }
  std::string transpose(const std::string& x, const std::vector<int64_t>& perm);  // x itself for the identity
  std::string reduce_sum(const std::string& x, const std::vector<int64_t>& axes);  // keepdims 0

  // A tensor value info of element `type`; rank >= 0 gives that many unknown dimensions.
  static void vi(onnx::ValueInfoProto* v, const std::string& name, int type, int rank = -1);

  using Branch = std::function<std::vector<std::string>(BodyBuilder&)>;
  // If(cond): outputs of the given element types (shapes left to the branches).
  std::vector<std::string> if_(const std::string& cond, const std::vector<int>& types, const Branch& then_b, const Branch& else_b);
  // Loop(trip, cond) with carried values (inits, types) and scan outputs (types): the body gets
  // (iteration, carried...) and returns (carried..., scans...); its condition stays true.
  using LoopBody = std::function<std::vector<std::string>(BodyBuilder&, const std::string&, const std::vector<std::string>&)>;
  std::vector<std::string> loop(const std::string& trip, const std::vector<std::string>& inits, const std::vector<int>& carried_types,
                                const std::vector<int>& scan_types, const LoopBody& body);

 private:
  Naming names_;
  int own_ = 0;
  int* n_;
};

}  // namespace amanda::onnx_frontend::lowering
