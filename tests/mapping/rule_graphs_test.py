#!/usr/bin/python3
"""Every ONNX opset conversion rule, run on small graphs and checked in onnxruntime.

    rule_graphs_test.py AMANDA [--node-dir DIR] [--all-node-tests] [--keep DIR] [-v]

Graphs: (a) the one-op node tests of Debian's libonnx-testdata (model.onnx at some opset and
test_data_set_0/input_*.pb), a subset: every test of an op that a hand-written rule
(tables/onnx/hand/) matches, the first test of every other op, and the first "_expanded" test (a
function body: several ops) with a hand-ruled op of each family; (b) graphs made here with
onnx.helper (HAND_GRAPHS) for the rules the node tests do not reach (they feed axes, bounds and sizes
as graph inputs, which the rules that move an input to an attribute must refuse).

Each graph at opset S is converted with `amanda convert --report json` to every other opset 7..17.
A conversion either writes a model (opset_import = the target; onnx.checker full_check passes when
it passes on the original) or is refused: exit 1, no file, a JSON report naming each op it cannot
convert. Anything else (a crash, a rule error, a half-written file) is a failure. Then one Node.js
process (tests/js/ort_compare.js --jobs) runs each original and its conversions on the same inputs:
floating-point outputs within 1e-5 relative to max(1, |x|), integers, bools and strings exactly. When onnxruntime cannot run
the original (a GRU with layout = 1), a node test's conversions are compared with its expected
outputs (test_data_set_0/output_*.pb, from ONNX's reference implementation), where onnxruntime runs
them; other such originals are "skipped". A conversion onnxruntime fails on, of an original that
runs, is a failure.

Coverage: the rules applied (`by_rule` of the report, qualified with the table of the chain that has a
rule of that name: "onnx/13->onnx/12:squeeze_axes_to_attribute") of every conversion whose comparison
ran. Every rule of tables/onnx/ that is neither `unsupported:` nor an identity (`{rule_name, type}`,
no matcher/mapper split) must be among them; the test fails naming the others.
"""
import argparse
import zlib
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import yaml
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TABLES = os.path.join(ROOT, "tables", "onnx")
NODE_DIR = "/usr/share/libonnx-testdata/data/node"
OPSETS = range(7, 18)
TOL = 1e-5
NODE_TESTS_PER_OP = 1  # node tests of ops that no hand-written rule matches: the first few per op

# --------------------------------------------------------------------------------------- rules


# Ops whose outputs are random: no conversion gives the same numbers.
RANDOM_OPS = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial"}


def ns_label(ns):
    m = re.fullmatch(r"amanda/(onnx/\d+)", ns.strip())
    return m.group(1) if m else ns.strip()


def table_rules():
    """{(src, dst): {rule_name: (needs_coverage, file)}} over tables/onnx and tables/onnx/hand."""
    tables = {}
    for path in sorted(glob.glob(os.path.join(TABLES, "*.yaml")) + glob.glob(os.path.join(TABLES, "hand", "*.yaml"))):
        with open(path) as f:
            t = yaml.safe_load(f)["table"]
        key = (ns_label(t["src"]), ns_label(t["dst"]))
        # Graphs here are at opsets 7..17 and go to 7..17: rules of steps below 7 cannot be reached.
        reachable = all(int(k.split("/")[-1]) >= OPSETS.start for k in key if k.startswith("onnx/"))
        rules = tables.setdefault(key, {})
        for r in t.get("rules") or []:
            name = r["rule_name"]
            if name in rules:
                raise SystemExit(f"rule {name} twice in table {key} ({path} and {rules[name][1]})")
            identity = set(r) <= {"rule_name", "type", "doc", "tags", "priority"} and isinstance(r.get("type"), str)
            rules[name] = ("unsupported" not in r and not identity and reachable, os.path.relpath(path, ROOT))
    return tables


def qualify(by_rule, report_tables, tables, where):
    """by_rule names -> "src->dst:rule", each name looked up in the tables the conversion ran."""
    chain = []
    for t in report_tables:
        src, _, dst = t.partition(" -> ")
        chain.append((ns_label(src), ns_label(dst)))
    out, ambiguous = set(), []
    for name in by_rule:
        owners = [k for k in chain if name in tables.get(k, {})]
        if len(owners) == 1:
            out.add(f"{owners[0][0]}->{owners[0][1]}:{name}")
        elif len(owners) > 1 and any(tables[k][name][0] for k in owners):
            ambiguous.append(f"{where}: rule {name} is in several tables of the chain {owners}")
    return out, ambiguous


# --------------------------------------------------------------------------------------- graphs


def opset_of(model):
    v = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return v[0] if len(v) == 1 else None


def tensor_inputs_ok(model):
    init = {i.name for i in model.graph.initializer}
    for v in list(model.graph.input) + list(model.graph.output):
        if v.name in init:
            continue
        if not v.type.HasField("tensor_type"):
            return False
    return True


def node_tests(node_dir, everything):
    """[(name, model path, [input arrays])] for the chosen node tests."""
    hand_ops = set()
    for path in glob.glob(os.path.join(TABLES, "hand", "*.yaml")):
        with open(path) as f:
            for r in yaml.safe_load(f)["table"].get("rules") or []:
                for side in (r, r.get("src") or {}):
                    if isinstance(side.get("type"), str):
                        hand_ops.add(side["type"])
                    if isinstance(side.get("type"), dict):
                        hand_ops.add(side["type"].get("src"))
                for op in (r.get("src") or {}).get("ops") or []:
                    hand_ops.add(op.get("type"))
    chosen, per_op, families = [], {}, set()
    for name in sorted(os.listdir(node_dir)):
        d = os.path.join(node_dir, name)
        path = os.path.join(d, "model.onnx")
        if not os.path.exists(path) or not os.path.isdir(os.path.join(d, "test_data_set_0")):
            continue
        m = onnx.load(path)
        if opset_of(m) not in OPSETS or any(o.domain not in ("", "ai.onnx") for o in m.opset_import):
            continue
        if not tensor_inputs_ok(m):
            continue
        ops = {n.op_type for n in m.graph.node}
        if name.endswith("_expanded"):
            # The function bodies of other tests: many ops each; the first with a hand-ruled op per family.
            family = name.split("_")[1]
            if not everything and (not ops & hand_ops or family in families):
                continue
            families.add(family)
        elif not everything and not ops & hand_ops:
            op = m.graph.node[0].op_type if m.graph.node else ""
            per_op[op] = per_op.get(op, 0) + 1
            if per_op[op] > NODE_TESTS_PER_OP:
                continue
        init = {i.name for i in m.graph.initializer}
        names = [v.name for v in m.graph.input if v.name not in init]
        arrays = []
        ok = True
        for k in range(len(names)):
            pb = os.path.join(d, "test_data_set_0", f"input_{k}.pb")
            if not os.path.exists(pb):
                ok = False
                break
            t = TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            arrays.append(numpy_helper.to_array(t))
        if ok:
            chosen.append((name, path, dict(zip(names, arrays))))
    return chosen


def f32(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).uniform(-1, 1, size=shape) * scale).astype(np.float32)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(opset, nodes, inputs, outputs, inits=(), infer=True):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="rule_graphs_test")
    m.ir_version = 7 if opset <= 14 else 8
    if infer:
        m = onnx.shape_inference.infer_shapes(m)  # value_info: the rank(x) conditions read it
    return m


def one(opset, op, ins, x_shape, y_shape, inits=(), y_elem=TensorProto.FLOAT, extra_outputs=(), **attrs):
    outs = ["y"] + [o[0] for o in extra_outputs]
    nodes = [helper.make_node(op, ins, outs, **attrs)]
    outputs = [vi("y", y_shape, y_elem)] + [vi(*o) for o in extra_outputs]
    return model(opset, nodes, [vi("x", x_shape)], outputs, inits)


