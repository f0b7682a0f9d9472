#!/usr/bin/python3
"""Per-op cases for the ONNX -> PyTorch rules added in session 30 (issue 29): generated small models
of one op each, converted with `amanda convert M.onnx -o M.pt`, run by torch.jit.load and compared
with onnxruntime (tests/js/ort_run_typed.js) on the same inputs and with torch's own function for the
op (torch.split, F.layer_norm, F.nll_loss, F.cross_entropy, torch.gather; Resize: onnxruntime only), within 1e-5 relative to max(1, |x|); integer
results exactly.

    op_cases_test.py AMANDA [--seed S] [--cases-per-op N]

Ops: Split (sizes as a constant, sizes as a graph input, equal parts; every axis of ranks 1-4,
negative axes, zero-size parts) and LayerNormalization (opset 17: every axis of ranks 2-4, with and
without a bias, epsilons, the Mean/InvStdDev outputs) and Resize with constant scales or sizes
(nearest, linear 1-3-D, cubic 2-D in the coordinate modes torch computes alike),
NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss (reductions, weights, ignore_index, 0-3 spatial
axes, the log_prob output), GatherElements (negative axes and indices) and ReduceProd (float32 and
int32) / ReduceSumSquare / ReduceLogSum, ArgMax/ArgMin select_last_index, Hardmax, DepthToSpace,
SpaceToDepth, Shrink, Det, NonZero, Compress, InstanceNormalization, ScatterElements, Dropout's
mask outside training. Cases that must be refused are checked to be
refused with the op named: Split with no sizes into uneven parts, Resize's tf_crop_and_resize
(nearest half_pixel with ties, cubic_coeff_a -0.5, tf_half_pixel_for_nn convert now, by the general
Resize rule of onnx_13_pytorch_1.13_run_time_lists.yaml; asymmetric linear converts too:
model_op_cases_test.py).
"""
import argparse
import os
import sys

import numpy as np
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from case_runner import run_cases  # noqa: E402  (convert, run in torch and onnxruntime, compare)
NP_TYPE = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32, np.bool_: TensorProto.BOOL}


def vi(name, arr):
    return helper.make_tensor_value_info(name, NP_TYPE[arr.dtype.type], list(arr.shape))


