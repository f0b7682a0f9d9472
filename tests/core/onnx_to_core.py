#!/usr/bin/python3
"""ONNX -> amanda/core, proved numerically (ctest core.onnx_to_core).

    onnx_to_core.py AMANDA [MODELS_DIR] [-v] [--only REGEX] [--keep DIR]

For every small graph this script makes with onnx.helper (opset 17: each op the table
tables/core/onnx_17_core.yaml maps, in many cases: shapes that broadcast, several element types)
and for the torchvision exports in MODELS_DIR (resnet18, mobilenet_v2, squeezenet1_0; all eight
with AMANDA_CORE_TORCHVISION_ALL=1):

  1. `amanda convert M.onnx --to amanda/core -o M.yaml` succeeds (and ops the table does not map,
     in the refusal cases, are refused by name with exit code 1 and nothing written);
  2. `amanda validate M.yaml` accepts the core graph (schema and core type rules);
  3. `amanda run M.yaml` on the case's inputs matches onnxruntime-node running M.onnx on the same
     inputs: floats within 1e-4 relative (|d| <= 1e-4 * max(1, |ref|)), other types exactly;
     an expected output that is all zeros fails the case (the comparison would prove nothing);
  4. `amanda convert M.onnx --to amanda/core --check` (both sides in the interpreter) passes.

Run with /usr/bin/python3 (Debian's python3-onnx, numpy); onnxruntime-node from tests/js.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
RTOL = 1e-4
CI_MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0"]
ALL_MODELS = CI_MODELS + ["efficientnet_b0", "densenet121", "convnext_tiny", "vit_b_16", "swin_t"]
NP = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.INT32: np.int32,
      TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_}
F, D, I32, I64, B = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL

rng = np.random.default_rng(7)


def data(t, shape, kind="any"):
    if t == B:
        return rng.random(shape) < 0.5
    if kind == "few":  # few distinct values, so that Equal is sometimes true
        return (rng.integers(0, 3, size=shape) * (0.5 if t in (F, D) else 1)).astype(NP[t])
    if t in (I32, I64):
        v = rng.integers(-5, 6, size=shape)
        if kind == "nonzero":
            v[v == 0] = 3
        if kind == "small":
            v = rng.integers(0, 4, size=shape)
        return v.astype(NP[t])
    v = rng.standard_normal(shape)
    if kind == "positive":
        v = np.abs(v) + 0.1
    if kind == "nonzero":
        v = np.where(np.abs(v) < 0.1, 0.5, v)
    if kind == "small":
        v = rng.uniform(0.5, 1.5, size=shape)
    return v.astype(NP[t])


class Case:
    def __init__(self, name, nodes, inputs, outputs, inits=(), refused=None):
        """inputs: [(name, type, shape, kind)], outputs: [(name, type)], inits: [(name, array)]."""
        self.name, self.refused = name, refused
        self.feeds = {n: data(t, s, k) for n, t, s, k in inputs}
        g = helper.make_graph(
            nodes, name,
            [helper.make_tensor_value_info(n, t, s) for n, t, s, _ in inputs],
            [helper.make_empty_tensor_value_info(o[0]) for o in outputs],
            [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        # the outputs' types and shapes as onnx's inference gives them
        inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
        for k, (n, t, *shape) in enumerate(outputs):
            v = known.get(n)
            if v is not None and v.type.tensor_type.elem_type and v.type.tensor_type.HasField("shape"):
                m.graph.output[k].CopyFrom(v)
            else:  # inference cannot say: the case says
                m.graph.output[k].CopyFrom(helper.make_tensor_value_info(n, t, shape[0] if shape else None))
        self.model = m
        onnx.checker.check_model(self.model)


def N(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def cases():
    cs = []
    # ---- elementwise binary ops: equal shapes, broadcasting either side or both, scalars
    shapes = [([2, 3, 4], [2, 3, 4]), ([2, 3, 4], [4]), ([4], [2, 3, 4]), ([2, 1, 4], [3, 1]), ([2, 3, 4], []),
              ([1, 3, 1], [2, 1, 5])]
    for op in ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Equal", "Less", "Greater"]:
        for t in ([F, D, I32, I64] if op in ("Add", "Sub", "Mul", "Div", "Max", "Min") else [F, I64] if op != "Pow" else [F, D]):
            for k, (sa, sb) in enumerate(shapes):
                if t != F and k not in (0, 3):
                    continue
                out_t = B if op in ("Equal", "Less", "Greater") else t
                ka = "positive" if op == "Pow" else "few" if op == "Equal" else "any"
                kb = "nonzero" if op == "Div" else "small" if op == "Pow" else "few" if op == "Equal" else "any"
                cs.append(Case(f"{op.lower()}_{TensorProto.DataType.Name(t).lower()}_{k}", [N(op, ["a", "b"], ["y"])],
                               [("a", t, sa, ka), ("b", t, sb, kb)], [("y", out_t)]))
    # Equal on ints that do match sometimes
    # every subset of operands broadcast (the output is [4, 6]; a broadcast operand is [6], [4, 1] or [1, 6])
    partial = [[6], [4, 1], [1, 6]]
    for op in ["And", "Or"]:
        for k, (sa, sb) in enumerate([([4, 6], [4, 6]), ([4, 6], [6]), ([6], [4, 6]), ([4, 1], [1, 6])]):
            cs.append(Case(f"{op.lower()}_{k}", [N(op, ["a", "b"], ["y"])], [("a", B, sa, ""), ("b", B, sb, "")], [("y", B)]))
    import itertools
    for k in range(0, 4):
        for sub in itertools.combinations("cab", k):
            shp = {v: (partial[i % 3] if v in sub else [4, 6]) for i, v in enumerate("cab")}
            t = I64 if k == 2 else F
            cs.append(Case(f"where_{''.join(sub) or 'same'}", [N("Where", ["c", "a", "b"], ["y"])],
                           [("c", B, shp["c"], ""), ("a", t, shp["a"], ""), ("b", t, shp["b"], "")], [("y", t)]))
    # ---- unary ops
    for op, kind in [("Relu", "any"), ("Neg", "any"), ("Abs", "any"), ("Sign", "any"), ("Exp", "any"), ("Log", "positive"),
                     ("Sqrt", "positive"), ("Erf", "any"), ("Tanh", "any"), ("Sigmoid", "any"), ("Sin", "any"), ("Cos", "any"),
                     ("Floor", "any"), ("Ceil", "any"), ("Reciprocal", "nonzero"), ("HardSwish", "any")]:
        for t in ([F, D] if op not in ("Relu", "Neg", "Abs", "Sign") else [F, I32, I64]):
            if (op in ("HardSwish", "Erf") and t == D) or (op == "Relu" and t == I64):
                continue  # onnxruntime has no kernel for these
            cs.append(Case(f"{op.lower()}_{TensorProto.DataType.Name(t).lower()}", [N(op, ["x"], ["y"])], [("x", t, [2, 3, 5], kind)], [("y", t)]))
    cs.append(Case("not", [N("Not", ["x"], ["y"])], [("x", B, [4, 3], "")], [("y", B)]))
    cs.append(Case("leaky_relu", [N("LeakyRelu", ["x"], ["y"], alpha=0.2)], [("x", F, [3, 7], "")], [("y", F)]))
    cs.append(Case("hard_sigmoid", [N("HardSigmoid", ["x"], ["y"], alpha=0.3, beta=0.4)], [("x", F, [3, 7], "")], [("y", F)]))
    cs.append(Case("clip_both", [N("Clip", ["x", "lo", "hi"], ["y"])], [("x", F, [4, 5], "")], [("y", F)],
                   [("lo", np.array(-0.5, np.float32)), ("hi", np.array(0.6, np.float32))]))
    cs.append(Case("clip_min_only", [N("Clip", ["x", "lo"], ["y"])], [("x", F, [4, 5], "")], [("y", F)], [("lo", np.array(0.1, np.float32))]))
    cs.append(Case("clip_relu6", [N("Clip", ["x", "lo", "hi"], ["y"])], [("x", D, [2, 9], "")], [("y", D)],
                   [("lo", np.array(0.0)), ("hi", np.array(0.5))]))
    cs.append(Case("cast_f2i", [N("Cast", ["x"], ["y"], to=TensorProto.INT32)], [("x", F, [3, 4], "")], [("y", I32)]))
    cs.append(Case("cast_i2d", [N("Cast", ["x"], ["y"], to=TensorProto.DOUBLE)], [("x", I64, [3, 4], "")], [("y", D)]))
    # ---- shapes
    cs.append(Case("reshape", [N("Reshape", ["x", "s"], ["y"])], [("x", F, [2, 3, 4], "")], [("y", F)], [("s", np.array([4, -1], np.int64))]))
    cs.append(Case("reshape_zero", [N("Reshape", ["x", "s"], ["y"])], [("x", I64, [2, 3, 4], "")], [("y", I64)], [("s", np.array([0, 12], np.int64))]))
    cs.append(Case("flatten", [N("Flatten", ["x"], ["y"], axis=2)], [("x", F, [2, 3, 4, 5], "")], [("y", F)]))
    cs.append(Case("squeeze", [N("Squeeze", ["x", "ax"], ["y"])], [("x", F, [2, 1, 4, 1], "")], [("y", F)], [("ax", np.array([1, -1], np.int64))]))
    cs.append(Case("unsqueeze", [N("Unsqueeze", ["x", "ax"], ["y"])], [("x", F, [2, 4], "")], [("y", F)], [("ax", np.array([0, 3], np.int64))]))
    cs.append(Case("identity", [N("Identity", ["x"], ["y"])], [("x", I32, [5], "")], [("y", I32)]))
    cs.append(Case("shape_then_mul", [N("Shape", ["x"], ["s"]), N("Mul", ["s", "k"], ["y"])], [("x", F, [2, 3, 4], "")], [("y", I64)],
                   [("k", np.array([2], np.int64))]))
    cs.append(Case("shape_start", [N("Shape", ["x"], ["y"], start=1)], [("x", F, [2, 3, 4], "")], [("y", I64)]))
    cs.append(Case("size", [N("Size", ["x"], ["y"])], [("x", F, [2, 3, 4], "")], [("y", I64)]))
    cs.append(Case("expand", [N("Expand", ["x", "s"], ["y"])], [("x", F, [3, 1], "")], [("y", F)], [("s", np.array([2, 3, 4], np.int64))]))
    cs.append(Case("expand_same", [N("Expand", ["x", "s"], ["y"])], [("x", F, [3, 4], "")], [("y", F)], [("s", np.array([1, 1], np.int64))]))
    cs.append(Case("constant_of_shape", [N("ConstantOfShape", ["s"], ["c"], value=helper.make_tensor("v", F, [1], [1.5])),
                                         N("Add", ["x", "c"], ["y"])], [("x", F, [2, 3], "")], [("y", F)], [("s", np.array([2, 3], np.int64))]))
    cs.append(Case("constant", [N("Constant", [], ["c"], value=numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))),
                                N("Mul", ["x", "c"], ["y"])], [("x", F, [2, 3], "")], [("y", F)]))
    cs.append(Case("transpose", [N("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [("x", F, [2, 3, 4], "")], [("y", F)]))
    cs.append(Case("transpose_default", [N("Transpose", ["x"], ["y"])], [("x", I64, [2, 3, 4], "")], [("y", I64)]))
    cs.append(Case("concat3", [N("Concat", ["a", "b", "c"], ["y"], axis=-1)], [("a", F, [2, 3], ""), ("b", F, [2, 1], ""), ("c", F, [2, 4], "")], [("y", F)]))
    cs.append(Case("concat2_axis0", [N("Concat", ["a", "b"], ["y"], axis=0)], [("a", I64, [2, 3], ""), ("b", I64, [1, 3], "")], [("y", I64)]))
    cs.append(Case("gather", [N("Gather", ["x", "i"], ["y"], axis=1)], [("x", F, [3, 5, 2], "")], [("y", F)], [("i", np.array([[0, -1], [4, 2]], np.int64))]))
    cs.append(Case("gather_scalar", [N("Gather", ["x", "i"], ["y"], axis=0)], [("x", F, [3, 5], "")], [("y", F)], [("i", np.array(2, np.int64))]))
    cs.append(Case("slice", [N("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [("x", F, [6, 7, 4], "")], [("y", F)],
                   [("st", np.array([1, -1], np.int64)), ("en", np.array([6, -8], np.int64)), ("ax", np.array([0, 1], np.int64)),
                    ("sp", np.array([2, -2], np.int64))]))
    cs.append(Case("slice_default", [N("Slice", ["x", "st", "en"], ["y"])], [("x", I64, [6, 7], "")], [("y", I64)],
                   [("st", np.array([2], np.int64)), ("en", np.array([100], np.int64))]))
    # ---- products
    cs.append(Case("matmul_2d", [N("MatMul", ["a", "b"], ["y"])], [("a", F, [3, 4], ""), ("b", F, [4, 5], "")], [("y", F)]))
    cs.append(Case("matmul_rows", [N("MatMul", ["a", "b"], ["y"])], [("a", F, [2, 3, 4], ""), ("b", F, [4, 5], "")], [("y", F)]))
    cs.append(Case("matmul_batch", [N("MatMul", ["a", "b"], ["y"])], [("a", D, [2, 3, 4], ""), ("b", D, [2, 4, 5], "")], [("y", D)]))
    cs.append(Case("matmul_batch_bcast", [N("MatMul", ["a", "b"], ["y"])], [("a", F, [2, 1, 3, 4], ""), ("b", F, [5, 4, 6], "")], [("y", F)]))
    for ta in (0, 1):
        for tb in (0, 1):
            for c in ("none", "row", "full", "scalar"):
                sa = [4, 3] if ta else [3, 4]
                sb = [5, 4] if tb else [4, 5]
                ins = [("a", F, sa, ""), ("b", F, sb, "")]
                names = ["a", "b"]
                if c != "none":
                    ins.append(("c", F, {"row": [5], "full": [3, 5], "scalar": []}[c], ""))
                    names.append("c")
                cs.append(Case(f"gemm_{ta}{tb}_{c}", [N("Gemm", names, ["y"], transA=ta, transB=tb)], ins, [("y", F)]))
    # ---- convolution, pooling, normalisation
    conv_w = lambda m, c, k: rng.standard_normal((m, c) + k).astype(np.float32)
    cs.append(Case("conv_bias", [N("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])], [("x", F, [1, 3, 8, 8], "")], [("y", F)],
                   [("w", conv_w(4, 3, (3, 3))), ("b", rng.standard_normal(4).astype(np.float32))]))
    cs.append(Case("conv_stride_dilation", [N("Conv", ["x", "w"], ["y"], strides=[2, 1], dilations=[1, 2], pads=[0, 1, 2, 1])],
                   [("x", F, [2, 3, 9, 8], "")], [("y", F)], [("w", conv_w(5, 3, (3, 3)))]))
    cs.append(Case("conv_group", [N("Conv", ["x", "w", "b"], ["y"], group=2)], [("x", F, [1, 4, 6, 6], "")], [("y", F)],
                   [("w", conv_w(6, 2, (3, 3))), ("b", rng.standard_normal(6).astype(np.float32))]))
    cs.append(Case("conv_depthwise", [N("Conv", ["x", "w"], ["y"], group=4, pads=[1, 1, 1, 1])], [("x", F, [1, 4, 7, 7], "")], [("y", F)],
                   [("w", conv_w(4, 1, (3, 3)))]))
    cs.append(Case("conv_1d", [N("Conv", ["x", "w", "b"], ["y"], pads=[2, 0])], [("x", F, [2, 3, 10], "")], [("y", F)],
                   [("w", conv_w(4, 3, (3,))), ("b", rng.standard_normal(4).astype(np.float32))]))
    cs.append(Case("conv_auto_pad_refused", [N("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER")], [("x", F, [1, 3, 8, 8], "")], [("y", F)],
                   [("w", conv_w(4, 3, (3, 3)))], refused="Conv"))
    cs.append(Case("maxpool", [N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])], [("x", F, [1, 3, 9, 9], "")], [("y", F)]))
    cs.append(Case("maxpool_ceil", [N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)], [("x", F, [1, 2, 10, 10], "")], [("y", F)]))
    cs.append(Case("averagepool", [N("AveragePool", ["x"], ["y"], kernel_shape=[2, 3], strides=[2, 1], pads=[0, 1, 1, 1])], [("x", F, [1, 3, 7, 7], "")], [("y", F)]))
    cs.append(Case("averagepool_incl", [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)], [("x", F, [1, 2, 5, 5], "")], [("y", F)]))
    cs.append(Case("global_avg", [N("GlobalAveragePool", ["x"], ["y"])], [("x", F, [2, 3, 4, 5], "")], [("y", F)]))
    cs.append(Case("global_max", [N("GlobalMaxPool", ["x"], ["y"])], [("x", F, [2, 3, 4], "")], [("y", F)]))
    cs.append(Case("batchnorm", [N("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"], epsilon=1e-3)], [("x", F, [2, 3, 4, 4], "")], [("y", F)],
                   [("g", rng.standard_normal(3).astype(np.float32)), ("b", rng.standard_normal(3).astype(np.float32)),
                    ("m", rng.standard_normal(3).astype(np.float32)), ("v", rng.uniform(0.5, 2, 3).astype(np.float32))]))
    # ---- reductions, softmax
    for op in ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"]:
        cs.append(Case(f"{op.lower()}_axes", [N(op, ["x"], ["y"], axes=[-1, 0], keepdims=0)], [("x", F, [3, 4, 5], "small" if op == "ReduceProd" else "")], [("y", F)]))
        cs.append(Case(f"{op.lower()}_all", [N(op, ["x"], ["y"])], [("x", F, [3, 4], "small" if op == "ReduceProd" else "")], [("y", F)]))
    cs.append(Case("reducesum_axes", [N("ReduceSum", ["x", "ax"], ["y"])], [("x", F, [3, 4, 5], "")], [("y", F)], [("ax", np.array([1], np.int64))]))
    cs.append(Case("reducesum_all_int", [N("ReduceSum", ["x"], ["y"], keepdims=0)], [("x", I64, [3, 4], "")], [("y", I64)]))
    cs.append(Case("argmax", [N("ArgMax", ["x"], ["y"], axis=-1)], [("x", F, [3, 5], "")], [("y", I64)]))
    cs.append(Case("argmin_nokeep", [N("ArgMin", ["x"], ["y"], axis=0, keepdims=0)], [("x", I32, [4, 5], "")], [("y", I64)]))
    cs.append(Case("tile", [N("Tile", ["x", "r"], ["y"])], [("x", F, [2, 3], "")], [("y", F)], [("r", np.array([3, 2], np.int64))]))
    cs.append(Case("tile_3d", [N("Tile", ["x", "r"], ["y"])], [("x", I64, [2, 1, 3], "")], [("y", I64)], [("r", np.array([1, 4, 2], np.int64))]))
    cs.append(Case("softmax", [N("Softmax", ["x"], ["y"], axis=1)], [("x", F, [2, 5, 3], "")], [("y", F)]))
    cs.append(Case("softmax_last", [N("Softmax", ["x"], ["y"])], [("x", D, [4, 6], "")], [("y", D)]))
    cs.append(Case("logsoftmax", [N("LogSoftmax", ["x"], ["y"], axis=-1)], [("x", F, [2, 7], "")], [("y", F)]))
    # ---- compositions the torchvision models have: a LayerNorm and a GELU written out, an SE block
    cs.append(Case("layernorm_pieces",
                   [N("ReduceMean", ["x"], ["m"], axes=[-1]), N("Sub", ["x", "m"], ["d"]), N("Pow", ["d", "two"], ["sq"]),
                    N("ReduceMean", ["sq"], ["var"], axes=[-1]), N("Add", ["var", "eps"], ["ve"]), N("Sqrt", ["ve"], ["sd"]),
                    N("Div", ["d", "sd"], ["n"]), N("Mul", ["n", "g"], ["ng"]), N("Add", ["ng", "b"], ["y"])],
                   [("x", F, [2, 5, 8], "")], [("y", F)],
                   [("two", np.array(2.0, np.float32)), ("eps", np.array(1e-5, np.float32)),
                    ("g", rng.standard_normal(8).astype(np.float32)), ("b", rng.standard_normal(8).astype(np.float32))]))
    cs.append(Case("gelu_pieces",
                   [N("Div", ["x", "s2"], ["d"]), N("Erf", ["d"], ["e"]), N("Add", ["e", "one"], ["e1"]), N("Mul", ["x", "e1"], ["m"]),
                    N("Mul", ["m", "half"], ["y"])], [("x", F, [3, 16], "")], [("y", F)],
                   [("s2", np.array(1.4142135, np.float32)), ("one", np.array(1.0, np.float32)), ("half", np.array(0.5, np.float32))]))
    cs.append(Case("se_block",
                   [N("GlobalAveragePool", ["x"], ["p"]), N("Sigmoid", ["p"], ["s"]), N("Mul", ["x", "s"], ["y"])],
                   [("x", F, [1, 4, 5, 5], "")], [("y", F)]))
    cs.append(Case("pad", [N("Pad", ["x", "p"], ["y"])], [("x", F, [2, 3, 4], "")], [("y", F)], [("p", np.array([0, 1, 2, 1, 0, 3], np.int64))]))
    cs.append(Case("pad_value_int", [N("Pad", ["x", "p", "v"], ["y"])], [("x", I64, [3, 4], "")], [("y", I64)],
                   [("p", np.array([1, 1, 1, 1], np.int64)), ("v", np.array(7, np.int64))]))
    # a shape computed in the graph, as torch exports them: folded to a constant before the table
    cs.append(Case("reshape_computed_shape",
                   [N("Shape", ["x"], ["s"]), N("Gather", ["s", "i0"], ["n"], axis=0), N("Unsqueeze", ["n", "ax0"], ["n1"]),
                    N("Concat", ["n1", "m1"], ["shp"], axis=0), N("Reshape", ["x", "shp"], ["r"]), N("Relu", ["r"], ["y"])],
                   [("x", F, [2, 3, 4], "")], [("y", F, [2, 12])],
                   [("i0", np.array(0, np.int64)), ("ax0", np.array([0], np.int64)), ("m1", np.array([-1], np.int64))]))
    cs.append(Case("slice_computed_bounds",
                   [N("Shape", ["x"], ["s"]), N("Div", ["s", "two"], ["h"]), N("Slice", ["x", "h", "s"], ["y"])],
                   [("x", F, [6, 4], "")], [("y", F, [3, 2])], [("two", np.array([2, 2], np.int64))]))
    cs.append(Case("layernorm", [N("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-3)], [("x", F, [2, 3, 8], "")], [("y", F)],
                   [("g", rng.standard_normal(8).astype(np.float32)), ("b", rng.standard_normal(8).astype(np.float32))]))
    cs.append(Case("layernorm_axis1_nobias", [N("LayerNormalization", ["x", "g"], ["y"], axis=1)], [("x", F, [2, 3, 4], "")], [("y", F)],
                   [("g", rng.standard_normal((3, 4)).astype(np.float32))]))
    cs.append(Case("softplus", [N("Softplus", ["x"], ["y"])], [("x", F, [3, 5], "")], [("y", F)]))
    cs.append(Case("elu", [N("Elu", ["x"], ["y"], alpha=0.7)], [("x", F, [3, 5], "")], [("y", F)]))
    for op in ["GreaterOrEqual", "LessOrEqual"]:
        for k, (sa, sb) in enumerate([([3, 4], [3, 4]), ([3, 4], [4]), ([4], [3, 4]), ([3, 1], [1, 4])]):
            cs.append(Case(f"{op.lower()}_{k}", [N(op, ["a", "b"], ["y"])], [("a", F if k % 2 else I64, sa, "few"), ("b", F if k % 2 else I64, sb, "few")], [("y", B)]))
    cs.append(Case("dropout_inference", [N("Dropout", ["x"], ["y"])], [("x", F, [3, 4], "")], [("y", F)]))
    cs.append(Case("dropout_training_ratio0", [N("Dropout", ["x", "r", "t"], ["y"])], [("x", F, [3, 4], "")], [("y", F)],
                   [("r", np.array(0.0, np.float32)), ("t", np.array(True))]))
    # ---- refused: ops the table does not map are named
    cs.append(Case("pad_reflect_refused", [N("Pad", ["x", "p"], ["y"], mode="reflect")], [("x", F, [2, 3], "")], [("y", F)],
                   [("p", np.array([0, 1, 0, 1], np.int64))], refused="Pad"))
    cs.append(Case("topk_refused", [N("TopK", ["x", "k"], ["v", "i"])], [("x", F, [2, 5], "")], [("v", F), ("i", I64)], [("k", np.array([2], np.int64))], refused="TopK"))
    cs.append(Case("gemm_alpha_refused", [N("Gemm", ["a", "b"], ["y"], alpha=0.5)], [("a", F, [2, 3], ""), ("b", F, [3, 4], "")], [("y", F)], refused="Gemm"))
    return cs


IMPLICIT_BROADCAST = """graph:
  name: implicit_broadcast
  namespace: amanda/core
  input_ports:
    - {name: a, attrs: {type: float32, shape: [2, 3]}}
    - {name: v, attrs: {type: float32, shape: [3]}}
  output_ports:
    - {name: y}
  ops:
    - type: Add
      name: plus
      input_ports: [{name: a}, {name: b}]
      output_ports: [{name: out}]
  edges:
    - {output_port: {op: implicit_broadcast, port: a}, input_port: {op: plus, port: a}}
    - {output_port: {op: implicit_broadcast, port: v}, input_port: {op: plus, port: b}}
    - {output_port: {op: plus, port: out}, input_port: {op: implicit_broadcast, port: y}}
