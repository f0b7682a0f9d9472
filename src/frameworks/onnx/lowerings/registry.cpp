#include <map>
#include <string>

#include "lowering.h"

namespace amanda::onnx_frontend::lowering {

const std::map<std::string, Lowering>& lowerings() {
  // The other lowerings are rules of the opset tables (Trilu, GatherElements, Range, ... in
  // tables/onnx/hand/), which the engine tries before this expander. An entry here is for an op
  // whose lowering a table cannot write: Einsum's equation is a string to parse; DFT's matrix of
  // sines and cosines is computed.
  static const std::map<std::string, Lowering> m = {{"Einsum", lower_einsum}, {"DFT", lower_dft}, {"NonZero", lower_nonzero}, {"Compress", lower_compress}, {"Scan", lower_scan8}, {"Det", lower_det}, {"Unique", lower_unique}, {"NonMaxSuppression", lower_nms}, {"MelWeightMatrix", lower_melweightmatrix}, {"TfIdfVectorizer", lower_tfidf}};
  return m;
}

// Lowerings of ops the target has, tried only when the table's rule for the op refuses it
// (ConvertOptions::lowers_refused): each writes ops of the source opset that the table converts.
const std::map<std::string, Lowering>& refusal_lowerings() {
  static const std::map<std::string, Lowering> m = {{"ReduceSum", lower_reducesum_axes}, {"Slice", lower_slice_runtime}, {"Pad", lower_pad_runtime}, {"TopK", lower_topk_runtime}, {"Resize", lower_resize_crop}, {"MaxPool", lower_maxpool}};
  return m;
}

}  // namespace amanda::onnx_frontend::lowering