def model(nodes, inputs, outputs, opset, inits=()):
    elem = NP_TYPE[next(iter(inputs.values())).dtype.type]  # every case's outputs have its first input's type
    g = helper.make_graph(nodes, "case", [vi(k, v) for k, v in inputs.items()],
                          [helper.make_tensor_value_info(o, elem, None) for o in outputs],
                          [numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def split_cases(rng, n):
    cases = []
    for k in range(n):
        rank = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 5)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        d = int(rng.integers(2, 9))
        shape[axis] = d
        x = rng.standard_normal(shape).astype(np.float32)
        kind = ["const", "input", "equal"][k % 3]
        if kind == "equal":
            parts = int(rng.choice([p for p in range(1, d + 1) if d % p == 0]))
            sizes = [d // parts] * parts
        else:
            cuts = sorted(int(c) for c in rng.integers(0, d + 1, size=int(rng.integers(1, 4))))
            sizes = [b - a for a, b in zip([0] + cuts, cuts + [d])]  # zero-size parts included
        outs = [f"y{i}" for i in range(len(sizes))]
        attrs = {} if (axis == 0 and k % 2) else {"axis": axis}
        ax = attrs.get("axis", 0)
        want = [t.numpy() for t in torch.split(torch.from_numpy(x), sizes, dim=ax)]
        s = np.array(sizes, dtype=np.int64)
        if kind == "const":
            m = model([helper.make_node("Split", ["x", "s"], outs, **attrs)], {"x": x}, outs, 13, [("s", s)])
            ins = {"x": x}
        elif kind == "input":
            m = model([helper.make_node("Split", ["x", "s"], outs, **attrs)], {"x": x, "s": s}, outs, 13)
            ins = {"x": x, "s": s}
        else:
            m = model([helper.make_node("Split", ["x"], outs, **attrs)], {"x": x}, outs, 13)
            ins = {"x": x}
        cases.append((f"split_{kind}_{k}_{shape}_axis{ax}_{sizes}", m, ins, want))
    return cases


def layer_norm_cases(rng, n):
    cases = []
    for k in range(n):
        rank = int(rng.integers(2, 5))
        shape = [int(rng.integers(1, 6)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        a = axis % rank
        eps = float(rng.choice([1e-5, 1e-3, 0.1]))
        x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        w = rng.standard_normal(shape[a:]).astype(np.float32)
        b = rng.standard_normal(shape[a:]).astype(np.float32)
        bias = k % 2 == 0
        stats = k % 3 == 0
        outs = ["y", "mean", "inv_std"] if stats else ["y"]
        ins = {"x": x, "w": w, **({"b": b} if bias else {})}
        node = helper.make_node("LayerNormalization", list(ins), outs, axis=axis, epsilon=eps)
        m = model([node], ins, outs, 17)
        tx = torch.from_numpy(x).double()
        want_y = torch.nn.functional.layer_norm(tx, shape[a:], torch.from_numpy(w).double(),
                                                torch.from_numpy(b).double() if bias else None, eps).float().numpy()
        want = [want_y]
        if stats:
            dims = list(range(a, rank))
            mean = tx.mean(dim=dims, keepdim=True)
            var = ((tx - mean) ** 2).mean(dim=dims, keepdim=True)
            want += [mean.float().numpy(), (1 / torch.sqrt(var + eps)).float().numpy()]
        cases.append((f"layer_norm_{k}_{shape}_axis{axis}_eps{eps}_bias{int(bias)}_stats{int(stats)}", m, ins, want))
    return cases


def loss_cases(rng, n):
    """NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: reductions, weights, ignore_index
    (also negative), 0-3 spatial axes; torch's reference is F.nll_loss / F.cross_entropy in float64."""
    cases = []
    for k in range(n):
        sce = k % 2 == 1
        N, C = int(rng.integers(1, 5)), int(rng.integers(2, 6))
        sp = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 4)))]
        x = rng.standard_normal([N, C] + sp).astype(np.float32)
        t = rng.integers(0, C, size=[N] + sp).astype(np.int64)
        red = ["none", "mean", "sum"][k % 3]
        attrs = {"reduction": red}
        ii = None
        if k % 4 >= 2:
            ii = int(rng.choice([0, C - 1, -1, -5]))
            N = max(N, 2)
            x = rng.standard_normal([N, C] + sp).astype(np.float32)
            t = rng.integers(0, C, size=[N] + sp).astype(np.int64)
            attrs["ignore_index"] = ii
            t.flat[:: 3] = ii  # some targets ignored, not all (ignoring all makes a mean 0/0)
            t.flat[-1] = (ii + 1) % C if ii >= 0 else 0
        weighted = k % 5 < 3
        w = rng.uniform(0.2, 2.0, C).astype(np.float32)
        ins = {"x": x, "t": t, **({"w": w} if weighted else {})}
        tw = torch.from_numpy(w).double() if weighted else None
        kw = {"reduction": red, "ignore_index": -100 if ii is None else ii}
        tx, tt = torch.from_numpy(x).double(), torch.from_numpy(t)
        if sce:
            outs = ["loss", "log_prob"] if k % 3 == 0 else ["loss"]
            node = helper.make_node("SoftmaxCrossEntropyLoss", list(ins), outs, **attrs)
            want = [torch.nn.functional.cross_entropy(tx, tt, tw, **kw).float().numpy()]
            if len(outs) == 2:
                want.append(torch.log_softmax(tx, 1).float().numpy())
        else:
            outs = ["loss"]
            node = helper.make_node("NegativeLogLikelihoodLoss", list(ins), outs, **attrs)
            want = [torch.nn.functional.nll_loss(tx, tt, tw, **kw).float().numpy()]
        cases.append((f"{'sce' if sce else 'nll'}_{k}_{list(x.shape)}_{red}_ii{ii}_w{int(weighted)}", model([node], ins, outs, 13), ins, want))
    return cases


def gather_elements_cases(rng, n):
    """GatherElements: every axis of ranks 1-4, negative axes and negative indices; torch.gather."""
    cases = []
    for k in range(n):
        rank = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 5)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        x = rng.standard_normal(shape).astype(np.float32)
        ishape = [int(rng.integers(1, d + 1)) for d in shape]
        ishape[axis] = int(rng.integers(1, 6))
        d = shape[axis]
        i = rng.integers(-d, d, size=ishape).astype(np.int64)
        ins = {"x": x, "i": i}
        m = model([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)], ins, ["y"], 13)
        want = [torch.gather(torch.from_numpy(x), axis, torch.from_numpy(np.where(i < 0, i + d, i))).numpy()]
        cases.append((f"gather_elements_{k}_{shape}_axis{axis}_{ishape}", m, ins, want))
    return cases