"""


def amanda(exe, *args, timeout=900):
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)


def type_name(a):
    return {np.float32: "float32", np.float64: "float64", np.int32: "int32", np.int64: "int64", np.bool_: "bool"}[a.dtype.type]


def compare(ours, ref):
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return f"shape/type {ours.dtype}{list(ours.shape)} vs onnxruntime {ref.dtype}{list(ref.shape)}", 0.0
    if ref.dtype.kind == "f":
        d = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
        bad = d > RTOL * np.maximum(1.0, np.abs(ref.astype(np.float64)))
        m = float(d.max()) if d.size else 0.0
        return (f"{int(bad.sum())} of {ref.size} elements differ (max abs {m:.3g})" if bad.any() else None), m
    bad = ours != ref
    return (f"{int(bad.sum())} of {ref.size} elements differ" if bad.any() else None), 0.0


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    only = args[args.index("--only") + 1] if "--only" in args else None
    keep = args[args.index("--keep") + 1] if "--keep" in args else None
    pos = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in ("--only", "--keep"))]
    exe = pos[0]
    models_dir = pos[1] if len(pos) > 1 else None
    modules = os.environ.get("AMANDA_ORT_NODE_MODULES", os.path.join(ROOT, "tests", "js", "node_modules"))
    all_models = os.environ.get("AMANDA_CORE_TORCHVISION_ALL") == "1"
    fails, figures = [], []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        d = keep or tmp
        os.makedirs(d, exist_ok=True)
        work = []  # (name, onnx path, feeds, refused)
        for c in cases():
            if only and not re.search(only, c.name):
                continue
            p = os.path.join(d, c.name + ".onnx")
            onnx.save(c.model, p)
            work.append((c.name, p, c.feeds, c.refused))
        if models_dir:
            x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
            for m in (ALL_MODELS if all_models else CI_MODELS):
                if only and not re.search(only, m):
                    continue
                p = os.path.join(models_dir, m + ".onnx")
                if not os.path.exists(p):
                    fails.append(f"{m}: {p} does not exist")
                    continue
                work.append((m, p, {"input": x}, None))
        # onnxruntime-node on every source, in one process
        jobs = []
        for name, p, feeds, refused in work:
            if refused:
                continue
            ins = {}
            for n, a in feeds.items():
                f = os.path.join(d, f"{name}.{n}.bin")
                np.ascontiguousarray(a).astype(np.uint8 if a.dtype == np.bool_ else a.dtype).tofile(f)
                np.save(os.path.join(d, f"{name}.{n}.npy"), a)
                ins[n] = {"file": f, "shape": list(a.shape), "type": type_name(a)}
            jobs.append({"model": p, "inputs": ins, "out": os.path.join(d, "ort_" + name)})
        jf = os.path.join(d, "jobs.json")
        json.dump(jobs, open(jf, "w"))
        r = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run_typed.js"), jf], capture_output=True, text=True,
                           env=dict(os.environ, NODE_PATH=modules), timeout=3600)
        if r.returncode != 0:
            print(r.stderr[-2000:])
            return 1
        n_compared = n_refused = 0
        applied = {}  # rule -> ops it converted, over all cases
        for name, p, feeds, refused in work:
            out_yaml = os.path.join(d, name + ".core.yaml")
            cv = amanda(exe, "convert", p, "--to", "amanda/core", "-o", out_yaml, "--report", "json")
            text = (cv.stdout + cv.stderr).strip()
            try:
                rep = json.loads(cv.stdout)
                if len(rep.get("tables", [])) and rep["tables"][-1].endswith("amanda/core"):
                    for r, n in rep.get("by_rule", {}).items():
                        applied[r] = applied.get(r, 0) + n
            except ValueError:
                pass
            if refused:
                if cv.returncode == 1 and refused in text and not os.path.exists(out_yaml):
                    n_refused += 1
                    if verbose:
                        print(f"{name}: refused as expected: {text.splitlines()[0] if text else ''}")
                else:
                    fails.append(f"{name}: expected a refusal naming {refused}, got exit {cv.returncode}: {text[-500:]}")
                continue
            if cv.returncode != 0:
                fails.append(f"{name}: convert failed: {text[-1500:]}")
                continue
            va = amanda(exe, "validate", out_yaml)
            if va.returncode != 0:
                fails.append(f"{name}: the core graph does not validate: {(va.stdout + va.stderr)[-1500:]}")
                continue
            inputs = []
            for n in feeds:
                inputs += ["--input", f"{n}={os.path.join(d, f'{name}.{n}.npy')}"]
            out_dir = os.path.join(d, "core_" + name)
            rn = amanda(exe, "run", out_yaml, *inputs, "-o", out_dir, "-q")
            if rn.returncode != 0:
                fails.append(f"{name}: amanda run of the core graph failed: {(rn.stdout + rn.stderr)[-1500:]}")
                continue
            meta = json.load(open(os.path.join(d, "ort_" + name + ".json")))
            if "error" in meta:
                fails.append(f"{name}: onnxruntime-node failed on the source: {meta['error']}")
                continue
            ours_list = json.load(open(os.path.join(out_dir, "outputs.json")))["outputs"]
            ok = True
            for k, o in enumerate(meta["outputs"]):
                ref = np.fromfile(os.path.join(d, f"ort_{name}.{k}.bin"), dtype=np.bool_ if o["type"] == "bool" else np.dtype(o["type"]))
                ref = ref.reshape(o["shape"])
                ours = np.load(os.path.join(out_dir, ours_list[k]["files"][0]))
                why, m = compare(ours, ref)
                if not ref.astype(np.float64).any():
                    why = "the expected output is all zeros (the comparison would prove nothing)"
                if why:
                    fails.append(f"{name}: output {o['name']}: {why}")
                    ok = False
                figures.append((name, o["name"], m, float(np.abs(ref.astype(np.float64)).max())))
            if not ok:
                continue
            ck = amanda(exe, "convert", p, "--to", "amanda/core", "--check", "-q", *[x.replace("--input", "--check-input") for x in inputs])
            last = (ck.stdout + ck.stderr).strip().splitlines()
            if ck.returncode != 0:
                fails.append(f"{name}: convert --check failed: {' | '.join(last[-3:])}")
                continue
            n_compared += 1
            if verbose or name in ALL_MODELS:
                worst = max((f[2] for f in figures if f[0] == name), default=0.0)
                print(f"{name}: ok (max abs diff vs onnxruntime {worst:.3g}; {last[-1] if last else ''})")
        # core is strict: a core graph with an implicit broadcast is refused by validate (the type
        # rules) and by run (the kernel's check), each naming the op
        bad = os.path.join(d, "implicit_broadcast.core.yaml")
        with open(bad, "w") as f:
            f.write(IMPLICIT_BROADCAST)
        np.save(os.path.join(d, "ib_a.npy"), np.ones((2, 3), np.float32))
        np.save(os.path.join(d, "ib_v.npy"), np.ones((3,), np.float32))
        va = amanda(exe, "validate", bad)
        rn = amanda(exe, "run", bad, "--input", f"a={d}/ib_a.npy", "--input", f"v={d}/ib_v.npy", "-q")
        if va.returncode == 0 or "plus: error: amanda/core Add: shapes differ" not in va.stderr:
            fails.append(f"implicit broadcast: validate did not refuse it: {(va.stdout + va.stderr)[-500:]}")
        if rn.returncode == 0 or "plus (Add): shapes differ: [2, 3] and [3]" not in rn.stderr:
            fails.append(f"implicit broadcast: run did not refuse it: {(rn.stdout + rn.stderr)[-500:]}")
        # every rule of the table (but `unsupported:` ones) converted something in some case
        table = open(os.path.join(ROOT, "tables", "core", "onnx_17_core.yaml")).read()
        names = re.findall(r"^    - rule_name: (\S+)[^\n]*\n(?:(?!    - rule_name).*\n)*?      dst:", table, re.M)
        if not only:
            for r in names:
                if r not in applied:
                    fails.append(f"rule {r} of the table converted nothing in any case (add a case)")
        if verbose:
            print(f"rules applied: {len(set(names) & set(applied))} of {len(names)}")
    for f in fails:
        print("FAIL:", f)
    print(f"{n_compared} graphs converted to amanda/core, validated, run and matched onnxruntime-node and convert --check; "
          f"{n_refused} refusals as expected; {len(fails)} failure(s) ({time.monotonic() - t0:.0f} s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
