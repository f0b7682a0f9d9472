// What a Caffe2 graph needs before the tables take it to ONNX (docs/caffe2.md, "Conversion to
// ONNX"): value types (a NetDef stores none; shapes.h), and graph inputs ONNX can hold. An external
// input no op reads and nothing types (a data-queue blob a training net lists, such as zfnet512's
// `gpu_0/imagenet1k_blobs_queue_...`) is not a tensor ONNX could declare: it is dropped, with a
// note naming it. An unnamed net gets a name (ONNX requires one).
#pragma once

#include "amanda/ir/graph.h"
#include "amanda/support/diagnostics.h"

namespace amanda::caffe2_frontend {

void prepare_for_onnx(ir::Graph& g, Diagnostics& diags);

}  // namespace amanda::caffe2_frontend