def reduce_cases(rng, n):
    """ReduceProd (float32 and int32: the element type kept), ReduceSumSquare, ReduceLogSum: ranks
    1-4, no axes, one, two (negative too), keepdims 0/1; torch's prod / sum in float64."""
    cases = []
    for k in range(n):
        op = ["ReduceProd", "ReduceSumSquare", "ReduceLogSum"][k % 3]
        rank = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 4)) for _ in range(rank)]
        integer = op == "ReduceProd" and k % 2 == 0
        x = rng.integers(-3, 4, size=shape).astype(np.int32) if integer else rng.uniform(0.5, 1.5, shape).astype(np.float32)
        na = int(rng.integers(0, min(rank, 2) + 1))
        axes = sorted(int(a) for a in rng.choice(rank, size=na, replace=False)) if na else None
        if axes and k % 4 == 1:
            axes = [a - rank for a in axes]
        keep = int(k % 5 < 3)
        attrs = {"keepdims": keep, **({"axes": axes} if axes else {})}
        m = model([helper.make_node(op, ["x"], ["y"], **attrs)], {"x": x}, ["y"], 13)
        t = torch.from_numpy(x) if integer else torch.from_numpy(x).double()
        dims = [a % rank for a in axes] if axes else list(range(rank))
        if op == "ReduceProd":
            r = t
            for d in sorted(dims, reverse=True):
                r = torch.prod(r, d, keepdim=True)
            if not keep:
                r = r.reshape([s for i, s in enumerate(shape) if i not in dims])
        elif op == "ReduceSumSquare":
            r = (t * t).sum(dim=dims, keepdim=bool(keep))
        else:
            r = t.sum(dim=dims, keepdim=bool(keep)).log()
        want = [r.numpy().astype(x.dtype)]
        cases.append((f"{op}_{k}_{shape}_axes{axes}_keep{keep}_{x.dtype}", m, {"x": x}, want))
    return cases


def misc_cases(rng, n):
    """ArgMax/ArgMin with select_last_index (ties made on purpose), Hardmax (ties too), DepthToSpace
    (DCR, CRD) / SpaceToDepth, Shrink (hard, soft); torch's reference computed another way (numpy for
    the last index, torch.nn.functional.pixel_shuffle's definition for the blocks)."""
    cases = []
    for k in range(n):
        kind = k % 5
        if kind in (0, 1):
            rank = int(rng.integers(1, 4))
            shape = [int(rng.integers(1, 5)) for _ in range(rank)]
            x = rng.integers(0, 3, size=shape).astype(np.float32)  # few values: many ties
            axis = int(rng.integers(-rank, rank))
            keep = k % 3 != 0
            op = "ArgMax" if k % 2 == 0 else "ArgMin"
            if kind == 1:  # Hardmax
                m = model([helper.make_node("Hardmax", ["x"], ["y"], axis=axis)], {"x": x}, ["y"], 13)
                i = np.argmax(x, axis=axis)
                want = [np.moveaxis(np.eye(shape[axis], dtype=np.float32)[i], -1, axis)]
                cases.append((f"hardmax_{k}_{shape}_axis{axis}", m, {"x": x}, want))
                continue
            m = model([helper.make_node(op, ["x"], ["y"], axis=axis, keepdims=int(keep), select_last_index=1)], {"x": x}, ["y"], 13)
            f = np.flip(x, axis)
            i = (shape[axis] - 1) - (np.argmax(f, axis) if op == "ArgMax" else np.argmin(f, axis))
            want = [np.expand_dims(i, axis) if keep else i]
            m.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
            cases.append((f"{op}_last_{k}_{shape}_axis{axis}_keep{int(keep)}", m, {"x": x}, [w.astype(np.int64) for w in want]))
        elif kind in (2, 3):
            b = int(rng.integers(1, 4))
            N, C = int(rng.integers(1, 3)), int(rng.integers(1, 3))
            H, W = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            if kind == 2:
                mode = ["DCR", "CRD"][k % 2]
                x = rng.standard_normal((N, C * b * b, H, W)).astype(np.float32)
                m = model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b, mode=mode)], {"x": x}, ["y"], 13)
                if mode == "DCR":
                    y = x.reshape(N, b, b, C, H, W).transpose(0, 3, 4, 1, 5, 2).reshape(N, C, H * b, W * b)
                else:
                    y = torch.nn.functional.pixel_shuffle(torch.from_numpy(x), b).numpy()
                cases.append((f"depth_to_space_{mode}_{k}_{list(x.shape)}_b{b}", m, {"x": x}, [y]))
            else:
                x = rng.standard_normal((N, C, H * b, W * b)).astype(np.float32)
                m = model([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b)], {"x": x}, ["y"], 13)
                y = x.reshape(N, C, H, b, W, b).transpose(0, 3, 5, 1, 2, 4).reshape(N, C * b * b, H, W)
                cases.append((f"space_to_depth_{k}_{list(x.shape)}_b{b}", m, {"x": x}, [y]))
        else:
            x = rng.standard_normal(int(rng.integers(1, 20))).astype(np.float32) * 2
            lambd = float(rng.choice([0.5, 1.0, 1.5]))
            bias = [0.0, lambd][k % 2]
            m = model([helper.make_node("Shrink", ["x"], ["y"], lambd=lambd, bias=bias)], {"x": x}, ["y"], 13)
            y = np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0)).astype(np.float32)
            cases.append((f"shrink_{k}_lambd{lambd}_bias{bias}", m, {"x": x}, [y]))
    return cases