def gridsample_bicubic_numpy(X, G, pad, align):
    """GridSample-16 bicubic as its ONNX specification (and onnx.reference) describes it: a point
    outside [lo, hi] is clamped (border) or reflected (reflection) first; the 4x4 pixels around it
    are read with the padding; the weights are the cubic convolution's with A = -0.75."""
    def weights(t, a=-0.75):
        t = abs(t)
        return np.array([((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
                         ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1, ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a])

    def reflect(v, lo, hi):
        if lo <= v <= hi:
            return v
        d = lo - v if v < lo else v - hi
        n = int(d / (hi - lo))
        r = d - n * (hi - lo)
        return (lo + r if n % 2 == 0 else hi - r) if v < lo else (hi - r if n % 2 == 0 else lo + r)

    n_, c_, h_, w_ = X.shape
    xs, ys = ((0, w_ - 1), (0, h_ - 1)) if align else ((-0.5, w_ - 0.5), (-0.5, h_ - 0.5))

    def pixel(n, r, c):
        if pad == "zeros":
            return X[n, :, r, c] if 0 <= r < h_ and 0 <= c < w_ else np.zeros(c_)
        if pad == "border":
            return X[n, :, min(max(r, 0), h_ - 1), min(max(c, 0), w_ - 1)]
        return X[n, :, int(reflect(float(r), *ys)), int(reflect(float(c), *xs))]

    Y = np.zeros((n_, c_) + G.shape[1:3])
    for n in range(n_):
        for i in range(G.shape[1]):
            for j in range(G.shape[2]):
                gx, gy = (float(v) for v in G[n, i, j])
                x = (gx + 1) / 2 * (w_ - 1) if align else ((gx + 1) * w_ - 1) / 2
                y = (gy + 1) / 2 * (h_ - 1) if align else ((gy + 1) * h_ - 1) / 2
                if not (xs[0] <= x <= xs[1] and ys[0] <= y <= ys[1]):
                    if pad == "border":
                        x, y = min(max(x, 0), w_ - 1), min(max(y, 0), h_ - 1)
                    elif pad == "reflection":
                        x, y = reflect(x, *xs), reflect(y, *ys)
                x0, y0 = int(np.floor(x)) - 1, int(np.floor(y)) - 1
                wx, wy = weights(x - x0 - 1), weights(y - y0 - 1)
                rows = [sum(wx[b] * pixel(n, y0 + a, x0 + b) for b in range(4)) for a in range(4)]
                Y[n, :, i, j] = sum(wy[a] * rows[a] for a in range(4))
    return Y.astype(np.float32)


def hand_graphs():
    """[(name, ModelProto, {input: array})]: each aimed at the rules named in its comment."""
    X = {"x": f32(2, 3, 4, 5)}
    X3 = {"x": f32(3, 4, 5)}
    g = []

    def add(name, m, feeds=None, expected=None):
        # expected: the outputs computed here with numpy, independently of Amanda, for graphs where
        # onnxruntime's own kernel is off (used as a node test's expected outputs are)
        g.append((name, m, feeds if feeds is not None else {"x": f32(*[d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim])},
                  expected))

    # up 9->10 slice_attributes_to_inputs; 10->9 slice_inputs_to_attributes on the way back.
    add("slice_attrs_9", one(9, "Slice", ["x"], [3, 4, 5], [2, 4, 3], starts=[0, 1], ends=[2, -1], axes=[0, 2]))
    add("slice_attrs_no_axes_9", one(9, "Slice", ["x"], [3, 4, 5], [2, 3, 5], starts=[1, 1], ends=[3, 4]))
    # 13->..->10 slice_axes (negative axes made non-negative), 10->9 slice_inputs_to_attributes.
    add("slice_const_13", one(13, "Slice", ["x", "s", "e", "a"], [3, 4, 5], [3, 4, 3],
                              [i64("s", [1, 0]), i64("e", [4, 100]), i64("a", [-1, 1])]))
    add("slice_const_steps1_11", one(11, "Slice", ["x", "s", "e", "a", "st"], [3, 4, 5], [2, 4, 5],
                                     [i64("s", [-2]), i64("e", [3]), i64("a", [0]), i64("st", [1])]))
    add("slice_steps2_11", one(11, "Slice", ["x", "s", "e", "a", "st"], [3, 4, 5], [3, 4, 3],
                               [i64("s", [0]), i64("e", [5]), i64("a", [2]), i64("st", [2])]))
    # TopK: 9->10 topk_k_to_input, 10->9 topk_k_to_attribute.
    add("topk_attr_9", one(9, "TopK", ["x"], [3, 6], [3, 2], k=2, axis=1, extra_outputs=[("i", [3, 2], TensorProto.INT64)]))
    add("topk_const_10", one(10, "TopK", ["x", "k"], [3, 6], [3, 3], [i64("k", [3])], extra_outputs=[("i", [3, 3], TensorProto.INT64)]))
    # Pools 10 -> 9: maxpool_plain, averagepool_floor (and the refusals for ceil/dilations).
    add("maxpool_12", one(12, "MaxPool", ["x"], [1, 2, 6, 6], [1, 2, 3, 3], kernel_shape=[2, 2], strides=[2, 2]))
    add("maxpool_ceil_10", one(10, "MaxPool", ["x"], [1, 2, 5, 5], [1, 2, 3, 3], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1))
    add("avgpool_11", one(11, "AveragePool", ["x"], [1, 2, 6, 6], [1, 2, 5, 5], kernel_shape=[2, 2], pads=[0, 0, 0, 0]))
    # Clip: 10->11 clip_bounds_to_inputs, 11->10 clip_bounds_to_attributes (both, one or no bound).
    add("clip_attrs_9", one(9, "Clip", ["x"], [3, 4], [3, 4], min=-0.5, max=0.25))
    add("clip_min_attr_10", one(10, "Clip", ["x"], [3, 4], [3, 4], min=-0.5))
    add("clip_const_11", one(11, "Clip", ["x", "lo", "hi"], [3, 4], [3, 4],
                             [numpy_helper.from_array(np.array(-0.3, np.float32), "lo"), numpy_helper.from_array(np.array(0.4, np.float32), "hi")]))
    add("clip_max_only_13", one(13, "Clip", ["x", "", "hi"], [3, 4], [3, 4], [numpy_helper.from_array(np.array(0.1, np.float32), "hi")]))
    add("clip_no_bounds_12", one(12, "Clip", ["x"], [3, 4], [3, 4]))
    # Gemm 11->10: gemm_with_c (and gemm_without_c refused).
    w = numpy_helper.from_array(f32(4, 5, seed=1), "w")
    c = numpy_helper.from_array(f32(5, seed=2), "c")
    add("gemm_c_11", one(11, "Gemm", ["x", "w", "c"], [3, 4], [3, 5], [w, c], alpha=0.5, beta=2.0))
    add("gemm_no_c_11", one(11, "Gemm", ["x", "w"], [3, 4], [3, 5], [w]))
    # 11 -> 10: negative axes made non-negative (concat/flatten/softmax/logsoftmax/gather/reduce*/squeeze/unsqueeze).
    add("concat_neg_11", model(11, [helper.make_node("Concat", ["x", "x"], ["y"], axis=-2)], [vi("x", [3, 4, 5])], [vi("y", [3, 8, 5])]), X3)
    add("flatten_neg_11", one(11, "Flatten", ["x"], [2, 3, 4, 5], [6, 20], axis=-2), X)
    add("softmax_neg_11", one(11, "Softmax", ["x"], [2, 3, 4, 5], [2, 3, 4, 5], axis=-2), X)
    add("logsoftmax_neg_11", one(11, "LogSoftmax", ["x"], [2, 3, 4, 5], [2, 3, 4, 5], axis=-3), X)
    add("gather_neg_11", model(11, [helper.make_node("Gather", ["x", "i"], ["y"], axis=-1)], [vi("x", [3, 4, 5]), vi("i", [2], TensorProto.INT64)],
                               [vi("y", [3, 4, 2])]), {"x": f32(3, 4, 5), "i": np.array([4, 1], np.int64)})
    add("reducemean_neg_11", one(11, "ReduceMean", ["x"], [3, 4, 5], [3, 1, 5], axes=[-2]), X3)
    add("reducesum_neg_11", one(11, "ReduceSum", ["x"], [3, 4, 5], [3, 4], axes=[-1], keepdims=0), X3)
    add("squeeze_neg_11", one(11, "Squeeze", ["x"], [3, 1, 5, 1], [3, 5], axes=[-1, 1]))
    add("unsqueeze_neg_11", one(11, "Unsqueeze", ["x"], [3, 5], [3, 1, 5, 1], axes=[-1, 1]))
    # Unsqueeze inside the graph: the rank of its output comes from value_info.
    add("unsqueeze_inner_neg_11", model(11, [helper.make_node("Unsqueeze", ["x"], ["u"], axes=[-3]), helper.make_node("Relu", ["u"], ["y"])],
                                        [vi("x", [3, 5])], [vi("y", [1, 3, 5])]))
    # Constant's value_* spellings 12 -> 11.
    for attr, val, elem, shape in [("value_float", 0.5, TensorProto.FLOAT, []), ("value_floats", [0.5, -1.0, 2.0], TensorProto.FLOAT, [3]),
                                   ("value_int", 7, TensorProto.INT64, []), ("value_ints", [1, -2, 3], TensorProto.INT64, [3])]:
        nodes = [helper.make_node("Constant", [], ["k"], **{attr: val}), helper.make_node("Add", ["x", "k"], ["y"])]
        elem_in = elem
        feeds = {"x": f32(2, 3) if elem == TensorProto.FLOAT else np.arange(6, dtype=np.int64).reshape(2, 3)}
        add(f"constant_{attr}_12", model(12, nodes, [vi("x", [2, 3], elem_in)], [vi("y", [2, 3], elem)]), feeds)
    # ArgMax/ArgMin 12 -> 11 (select_last_index 0).
    feeds = {"x": np.array([[1, 3, 3, 0], [2, 2, 1, 1]], np.float32)}
    add("argmax_12", one(12, "ArgMax", ["x"], [2, 4], [2, 1], y_elem=TensorProto.INT64, axis=1), feeds)
    add("argmin_12", one(12, "ArgMin", ["x"], [2, 4], [2], y_elem=TensorProto.INT64, axis=-1, keepdims=0), feeds)
    # Dropout: 11->12 dropout_ratio_to_input; 12->11 dropout_inference; 10->9 identity.
    add("dropout_attr_11", one(11, "Dropout", ["x"], [3, 4], [3, 4], ratio=0.3))
    add("dropout_const_12", one(12, "Dropout", ["x", "r"], [3, 4], [3, 4], [numpy_helper.from_array(np.array(0.2, np.float32), "r")]))
    add("dropout_plain_13", one(13, "Dropout", ["x"], [3, 4], [3, 4]))
    # 12 <-> 13: Squeeze/Unsqueeze/ReduceSum/Split attributes <-> inputs.
    add("squeeze_attr_12", one(12, "Squeeze", ["x"], [3, 1, 5, 1], [3, 5, 1], axes=[1]))
    add("squeeze_noaxes_12", one(12, "Squeeze", ["x"], [3, 1, 5, 1], [3, 5]))
    add("squeeze_const_13", one(13, "Squeeze", ["x", "a"], [3, 1, 5, 1], [3, 5], [i64("a", [1, -1])]))
    add("squeeze_noaxes_13", one(13, "Squeeze", ["x"], [3, 1, 5, 1], [3, 5]))
    add("unsqueeze_attr_12", one(12, "Unsqueeze", ["x"], [3, 5], [3, 1, 5, 1], axes=[1, 3]))
    add("unsqueeze_const_13", one(13, "Unsqueeze", ["x", "a"], [3, 5], [1, 3, 5], [i64("a", [0])]))
    add("reducesum_attr_12", one(12, "ReduceSum", ["x"], [3, 4, 5], [3, 1, 1], axes=[1, 2]))
    add("reducesum_noaxes_12", one(12, "ReduceSum", ["x"], [3, 4, 5], [], keepdims=0))
    add("reducesum_const_13", one(13, "ReduceSum", ["x", "a"], [3, 4, 5], [4], [i64("a", [0, -1])], keepdims=0))
    add("reducesum_noaxes_13", one(13, "ReduceSum", ["x"], [3, 4, 5], [1, 1, 1]))
    add("split_attr_12", one(12, "Split", ["x"], [6, 4], [2, 4], axis=0, split=[2, 4], extra_outputs=[("z", [4, 4])]))
    add("split_equal_12", one(12, "Split", ["x"], [4, 6], [4, 3], axis=-1, extra_outputs=[("z", [4, 3])]))
    add("split_const_13", one(13, "Split", ["x", "s"], [6, 4], [1, 4], [i64("s", [1, 5])], extra_outputs=[("z", [5, 4])]))
    add("split_equal_13", one(13, "Split", ["x"], [6, 4], [3, 4], extra_outputs=[("z", [3, 4])]))
    # Softmax/LogSoftmax 12 <-> 13: the last axis both ways; another axis 12 -> 13 coerced to 2-D.
    add("softmax_last_12", one(12, "Softmax", ["x"], [2, 3, 4, 5], [2, 3, 4, 5], axis=3), X)
    add("softmax_default_12", one(12, "Softmax", ["x"], [2, 3, 4, 5], [2, 3, 4, 5]), X)
    add("softmax_last_13", one(13, "Softmax", ["x"], [2, 3, 4, 5], [2, 3, 4, 5], axis=-1), X)
    add("logsoftmax_last_12", one(12, "LogSoftmax", ["x"], [3, 4, 5], [3, 4, 5], axis=-1), X3)
    add("logsoftmax_axis0_12", one(12, "LogSoftmax", ["x"], [3, 4, 5], [3, 4, 5], axis=0), X3)
    add("logsoftmax_last_13", one(13, "LogSoftmax", ["x"], [3, 4, 5], [3, 4, 5], axis=2), X3)
    # Reshape 14 -> 13 (allowzero 0), BatchNormalization 14 -> 13 (training_mode 0), Shape 15 -> 14.
    add("reshape_14", one(14, "Reshape", ["x", "s"], [3, 4, 5], [3, 20], [i64("s", [0, -1])]), X3)
    add("reshape_allowzero_14", one(14, "Reshape", ["x", "s"], [3, 4, 5], [3, 20], [i64("s", [3, -1])], allowzero=1), X3)
    bn = [numpy_helper.from_array(f32(3, seed=s) + (1.5 if s == 4 else 0), n) for s, n in [(1, "sc"), (2, "b"), (3, "m"), (4, "v")]]
    add("batchnorm_15", one(15, "BatchNormalization", ["x", "sc", "b", "m", "v"], [2, 3, 4], [2, 3, 4], bn, epsilon=1e-3))
    # BatchNormalization 13 -> 14 (inputs renamed), Pad 10 <-> 11 (attributes <-> inputs).
    add("batchnorm_13", one(13, "BatchNormalization", ["x", "sc", "b", "m", "v"], [2, 3, 4], [2, 3, 4], bn, epsilon=1e-3))
    add("pad_10", one(10, "Pad", ["x"], [2, 3], [2, 5], pads=[0, 1, 0, 1], value=1.5))
    add("pad_11", one(11, "Pad", ["x", "p", "cv"], [2, 3], [2, 5], [i64("p", [0, 1, 0, 1]),
                                                                      numpy_helper.from_array(np.array(1.5, dtype=np.float32), "cv")]))
    # Hardmax 12 -> 13 (last axis kept; another axis by Shape + Flatten + Hardmax + Reshape).
    add("hardmax_axis1_12", one(12, "Hardmax", ["x"], [3, 4, 5], [3, 4, 5], axis=1), X3)
    add("hardmax_last_12", one(12, "Hardmax", ["x"], [3, 4, 5], [3, 4, 5], axis=2), X3)
    # RoiAlign 15 -> 16 (coordinate_transformation_mode made explicit: opset 15's output_half_pixel).
    rois = numpy_helper.from_array(np.array([[0, 0, 3, 3], [1, 1, 4, 4]], dtype=np.float32), "rois")
    bi = numpy_helper.from_array(np.array([0, 0], dtype=np.int64), "bi")
    add("roialign_15", one(15, "RoiAlign", ["x", "rois", "bi"], [1, 2, 6, 6], [2, 2, 2, 2], [rois, bi], output_height=2, output_width=2,
                           sampling_ratio=2))
    # Resize 10 <-> 11 (roi, asymmetric coordinates, nearest rounded down), Resize 10 <-> Upsample 9,
    # Upsample's scales 8 <-> 9.
    sc = numpy_helper.from_array(np.array([1, 1, 2, 3], dtype=np.float32), "sc")
    roi = numpy_helper.from_array(np.array([], dtype=np.float32), "roi")
    add("resize_asymmetric_11", one(11, "Resize", ["x", "roi", "sc"], [1, 2, 3, 4], [1, 2, 6, 12], [roi, sc], mode="nearest",
                                    coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    add("resize_10", one(10, "Resize", ["x", "sc"], [1, 2, 3, 4], [1, 2, 6, 12], [sc], mode="nearest"))
    add("upsample_8", one(8, "Upsample", ["x"], [1, 2, 3, 4], [1, 2, 6, 12], scales=[1.0, 1.0, 2.0, 3.0], mode="nearest"))
    add("upsample_9", one(9, "Upsample", ["x", "sc"], [1, 2, 3, 4], [1, 2, 6, 12], [sc], mode="nearest"))
    add("shape_15", one(15, "Shape", ["x"], [2, 3, 4], [3], y_elem=TensorProto.INT64))
    add("shape_slice_15", one(15, "Shape", ["x"], [2, 3, 4], [2], y_elem=TensorProto.INT64, start=1))
    # Lowerings and type widenings the node tests do not reach (issue 13): integer Relu 14 -> 13
    # (relu_int), integer Clip 12 -> 11 with both bounds or none (clip_int_min_max,
    # clip_int_unbounded), ReduceSum with an empty axes input 13 -> 12 (reducesum_empty_axes_all).
    ints = {"x": np.array([[-3, 0, 5, -1], [7, -8, 2, 1], [0, 4, -6, 3]], np.int32)}
    add("relu_int_14", model(14, [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [3, 4], TensorProto.INT32)],
                             [vi("y", [3, 4], TensorProto.INT32)]), ints)
    lo, hi = numpy_helper.from_array(np.array(-2, np.int32), "lo"), numpy_helper.from_array(np.array(4, np.int32), "hi")
    add("clip_int_13", model(13, [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], [vi("x", [3, 4], TensorProto.INT32)],
                             [vi("y", [3, 4], TensorProto.INT32)], [lo, hi]), ints)
    add("clip_int_unbounded_13", model(13, [helper.make_node("Clip", ["x"], ["y"])], [vi("x", [3, 4], TensorProto.INT32)],
                                       [vi("y", [3, 4], TensorProto.INT32)]), ints)
    add("reducesum_empty_axes_13", model(13, [helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)],
                                         [vi("x", [3, 4, 5]), vi("a", [0], TensorProto.INT64)], [vi("y", [])]),
        {"x": f32(3, 4, 5), "a": np.zeros([0], np.int64)})
    # Sum and Mean of two broadcast inputs at opset 8, down to 7 (sum_two_tiled, mean_two_tiled).
    for op in ("Sum", "Mean"):
        add(f"{op.lower()}_broadcast_8", model(8, [helper.make_node(op, ["x", "b"], ["y"])], [vi("x", [3, 4]), vi("b", [4])], [vi("y", [3, 4])]),
            {"x": f32(3, 4), "b": f32(4, seed=3)})
    # A few ops together at opset 7, taken all the way up (and down nowhere: 7 is the lowest).
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Dropout", ["r"], ["d"], ratio=0.5), helper.make_node("Softmax", ["d"], ["y"], axis=1)]
    add("mlp_7", model(7, nodes, [vi("x", [3, 4])], [vi("y", [3, 5])], [w, c]))
    # Quantize/DequantizeLinear without a zero point, per tensor (10 -> 9: *_arith_no_zero_point) and
    # per axis (13 -> 12: *_per_axis_no_zero_point); the node tests all give one.
    u8 = np.random.default_rng(5).integers(0, 256, size=(2, 3, 4)).astype(np.uint8)
    for tag, sshape, scale in (("", [], np.array(0.37, np.float32)), ("_axis", [3], np.array([0.5, 0.25, 2.0], np.float32))):
        add(f"dequantizelinear{tag}_no_zero_point_13",
            model(13, [helper.make_node("DequantizeLinear", ["x", "s"], ["y"])], [vi("x", [2, 3, 4], TensorProto.UINT8), vi("s", sshape)], [vi("y", [2, 3, 4])]),
            {"x": u8, "s": scale})
        add(f"quantizelinear{tag}_no_zero_point_13",
            model(13, [helper.make_node("QuantizeLinear", ["x", "s"], ["y"])], [vi("x", [2, 3, 4]), vi("s", sshape)], [vi("y", [2, 3, 4], TensorProto.UINT8)]),
            {"x": f32(2, 3, 4, scale=200.0), "s": scale})
    # Upsample-9 linear with scales that are not constants (9 -> 8: upsample_linear_gather).
    add("upsample_linear_scales_input_9",
        model(9, [helper.make_node("Upsample", ["x", "s"], ["y"], mode="linear")], [vi("x", [1, 2, 3, 4]), vi("s", [4])], [vi("y", [1, 2, 6, 6])]),
        {"x": f32(1, 2, 3, 4), "s": np.array([1.0, 1.0, 2.0, 1.5], np.float32)})
    # Identity of a sequence (14 -> 13: identity_sequence), between tensors onnxruntime can feed.
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0), helper.make_node("Identity", ["s"], ["t"]),
             helper.make_node("ConcatFromSequence", ["t"], ["y"], axis=0)]
    add("identity_sequence_14", model(14, nodes, [vi("x", [3, 4])], [vi("y", [3, 4])]))
    # Dropout with a constant ratio of 0 and training_mode true (12 -> 11: dropout_zero_ratio_mask,
    # dropout_zero_ratio): the identity, the mask all true (torch exports swin_t's so).
    zr = [numpy_helper.from_array(np.array(0.0, np.float32), "r"), numpy_helper.from_array(np.array(True), "t")]
    add("dropout_zero_ratio_training_mask_13", model(13, [helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"])], [vi("x", [3, 4])],
                                                      [vi("y", [3, 4]), vi("m", [3, 4], TensorProto.BOOL)], zr))
    add("dropout_zero_ratio_training_13", model(13, [helper.make_node("Dropout", ["x", "r", "t"], ["y"])], [vi("x", [3, 4])], [vi("y", [3, 4])], zr))
    # Slice-10 with starts and ends as inputs, a constant axis (10 -> 9: slice_runtime_start_gather);
    # a negative start counts from the end.
    add("slice_runtime_starts_10", model(10, [helper.make_node("Slice", ["x", "s", "e", "a"], ["y"])],
                                         [vi("x", [3, 6]), vi("s", [1], TensorProto.INT64), vi("e", [1], TensorProto.INT64)],
                                         [vi("y", [3, 4])], [i64("a", [1])], infer=False),
        {"x": f32(3, 6), "s": np.array([-4], np.int64), "e": np.array([6], np.int64)})
    # The same with the output's length unknown (10 -> 9: slice_runtime_bounds_nonzero; a negative
    # end, an end past the length clamped).
    add("slice_runtime_bounds_10", model(10, [helper.make_node("Slice", ["x", "s", "e", "a"], ["y"])],
                                         [vi("x", [3, 6]), vi("s", [1], TensorProto.INT64), vi("e", [1], TensorProto.INT64)],
                                         [vi("y", None)], [i64("a", [1])], infer=False),
        {"x": f32(3, 6), "s": np.array([1], np.int64), "e": np.array([-1], np.int64)})
    add("slice_runtime_bounds_clamped_10", model(10, [helper.make_node("Slice", ["x", "s", "e", "a"], ["y"])],
                                                 [vi("x", [3, 6]), vi("s", [1], TensorProto.INT64), vi("e", [1], TensorProto.INT64)],
                                                 [vi("y", None)], [i64("a", [-2])], infer=False),
        {"x": f32(3, 6), "s": np.array([-5], np.int64), "e": np.array([100], np.int64)})
    # Constant bounds with steps 2 and 3 (10 -> 9: slice_const_steps_gather; a negative start, an end
    # past the length).
    add("slice_const_step2_11", one(11, "Slice", ["x", "s", "e", "a", "st"], [3, 7], [3, 4],
                                    [i64("s", [0]), i64("e", [100]), i64("a", [1]), i64("st", [2])]))
    add("slice_const_step3_neg_start_13", one(13, "Slice", ["x", "s", "e", "a", "st"], [8, 3], [2, 3],
                                              [i64("s", [-7]), i64("e", [6]), i64("a", [-2]), i64("st", [3])]))
    # Reshape allowzero = 1 with the shape as an input and no 0 in it (14 -> 13: reshape_allowzero_known_shape).
    add("reshape_allowzero_14", model(14, [helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)],
                                      [vi("x", [2, 3, 4]), vi("s", [2], TensorProto.INT64)], [vi("y", [6, 4])], infer=False),
        {"x": f32(2, 3, 4), "s": np.array([6, 4], np.int64)})
    # CumSum 11 -> 10: cumsum_const_axis (a constant axis, rank 3, counted from the end; exclusive
    # and reverse; an inf that must not turn the sums before it into NaN), int32 values.
    xi = f32(2, 3, 4, seed=5)
    xi[1, 0, 2] = np.inf
    add("cumsum_const_axis_rev_excl_11", one(11, "CumSum", ["x", "a"], [2, 3, 4], [2, 3, 4], [i64("a", -2)], exclusive=1, reverse=1), {"x": xi})
    add("cumsum_const_axis_last_14", one(14, "CumSum", ["x", "a"], [2, 3, 4], [2, 3, 4], [i64("a", 2)]), {"x": xi})
    add("cumsum_const_axis_int32_11", model(11, [helper.make_node("CumSum", ["x", "a"], ["y"])], [vi("x", [3, 4], TensorProto.INT32)],
                                            [vi("y", [3, 4], TensorProto.INT32)], [i64("a", 0)]),
        {"x": np.arange(-6, 6, dtype=np.int32).reshape(3, 4) * 1000})
    # GatherND / ScatterND 11 -> 10 (gathernd_flat_gather, scatternd_flat_gather): negative indices
    # (wrapped), k = 2 of a 3-D int32 input, an inf among the values kept as is.
    xg = f32(3, 4, 2, seed=6)
    xg[2, 1, 0] = np.inf
    add("gathernd_negative_11", model(11, [helper.make_node("GatherND", ["x", "i"], ["y"])], [vi("x", [3, 4, 2])], [vi("y", [2, 2])],
                                      [i64("i", [[-1, 1], [0, -4]])]), {"x": xg})
    add("scatternd_negative_int32_11", model(11, [helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
                                             [vi("x", [3, 4, 2], TensorProto.INT32), vi("u", [2, 2], TensorProto.INT32)],
                                             [vi("y", [3, 4, 2], TensorProto.INT32)], [i64("i", [[-1, 1], [0, -4]])]),
        {"x": np.arange(24, dtype=np.int32).reshape(3, 4, 2), "u": np.array([[-7, -8], [-9, -10]], np.int32)})
    # Einsum 12 -> 11 (the expander's C++ lowering, lowerings/einsum.cpp): an implicit output, an ellipsis
    # on one operand only, a letter summed away from one operand with the output transposed, a trace.
    for name, eq, sa, sb, so in [("einsum_implicit_12", "ij,jk", [3, 4], [4, 5], [3, 5]),
                                 ("einsum_ellipsis_one_side_12", "...ij,jk->...ik", [2, 3, 4], [4, 5], [2, 3, 5]),
                                 ("einsum_sum_one_side_transposed_12", "ijk,jl->li", [2, 3, 4], [3, 5], [5, 2]),
                                 ("einsum_trace_12", "bii->b", [2, 3, 3], None, [2])]:
        ins = [vi("x", sa)] + ([vi("w", sb)] if sb else [])
        feeds = {"x": f32(*sa, seed=7)}
        if sb:
            feeds["w"] = f32(*sb, seed=8)
        add(name, model(12, [helper.make_node("Einsum", ["x"] + (["w"] if sb else []), ["y"], equation=eq)], ins, [vi("y", so)]), feeds)
    # 10 -> 9: MatMulInteger with each zero-point combination and
    # ConvInteger with each, QLinearConv with a bias (onnxruntime takes one zero point per tensor).
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    rng = np.random.default_rng(5)
    a8 = rng.integers(0, 255, size=(3, 4)).astype(np.uint8)
    b8 = rng.integers(0, 255, size=(4, 2)).astype(np.uint8)
    for name, zps in [("matmulinteger_a_zp_10", "a"), ("matmulinteger_b_zp_10", "b"), ("matmulinteger_no_zp_10", "")]:
        ins = ["x", "w", "az" if "a" in zps else "", "bz" if "b" in zps else ""]
        while ins and ins[-1] == "":
            ins.pop()
        inits = [numpy_helper.from_array(b8, "w")]
        if "a" in zps:
            inits.append(numpy_helper.from_array(np.array(200, np.uint8), "az"))  # onnxruntime: one a zero point
        if "b" in zps:
            inits.append(numpy_helper.from_array(np.array([128, 5], np.uint8), "bz"))
        add(name, model(10, [helper.make_node("MatMulInteger", ins, ["y"])], [vi("x", [3, 4], U8)], [vi("y", [3, 2], TensorProto.INT32)], inits),
            {"x": a8})
    x8 = rng.integers(0, 255, size=(1, 2, 5, 5)).astype(np.uint8)
    w8 = rng.integers(0, 255, size=(3, 2, 3, 3)).astype(np.uint8)
    for name, zps in [("convinteger_both_zp_10", "xw"), ("convinteger_w_zp_10", "w"), ("convinteger_no_zp_10", "")]:
        ins = ["x", "w", "xz" if "x" in zps else "", "wz" if "w" in zps else ""]
        while ins and ins[-1] == "":
            ins.pop()
        inits = [numpy_helper.from_array(w8, "w")]
        if "x" in zps:
            inits.append(numpy_helper.from_array(np.array(100, np.uint8), "xz"))
        if "w" in zps:
            inits.append(numpy_helper.from_array(np.array(131, np.uint8), "wz"))  # onnxruntime: one w zero point
        add(name, model(10, [helper.make_node("ConvInteger", ins, ["y"], pads=[1, 1, 1, 1])], [vi("x", [1, 2, 5, 5], U8)],
                        [vi("y", [1, 3, 5, 5], TensorProto.INT32)], inits), {"x": x8})
    f = lambda v, n: numpy_helper.from_array(np.array(v, np.float32), n)  # noqa: E731
    u = lambda v, n: numpy_helper.from_array(np.array(v, np.uint8), n)  # noqa: E731
    add("qlinearconv_bias_10", model(10, [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], pads=[1, 1, 1, 1])],
                                     [vi("x", [1, 2, 5, 5], U8)], [vi("y", [1, 3, 5, 5], U8)],
                                     [f(0.02, "xs"), u(100, "xz"), numpy_helper.from_array(w8, "w"), f([0.01, 0.003, 0.02], "ws"),
                                      u([7, 128, 250], "wz"), f(0.5, "ys"), u(90, "yz"),
                                      numpy_helper.from_array(np.array([100, -2000, 31], np.int32), "b")]), {"x": x8})
    # 11 -> 10: Det (the expander's C++ lowering, lower_det: elimination with partial pivoting) of
    # 1x1, a batch of 3x3, one 4x4 (a 0-D result), a [2, 3] batch of 6x6, 5x5 matrices
    # with a zero first element (a swap at the first column), a singular one (a zero pivot), and a
    # batch axis of unknown length.
    add("det_1x1_11", one(11, "Det", ["x"], [2, 1, 1], [2]))
    add("det_3x3_11", one(11, "Det", ["x"], [2, 3, 3], [2]))
    add("det_4x4_11", one(11, "Det", ["x"], [4, 4], []), {"x": f32(4, 4, seed=31, scale=2.0)})
    add("det_6x6_11", one(11, "Det", ["x"], [2, 3, 6, 6], [2, 3]), {"x": f32(2, 3, 6, 6, seed=32, scale=1.5)})
    xd = f32(3, 5, 5, seed=33, scale=1.5)
    xd[0, 0, 0] = 0.0
    xd[1, :, 2] = 0.0  # singular: a zero column
    xd[2] = np.triu(xd[2])
    add("det_5x5_pivots_11", one(11, "Det", ["x"], [3, 5, 5], [3]), {"x": xd})
    add("det_5x5_unknown_batch_11", one(11, "Det", ["x"], ["b", 5, 5], ["b"]), {"x": f32(2, 5, 5, seed=34)})
    # 9 -> 8 (scan9_batch_axis_N_in_M_out: Unsqueeze, Transpose, Scan-8, Squeeze, Transpose) and
    # 8 -> 7 (the expander's lower_scan8: a Loop over the batch around a Loop over the sequence):
    # one Scan-9 per count of inputs and outputs (1..3 each), states and scan inputs, scan inputs
    # along axis 1 or 0, forward or reversed, scan outputs stacked along axis 1 or 0; and a Scan-8
    # with a batch of 2 and a reversed input.
    # (all nine counts in one graph each way: one conversion per target exercises the nine rules)
    nodes9, in9, out9, feeds9, nodes8, in8, out8, feeds8 = [], [], [], {}, [], [], [], {}
    for ni in (1, 2, 3):
        for no in (1, 2, 3):
            n_states = min(ni - 1, no)
            n_scan = ni - n_states
            n_out = no - n_states
            body_in = [vi(f"s{j}", [3]) for j in range(n_states)] + [vi(f"e{i}", [3]) for i in range(n_scan)]
            nodes = [helper.make_node("Sum", [f"e{i}" for i in range(n_scan)], ["acc"])]
            outs = []
            for j in range(n_states):
                nodes.append(helper.make_node("Add" if j % 2 == 0 else "Sub", [f"s{j}", "acc"], [f"s{j}_out"]))
                outs.append(f"s{j}_out")
            for k in range(n_out):
                nodes.append(helper.make_node("Mul", ["acc", f"e{k % n_scan}" if k else (outs[0] if outs else "acc")], [f"o{k}"]))
                outs.append(f"o{k}")
            body = helper.make_graph(nodes, "scan_body", body_in, [vi(o, [3]) for o in outs])
            in_axes = [(i + ni) % 2 for i in range(n_scan)]
            dirs = [(i + no) % 2 for i in range(n_scan)]
            out_axes = [(k + ni + no) % 2 for k in range(n_out)]
            attrs = {"num_scan_inputs": n_scan, "scan_input_directions": dirs}
            if any(in_axes):
                attrs["scan_input_axes"] = in_axes
            if any(out_axes):
                attrs["scan_output_axes"] = out_axes
            p_ = f"n{ni}{no}_"
            g_in = [vi(f"{p_}xs{j}", [3]) for j in range(n_states)] + [vi(f"{p_}xe{i}", [3, 4] if in_axes[i] else [4, 3]) for i in range(n_scan)]
            g_out = [vi(f"{p_}ys{j}", [3]) for j in range(n_states)] + [vi(f"{p_}yo{k}", [3, 4] if out_axes[k] else [4, 3]) for k in range(n_out)]
            feeds9.update({v.name: f32(*[d.dim_value for d in v.type.tensor_type.shape.dim], seed=40 + ni * 10 + no + k) for k, v in enumerate(g_in)})
            nodes9.append(helper.make_node("Scan", [v.name for v in g_in], [v.name for v in g_out], body=body, **attrs))
            in9 += g_in
            out9 += g_out
            # 8 -> 9 (scan8_batch_of_one_N_in_M_out: Squeeze, Scan-9, Unsqueeze), and 8 -> 7.
            g8_in = [vi(f"{p_}xs{j}", [1, 3]) for j in range(n_states)] + [vi(f"{p_}xe{i}", [1, 4, 3]) for i in range(n_scan)]
            g8_out = [vi(f"{p_}ys{j}", [1, 3]) for j in range(n_states)] + [vi(f"{p_}yo{k}", [1, 4, 3]) for k in range(n_out)]
            feeds8.update({v.name: f32(*[d.dim_value for d in v.type.tensor_type.shape.dim], seed=50 + ni * 10 + no + k) for k, v in enumerate(g8_in)})
            nodes8.append(helper.make_node("Scan", [""] + [v.name for v in g8_in], [v.name for v in g8_out], body=body, num_scan_inputs=n_scan,
                                           directions=dirs))
            in8 += g8_in
            out8 += g8_out
    add("scan9_counts_1_to_3_11", model(11, nodes9, in9, out9), feeds9)
    add("scan8_batch1_counts_1_to_3_8", model(8, nodes8, in8, out8), feeds8)
    sb = helper.make_graph(
        [helper.make_node("Add", ["s_in", "a"], ["s_out"]), helper.make_node("Mul", ["p_in", "b"], ["p_out"]),
         helper.make_node("Sub", ["s_out", "p_out"], ["d"]), helper.make_node("Identity", ["s_out"], ["e"])],
        "scan_body", [vi("s_in", [3]), vi("p_in", [3]), vi("a", [3]), vi("b", [3])],
        [vi("s_out", [3]), vi("p_out", [3]), vi("d", [3]), vi("e", [3])])
    add("scan8_batch_reverse_8", model(8, [helper.make_node("Scan", ["", "s0", "p0", "xa", "xb"], ["sf", "pf", "yd", "ye"], body=sb,
                                                            num_scan_inputs=2, directions=[1, 0])],
                                       [vi("s0", [2, 3]), vi("p0", [2, 3]), vi("xa", [2, 4, 3]), vi("xb", [2, 4, 3])],
                                       [vi("sf", [2, 3]), vi("pf", [2, 3]), vi("yd", [2, 4, 3]), vi("ye", [2, 4, 3])]),
        {"s0": f32(2, 3, seed=35), "p0": f32(2, 3, seed=36), "xa": f32(2, 4, 3, seed=37), "xb": f32(2, 4, 3, seed=38)})
    # 17 -> 16: STFT with a complex signal (window and length, window only, length only) and a
    # real one with both.
    sig_c = f32(1, 32, 2, seed=11)
    sig_r = f32(2, 32, 1, seed=12)
    win = numpy_helper.from_array(np.hanning(8).astype(np.float32), "w")
    st = numpy_helper.from_array(np.array(4, np.int64), "st")
    fl = numpy_helper.from_array(np.array(8, np.int64), "fl")
    for name, sig, ins, inits, onesided, bins in [
            ("stft_complex_window_length_17", sig_c, ["x", "st", "w", "fl"], [st, win, fl], 0, 8),
            ("stft_complex_window_17", sig_c, ["x", "st", "w"], [st, win], 0, 8),
            ("stft_complex_length_17", sig_c, ["x", "st", "", "fl"], [st, fl], 0, 8),
            ("stft_real_window_length_17", sig_r, ["x", "st", "w", "fl"], [st, win, fl], 1, 5)]:
        # numpy's FFT of each windowed frame (onnxruntime 1.30's STFT of a complex signal with a
        # window is off by up to 3.5 here; without a window it agrees with numpy)
        z = sig[..., 0].astype(np.float64) + (1j * sig[..., 1] if sig.shape[-1] == 2 else 0)
        w = np.hanning(8) if "w" in ins else np.ones(8)
        spec = np.stack([np.fft.fft(z[:, f * 4:f * 4 + 8] * w, axis=-1)[:, :bins] for f in range(7)], axis=1)
        ref = np.stack([spec.real, spec.imag], axis=-1).astype(np.float32)
        add(name, model(17, [helper.make_node("STFT", ins, ["y"], onesided=onesided)], [vi("x", list(sig.shape))],
                        [vi("y", [sig.shape[0], 7, bins, 2])], inits), {"x": sig}, expected=[ref])
    # 9 -> 8: Sign and Shrink on integers (through float64).
    add("sign_int32_9", model(9, [helper.make_node("Sign", ["x"], ["y"])], [vi("x", [6], TensorProto.INT32)], [vi("y", [6], TensorProto.INT32)]),
        {"x": np.array([-5, 0, 3, -1, 2147483647, -2147483648], np.int32)})
    add("shrink_int8_9", model(9, [helper.make_node("Shrink", ["x"], ["y"], lambd=2.0, bias=1.0)], [vi("x", [7], TensorProto.INT8)],
                               [vi("y", [7], TensorProto.INT8)]), {"x": np.array([-100, -3, -2, 0, 2, 3, 127], np.int8)})
    # 11 -> 10: Unique (the expander's lower_unique): float slices along axis 1 (sorted, duplicates
    # that differ only in a late element), unsorted elements of a 1-D input of unknown length.
    xu = np.array([[[1, 2, 3], [0, 5, 1], [1, 2, 3], [1, 2, -4], [0, 5, 1]], [[2, 2, 2], [0, 0, 0], [2, 2, 2], [7, 1, 0], [0, 0, 0]]], np.float32)
    uo = [("i", [None], TensorProto.INT64), ("v", [None], TensorProto.INT64), ("c", [None], TensorProto.INT64)]
    add("unique_sorted_axis1_11", model(11, [helper.make_node("Unique", ["x"], ["y", "i", "v", "c"], axis=1)], [vi("x", [2, 5, 3])],
                                        [vi("y", [2, None, 3])] + [vi(*o) for o in uo]), {"x": xu})
    add("unique_unsorted_unknown_length_11", model(11, [helper.make_node("Unique", ["x"], ["y", "i", "v", "c"], sorted=0)], [vi("x", ["n"])],
                                                   [vi("y", [None])] + [vi(*o) for o in uo]),
        {"x": np.array([3.5, -1, 3.5, 2, -1, 0, 7, 2, 2], np.float32)})
    # 10 -> 9: NonMaxSuppression (the expander's lower_nms): random boxes in 2 batches and 3 classes
    # with tied scores, no score_threshold, center_point_box 1; corner boxes with flipped corners
    # and every threshold; a max of 2 per class.
    rng = np.random.default_rng(70)
    cb = rng.uniform(0, 10, size=(2, 8, 4)).astype(np.float32)
    cb[..., 2:] = rng.uniform(0.5, 4, size=(2, 8, 2))
    sc = rng.choice(np.array([0.1, 0.5, 0.5, 0.7, 0.9], np.float32), size=(2, 3, 8))
    add("nms_center_ties_10", model(10, [helper.make_node("NonMaxSuppression", ["b", "s", "m", "t"], ["y"], center_point_box=1)],
                                    [vi("b", [2, 8, 4]), vi("s", [2, 3, 8])], [vi("y", [None, 3], TensorProto.INT64)],
                                    [i64("m", [5]), numpy_helper.from_array(np.array([0.2], np.float32), "t")]), {"b": cb, "s": sc})
    kb = rng.uniform(0, 6, size=(1, 7, 4)).astype(np.float32)
    add("nms_corners_thresholds_10", model(10, [helper.make_node("NonMaxSuppression", ["b", "s", "m", "t", "st"], ["y"])],
                                           [vi("b", [1, 7, 4]), vi("s", [1, 2, 7]), vi("m", [1], TensorProto.INT64), vi("t", [1]), vi("st", [1])],
                                           [vi("y", [None, 3], TensorProto.INT64)]),
        {"b": kb, "s": rng.uniform(0, 1, size=(1, 2, 7)).astype(np.float32), "m": np.array([2], np.int64),
         "t": np.array([0.1], np.float32), "st": np.array([0.3], np.float32)})
    # RoiAlign lowered (roialign_half_pixel_{avg,max}_gather 16 -> 15, roialign_{avg,max}_gather
    # 10 -> 9): rois partly outside the input, a tiny one, spatial_scale 0.5, 2 batches, max mode.
    rr = numpy_helper.from_array(np.array([[0, 0, 9, 9], [-3, 2, 5, 14], [4.2, 3.1, 4.6, 3.5], [10, 1, 20, 8]], np.float32), "rois")
    rb = numpy_helper.from_array(np.array([0, 1, 1, 0], np.int64), "bi")
    for op_set, ctm in [(16, "half_pixel"), (10, None)]:
        kw = {"coordinate_transformation_mode": ctm} if ctm else {}
        add(f"roialign_{ctm or 'output_half_pixel'}_avg_max_{op_set}",
            model(op_set, [helper.make_node("RoiAlign", ["x", "rois", "bi"], [f"y{mode}"], output_height=3, output_width=2, sampling_ratio=2,
                                            spatial_scale=0.5, mode=mode, **kw) for mode in ("avg", "max")],
                  [vi("x", [2, 3, 8, 7])], [vi("yavg", [4, 3, 3, 2]), vi("ymax", [4, 3, 3, 2])], [rr, rb]), {"x": f32(2, 3, 8, 7, seed=80, scale=3.0)})
    # 9 -> 8: TfIdfVectorizer (the expander's lower_tfidf): TFIDF with weights and trigrams with
    # skips over int32 rows; IDF over a 1-D int64 input, unigrams to bigrams.
    pool = dict(pool_int64s=[1, 2, 3, 1, 2, 2, 3, 3, 1, 1, 2, 3], ngram_counts=[0, 3, 9], ngram_indexes=[5, 0, 1, 2, 3, 4, 6])
    tok = np.random.default_rng(90).integers(0, 4, size=(3, 9)).astype(np.int32)
    add("tfidf_tfidf_trigrams_skips_9", model(9, [helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TFIDF", min_gram_length=2, max_gram_length=3,
                                                                  max_skip_count=2, weights=[0.5, 1, 2, 0.25, 3, 1.5, 0.75], **pool)],
                                             [vi("x", [3, 9], TensorProto.INT32)], [vi("y", [3, 7])]), {"x": tok})
    add("tfidf_idf_unigrams_9", model(9, [helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="IDF", min_gram_length=1, max_gram_length=2,
                                                          max_skip_count=1, weights=[2, 1, 0.5, 3, 1, 1, 1], **pool)],
                                      [vi("x", [11], TensorProto.INT64)], [vi("y", [7])]),
        {"x": np.array([1, 2, 3, 3, 1, 2, 2, 0, 3, 1, 2], np.int64)})
    # 16 -> 15: GridSample's reflection padding (gridsample_bilinear_reflection_gather,
    # gridsample_nearest_reflection_gather) and bicubic mode (gridsample_bicubic_*_gather), with
    # grids reaching far outside [-1, 1] (several reflections) and both align_corners.
    # (one graph for the six that onnxruntime computes as the ONNX reference does; bicubic + border,
    # where onnxruntime is off, in graphs of their own, compared with numpy)
    feeds = {"x": f32(2, 3, 4, 5, seed=60), "grid": f32(2, 3, 6, 2, seed=61, scale=3.5)}
    gs = [("bilinear", "reflection", 1), ("nearest", "reflection", 0), ("nearest", "reflection", 1), ("bicubic", "zeros", 1),
          ("bicubic", "reflection", 0), ("bicubic", "reflection", 1)]
    add("gridsample_reflection_bicubic_16",
        model(16, [helper.make_node("GridSample", ["x", "grid"], [f"y{k}"], mode=m, padding_mode=p_, align_corners=a_) for k, (m, p_, a_) in enumerate(gs)],
              [vi("x", [2, 3, 4, 5]), vi("grid", [2, 3, 6, 2])], [vi(f"y{k}", [2, 3, 3, 6]) for k in range(len(gs))]), feeds)
    for align in (0, 1):
        add(f"gridsample_bicubic_border_align{align}_16",
            model(16, [helper.make_node("GridSample", ["x", "grid"], ["y"], mode="bicubic", padding_mode="border", align_corners=align)],
                  [vi("x", [2, 3, 4, 5]), vi("grid", [2, 3, 6, 2])], [vi("y", [2, 3, 3, 6])]),
            feeds, expected=[gridsample_bicubic_numpy(feeds["x"], feeds["grid"], "border", align)])
    # 16 -> 15: ScatterElements / ScatterND with reduction add or mul (scatterelements_add_where,
    # scatterelements_mul_where, scatternd_add_where, scatternd_mul_where): duplicate indices,
    # negative ones, another axis, int32 and float values, ND with k < rank (rows of updates).
    # (both reductions of each case in one graph)
    # Session 11's lowerings of what tables refused (the node tests feed none of these cases).
    I64, U64 = TensorProto.INT64, TensorProto.UINT64
    big = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, 0, 7, -(2 ** 62) - 3, 2 ** 62 + 5, 3], np.int64)
    # down_12_11 max_int64_two / min_int64_two: extremes of both signs (b - a overflows), broadcasting.
    add("max_int64_extremes_13", model(13, [helper.make_node("Max", ["a", "b"], ["y"]), helper.make_node("Min", ["a", "b"], ["z"])],
                                       [vi("a", [2, 8], I64), vi("b", [8], I64)], [vi("y", [2, 8], I64), vi("z", [2, 8], I64)]),
        {"a": np.stack([big, big[::-1]]), "b": np.roll(big, 3)})
    ubig = np.array([0, 2 ** 64 - 1, 2 ** 63, 2 ** 63 - 1, 5, 2 ** 62 + 1, 2 ** 62, 1], np.uint64)
    add("min_uint64_extremes_13", model(13, [helper.make_node("Min", ["a", "b"], ["y"]), helper.make_node("Max", ["a", "b"], ["z"])],
                                        [vi("a", [8], U64), vi("b", [8], U64)], [vi("y", [8], U64), vi("z", [8], U64)]),
        {"a": ubig, "b": np.roll(ubig, 2)})
    # ReduceSum with axes at run time (lower_reducesum_axes): negative and several axes, keepdims 0;
    # empty axes with noop_with_empty_axes 1 (unchanged) and 0 (every axis).
    for nm, keep, noop, axes in (("neg_several_keep0", 0, 0, [-1, 1]), ("empty_noop", 1, 1, []), ("empty_all_keep0", 0, 0, [])):
        add(f"reducesum_axes_{nm}_13", model(13, [helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=keep, noop_with_empty_axes=noop)],
                                              [vi("x", [2, 3, 4]), vi("a", [len(axes)], I64)], [vi("y", None)], infer=False),
            {"x": f32(2, 3, 4, seed=31), "a": np.array(axes, np.int64)})
    # Slice with everything at run time (lower_slice_runtime): negative steps, bounds beyond the axis,
    # several axes given at run time (negative), steps at run time.
    add("slice_runtime_axes_steps_13", model(13, [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
                                             [vi("x", [4, 5, 6]), vi("s", [3], I64), vi("e", [3], I64), vi("a", [3], I64), vi("st", [3], I64)],
                                             [vi("y", None)], infer=False),
        {"x": f32(4, 5, 6, seed=32), "s": np.array([100, -2, 1], np.int64), "e": np.array([-100, -9, 2 ** 62], np.int64),
         "a": np.array([-1, 0, 1], np.int64), "st": np.array([-2, -1, 3], np.int64)})
    add("slice_runtime_empty_13", model(13, [helper.make_node("Slice", ["x", "s", "e"], ["y"])],
                                        [vi("x", [4, 5]), vi("s", [2], I64), vi("e", [2], I64)], [vi("y", None)], infer=False),
        {"x": f32(4, 5, seed=33), "s": np.array([3, 1], np.int64), "e": np.array([1, 4], np.int64)})
    # Pad with pads and value at run time (lower_pad_runtime): negative pads crop; edge; reflect.
    for mode, pads in (("constant", [1, -1, 0, 2, 2, -1]), ("edge", [2, 0, 1, 0, 3, 2]), ("reflect", [1, 2, 0, 2, 1, 3])):
        ins = ["x", "p"] + (["v"] if mode == "constant" else [])
        feeds = {"x": f32(3, 4, 5, seed=34), "p": np.array(pads, np.int64)}
        if mode == "constant":
            feeds["v"] = np.array(-np.inf, np.float32)
        add(f"pad_runtime_{mode}_13", model(13, [helper.make_node("Pad", ins, ["y"], mode=mode)],
                                            [vi("x", [3, 4, 5]), vi("p", [6], I64)] + ([vi("v", [])] if mode == "constant" else []),
                                            [vi("y", None)], infer=False), feeds)
    # TopK with K at run time on axis 0 (lower_topk_runtime), ties included.
    add("topk_runtime_axis0_11", model(11, [helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=0)],
                                       [vi("x", [5, 3]), vi("k", [1], I64)], [vi("y", [None, 3]), vi("i", [None, 3], I64)], infer=False),
        {"x": np.array([[1, 2, 3], [3, 2, 1], [1, 1, 1], [3, 5, 0], [2, 2, 2]], np.float32), "k": np.array([3], np.int64)})
    # Resize tf_crop_and_resize (lower_resize_crop): roi at run time reaching outside [0, 1], sizes.
    add("resize_crop_roi_outside_13", model(13, [helper.make_node("Resize", ["x", "roi", "", "sz"], ["y"], mode="linear",
                                                                  coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-3.5)],
                                            [vi("x", [1, 2, 4, 5]), vi("roi", [8])], [vi("y", [1, 2, 3, 7])], [i64("sz", [1, 2, 3, 7])]),
        {"x": f32(1, 2, 4, 5, seed=35), "roi": np.array([0, 0, -0.2, 0.1, 1, 1, 1.3, 0.8], np.float32)})
    # MaxPool with dilations, ceil_mode, pads and Indices (lower_maxpool), 2-D; and 1-D.
    add("maxpool_dilated_indices_12", one(12, "MaxPool", ["x"], [1, 2, 7, 6], [1, 2, 4, 3], kernel_shape=[2, 3], strides=[2, 2],
                                          dilations=[2, 1], pads=[1, 0, 1, 1], ceil_mode=1, extra_outputs=[("i", [1, 2, 4, 3], TensorProto.INT64)]))
    # (1-D with uneven pads; not auto_pad SAME with dilations: onnxruntime's output length there is
    # not the spec's ceil(in / stride))
    add("maxpool_dilated_1d_pads_12", one(12, "MaxPool", ["x"], [2, 3, 9], [2, 3, 4], kernel_shape=[3], strides=[2], dilations=[2], pads=[2, 1]))
    nodes, ins_, outs_, feeds, inits = [], [], [], {}, []
    for red in ("add", "mul"):
        r = red[0]
        nodes += [helper.make_node("ScatterElements", ["xa", "ia", "ua"], [f"ya{r}"], axis=1, reduction=red),
                  helper.make_node("ScatterElements", ["xb", "ib", "ub"], [f"yb{r}"], reduction=red),
                  helper.make_node("ScatterND", ["xc", "ic", "uc"], [f"yc{r}"], reduction=red),
                  helper.make_node("ScatterND", ["xd", "id", "ud"], [f"yd{r}"], reduction=red)]
        outs_ += [vi(f"ya{r}", [3, 5]), vi(f"yb{r}", [4, 2, 3], TensorProto.INT32), vi(f"yc{r}", [4, 3, 2]), vi(f"yd{r}", [3, 4], TensorProto.INT32)]
    ins_ = [vi("xa", [3, 5]), vi("ua", [3, 3]), vi("xb", [4, 2, 3], TensorProto.INT32), vi("ub", [2, 2, 2], TensorProto.INT32),
            vi("xc", [4, 3, 2]), vi("uc", [3, 3, 2]), vi("xd", [3, 4], TensorProto.INT32), vi("ud", [4], TensorProto.INT32)]
    inits = [i64("ia", [[1, 1, -1], [0, 4, 0], [2, 2, 2]]), i64("ib", [[[3, 3], [0, -4]], [[3, 1], [0, 0]]]), i64("ic", [[1], [-1], [1]]),
             i64("id", [[0, 1], [2, -1], [0, 1], [0, 1]])]
    feeds = {"xa": f32(3, 5, seed=21), "ua": f32(3, 3, seed=22, scale=2.0), "xb": np.arange(24, dtype=np.int32).reshape(4, 2, 3) - 5,
             "ub": np.array([[[2, -3], [4, 5]], [[-1, 7], [3, -2]]], np.int32), "xc": f32(4, 3, 2, seed=23), "uc": f32(3, 3, 2, seed=24, scale=2.0),
             "xd": np.arange(12, dtype=np.int32).reshape(3, 4) - 4, "ud": np.array([3, -2, 5, -1], np.int32)}
    add("scatter_reductions_16", model(16, nodes, ins_, outs_, inits), feeds)
    return g


