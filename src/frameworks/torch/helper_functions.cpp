// The helper functions' TorchScript source (see helper_functions.h). Each is written as torch's
// serialized code is read back (torch.jit.load compiles it with TorchScript's own front end):
// aten ops as `torch.NAME`, element types as torch's ScalarType codes (4 int64, 6 float32, 11 bool).
#include "frameworks/torch/helper_functions.h"

#include <array>

namespace amanda::torch_frontend {

namespace {

// ONNX's NonMaxSuppression as onnxruntime computes it (non_max_suppression.cc and its helper's
// SuppressByIOU): per batch and class, the boxes whose score is above score_threshold (when given)
// in the order of their scores, higher first, the lower index first among equal ones (a stable
// descending sort); the first box left is kept and every later one it suppresses is dropped, until
// max_output_boxes_per_class are kept (none when it is absent). A kept box suppresses another when
// both overlap on each axis, the intersection and both areas and the union are positive and
// intersection / union > iou_threshold (0 when absent), all in float32 with onnxruntime's formulas
// (corners [y1, x1, y2, x2] in either order for center_point_box 0; [x, y, w, h] with the half
// sides w / 2 and h / 2 for 1), so equal values decide ties alike. The result's rows are
// [batch, class, box], by batch, then class, then selection. Each kept box costs one vectorised
// step over the class's candidates (no N x N matrix).
constexpr std::string_view kNonMaxSuppression = R"(  def non_max_suppression(self: {self}, boxes: Tensor, scores: Tensor, max_output_boxes_per_class: Optional[Tensor]=None, iou_threshold: Optional[Tensor]=None, score_threshold: Optional[Tensor]=None, center_point_box: int=0) -> Tensor:
    max_out = 0
    if max_output_boxes_per_class is not None:
      max_out = int(torch.select(torch.reshape(max_output_boxes_per_class, [-1]), 0, 0))
    iou_thr = torch.zeros(annotate(List[int], []), dtype=6)
    if iou_threshold is not None:
      iou_thr = torch.select(torch.reshape(iou_threshold, [-1]), 0, 0)
    c0 = torch.select(boxes, 2, 0)
    c1 = torch.select(boxes, 2, 1)
    c2 = torch.select(boxes, 2, 2)
    c3 = torch.select(boxes, 2, 3)
    if center_point_box == 0:
      xmin = torch.minimum(c1, c3)
      xmax = torch.maximum(c1, c3)
      ymin = torch.minimum(c0, c2)
      ymax = torch.maximum(c0, c2)
    else:
      half_w = torch.div(c2, 2.)
      half_h = torch.div(c3, 2.)
      xmin = torch.sub(c0, half_w)
      xmax = torch.add(c0, half_w)
      ymin = torch.sub(c1, half_h)
      ymax = torch.add(c1, half_h)
    area = torch.mul(torch.sub(xmax, xmin), torch.sub(ymax, ymin))
    selected = annotate(List[int], [])
    for b in range(scores.size(0)):
      for c in range(scores.size(1)):
        s = torch.select(torch.select(scores, 0, b), 0, c)
        cand = torch.arange(s.size(0))
        if score_threshold is not None:
          above = torch.gt(s, torch.select(torch.reshape(score_threshold, [-1]), 0, 0))
          cand = torch.reshape(torch.nonzero(above), [-1])
        sorted_scores, order = torch.sort(torch.index_select(s, 0, cand), stable=True, dim=0, descending=True)
        cand = torch.index_select(cand, 0, order)
        x0 = torch.index_select(torch.select(xmin, 0, b), 0, cand)
        x1 = torch.index_select(torch.select(xmax, 0, b), 0, cand)
        y0 = torch.index_select(torch.select(ymin, 0, b), 0, cand)
        y1 = torch.index_select(torch.select(ymax, 0, b), 0, cand)
        a = torch.index_select(torch.select(area, 0, b), 0, cand)
        position = torch.arange(cand.size(0))
        alive = torch.ones([cand.size(0)], dtype=11)
        kept = 0
        go = kept < max_out
        while go:
          first = torch.nonzero(alive)
          if first.size(0) == 0:
            go = False
          else:
            k = int(torch.select(torch.select(first, 0, 0), 0, 0))
            selected.append(b)
            selected.append(c)
            selected.append(int(torch.select(cand, 0, k)))
            kept = kept + 1
            go = kept < max_out
            ix0 = torch.maximum(x0, torch.select(x0, 0, k))
            ix1 = torch.minimum(x1, torch.select(x1, 0, k))
            iy0 = torch.maximum(y0, torch.select(y0, 0, k))
            iy1 = torch.minimum(y1, torch.select(y1, 0, k))
            inter = torch.mul(torch.sub(ix1, ix0), torch.sub(iy1, iy0))
            ak = torch.select(a, 0, k)
            union = torch.sub(torch.add(a, ak), inter)
            iou = torch.div(inter, union)
            overlap = torch.logical_and(torch.gt(ix1, ix0), torch.gt(iy1, iy0))
            positive = torch.logical_and(torch.logical_and(torch.gt(inter, 0.), torch.gt(ak, 0.)), torch.logical_and(torch.gt(a, 0.), torch.gt(union, 0.)))
            suppressed = torch.logical_and(torch.logical_and(overlap, positive), torch.gt(iou, iou_thr))
            alive = torch.logical_and(torch.logical_and(alive, torch.logical_not(suppressed)), torch.gt(position, k))
    return torch.reshape(torch.tensor(selected, dtype=4), [-1, 3])
)";

constexpr std::array<HelperFunction, 1> kHelpers = {{
    {"amanda::non_max_suppression", "non_max_suppression", kNonMaxSuppression},
}};

}  // namespace

const HelperFunction* find_helper_function(std::string_view op_type) {
  for (const auto& h : kHelpers)
    if (h.op == op_type) return &h;
  return nullptr;
}

std::string helper_source(const HelperFunction& h, std::string_view qualified_name) {
  std::string out;
  std::string_view s = h.source;
  for (size_t at = 0;;) {
    size_t p = s.find("{self}", at);
    out.append(s.substr(at, p == std::string_view::npos ? std::string_view::npos : p - at));
    if (p == std::string_view::npos) return out;
    out.append(qualified_name);
    at = p + 6;
  }
}

}  // namespace amanda::torch_frontend
