// Folding before a conversion whose rules need constants (computed shapes, slice bounds, masks):
// one implementation for the pipeline's own core.fold pass and the framework and extension passes
// that ask for it (ONNX -> TensorFlow, Caffe2, nd4j).
#pragma once

#include "amanda/pipeline/pipeline.h"

namespace amanda::pipeline {

// Folds what no graph input changes into constants, typing the graph (with the small tensors'
// values) between rounds, since a round makes more shapes known; then types it once more without
// values, for the rules that read a rank. The graph's own framework types it; a graph no framework
// provides is left as it is.
void fold_and_type(PassContext& ctx);

}  // namespace amanda::pipeline