# --------------------------------------------------------------------------------------- running


NP_TO_ORT = {np.float32: "float32", np.float64: "float64", np.float16: "float16", np.int8: "int8", np.uint8: "uint8",
             np.int16: "int16", np.uint16: "uint16", np.int32: "int32", np.uint32: "uint32", np.int64: "int64",
             np.uint64: "uint64", np.bool_: "bool"}


def diff(res):
    """The difference the issue measures: |x - y| / max(1, |x|) (ort_compare.js's max_rel_diff), as
    tests/mapping/opset_sweep.py compares."""
    return res.get("max_rel_diff", res["max_abs_diff"])


def ort_kernel_off(job_result, res):
    """onnxruntime's output of the original differs from the node test's expected outputs beyond
    the tolerance while the converted model's matches them."""
    ref = job_result.get("reference_vs_expected")
    mine = res.get("vs_expected")
    if not ref or not mine or "error" in mine:
        return False
    return (diff(ref) > TOL or ref["mismatches"]) and diff(mine) <= TOL and not mine["mismatches"]


def write_inputs(feeds, prefix):
    spec = {}
    for k, (name, a) in enumerate(feeds.items()):
        a = np.asarray(a)
        if a.dtype.kind in "OUS":
            spec[name] = {"type": "string", "dims": list(a.shape), "strings": [str(s.decode() if isinstance(s, bytes) else s) for s in a.ravel()]}
            continue
        t = NP_TO_ORT.get(a.dtype.type)
        if t is None:
            return None
        path = f"{prefix}_in{k}.bin"
        np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tofile(path)
        spec[name] = {"type": t, "dims": list(a.shape), "file": path}
    return spec