def more_cases(rng, n):
    """Det, NonZero, Compress (with and without an axis, a condition shorter than the axis),
    InstanceNormalization, ScatterElements (negative axes and indices, no duplicates); references
    from numpy / torch computed another way."""
    cases = []
    for k in range(n):
        kind = k % 5
        if kind == 0:
            b = [int(rng.integers(1, 3)) for _ in range(int(rng.integers(0, 3)))]
            d = int(rng.integers(1, 5))
            x = rng.standard_normal(b + [d, d]).astype(np.float32)
            m = model([helper.make_node("Det", ["x"], ["y"])], {"x": x}, ["y"], 13)
            cases.append((f"det_{k}_{list(x.shape)}", m, {"x": x}, [np.linalg.det(x.astype(np.float64)).astype(np.float32)]))
        elif kind == 1:
            x = (rng.integers(0, 3, size=[int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))]) - 1).astype(np.float32)
            m = model([helper.make_node("NonZero", ["x"], ["y"])], {"x": x}, ["y"], 13)
            m.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
            cases.append((f"nonzero_{k}_{list(x.shape)}", m, {"x": x}, [np.array(np.nonzero(x), dtype=np.int64)]))
        elif kind == 2:
            rank = int(rng.integers(1, 4))
            shape = [int(rng.integers(1, 5)) for _ in range(rank)]
            x = rng.standard_normal(shape).astype(np.float32)
            axis = int(rng.integers(-rank, rank)) if k % 3 else None
            n_c = int(rng.integers(1, (shape[axis] if axis is not None else x.size) + 1))
            c = rng.integers(0, 2, size=n_c).astype(bool)
            attrs = {} if axis is None else {"axis": axis}
            g = helper.make_graph([helper.make_node("Compress", ["x", "c"], ["y"], **attrs)], "case",
                                  [vi("x", x), helper.make_tensor_value_info("c", TensorProto.BOOL, [n_c])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
            m.ir_version = 8
            cases.append((f"compress_{k}_{shape}_axis{axis}_{c.tolist()}", m, {"x": x, "c": c}, [np.compress(c, x, axis=axis)]))
        elif kind == 3:
            shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + [int(rng.integers(2, 5)) for _ in range(int(rng.integers(1, 3)))]
            x = rng.standard_normal(shape).astype(np.float32) * 2 + 1
            sc, bi = rng.standard_normal(shape[1]).astype(np.float32), rng.standard_normal(shape[1]).astype(np.float32)
            eps = float(rng.choice([1e-5, 1e-2]))
            ins = {"x": x, "s": sc, "b": bi}
            m = model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=eps)], ins, ["y"], 13)
            t = x.astype(np.float64)
            ax = tuple(range(2, len(shape)))
            y = (t - t.mean(ax, keepdims=True)) / np.sqrt(t.var(ax, keepdims=True) + eps)
            y = y * sc.reshape([-1] + [1] * len(ax)) + bi.reshape([-1] + [1] * len(ax))
            cases.append((f"instance_norm_{k}_{shape}_eps{eps}", m, ins, [y.astype(np.float32)]))
        else:
            rank = int(rng.integers(1, 4))
            shape = [int(rng.integers(1, 5)) for _ in range(rank)]
            axis = int(rng.integers(-rank, rank))
            d = shape[axis]
            x = rng.standard_normal(shape).astype(np.float32)
            ishape = [int(rng.integers(1, s + 1)) for s in shape]
            ishape[axis] = int(rng.integers(1, d + 1))
            # distinct targets along the axis (duplicates are unordered in ONNX without a reduction)
            idx = np.stack([rng.permutation(d)[: ishape[axis]] for _ in range(int(np.prod(ishape)) // ishape[axis])], -1)
            idx = np.moveaxis(idx.reshape([ishape[axis]] + [s for i, s in enumerate(ishape) if i != axis % rank]), 0, axis % rank)
            idx = np.where(rng.integers(0, 2, idx.shape) == 1, idx - d, idx).astype(np.int64)  # some negative
            u = rng.standard_normal(ishape).astype(np.float32)
            ins = {"x": x, "i": idx, "u": u}
            m = model([helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=axis)], ins, ["y"], 13)
            y = torch.from_numpy(x).scatter(axis, torch.from_numpy(np.where(idx < 0, idx + d, idx)), torch.from_numpy(u)).numpy()
            cases.append((f"scatter_elements_{k}_{shape}_axis{axis}_{ishape}", m, ins, [y]))
    return cases


def dropout_cases(rng, n):
    """Dropout outside training with its mask output (all true) and a ratio."""
    cases = []
    for k in range(n):
        x = rng.standard_normal([int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))]).astype(np.float32)
        m = model([helper.make_node("Dropout", ["x", "r"], ["y", "mask"])], {"x": x}, ["y", "mask"], 13,
                  [("r", np.array(rng.uniform(0, 0.9), np.float32))])
        m.graph.output[1].type.tensor_type.elem_type = TensorProto.BOOL
        cases.append((f"dropout_mask_{k}_{list(x.shape)}", m, {"x": x}, [x, np.ones(x.shape, bool)]))
    return cases


