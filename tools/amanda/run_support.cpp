#include "run_support.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string_view>
#include <iostream>
#include <random>

#include <fmt/format.h>

#include "amanda/io/io.h"
#include "amanda/interp/npy.h"
#include "amanda/support/diagnostics.h"

namespace amanda::tool {

namespace {

interp::RValue read_input_file(const interp::InputSpec& spec, const std::string& path) {
  // A value file of a framework's own format (ONNX's TensorProto .pb), else a NumPy .npy.
  if (const pipeline::Framework* f = io::value_reader(path)) {
    ReadGate gate(path);
    ir::Value v = f->read_values(gate, spec.type);
    if (v.kind() == ir::Value::Kind::Null) return interp::RValue::none();
    if (v.is_tensor()) return interp::RValue(interp::Tensor::borrow(v.tensor_ptr()));
    std::vector<interp::Tensor> s;
    for (const auto& t : v.as_list()) s.push_back(interp::Tensor::borrow(t.tensor_ptr()));
    return interp::RValue::sequence(std::move(s));
  }
  return interp::RValue(interp::read_npy(path));
}

void check_against_spec(const interp::InputSpec& spec, interp::RValue& v, const std::string& path) {
  if (!v.is_tensor()) return;
  // numpy (and onnx's test data) hold bfloat16 as its bits in uint16.
  if (spec.dtype == ir::DType::BFloat16 && v.tensor.dtype() == ir::DType::UInt16) v.tensor = v.tensor.retyped(ir::DType::BFloat16);
  const interp::Tensor& t = v.tensor;
  std::string where = "input '" + spec.name + "' (" + path + ")";
  if (spec.dtype != ir::DType::Undefined && t.dtype() != spec.dtype)
    throw Error(where + ": element type " + std::string(ir::dtype_name(t.dtype())) + ", but the model wants " +
                std::string(ir::dtype_name(spec.dtype)));
  if (!spec.has_shape) return;
  bool ok = t.rank() == static_cast<int64_t>(spec.shape.size());
  for (size_t i = 0; ok && i < spec.shape.size(); ++i) ok = spec.shape[i] < 0 || spec.shape[i] == t.shape()[i];
  if (!ok) {
    std::string want = "[";
    for (size_t i = 0; i < spec.shape.size(); ++i) want += (i ? ", " : "") + (spec.shape[i] < 0 ? std::string("?") : std::to_string(spec.shape[i]));
    throw Error(where + ": shape " + interp::shape_str(t.shape()) + ", but the model wants " + want + "]");
  }
}

}  // namespace

interp::Tensor random_input(const interp::InputSpec& spec, uint64_t& state) {
  if (spec.dtype == ir::DType::Undefined || spec.dtype == ir::DType::String)
    throw Error("input '" + spec.name + "': cannot make a random value of type " + (spec.type.empty() ? "?" : spec.type) +
                "; give it with --input");
  interp::Shape s;
  for (int64_t d : spec.shape) s.push_back(d < 0 ? 1 : d);
  std::mt19937_64 rng(state++);
  interp::Tensor f = interp::Tensor::uninit(ir::DType::Float64, s);
  bool integral = !(spec.dtype == ir::DType::Float32 || spec.dtype == ir::DType::Float64 ||
                    spec.dtype == ir::DType::Float16 || spec.dtype == ir::DType::BFloat16);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> ui(0, spec.dtype == ir::DType::Bool ? 1 : 9);
  for (int64_t i = 0; i < f.numel(); ++i) f.mutable_data<double>()[i] = integral ? ui(rng) : u(rng);
  interp::Tensor t = interp::Tensor::uninit(spec.dtype, s);
  // Cast through the interpreter's own rule (Cast kernel) by building the bytes directly.
  for (int64_t i = 0; i < f.numel(); ++i) {
    double v = f.data<double>()[i];
    switch (spec.dtype) {
      case ir::DType::Float32: t.mutable_data<float>()[i] = static_cast<float>(v); break;
      case ir::DType::Float64: t.mutable_data<double>()[i] = v; break;
      case ir::DType::Float16: t.mutable_data<uint16_t>()[i] = interp::float_to_half(static_cast<float>(v)); break;
      case ir::DType::BFloat16: t.mutable_data<uint16_t>()[i] = interp::float_to_bf16(static_cast<float>(v)); break;
      case ir::DType::Bool: t.mutable_data<uint8_t>()[i] = v != 0; break;
      case ir::DType::Int8: t.mutable_data<int8_t>()[i] = static_cast<int8_t>(v); break;
      case ir::DType::UInt8: t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case ir::DType::Int16: t.mutable_data<int16_t>()[i] = static_cast<int16_t>(v); break;
      case ir::DType::UInt16: t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      case ir::DType::Int32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case ir::DType::UInt32: t.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
      case ir::DType::Int64: t.mutable_data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case ir::DType::UInt64: t.mutable_data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
      default: throw Error("input '" + spec.name + "': cannot make a random value of this type");
    }
  }
  return t;
}

std::map<std::string, interp::RValue> prepare_inputs(const interp::Executor& ex, const std::vector<std::string>& specs,
                                                     uint64_t seed, std::vector<std::string>* random_names) {
  auto declared = ex.inputs();
  std::map<std::string, std::string> files;
  for (const auto& s : specs) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--input '" + s + "': expected NAME=FILE");
    std::string name = s.substr(0, eq);
    bool known = false;
    for (const auto& d : declared) known |= d.name == name;
    if (!known) {
      std::string names;
      for (const auto& d : declared) names += (names.empty() ? "" : ", ") + d.name;
      throw Error("--input '" + s + "': the model has no input '" + name + "' (inputs: " + names + ")");
    }
    files[name] = s.substr(eq + 1);
  }
  std::map<std::string, interp::RValue> feeds;
  uint64_t state = seed;
  for (const auto& d : declared) {
    if (auto it = files.find(d.name); it != files.end()) {
      interp::RValue v = read_input_file(d, it->second);
      check_against_spec(d, v, it->second);
      feeds.emplace(d.name, std::move(v));
    } else if (d.type.starts_with("optional(")) {
      feeds.emplace(d.name, interp::RValue::none());  // an optional input not given is empty
    } else if (!d.has_initializer) {
      feeds.emplace(d.name, interp::RValue(random_input(d, state)));
      if (random_names) random_names->push_back(d.name);
    }
  }
  return feeds;
}

