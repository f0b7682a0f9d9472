// PyTorch's conventions for the framework-neutral layers (amanda/ir/conventions.h).
#include "amanda/frameworks/torch/torchscript.h"

namespace amanda::torch_frontend {

void register_conventions(ir::Conventions& c) {
  // c10::ScalarType (c10/core/ScalarType.h): the numbers TorchScript writes for `dtype=` arguments.
  c.add_dtype_codes("torch", {{0, "uint8"},
                              {1, "int8"},
                              {2, "int16"},
                              {3, "int32"},
                              {4, "int64"},
                              {5, "float16"},
                              {6, "float32"},
                              {7, "float64"},
                              {9, "complex64"},
                              {10, "complex128"},
                              {11, "bool"},
                              {15, "bfloat16"}});
  c.add_constant_op("prim::Constant");
}

}  // namespace amanda::torch_frontend