def hard_sigmoid_cases(rng, n):
    """HardSigmoid: torch's own (alpha the float32 nearest 1/6, beta 0.5: written as aten::hardsigmoid)
    and others (random alpha and beta, the defaults 0.2 and 0.5: the general clamp); ranks 1-4, inputs
    spanning both saturated ends. Expected: torch's hardsigmoid for the first, else clip(alpha x + beta)."""
    cases = []
    for k in range(n):
        x = (rng.standard_normal([int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 5)))]) * 4).astype(np.float32)
        kind = k % 3
        attrs = {"alpha": 1 / 6, "beta": 0.5} if kind == 0 else {} if kind == 1 else \
            {"alpha": float(rng.uniform(0.05, 1)), "beta": float(rng.uniform(-0.5, 1))}
        m = model([helper.make_node("HardSigmoid", ["x"], ["y"], **attrs)], {"x": x}, ["y"], 13)
        if kind == 0:
            want = torch.nn.functional.hardsigmoid(torch.from_numpy(x)).numpy()
        else:
            a, b = np.float32(attrs.get("alpha", 0.2)), np.float32(attrs.get("beta", 0.5))
            want = np.clip(x * a + b, 0, 1).astype(np.float32)
        cases.append((f"hard_sigmoid_{k}_{['torch', 'default', 'random'][kind]}_{list(x.shape)}", m, {"x": x}, [want]))
    return cases


RESIZE_MODES = [  # (mode, coordinate_transformation_mode, nearest_mode, spatial ranks)
    ("nearest", "asymmetric", "floor", (1, 2, 3)), ("nearest", "half_pixel", "round_prefer_ceil", (1, 2, 3)),
    ("nearest", "half_pixel", "round_prefer_floor", (1, 2, 3)), ("nearest", None, None, (2,)),
    ("linear", "half_pixel", None, (1, 2, 3)), ("linear", "align_corners", None, (1, 2, 3)),
    ("linear", "pytorch_half_pixel", None, (2,)), ("cubic", "half_pixel", None, (2,)), ("cubic", "align_corners", None, (2,)),
]


