// The boundary of a graph converted into a TensorFlow namespace from a framework whose graphs have
// inputs and outputs (ONNX): a GraphDef has none, its placeholders and weights are ops, and a TF.js
// model names its outputs in `signature` (docs/tensorflow.md, "ONNX -> TensorFlow").
#pragma once

#include "amanda/ir/graph.h"

namespace amanda::tf_frontend {

// Rewrites the root of `g` (already in an amanda/tensorflow namespace) in place:
// - a graph input fixed by an initializer -> a Const op (value, dtype);
// - any other graph input -> a Placeholder (dtype, shape; an unknown or symbolic dimension -1);
// - a graph output -> an Identity named by it;
// - root attribute `tfjs` = {format, generatedBy, convertedBy, signature {inputs, outputs}} (the
//   ONNX model attributes are dropped);
// - TF.js has no 64-bit types: int64 and float64 Const values and dtype attributes become int32
//   (clamped) and float32;
// - op names TensorFlow and TF.js cannot parse (':' and other characters, a leading '/') are made
//   valid, and Const ops a rule made get their `dtype` from their value;
// - a Transpose (or Reshape) of a Const (weights in a layout TF wants) is folded into a Const;
// - Transposes sink below elementwise ops they alone feed, and pairs that undo each other go away
//   (the NCHW <-> NHWC wrappers around convolutions and pools).
// Does nothing when the root has no ports.
void graph_ports_to_ops(ir::Graph& g);

}  // namespace amanda::tf_frontend
