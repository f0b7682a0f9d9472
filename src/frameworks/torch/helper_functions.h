// Helper functions of the written TorchScript: ops of the `amanda::` namespace of PyTorch
// (namespaces/pytorch/1.13.d/amanda.ops) that no aten op computes and that need code of their own
// (a loop with a data-dependent number of steps, such as ONNX's NonMaxSuppression). The ONNX ->
// PyTorch tables map to them as to any op; the code emitter writes each one used as a method of the
// module's class, in TorchScript source, and calls it as `self.NAME(...)` with the op's input ports as
// keywords, as an aten op (an input without an edge is None; one the op lacks takes the default). So the .pt needs nothing but
// torch to load (not torchvision, whose extension ops torch.jit.load cannot run without it).
#pragma once

#include <string>
#include <string_view>

namespace amanda::torch_frontend {

struct HelperFunction {
  std::string_view op;      // the namespace's op type, "amanda::non_max_suppression"
  std::string_view method;  // the method's name, "non_max_suppression"
  // The method's source as a class member: lines indented by two spaces, `{self}` for the
  // class's qualified name (torch.jit.save's form: `def f(self: __torch__.x.Model, ...) -> T:`).
  std::string_view source;
};

// The helper computing `op_type`, or nullptr.
const HelperFunction* find_helper_function(std::string_view op_type);

// `h.source` with `{self}` replaced by the class's qualified name.
std::string helper_source(const HelperFunction& h, std::string_view qualified_name);

}  // namespace amanda::torch_frontend
