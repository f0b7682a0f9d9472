// Types of a Caffe2 graph's values (docs/caffe2.md, "Types"): a NetDef stores none, so the inputs'
// come from --input-shape and the initializers, and each op's outputs from a shape rule of its
// type (one entry per op in shapes.cpp; the rules are Caffe2's TensorInferenceFunctions). What a
// rule cannot tell stays unknown; an op without a rule leaves its outputs untyped.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "amanda/ir/graph.h"

namespace amanda::caffe2_frontend {

// Types the ports of every op of the root graph, in order. Returns the number of ops typed.
size_t infer_types(ir::Graph& g);

// ConvPoolOpBase's arguments in every spelling (kernel / kernel_h+kernel_w / kernels, ...),
// normalised for `spatial` dimensions: what the shape rules and the table functions read.
struct ConvArgs {
  std::vector<int64_t> kernel, stride, dilation, pads;  // pads: begins then ends (ONNX's order)
  int64_t group = 1;
  int64_t legacy_pad = 0;  // 0 NOTSET, 1 VALID, 2 SAME, 3 CAFFE_LEGACY_POOLING
  bool global = false;
  bool nhwc = false;
};
// Throws amanda::Error naming the op when the spellings disagree or a count does not fit.
ConvArgs conv_args(const ir::Graph& g, ir::OpId op, size_t spatial);

}  // namespace amanda::caffe2_frontend
