#!/usr/bin/python3
"""Sizes known only at run time: scripted modules whose tensors' sizes depend on the input's values
(a bool mask's selection, nonzero, torchvision's nms, topk(min(k, n)), a slice of such a tensor,
an `if` whose branches give different sizes), converted by the libtorch-free reader.

  run_time_sizes_test.py AMANDA [--only NAME,...]

Each case is scripted (torch.jit.script), saved, converted with `--reader script`, checked with
onnx.checker (full_check) and run in onnxruntime-node on several input sets (one selecting nothing
among them); every output must have torch's shape and element type, integers equal, floats
within rtol 1e-4 / atol 1e-5. `postprocess` is the per-class postprocessing of torchvision's SSD
(ssd.py's postprocess_detections: mask, topk(min(k, n)), full_like labels, cat, batched NMS by the
coordinate trick, keep[:k]) on a small head; every set gives at least one detection.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torchvision  # noqa: F401  (registers torchvision::nms for torch.jit.script)
from torch import Tensor
from torchvision.ops import boxes as box_ops

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "js", "ort_run_typed.js")


class MaskRows(torch.nn.Module):  # boxes[scores > t]: a mask over the leading dimension
    def forward(self, boxes, scores):
        keep = scores > 0.5
        return boxes[keep], scores[keep]


class MaskAll(torch.nn.Module):  # x[x > 0]: a mask of x's shape, a 1-D result
    def forward(self, x):
        return x[x > 0] * 2.0


class Nonzero(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x > 0.2)


class MaskedSelect(torch.nn.Module):
    def forward(self, x):
        return torch.masked_select(x, x > 0.3) + 1.0


class TopkMin(torch.nn.Module):  # topk(min(k, n)) with n the length of a selection
    def forward(self, x):
        s = x[x > 0]
        k = min(4, s.size(0))
        v, i = s.topk(k)
        return v, i


class SliceRunTime(torch.nn.Module):  # s[:3], s[1:] of a selection
    def forward(self, x):
        s = x[x > 0]
        return s[:3], s[1:], s[-2:]


class IfEmpty(torch.nn.Module):  # an if on a run-time size whose branches give different sizes
    def forward(self, x):
        s = x[x > 0]
        if s.numel() == 0:
            r = torch.empty([0])
        else:
            r = s * 3.0
        if len(s) > 2:
            t = s[:2] + 1.0
        else:
            t = -s
        return r, t


class FullLike(torch.nn.Module):  # full_like / zeros_like of a selection; cat of two selections
    def forward(self, x):
        a = x[x > 0.5]
        b = x[x < -0.5]
        la = torch.full_like(a, 1, dtype=torch.int64)
        lb = torch.full_like(b, 2, dtype=torch.int64)
        return torch.cat([a, b]), torch.cat([la, lb]), torch.zeros_like(a) + a


class Nms(torch.nn.Module):  # torchvision::nms
    def forward(self, boxes, scores):
        return torchvision.ops.nms(boxes, scores, 0.4)


class NmsSelected(torch.nn.Module):  # nms of a selection, then the kept boxes
    def forward(self, boxes, scores):
        keep = scores > 0.3
        b = boxes[keep]
        s = scores[keep]
        k = torchvision.ops.nms(b, s, 0.5)
        return b[k], s[k]


class BatchedNms(torch.nn.Module):  # the coordinate trick: boxes offset per class, one nms
    def forward(self, boxes, scores, idxs):
        return box_ops._batched_nms_coordinate_trick(boxes, scores, idxs, 0.5)


class BatchedNmsSelected(torch.nn.Module):  # torchvision.ops.batched_nms of a selection
    # (it chooses on boxes.numel() > 4000, a run-time size: an If whose branches are the coordinate
    # trick and _batched_nms_vanilla, a loop over torch.unique(idxs) writing keep_mask in place)
    def forward(self, boxes, scores, idxs):
        keep = scores > 0.2
        return torchvision.ops.batched_nms(boxes[keep], scores[keep], idxs[keep], 0.5)


class UniqueSort(torch.nn.Module):  # unique (with inverse) of a selection's rounded values, sort of it
    def forward(self, x):
        s = x[x > 0]
        u, inv = torch.unique(torch.round(s), return_inverse=True)
        v, i = torch.sort(s, descending=True)
        return u, inv, v, i


class PadCopy(torch.nn.Module):  # transform.py's batch_images for one image: a copy into the whole padded batch
    def forward(self, x):
        b = x.new_full([1, 3, 4, 5], 0.0)
        b[0][: x.shape[0], : x.shape[1], : x.shape[2]].copy_(x)
        return b * 2.0


class PadCopyPart(torch.nn.Module):  # a copy into part of it: refused (the write would not reach b)
    def forward(self, x):
        b = x.new_full([1, 3, 8, 8], 0.0)
        b[0][: x.shape[0], : x.shape[1], : x.shape[2]].copy_(x)
        return b * 2.0


class AsTensor(torch.nn.Module):  # torch.as_tensor(list, dtype=, device=)
    def forward(self, x):
        m = torch.as_tensor([0.5, 1.0, 2.0], dtype=x.dtype, device=x.device)
        return (x - m[:, None, None]) / torch.as_tensor([2.0, 4.0, 8.0], dtype=x.dtype)[:, None, None]


class Postprocess(torch.nn.Module):  # ssd.py's postprocess_detections for one image
    def __init__(self):
        super().__init__()
        self.score_thresh = 0.2
        self.topk_candidates = 5
        self.nms_thresh = 0.5
        self.detections_per_img = 6

    def forward(self, boxes, logits):
        scores = torch.softmax(logits, -1)
        num_classes = scores.size(-1)
        image_boxes = []
        image_scores = []
        image_labels = []
        for label in range(1, num_classes):
            score = scores[:, label]
            keep_idxs = score > self.score_thresh
            score = score[keep_idxs]
            box = boxes[keep_idxs]
            num_topk = min(self.topk_candidates, score.size(0))
            score, idxs = score.topk(num_topk)
            box = box[idxs]
            image_boxes.append(box)
            image_scores.append(score)
            image_labels.append(torch.full_like(score, fill_value=label, dtype=torch.int64))
        image_boxes = torch.cat(image_boxes, dim=0)
        image_scores = torch.cat(image_scores, dim=0)
        image_labels = torch.cat(image_labels, dim=0)
        keep = box_ops._batched_nms_coordinate_trick(image_boxes, image_scores, image_labels, self.nms_thresh)
        keep = keep[: self.detections_per_img]
        return image_boxes[keep], image_scores[keep], image_labels[keep]


def rnd(seed, shape, scale=1.0, shift=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(np.float32)


def boxes(seed, n, size=10.0):  # corners in [0, size), sides in [size/2, size): many overlap
    g = np.random.default_rng(seed)
    xy = g.uniform(0, size, (n, 2))
    wh = g.uniform(size / 2, size, (n, 2))
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def scores(seed, n):  # distinct, so that sorting and NMS have no ties
    return np.random.default_rng(seed).permutation(np.linspace(0.05, 0.95, n)).astype(np.float32)


N = 12
# case: (module, input shapes, input types, input sets)
CASES = {
    "mask_rows": (MaskRows, [(N, 4), (N,)], ["float32"] * 2,
                  [[boxes(1, N), scores(2, N)], [boxes(3, N), scores(4, N) * 0.5]]),
    "mask_all": (MaskAll, [(3, 4)], ["float32"], [[rnd(5, (3, 4))], [-np.abs(rnd(6, (3, 4)))]]),
    "nonzero": (Nonzero, [(3, 4)], ["float32"], [[rnd(7, (3, 4))], [-np.abs(rnd(8, (3, 4)))]]),
    "masked_select": (MaskedSelect, [(3, 4)], ["float32"], [[rnd(9, (3, 4))], [-np.abs(rnd(10, (3, 4)))]]),
    "topk_min": (TopkMin, [(8,)], ["float32"],
                 [[rnd(11, (8,))], [np.array([-1, 2, -3, -4, -5, -6, 0.5, -7], np.float32)], [-np.abs(rnd(12, (8,)))]]),
    "slice_run_time": (SliceRunTime, [(8,)], ["float32"],
                       [[rnd(13, (8,))], [np.array([-1, 2, -3, -4, -5, -6, -0.5, -7], np.float32)], [-np.abs(rnd(14, (8,)))]]),
    "if_empty": (IfEmpty, [(6,)], ["float32"], [[rnd(15, (6,))], [-np.abs(rnd(16, (6,)))]]),
    "full_like": (FullLike, [(10,)], ["float32"], [[rnd(17, (10,))], [np.zeros(10, np.float32)]]),
    "nms": (Nms, [(N, 4), (N,)], ["float32"] * 2, [[boxes(18, N), scores(19, N)], [boxes(20, N, 4.0), scores(21, N)]]),
    "nms_selected": (NmsSelected, [(N, 4), (N,)], ["float32"] * 2,
                     [[boxes(22, N), scores(23, N)], [boxes(24, N), scores(25, N) * 0.3]]),
    "batched_nms": (BatchedNms, [(N, 4), (N,), (N,)], ["float32", "float32", "int64"],
                    [[boxes(26, N, 5.0), scores(27, N), np.random.default_rng(28).integers(0, 2, N)],
                     [boxes(29, N, 5.0), scores(30, N), np.zeros(N, np.int64)]]),
    "batched_nms_selected": (BatchedNmsSelected, [(1500, 4), (1500,), (1500,)], ["float32", "float32", "int64"],
                             [[boxes(36, 1500, 60.0), scores(37, 1500) * 0.22, np.random.default_rng(38).integers(0, 3, 1500)],
                              [boxes(39, 1500, 60.0), scores(40, 1500), np.random.default_rng(41).integers(0, 3, 1500)]]),
    "unique_sort": (UniqueSort, [(10,)], ["float32"],
                    [[np.array([0.4, 1.2, -1, 0.6, 2.1, 1.4, -3, 0.9, 2.3, 0.2], np.float32)], [-np.abs(rnd(43, (10,)))]]),
    "pad_copy": (PadCopy, [(3, 4, 5)], ["float32"], [[rnd(44, (3, 4, 5))]]),
    "as_tensor": (AsTensor, [(3, 2, 2)], ["float32"], [[rnd(31, (3, 2, 2))]]),
    "postprocess": (Postprocess, [(16, 4), (16, 4)], ["float32"] * 2,
                    [[boxes(32, 16, 8.0), rnd(33, (16, 4), 1.5)], [boxes(34, 16, 8.0), rnd(35, (16, 4), 0.5)]]),
}


# refused (exit 1, nothing written), and what the message must name
REFUSED = {
    "pad_copy_part": (PadCopyPart, [(3, 4, 5)], ["float32"], "writes a view of a folded tensor"),
}


def main():
    amanda = sys.argv[1]
    only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else list(CASES)
    only = [n for n in only if n in CASES] + [n for n in only if n in REFUSED]
    failures, figures, expect, jobs = [], [], [], []
    with tempfile.TemporaryDirectory() as d:
        for name in [n for n in only if n in CASES]:
            cls, shapes, types, sets = CASES[name]
            m = torch.jit.script(cls().eval())
            pt = os.path.join(d, name + ".pt")
            m.save(pt)
            out = os.path.join(d, name + ".onnx")
            args = []
            for s, t in zip(shapes, types):
                args += ["--input-shape", ",".join(map(str, s)), "--input-type", t]
            p = subprocess.run([amanda, "convert", pt, *args, "--reader", "script", "-o", out], capture_output=True, text=True)
            if p.returncode != 0:
                failures.append(f"{name}: conversion failed: {p.stderr.strip()[-800:]}")
                continue
            model = onnx.load(out)
            try:
                onnx.checker.check_model(model, full_check=True)
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name}: onnx.checker: {e}")
                continue
            names = [i.name for i in model.graph.input]
            for k, inputs in enumerate(sets):
                feeds = {}
                for j, (nm, a) in enumerate(zip(names, inputs)):
                    f = os.path.join(d, f"{name}.{k}.in{j}.bin")
                    a.tofile(f)
                    feeds[nm] = {"file": f, "shape": list(a.shape), "type": types[j]}
                with torch.no_grad():
                    ref = m(*[torch.from_numpy(a) for a in inputs])
                ref = [r.numpy() for r in (ref if isinstance(ref, tuple) else (ref,))]
                prefix = os.path.join(d, f"{name}.{k}.out")
                jobs.append({"model": out, "inputs": feeds, "out": prefix})
                expect.append((f"{name} input set {k}", prefix, ref))
        for name, (cls, shapes, types, needle) in REFUSED.items():
            if "--only" in sys.argv and name not in only:
                continue
            pt = os.path.join(d, name + ".pt")
            torch.jit.script(cls().eval()).save(pt)
            out = os.path.join(d, name + ".onnx")
            args = []
            for sh, t in zip(shapes, types):
                args += ["--input-shape", ",".join(map(str, sh)), "--input-type", t]
            p = subprocess.run([amanda, "convert", pt, *args, "--reader", "script", "-o", out], capture_output=True, text=True)
            if p.returncode != 1 or os.path.exists(out) or needle not in p.stderr:
                failures.append(f"{name}: expected a refusal naming '{needle}' (exit 1, no output), got exit {p.returncode}: {p.stderr.strip()[-300:]}")
            else:
                figures.append(f"{name}: refused ({needle})")
        jf = os.path.join(d, "jobs.json")
        with open(jf, "w") as f:
            json.dump(jobs, f)
        subprocess.run(["node", ORT_RUN, jf], check=True)
        for label, prefix, ref in expect:
            with open(prefix + ".json") as f:
                res = json.load(f)
            if "error" in res:
                failures.append(f"{label}: onnxruntime: {res['error']}")
                continue
            if len(res["outputs"]) != len(ref):
                failures.append(f"{label}: {len(res['outputs'])} outputs, torch gives {len(ref)}")
                continue
            worst, sizes = 0.0, []
            for k, (o, r) in enumerate(zip(res["outputs"], ref)):
                if o["type"] != str(r.dtype):
                    failures.append(f"{label}: output {k} is {o['type']}, torch's {r.dtype}")
                    continue
                got = np.fromfile(f"{prefix}.{k}.bin", dtype=r.dtype).reshape(o["shape"])
                sizes.append("x".join(map(str, r.shape)))
                if got.shape != r.shape:
                    failures.append(f"{label}: output {k} has shape {got.shape}, torch {r.shape}")
                    continue
                if r.dtype.kind in "iub":
                    if not np.array_equal(got, r):
                        failures.append(f"{label}: output {k} differs: {got.tolist()} vs torch {r.tolist()}")
                    continue
                if not np.allclose(got, r, rtol=1e-4, atol=1e-5):
                    failures.append(f"{label}: output {k} differs by {np.abs(got - r).max():.3g}")
                if r.size:
                    worst = max(worst, float(np.abs(got - r).max()))
            figures.append(f"{label}: output shapes {', '.join(sizes)}; max abs difference {worst:.2g}")
    for f in figures:
        print(f)
    for f in failures:
        print("FAIL:", f)
    print(f"{len(expect)} runs compared, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