def expected_outputs(model_path, prefix):
    """A node test's expected outputs (test_data_set_0/output_*.pb, from ONNX's reference
    implementation) as ort_compare.js specs, in output order; None for graphs made here or when an
    output is missing or not a tensor onnxruntime takes."""
    d = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    if not os.path.isdir(d):
        return None
    specs = []
    for k, _ in enumerate(onnx.load(model_path).graph.output):
        pb = os.path.join(d, f"output_{k}.pb")
        if not os.path.exists(pb):
            return None
        t = TensorProto()
        try:
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
        except Exception:  # noqa: BLE001 - not a plain tensor
            return None
        one = write_inputs({f"out{k}": a}, f"{prefix}_out{k}")
        if one is None or "file" not in one[f"out{k}"]:
            return None
        specs.append(one[f"out{k}"])
    return specs


def convert(amanda, name, src, opset, target, tmp, checks):
    """One conversion: ("ok", path, report, checker error or None) | ("refused", why) | ("fail", message)."""
    out = os.path.join(tmp, f"{name}__{target}.onnx")
    r = subprocess.run([amanda, "convert", src, "--to", f"onnx/{target}", "-o", out, "--report", "json"],
                       capture_output=True, text=True)
    where = f"{name} ({opset} -> {target})"
    if r.returncode not in (0, 1):
        return ("fail", f"{where}: exit {r.returncode}: {r.stderr.strip()[:300]}")
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        return ("fail", f"{where}: exit {r.returncode}, no JSON report: {r.stdout.strip()[:200]} {r.stderr.strip()[:300]}")
    if rep.get("errors"):
        return ("fail", f"{where}: rule errors: {rep['errors']}")
    if r.returncode == 1:
        if os.path.exists(out):
            return ("fail", f"{where}: refused but wrote {out}")
        why = [f"{u['type']}: {u.get('reason', 'no rule')}" for u in rep.get("unsupported", []) + rep.get("unmapped", [])]
        if not why:
            return ("fail", f"{where}: exit 1 without naming the ops: {r.stdout.strip()[:300]} {r.stderr.strip()[:300]}")
        return ("refused", "; ".join(why))
    if not os.path.exists(out):
        return ("fail", f"{where}: exit 0 but no {out}")
    try:
        m = onnx.load(out)
    except Exception as e:  # noqa: BLE001
        return ("fail", f"{where}: the written model does not load: {e}")
    if opset_of(m) != target:
        return ("fail", f"{where}: opset_import {[(o.domain, o.version) for o in m.opset_import]}")
    bad = None
    if checks:
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:  # noqa: BLE001 - a failure, but onnxruntime still compares it
            bad = f"{where}: onnx.checker: {str(e).splitlines()[0][:300]}"
    return ("ok", out, rep, bad)