std::string describe(const interp::RValue& v) {
  if (v.kind == interp::RValue::Kind::None) return "none (empty optional)";
  if (v.kind == interp::RValue::Kind::Sequence) return fmt::format("sequence of {} tensors", v.seq.size());
  const interp::Tensor& t = v.tensor;
  std::string s = fmt::format("{} {}", ir::dtype_name(t.dtype()), interp::shape_str(t.shape()));
  if (t.numel() == 0 || t.dtype() == ir::DType::String) return s;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double x = t.get_f64(i);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  return s + fmt::format(" min {:.6g} max {:.6g} mean {:.6g}", lo, hi, sum / static_cast<double>(t.numel()));
}

std::string value_name(const ir::Graph& g, ir::PortId p) {
  amanda::Symbol s = g.symbols().find("@value");
  if (const ir::Value* v = s ? g.attr(p, s) : nullptr; v && v->is_string() && !v->as_string().empty()) return v->as_string();
  return g.path(p);
}

void reexec_for_openmp(int argc, char** argv) {
  if (argc < 2 || std::getenv("OMP_WAIT_POLICY")) return;
  bool runs = std::string_view(argv[1]) == "run";
  for (int i = 2; i < argc && !runs; ++i) runs = std::string_view(argv[1]) == "convert" && std::string_view(argv[i]) == "--check";
  if (!runs) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // on failure: carry on without it
}

bool report_missing_kernels(const interp::Executor& ex, const std::string& model) {
  auto missing = ex.missing_kernels();
  if (missing.empty()) return false;
  std::cerr << model << ": the interpreter has no kernel for " << missing.size() << " op(s); nothing was computed:\n";
  for (const auto& m : missing) std::cerr << "  " << m.path << ": " << m.type << " (opset " << m.opset << ")\n";
  return true;
}

}  // namespace amanda::tool