def resize_cases(rng, n):
    """Resize with constant scales or sizes (what real models have: F.interpolate's exports, FPNs);
    compared with onnxruntime only (torch's interpolate is what the rules call)."""
    cases = []
    for k in range(n):
        mode, ctm, nm, ranks = RESIZE_MODES[k % len(RESIZE_MODES)]
        r = int(rng.choice(ranks))
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + [int(rng.integers(2, 6)) for _ in range(r)]
        x = rng.standard_normal(shape).astype(np.float32)
        attrs = {"mode": mode}
        if ctm:
            attrs["coordinate_transformation_mode"] = ctm
        if nm:
            attrs["nearest_mode"] = nm
        up_only = mode == "nearest" and (nm or "round_prefer_floor") == "round_prefer_floor"  # ties refused otherwise
        if k % 2 == 0:
            f = [float(rng.choice([1, 2, 3] if up_only else [0.5, 1.5, 2, 3, 0.6])) for _ in range(r)]
            out = [int(np.floor(d * q)) for d, q in zip(shape[2:], f)]
            if ctm == "pytorch_half_pixel" and 1 in out:
                f = [2.0] * r
            inits = [("roi", np.zeros(0, np.float32)), ("scales", np.array([1, 1] + f, np.float32))]
            ins_names = ["x", "roi", "scales"]
        else:
            z = [int(d * rng.choice([1, 2, 3])) if up_only else int(rng.integers(2, 9)) for d in shape[2:]]
            inits = [("roi", np.zeros(0, np.float32)), ("sizes", np.array(shape[:2] + z, np.int64))]
            ins_names = ["x", "roi", "", "sizes"]
        m = model([helper.make_node("Resize", ins_names, ["y"], **attrs)], {"x": x}, ["y"], 13, inits)
        cases.append((f"resize_{mode}_{ctm}_{nm}_{k}_{shape}_{inits[-1][1].tolist()}", m, {"x": x}, None))
    return cases


def refused_cases():
    x = np.zeros((2, 5), np.float32)
    m = model([helper.make_node("Split", ["x"], ["a", "b"], axis=1)], {"x": x}, ["a", "b"], 13)
    out = [("split_uneven_without_sizes", m, "Split")]
    x = np.zeros((1, 1, 3, 3), np.float32)
    # (linear and nearest tf_crop_and_resize convert: general_resize_cases; cubic does not)
    for name, attrs, sc in [("resize_tf_crop_and_resize_cubic", {"mode": "cubic", "coordinate_transformation_mode": "tf_crop_and_resize"}, [1, 1, 2, 2])]:
        inits = [("roi", np.zeros(0, np.float32)), ("scales", np.array(sc, np.float32))]
        out.append((name, model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"], **attrs)], {"x": x}, ["y"], 13, inits), "Resize"))
    return out


def general_resize_cases(rng):
    """Resize forms no upsample op of torch computes, refused before the general rule
    (onnx_13_pytorch_1.13_run_time_lists.yaml, used in the retry): nearest half_pixel with ties,
    cubic_coeff_a -0.5 with and without exclude_outside, tf_half_pixel_for_nn."""
    out = []
    for name, attrs, sc in [("resize_nearest_tie_half_pixel_floor", {"mode": "nearest"}, [1, 1, 0.5, 0.5]),
                            ("resize_cubic_a_half", {"mode": "cubic", "cubic_coeff_a": -0.5}, [1, 1, 2, 2]),
                            ("resize_cubic_a_half_exclude_outside", {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, [1, 1, 0.75, 1.5]),
                            ("resize_nearest_tf_half_pixel_for_nn", {"mode": "nearest", "coordinate_transformation_mode": "tf_half_pixel_for_nn"}, [1, 1, 2, 3])]:
        x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
        inits = [("roi", np.zeros(0, np.float32)), ("scales", np.array(sc, np.float32))]
        out.append((name, model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"], **attrs)], {"x": x}, ["y"], 13, inits), {"x": x}, None))
    # tf_crop_and_resize (linear, nearest): a box per axis, partly outside the input (extrapolation_value there)
    for mode in ("linear", "nearest"):
        x = rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
        roi = np.array([0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3], np.float32)
        inits = [("roi", roi), ("scales", np.array([1, 1, 1.5, 2], np.float32))]
        attrs = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 0.5}
        out.append((f"resize_tf_crop_and_resize_{mode}", model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"], **attrs)], {"x": x}, ["y"], 13, inits), {"x": x}, None))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--cases-per-op", type=int, default=24)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    cases = (split_cases(rng, a.cases_per_op) + layer_norm_cases(rng, a.cases_per_op) + resize_cases(rng, 2 * a.cases_per_op)
             + loss_cases(rng, a.cases_per_op) + gather_elements_cases(rng, a.cases_per_op)
             + reduce_cases(rng, a.cases_per_op) + misc_cases(rng, 2 * a.cases_per_op)
             + more_cases(rng, 2 * a.cases_per_op) + dropout_cases(rng, 4) + general_resize_cases(rng) + hard_sigmoid_cases(rng, 6))
    return run_cases(a.amanda, cases, refused_cases(), label="op cases")


if __name__ == "__main__":
    sys.exit(main())