def run_ort(jobs, tmp, workers):
    """Runs the job list in `workers` node processes; returns {id: result}."""
    chunks = [jobs[i::workers] for i in range(workers)]
    procs = []
    for k, chunk in enumerate(chunks):
        if not chunk:
            continue
        path = os.path.join(tmp, f"jobs{k}.json")
        with open(path, "w") as f:
            json.dump(chunk, f)
        procs.append(subprocess.Popen(["node", os.path.join(ROOT, "tests", "js", "ort_compare.js"), "--jobs", path],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    res = {}
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"ort_compare.js failed (exit {p.returncode}): {err.strip()[:2000]}")
        for x in json.loads(out):
            res[x["id"]] = x
    return res


def targets(name, opset, every):
    """The opsets a graph is converted to. A conversion to 7 runs every step down from the graph's
    opset and one to 17 every step up; the neighbours check the single steps (which convert where a
    longer chain meets a refusal further on), and two opsets picked by a CRC32 of the graph's name
    vary the rest from graph to graph. The coverage check below still requires every rule."""
    others = [t for t in OPSETS if t != opset]
    if every:
        return others
    pick = {opset - 1, opset + 1, 7, 17}
    h = zlib.crc32(name.encode())
    rest = [t for t in others if t not in pick]
    for k in range(2):
        if rest:
            pick.add(rest.pop((h >> (8 * k)) % len(rest)))
    return [t for t in others if t in pick]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--node-dir", default=NODE_DIR)
    ap.add_argument("--all-node-tests", action="store_true", help="every node test, not the subset")
    ap.add_argument("--only", help="regex: only graphs whose name matches")
    ap.add_argument("--keep", help="keep the converted models in this folder")
    ap.add_argument("--all-targets", action="store_true", default=os.environ.get("AMANDA_RULE_GRAPHS") == "all",
                    help="every graph to every other opset 7..17 (AMANDA_RULE_GRAPHS=all); by default (CI) each graph "
                         "goes to its neighbours, to 7 and 17 (every step down and up), and to two more opsets picked "
                         "by a hash of its name")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    t0 = time.time()
    tables = table_rules()
    needed = {f"{s}->{d}:{n}" for (s, d), rules in tables.items() for n, (need, _) in rules.items() if need}
    total_rules = sum(len(r) for r in tables.values())

    tmp = args.keep or tempfile.mkdtemp(prefix="rule_graphs_")
    os.makedirs(tmp, exist_ok=True)
    try:
        graphs = []  # (name, path, opset, feeds)
        if os.path.isdir(args.node_dir):
            for name, path, feeds in node_tests(args.node_dir, args.all_node_tests):
                graphs.append((name, path, opset_of(onnx.load(path)), feeds))
        else:
            print(f"note: no {args.node_dir} (Debian's libonnx-testdata): hand-made graphs only")
        for name, m, feeds, expected in hand_graphs():
            os.makedirs(os.path.join(tmp, name), exist_ok=True)
            path = os.path.join(tmp, name, "model.onnx")
            onnx.save(m, path)
            if expected is not None:
                os.makedirs(os.path.join(tmp, name, "test_data_set_0"), exist_ok=True)
                for k, a in enumerate(expected):
                    with open(os.path.join(tmp, name, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
                        f.write(numpy_helper.from_array(a, m.graph.output[k].name).SerializeToString())
            graphs.append((name, path, opset_of(m), feeds))
        if args.only:
            graphs = [g for g in graphs if re.search(args.only, g[0])]
        n_node = sum(1 for g in graphs if not g[1].startswith(tmp))

        failures, refused, converted = [], 0, 0
        checks = {}
        for name, path, opset, _ in graphs:
            try:
                onnx.checker.check_model(onnx.load(path), full_check=True)  # a path would be rewritten in place
                checks[name] = True
            except Exception:  # noqa: BLE001 - the original fails it: the result is not checked either
                checks[name] = False
        tasks = [(name, path, opset, t) for name, path, opset, _ in graphs for t in targets(name, opset, args.all_targets)]
        results = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            futs = {ex.submit(convert, args.amanda, name, path, opset, t, tmp, checks[name]): (name, t) for name, path, opset, t in tasks}
            for f in concurrent.futures.as_completed(futs):
                results[futs[f]] = f.result()
        t_convert = time.time() - t0

        jobs, reports, ambiguous = [], {}, []
        for gi, (name, path, opset, feeds) in enumerate(graphs):
            cands = []
            for t in OPSETS:
                if (name, t) not in results:
                    continue
                r = results[(name, t)]
                if r[0] == "fail":
                    failures.append(r[1])
                elif r[0] == "refused":
                    refused += 1
                    if args.verbose:
                        print(f"{name} ({opset} -> {t}): refused: {r[1]}")
                else:
                    converted += 1
                    cands.append(r[1])
                    if r[3]:
                        failures.append(r[3])
                    q, amb = qualify(r[2].get("by_rule", {}), r[2].get("tables", []), tables, f"{name} -> {t}")
                    reports[r[1]] = q
                    ambiguous += amb
            if not cands:
                continue
            spec = write_inputs(feeds, os.path.join(tmp, f"{name}"))
            if spec is None:
                failures.append(f"{name}: an input type this test cannot hand to onnxruntime")
                continue
            job = {"id": gi, "reference": path, "candidates": cands, "inputs": spec}
            expected = expected_outputs(path, os.path.join(tmp, f"{name}"))
            if expected:
                job["expected"] = expected  # compared with when onnxruntime cannot run the original
            jobs.append(job)
        failures += sorted(set(ambiguous))

        ort = run_ort(jobs, tmp, args.jobs)
        compared, skipped, covered, worst = 0, 0, {}, 0.0
        via_expected = []
        skipped_graphs = []
        for job in jobs:
            name = graphs[job["id"]][0]
            x = ort[job["id"]]
            if args.verbose and x.get("expected_used"):
                print(f"{name}: onnxruntime cannot run the original: compared with the node test's expected outputs")
            if "reference_error" in x:
                skipped += len(job["candidates"])
                skipped_graphs.append(name)
                if args.verbose:
                    print(f"{name}: skipped, onnxruntime cannot run the original: {x['reference_error'][:200]}")
                continue
            random = bool(RANDOM_OPS & {n.op_type for n in onnx.load(job["reference"]).graph.node})
            for res in x["results"]:
                where = f"{name} -> {os.path.basename(res['model'])}"
                if random or ("error" in res and ("Could not find an implementation" in res["error"] or x.get("expected_used"))):
                    skipped += 1  # random outputs, or no onnxruntime kernel for that op version and type
                    continue
                if "error" in res:
                    failures.append(f"{where}: onnxruntime runs the original but not the conversion: {res['error'][:300]}")
                    continue
                compared += 1
                for rule in reports[res["model"]]:
                    covered.setdefault(rule, []).append(where)
                if (diff(res) > TOL or res["mismatches"]) and ort_kernel_off(x, res):
                    # onnxruntime's own kernel for the original is off from the node test's expected
                    # outputs (ONNX's reference implementation), which the conversion matches.
                    via_expected.append(f"{where}: matches the expected outputs ({res['vs_expected']['max_abs_diff']:.3g}); "
                                        f"onnxruntime's original differs from them by {x['reference_vs_expected']['max_abs_diff']:.3g}")
                    worst = max(worst, res["vs_expected"]["max_abs_diff"])
                elif diff(res) > TOL or res["mismatches"]:
                    failures.append(f"{where}: max abs difference {res['max_abs_diff']}, {res['mismatches']} mismatched elements "
                                    f"(rules {sorted(reports[res['model']])})")
                else:
                    worst = max(worst, res["max_abs_diff"])
        missing = sorted(needed - set(covered))
        for rule in missing:
            s, _, n = rule.partition(":")
            src, dst = s.split("->")
            failures.append(f"rule {rule} ({tables[(src, dst)][n][1]}) is exercised by no graph whose outputs were compared")

        if args.verbose:
            for rule in sorted(needed):
                print(f"  {rule}: {len(covered.get(rule, []))} comparisons, e.g. {covered.get(rule, ['-'])[0]}")
        elapsed = time.time() - t0
        print(f"{len(graphs)} graphs ({n_node} node tests, {len(graphs) - n_node} made here), {len(tasks)} conversions: "
              f"{converted} written, {refused} refused with a report; {compared} compared in onnxruntime "
              f"(worst max abs difference {worst:.3g}), {skipped} skipped ({len(skipped_graphs)} originals onnxruntime cannot run); "
              f"rules covered {len(needed) - len(missing)}/{len(needed)} ({total_rules} rules in all, the others identities "
              f"or unsupported:); {elapsed:.0f} s ({t_convert:.0f} s converting)")
        if via_expected:
            print(f"{len(via_expected)} of the comparisons against the node tests' expected outputs, where onnxruntime's own "
                  f"kernel for the original is off:")
            for v in via_expected:
                print("  " + v)
        for f in failures:
            print("FAIL:", f)
        return 1 if failures or compared == 0 else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
