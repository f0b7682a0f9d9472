#!/usr/bin/python3
"""ONNX NonMaxSuppression -> TorchScript (issue 29): generated one-op models converted with
`amanda convert M.onnx -o M.pt`, run by torch.jit.load (plain torch: the .pt's helper method, no
torchvision) and compared exactly with onnxruntime (tests/js/ort_run_typed.js) and with a numpy
reference of onnxruntime's greedy selection written here pair by pair (float32 arithmetic, as its
SuppressByIOU), which must agree with onnxruntime too.

The cases vary what changes the result: center_point_box 0 (corners in either order, some boxes of
zero area) and 1; one to three batches and classes; 1 to 40 boxes in clusters that overlap; scores
with ties (the lower index is taken first) or distinct; max_output_boxes_per_class absent, 0, small,
above the box count, 0-d or 1-d; iou_threshold absent, 0, 1 or between; score_threshold absent or a
value some scores equal (strictly above is kept); the thresholds as graph inputs or constants.

    nms_cases_test.py AMANDA [--seed S] [--cases N]
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_runner import run_cases  # noqa: E402

F32 = np.float32


def suppresses(b1, b2, center, thr):
    """onnxruntime's SuppressByIOU(b1 selected, b2 candidate), in float32."""
    b1, b2 = [F32(v) for v in b1], [F32(v) for v in b2]
    if center == 0:
        x1min, x1max = min(b1[1], b1[3]), max(b1[1], b1[3])
        x2min, x2max = min(b2[1], b2[3]), max(b2[1], b2[3])
        y1min, y1max = min(b1[0], b1[2]), max(b1[0], b1[2])
        y2min, y2max = min(b2[0], b2[2]), max(b2[0], b2[2])
    else:
        w1, h1, w2, h2 = b1[2] / F32(2), b1[3] / F32(2), b2[2] / F32(2), b2[3] / F32(2)
        x1min, x1max, y1min, y1max = b1[0] - w1, b1[0] + w1, b1[1] - h1, b1[1] + h1
        x2min, x2max, y2min, y2max = b2[0] - w2, b2[0] + w2, b2[1] - h2, b2[1] + h2
    ixmin, ixmax = max(x1min, x2min), min(x1max, x2max)
    if ixmax <= ixmin:
        return False
    iymin, iymax = max(y1min, y2min), min(y1max, y2max)
    if iymax <= iymin:
        return False
    inter = F32((ixmax - ixmin) * (iymax - iymin))
    if inter <= 0:
        return False
    a1 = F32((x1max - x1min) * (y1max - y1min))
    a2 = F32((x2max - x2min) * (y2max - y2min))
    union = F32(a1 + a2 - inter)
    if a1 <= 0 or a2 <= 0 or union <= 0:
        return False
    return bool(F32(inter / union) > F32(thr))


def reference(boxes, scores, max_out, iou, sthr, center):
    rows = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            cand = [i for i in range(s.shape[0]) if sthr is None or s[i] > F32(sthr)]
            cand.sort(key=lambda i: (-float(s[i]), i))
            kept = []
            for i in cand:
                if len(kept) >= max_out:
                    break
                if not any(suppresses(boxes[b, j], boxes[b, i], center, iou) for j in kept):
                    kept.append(i)
            rows += [[b, c, i] for i in kept]
    return np.array(rows, np.int64).reshape(-1, 3)


def make_boxes(rng, nb, n, center):
    """Boxes in a few clusters (so that many overlap), some of zero area, corners swapped at times."""
    k = max(1, n // 5)
    centres = rng.uniform(0, 10, (nb, k, 2))
    which = rng.integers(0, k, (nb, n))
    c = np.take_along_axis(centres, which[..., None].repeat(2, -1), 1) + rng.normal(0, 0.4, (nb, n, 2))
    wh = rng.uniform(0.5, 3, (nb, n, 2)) * (rng.random((nb, n, 1)) > 0.1)  # one in ten: zero area
    if center == 1:
        return np.concatenate([c, wh], -1).astype(F32)
    lo, hi = c - wh / 2, c + wh / 2  # [y, x] pairs
    yx = np.stack([lo[..., 0], lo[..., 1], hi[..., 0], hi[..., 1]], -1)
    swap = rng.random((nb, n)) < 0.3  # flipped corners: [y2, x2, y1, x1]
    yx[swap] = yx[swap][:, [2, 3, 0, 1]]
    return yx.astype(F32)


def cases(rng, count):
    out = []
    for k in range(count):
        center = k % 2
        nb, nc, n = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 41))
        boxes = make_boxes(rng, nb, n, center)
        scores = (np.round(rng.random((nb, nc, n)) * 10) / 10 if k % 3 == 0 else rng.random((nb, nc, n))).astype(F32)  # ties
        max_out = [None, 0, 1, 3, n + 5, int(rng.integers(1, n + 1))][k % 6]
        iou = [None, 0.0, 1.0, 0.5, float(rng.uniform(0.1, 0.9))][(k // 2) % 5]
        sthr = None if k % 4 == 1 else float(scores.flat[int(rng.integers(0, scores.size))]) if k % 4 == 2 else [0.0, 0.3, 0.99][k % 3]
        as_inputs = k % 5 < 2  # the thresholds as graph inputs (else constants in the graph)
        nodes, inputs, inits, names, feeds = [], [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, list(boxes.shape)),
                                                  helper.make_tensor_value_info("scores", TensorProto.FLOAT, list(scores.shape))], [], ["boxes", "scores"], {"boxes": boxes, "scores": scores}
        for name, v, dt in (("max_out", max_out, np.int64), ("iou", iou, F32), ("sthr", sthr, F32)):
            if v is None:
                names.append("")
                continue
            arr = np.array([v] if k % 7 else v, dt)  # 1-d, at times 0-d
            names.append(name)
            if as_inputs:
                inputs.append(helper.make_tensor_value_info(name, TensorProto.INT64 if dt is np.int64 else TensorProto.FLOAT, list(arr.shape)))
                feeds[name] = arr
            else:
                nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name + "_v")))
        while names and names[-1] == "":
            names.pop()
        nodes.append(helper.make_node("NonMaxSuppression", names, ["selected"], center_point_box=center))
        g = helper.make_graph(nodes, "nms", inputs, [helper.make_tensor_value_info("selected", TensorProto.INT64, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        want = reference(boxes, scores, 0 if max_out is None else max_out, 0.0 if iou is None else iou, sthr, center)
        name = f"nms{k}_cpb{center}_b{nb}c{nc}n{n}_max{max_out}_iou{iou}_s{sthr}" + ("_inputs" if as_inputs else "")
        out.append((name, m, feeds, [want]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--cases", type=int, default=60)
    a = ap.parse_args()
    cs = cases(np.random.default_rng(a.seed), a.cases)
    kept = sum(len(w[0]) for _, _, _, w in cs)
    print(f"{len(cs)} cases, {kept} rows selected by the reference in all")
    return run_cases(a.amanda, cs, [], reference_is_ort=True, label="NonMaxSuppression cases")


if __name__ == "__main__":
    sys.exit(main())
