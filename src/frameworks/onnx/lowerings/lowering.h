// Lowerings: ops with no ONNX function body that older ops still express, one file per op in this
// folder, each registered in registry.cpp. The expander (../functions.cpp) calls one when it
// converts an op to an opset that lacks it (`lowerings`), or when the table's rule for the op
// refuses it (`refusal_lowerings`, ConvertOptions::lowers_refused). A lowering writes the body
// (nodes reading kIn + "0", kIn + "1", ..., writing kOut + "0", ...) with a BodyBuilder, or says
// what it would need.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "amanda/ir/graph.h"
#include "body_builder.h"

namespace amanda::onnx_frontend::lowering {

// The names of the expanded op's inputs and outputs in the function's model: unlike any a body
// (SequenceMap's, whose values share the function's scope once inlined) would use.
inline const std::string kIn = "__amanda_in", kOut = "__amanda_out";

// Writes the body, or returns why it cannot ("" when written).
using Lowering = std::function<std::string(const ir::Graph&, ir::OpId, const std::vector<ir::PortId>& ins,
                                           const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body)>;
const std::map<std::string, Lowering>& lowerings();
const std::map<std::string, Lowering>& refusal_lowerings();

// ---- helpers the lowerings share (helpers.cpp)
bool data_port(const ir::Graph& g, ir::PortId p);
// The input's shape, where the model's value info or the IR's type gives it.
void add_shape(const ir::Graph& g, ir::PortId in, onnx::TypeProto::Tensor& t);
// The indices of the true elements of a flat bool `mask` of `n` elements, grown by a Loop.
std::string nonzero_loop(BodyBuilder& b, const std::string& mask, const std::string& n);
int64_t int_attr(const ir::Graph& g, ir::OpId op, const char* name, int64_t dflt);
int known_rank(const std::vector<onnx::TypeProto>& types, size_t k);  // -1: unknown
int elem_of(const std::vector<onnx::TypeProto>& types, size_t k);
bool present(const ir::Graph& g, const std::vector<ir::PortId>& ins, size_t k);
// The known lengths of an op's output (or input source) port, or nullopt when any is unknown.
std::optional<std::vector<int64_t>> known_dims(const ir::Graph& g, ir::PortId src);

// ---- the lowerings, one file each
#define AMANDA_LOWERING(name)                                                                              \
  std::string name(const ir::Graph& g, ir::OpId op, const std::vector<ir::PortId>& ins, \
                   const std::vector<onnx::TypeProto>& types, onnx::GraphProto& body)
AMANDA_LOWERING(lower_einsum);           // einsum.cpp
AMANDA_LOWERING(lower_dft);              // dft.cpp
AMANDA_LOWERING(lower_nonzero);          // nonzero.cpp
AMANDA_LOWERING(lower_compress);         // compress.cpp
AMANDA_LOWERING(lower_scan8);            // scan.cpp
AMANDA_LOWERING(lower_det);              // det.cpp
AMANDA_LOWERING(lower_unique);           // unique.cpp
AMANDA_LOWERING(lower_nms);              // non_max_suppression.cpp
AMANDA_LOWERING(lower_melweightmatrix);  // mel_weight_matrix.cpp
AMANDA_LOWERING(lower_tfidf);            // tfidf_vectorizer.cpp
AMANDA_LOWERING(lower_reducesum_axes);   // reduce_sum.cpp
AMANDA_LOWERING(lower_slice_runtime);    // slice.cpp
AMANDA_LOWERING(lower_pad_runtime);      // pad.cpp
AMANDA_LOWERING(lower_topk_runtime);     // topk.cpp
AMANDA_LOWERING(lower_resize_crop);      // resize.cpp
AMANDA_LOWERING(lower_maxpool);          // max_pool.cpp
#undef AMANDA_LOWERING

}  // namespace amanda::onnx_frontend::lowering
