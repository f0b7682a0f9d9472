#!/usr/bin/python3
"""Every rewrite pass on small graphs: what must change, what must not, and the outputs in onnxruntime.

    /usr/bin/python3 tests/passes/passes_test.py AMANDA WORK_DIR

Each case builds a small ONNX model with onnx.helper (random weights, seeded), runs `amanda
optimize --passes P` on it, checks the optimized graph's op types (the ops that must go are gone,
the ones that must stay are there), that onnx.checker accepts it, and then runs the original and
the optimized model in onnxruntime-node on the same random input (tests/js/ort_compare.js --jobs):
every output must agree within 1e-5 relative (to max(1, |x|)) and the reference must not be all
zero. Exit 1 on any failure. Also covers Python's amanda.optimize when the module is importable.
"""
import collections
import json
import os
import subprocess
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
JS = os.path.join(HERE, "..", "js", "ort_compare.js")
F = TensorProto.FLOAT
rng = np.random.default_rng(0)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def rand(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                          [helper.make_tensor_value_info(n, F, s) for n, s in outputs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


CASES = []


def case(name, passes, m, gone=(), kept=(), present=(), extra=(), check=None, compare=True):
    """gone: op types that must not be in the result; kept: op types whose count must not change;
    present: op types that must be in the result."""
    CASES.append(dict(name=name, passes=passes, model=m, gone=gone, kept=kept, present=present, extra=list(extra), check=check,
                      compare=compare))


def node(t, i, o, **kw):
    return helper.make_node(t, i, o, **kw)


# ---- cleanup
case("deadend", "eliminate_deadend",
     model([node("Relu", ["x"], ["a"]), node("Exp", ["x"], ["dead"]), node("Neg", ["dead"], ["dead2"])], [("x", [2, 3])], [("a", [2, 3])]),
     gone=["Exp", "Neg"], kept=["Relu"])
case("unused_initializer", "eliminate_unused_initializer",
     model([node("Add", ["x", "w"], ["a"])], [("x", [2, 3])], [("a", [2, 3])], [init("w", rand(2, 3)), init("unused", rand(4))]),
     kept=["Add"], check=lambda m: [i.name for i in m.graph.initializer] == ["w"])
case("cse", "eliminate_common_subexpression",
     model([node("Exp", ["x"], ["a"]), node("Exp", ["x"], ["b"]), node("Add", ["a", "b"], ["c"]),
            node("LeakyRelu", ["x"], ["d"], alpha=0.1), node("LeakyRelu", ["x"], ["e"], alpha=0.2), node("Sub", ["d", "e"], ["f"])],
           [("x", [2, 3])], [("c", [2, 3]), ("f", [2, 3])]),
     check=lambda m: counts(m)["Exp"] == 1 and counts(m)["LeakyRelu"] == 2)
# ---- folding
case("constant_folding", "constant_folding,eliminate_deadend",
     model([node("Mul", ["w", "two"], ["w2"]), node("Transpose", ["w2"], ["wt"], perm=[1, 0]), node("MatMul", ["x", "wt"], ["y"])],
           [("x", [2, 3])], [("y", [2, 4])], [init("w", rand(4, 3)), init("two", np.array(2, np.float32))]),
     gone=["Mul", "Transpose"], kept=["MatMul"])
case("constant_folding_not_random", "constant_folding,eliminate_deadend",
     model([node("RandomUniformLike", ["w"], ["r"], seed=1.0), node("Mul", ["r", "zero"], ["z"]), node("Add", ["x", "z"], ["y"])],
           [("x", [2, 3])], [("y", [2, 3])], [init("w", rand(2, 3)), init("zero", np.zeros((2, 3), np.float32))]),
     kept=["RandomUniformLike", "Mul"])
case("constant_folding_size_limit", "constant_folding,eliminate_deadend",
     model([node("Mul", ["w", "two"], ["w2"]), node("Tile", ["w2", "reps"], ["t"]), node("ReduceSum", ["t", "ax"], ["s"], keepdims=0),
            node("Add", ["x", "s"], ["y"])],
           [("x", [3])], [("y", [3])], [init("w", rand(1, 3)), init("two", np.array(2, np.float32)),
                                        init("reps", np.array([1000, 1], np.int64)), init("ax", np.array([0], np.int64))]),
     kept=["Tile", "ReduceSum"], gone=["Mul"], extra=["--fold-size-limit", "1024"])
# shape folding with a symbolic batch: dim 1 is known, dim 0 is N
shape_nodes = [node("Shape", ["x"], ["s"]), node("Gather", ["s", "i1"], ["d1"], axis=0), node("Gather", ["s", "i0"], ["d0"], axis=0),
               node("Unsqueeze", ["d0", "ax"], ["u0"]), node("Unsqueeze", ["d1", "ax"], ["u1"]),
               node("Concat", ["u0", "m1", "u1"], ["shape"], axis=0), node("Reshape", ["x", "shape"], ["y"])]
shape_model = model(shape_nodes, [("x", ["N", 6])], [("y", ["N", 1, 6])],
                    [init("i1", np.array(1, np.int64)), init("i0", np.array(0, np.int64)), init("ax", np.array([0], np.int64)),
                     init("m1", np.array([1], np.int64))])
case("shape_folding_symbolic_batch", "shape_folding,eliminate_deadend", shape_model,
     gone=["Shape", "Gather", "Concat", "Unsqueeze"], kept=["Reshape"])
# ---- no-ops
case("identity", "eliminate_identity", model([node("Identity", ["x"], ["a"]), node("Relu", ["a"], ["b"]), node("Identity", ["b"], ["y"])],
                                             [("x", [2, 3])], [("y", [2, 3])]), gone=["Identity"],
     check=lambda m: m.graph.output[0].name == "y" and m.graph.node[0].output[0] == "y")
case("dropout", "eliminate_dropout", model([node("Dropout", ["x"], ["a"]), node("Relu", ["a"], ["y"])], [("x", [2, 3])], [("y", [2, 3])]),
     gone=["Dropout"])
case("dropout_training_kept", "eliminate_dropout",
     model([node("Dropout", ["x", "r", "t"], ["a"]), node("Relu", ["a"], ["y"])], [("x", [2, 3])], [("y", [2, 3])],
           [init("r", np.array(0.5, np.float32)), init("t", np.array(True))]), kept=["Dropout"], compare=False)  # random
case("dropout_ratio_zero_training", "eliminate_dropout",  # drops nothing even in training mode (torchvision swin_t)
     model([node("Dropout", ["x", "r", "t"], ["a"]), node("Relu", ["a"], ["y"])], [("x", [2, 3])], [("y", [2, 3])],
           [init("r", np.array(0.0, np.float32)), init("t", np.array(True))]), gone=["Dropout"])
case("nop_cast", "eliminate_nop_cast", model([node("Cast", ["x"], ["a"], to=F), node("Cast", ["a"], ["b"], to=TensorProto.DOUBLE),
                                              node("Cast", ["b"], ["y"], to=F)], [("x", [2, 3])], [("y", [2, 3])]),
     check=lambda m: counts(m)["Cast"] == 2)
case("nop_expand", "eliminate_nop_expand", model([node("Expand", ["x", "s"], ["a"]), node("Expand", ["a", "s2"], ["y"])],
                                                 [("x", [2, 3])], [("y", [4, 2, 3])],
                                                 [init("s", np.array([1, 3], np.int64)), init("s2", np.array([4, 1, 1], np.int64))]),
     check=lambda m: counts(m)["Expand"] == 1)
case("nop_reshape", "eliminate_nop_reshape", model([node("Reshape", ["x", "s"], ["a"]), node("Reshape", ["a", "s2"], ["y"])],
                                                   [("x", [2, 3])], [("y", [3, 2])],
                                                   [init("s", np.array([2, -1], np.int64)), init("s2", np.array([3, 2], np.int64))]),
     check=lambda m: counts(m)["Reshape"] == 1)
case("nop_transpose", "eliminate_nop_transpose", model([node("Transpose", ["x"], ["a"], perm=[0, 1]), node("Transpose", ["a"], ["y"], perm=[1, 0])],
                                                       [("x", [2, 3])], [("y", [3, 2])]), check=lambda m: counts(m)["Transpose"] == 1)
case("nop_pad", "eliminate_nop_pad", model([node("Pad", ["x", "p0"], ["a"]), node("Pad", ["a", "p1"], ["y"])], [("x", [2, 3])], [("y", [2, 5])],
                                           [init("p0", np.zeros(4, np.int64)), init("p1", np.array([0, 1, 0, 1], np.int64))]),
     check=lambda m: counts(m)["Pad"] == 1)
big = 2 ** 62
case("nop_slice", "eliminate_nop_slice",
     model([node("Slice", ["x", "s", "e"], ["a"]), node("Slice", ["a", "s", "e2"], ["y"])], [("x", [4, 3])], [("y", [2, 3])],
           [init("s", np.array([0], np.int64)), init("e", np.array([big], np.int64)), init("e2", np.array([2], np.int64))]),
     check=lambda m: counts(m)["Slice"] == 1)
case("nop_concat_split", "eliminate_nop_concat,eliminate_nop_split",
     model([node("Concat", ["x"], ["a"], axis=0), node("Split", ["a"], ["b"], axis=1), node("Relu", ["b"], ["y"])], [("x", [2, 3])], [("y", [2, 3])]),
     gone=["Concat", "Split"], kept=["Relu"])
case("nop_flatten", "eliminate_nop_flatten", model([node("Flatten", ["x"], ["a"], axis=1), node("Flatten", ["a"], ["y"], axis=0)],
                                                   [("x", [2, 3])], [("y", [1, 6])]), check=lambda m: counts(m)["Flatten"] == 1)
case("op_with_unit", "eliminate_op_with_unit",
     model([node("Mul", ["x", "one"], ["a"]), node("Add", ["zero", "a"], ["b"]), node("Mul", ["b", "two"], ["c"]), node("Add", ["c", "zeros23"], ["y"])],
           [("x", [3])], [("y", [2, 3])],
           [init("one", np.array(1, np.float32)), init("zero", np.zeros([1], np.float32)), init("two", np.array(2, np.float32)),
            init("zeros23", np.zeros((2, 3), np.float32))]),
     check=lambda m: counts(m)["Mul"] == 1 and counts(m)["Add"] == 1)  # x * 2 stays; + zeros[2, 3] broadcasts: stays
# ---- control flow
then_g = helper.make_graph([node("Exp", ["x"], ["t"])], "then", [], [helper.make_tensor_value_info("t", F, [2, 3])])
else_g = helper.make_graph([node("Neg", ["x"], ["e"])], "else", [], [helper.make_tensor_value_info("e", F, [2, 3])])
case("if_const_cond", "eliminate_if_with_const_cond",
     model([node("If", ["c"], ["r"], then_branch=then_g, else_branch=else_g), node("Relu", ["r"], ["y"])], [("x", [2, 3])], [("y", [2, 3])],
           [init("c", np.array(False))]),
     gone=["If", "Exp"], present=["Neg"])
body = helper.make_graph([node("Identity", ["x"], ["i"]), node("Sigmoid", ["i"], ["t"])], "then", [], [helper.make_tensor_value_info("t", F, [2, 3])])
case("descends_into_bodies", "eliminate_identity",
     model([node("Greater", ["s", "z"], ["c"]), node("If", ["c"], ["y"], then_branch=body, else_branch=else_g)],
           [("x", [2, 3])], [("y", [2, 3])], [init("s", np.array(1.0, np.float32)), init("z", np.array(0.0, np.float32))]),
     present=["If"], check=lambda m: [n.op_type for a in m.graph.node[1].attribute if a.name == "then_branch" for n in a.g.node] == ["Sigmoid"])
# ---- consecutive ops
case("consecutive_transposes", "fuse_consecutive_transposes,eliminate_nop_transpose",
     model([node("Transpose", ["x"], ["a"], perm=[1, 2, 0]), node("Transpose", ["a"], ["b"], perm=[2, 0, 1]),
            node("Relu", ["b"], ["c"]), node("Transpose", ["c"], ["d"], perm=[1, 0, 2]), node("Transpose", ["d"], ["y"], perm=[0, 2, 1])],
           [("x", [2, 3, 4])], [("y", [3, 4, 2])]),
     check=lambda m: counts(m)["Transpose"] == 1)
case("consecutive_reshapes", "fuse_consecutive_reshapes",
     model([node("Reshape", ["x", "s1"], ["a"]), node("Reshape", ["a", "s2"], ["y"])], [("x", [2, 3, 4])], [("y", [4, 6])],
           [init("s1", np.array([6, 4], np.int64)), init("s2", np.array([4, 6], np.int64))]), check=lambda m: counts(m)["Reshape"] == 1)
case("consecutive_squeezes", "fuse_consecutive_squeezes,eliminate_deadend",
     model([node("Squeeze", ["x", "a1"], ["a"]), node("Squeeze", ["a", "a2"], ["y"])], [("x", [1, 2, 1, 3, 1])], [("y", [2, 3])],
           [init("a1", np.array([0, 4], np.int64)), init("a2", np.array([1], np.int64))]), check=lambda m: counts(m)["Squeeze"] == 1)
case("consecutive_unsqueezes", "fuse_consecutive_unsqueezes,eliminate_deadend",
     model([node("Unsqueeze", ["x", "a1"], ["a"]), node("Unsqueeze", ["a", "a2"], ["y"])], [("x", [2, 3])], [("y", [1, 2, 1, 3, 1])],
           [init("a1", np.array([1], np.int64)), init("a2", np.array([0, -1], np.int64))]), check=lambda m: counts(m)["Unsqueeze"] == 1)
case("consecutive_slices", "fuse_consecutive_slices,eliminate_deadend",
     model([node("Slice", ["x", "s0", "e0", "ax0"], ["a"]), node("Slice", ["a", "s1", "e1", "ax1"], ["y"])], [("x", [5, 6])], [("y", [3, 2])],
           [init("s0", np.array([1], np.int64)), init("e0", np.array([4], np.int64)), init("ax0", np.array([0], np.int64)),
            init("s1", np.array([2], np.int64)), init("e1", np.array([4], np.int64)), init("ax1", np.array([1], np.int64))]),
     check=lambda m: counts(m)["Slice"] == 1)
case("consecutive_concats", "fuse_consecutive_concats",
     model([node("Concat", ["x", "x"], ["a"], axis=1), node("Concat", ["a", "x"], ["b"], axis=1), node("Concat", ["b", "b"], ["y"], axis=0)],
           [("x", [2, 3])], [("y", [4, 9])]), check=lambda m: counts(m)["Concat"] == 2)
case("log_softmax", "fuse_consecutive_log_softmax",
     model([node("Softmax", ["x"], ["a"], axis=1), node("Log", ["a"], ["y"])], [("x", [2, 3])], [("y", [2, 3])]),
     gone=["Softmax", "Log"], present=["LogSoftmax"])
# (the pass is the rewrite tables rewrites/onnx/fuse_consecutive_log_softmax/) No axis below
# opset 13 means axis 1 with 2-D coercion: LogSoftmax must get axis 1 (opset 13's default, -1,
# would differ on this 3-D input); a Softmax read by another op stays, and so does its Log.
case("log_softmax_default_axis_opset11", "fuse_consecutive_log_softmax",
     model([node("Softmax", ["x"], ["a"]), node("Log", ["a"], ["y"])], [("x", [2, 3, 4])], [("y", [2, 3, 4])], opset=11),
     gone=["Softmax", "Log"], present=["LogSoftmax"],
     check=lambda m: [(a.name, a.i) for n in m.graph.node if n.op_type == "LogSoftmax" for a in n.attribute] in ([], [("axis", 1)]))
case("log_softmax_default_axis_opset13", "fuse_consecutive_log_softmax",
     model([node("Softmax", ["x"], ["a"]), node("Log", ["a"], ["y"])], [("x", [2, 3, 4])], [("y", [2, 3, 4])]),
     gone=["Softmax", "Log"], present=["LogSoftmax"])
case("log_softmax_axis_opset11", "fuse_consecutive_log_softmax",
     model([node("Softmax", ["x"], ["a"], axis=2), node("Log", ["a"], ["y"])], [("x", [2, 3, 4])], [("y", [2, 3, 4])], opset=11),
     gone=["Softmax", "Log"], present=["LogSoftmax"])
case("log_softmax_shared_kept", "fuse_consecutive_log_softmax",
     model([node("Softmax", ["x"], ["a"], axis=1), node("Log", ["a"], ["y"]), node("Relu", ["a"], ["z"])], [("x", [2, 3])],
           [("y", [2, 3]), ("z", [2, 3])]),
     kept=["Softmax", "Log"])
case("monotone_argmax", "eliminate_nop_monotone_argmax",
     model([node("Exp", ["x"], ["a"]), node("ArgMax", ["a"], ["i"], axis=1), node("Cast", ["i"], ["y"], to=F)], [("x", [2, 3])], [("y", [2, 1])]),
     gone=["Exp"], kept=["ArgMax"])
# ---- conv fusions
W, B = rand(4, 3, 3, 3), rand(4)
bn_inits = [init("W", W), init("B", B), init("scale", rand(4, lo=0.5, hi=1.5)), init("bias", rand(4)), init("mean", rand(4)),
            init("var", rand(4, lo=0.5, hi=1.5))]
case("bn_into_conv", "fuse_bn_into_conv,eliminate_deadend",
     model([node("Conv", ["x", "W", "B"], ["c"]), node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"], epsilon=1e-3)],
           [("x", [1, 3, 8, 8])], [("y", [1, 4, 6, 6])], bn_inits), gone=["BatchNormalization"], kept=["Conv"])
case("bn_training_kept", "fuse_bn_into_conv",
     model([node("Conv", ["x", "W", "B"], ["c"]), node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y", "rm", "rv"], training_mode=1)],
           [("x", [2, 3, 8, 8])], [("y", [2, 4, 6, 6])], bn_inits, opset=15), kept=["BatchNormalization", "Conv"])
case("add_into_conv", "fuse_add_bias_into_conv,eliminate_deadend",
     model([node("Conv", ["x", "W"], ["c"]), node("Add", ["c", "b"], ["y"])], [("x", [1, 3, 8, 8])], [("y", [1, 4, 6, 6])],
           [init("W", W), init("b", rand(1, 4, 1, 1))]), gone=["Add"], kept=["Conv"])
case("add_into_conv_not_per_channel", "fuse_add_bias_into_conv",
     model([node("Conv", ["x", "W"], ["c"]), node("Add", ["c", "b"], ["y"])], [("x", [1, 3, 8, 8])], [("y", [1, 4, 6, 6])],
           [init("W", W), init("b", rand(6))]), kept=["Add", "Conv"])
case("mul_into_conv", "fuse_mul_into_conv,eliminate_deadend",
     model([node("Conv", ["x", "W", "B"], ["c"]), node("Mul", ["s", "c"], ["y"])], [("x", [1, 3, 8, 8])], [("y", [1, 4, 6, 6])],
           [init("W", W), init("B", B), init("s", rand(4, 1, 1))]), gone=["Mul"], kept=["Conv"])
case("pad_into_conv", "fuse_pad_into_conv",
     model([node("Pad", ["x", "p"], ["a"]), node("Conv", ["a", "W"], ["y"], pads=[1, 0, 0, 1])], [("x", [1, 3, 8, 8])], [("y", [1, 4, 9, 9])],
           [init("W", W), init("p", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))]), gone=["Pad"], kept=["Conv"])
case("pad_into_avgpool", "fuse_pad_into_pool",
     model([node("Pad", ["x", "p"], ["a"]), node("AveragePool", ["a"], ["y"], kernel_shape=[3, 3])], [("x", [1, 3, 8, 8])], [("y", [1, 3, 8, 8])],
           [init("p", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))]), gone=["Pad"], kept=["AveragePool"])
case("pad_into_maxpool_kept", "fuse_pad_into_pool",  # a zero pad is not MaxPool's -inf pad: x has negative values
     model([node("Pad", ["x", "p"], ["a"]), node("MaxPool", ["a"], ["y"], kernel_shape=[3, 3])], [("x", [1, 3, 8, 8])], [("y", [1, 3, 8, 8])],
           [init("p", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))]), kept=["Pad", "MaxPool"])
case("pad_into_maxpool_after_relu", "fuse_pad_into_pool",
     model([node("Relu", ["x"], ["r"]), node("Pad", ["r", "p"], ["a"]), node("MaxPool", ["a"], ["y"], kernel_shape=[3, 3])],
           [("x", [1, 3, 8, 8])], [("y", [1, 3, 8, 8])], [init("p", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))]),
     gone=["Pad"], kept=["MaxPool"])
# ---- gemm
case("matmul_add_gemm", "fuse_matmul_add_bias_into_gemm",
     model([node("MatMul", ["x", "w"], ["m"]), node("Add", ["b", "m"], ["y"])], [("x", [2, 3])], [("y", [2, 4])],
           [init("w", rand(3, 4)), init("b", rand(4))]), gone=["MatMul", "Add"], present=["Gemm"])
case("matmul_add_3d_kept", "fuse_matmul_add_bias_into_gemm",
     model([node("MatMul", ["x", "w"], ["m"]), node("Add", ["m", "b"], ["y"])], [("x", [5, 2, 3])], [("y", [5, 2, 4])],
           [init("w", rand(3, 4)), init("b", rand(4))]), kept=["MatMul", "Add"], gone=["Gemm"])
case("transpose_into_gemm", "fuse_transpose_into_gemm",
     model([node("Transpose", ["x"], ["xt"], perm=[1, 0]), node("Gemm", ["xt", "w", "b"], ["y"], transB=1)], [("x", [3, 2])], [("y", [2, 4])],
           [init("w", rand(4, 3)), init("b", rand(4))]), gone=["Transpose"], kept=["Gemm"])
# ---- layer norm
ln_nodes = [node("ReduceMean", ["x"], ["m"], axes=[-1]), node("Sub", ["x", "m"], ["d"]), node("Pow", ["d", "two"], ["p"]),
            node("ReduceMean", ["p"], ["v"], axes=[-1]), node("Add", ["v", "eps"], ["ve"]), node("Sqrt", ["ve"], ["s"]),
            node("Div", ["d", "s"], ["n"]), node("Mul", ["n", "g"], ["ng"]), node("Add", ["ng", "b"], ["y"])]
ln_inits = [init("two", np.array(2, np.float32)), init("eps", np.array(1e-5, np.float32)), init("g", rand(8, lo=0.5, hi=1.5)), init("b", rand(8))]
case("layer_norm_17", "fuse_layer_norm", model(ln_nodes, [("x", [2, 5, 8])], [("y", [2, 5, 8])], ln_inits, opset=17),
     gone=["ReduceMean", "Sub", "Pow", "Sqrt", "Div", "Mul", "Add"], present=["LayerNormalization"])
case("layer_norm_13_kept", "fuse_layer_norm", model(ln_nodes, [("x", [2, 5, 8])], [("y", [2, 5, 8])], ln_inits, opset=13),
     kept=["ReduceMean", "Sub", "Pow", "Sqrt", "Div", "Mul", "Add"], gone=["LayerNormalization"])
# ---- exclusion
case("exclude_by_name", "eliminate_identity",
     model([node("Identity", ["x"], ["a"], name="keep_this"), node("Identity", ["a"], ["b"], name="drop"), node("Relu", ["b"], ["y"])],
           [("x", [2, 3])], [("y", [2, 3])]),
     extra=["--exclude", "keep_*"], check=lambda m: [n.name for n in m.graph.node] == ["keep_this", ""] or
     [n.op_type for n in m.graph.node] == ["Identity", "Relu"])


# a computed bias of one value ([] or [1]) for every channel: Reshape to [1] (not for [1]), Tile to [C]
for shape, name in (([], "scalar"), ([1], "one")):
    case(f"add_bias_into_conv_{name}", "fuse_add_bias_into_conv",
         model([node("Conv", ["x", "w"], ["c"]), node("Add", ["c", "a"], ["y"])], [("x", [1, 3, 5, 5]), ("a", shape)], [("y", [1, 4, 3, 3])],
               [init("w", rand(4, 3, 3, 3))]),
         gone=("Add",), present=("Tile",), kept=("Conv",))
case("add_bias_into_conv_broadcasting_kept", "fuse_add_bias_into_conv",
     model([node("Conv", ["x", "w"], ["c"]), node("Add", ["c", "a"], ["y"])], [("x", [1, 3, 5, 5]), ("a", [1, 1, 1, 1, 1])], [("y", [1, 1, 4, 3, 3])],
           [init("w", rand(4, 3, 3, 3))]),
     kept=("Add", "Conv"), check=lambda m: "Tile" not in [n.op_type for n in m.graph.node])

# ONNX inference's data propagation of Mul with an empty operand (the Shape of a scalar, [0]
# values) and a one-value one: amanda optimize crashed on handtrack's conversion with it
m_empty = model([node("Shape", ["x"], ["s"]), node("Mul", ["s", "two"], ["m"]), node("Cast", ["m"], ["mf"], to=F),
                 node("Add", ["x", "one"], ["y0"]), node("ReduceSum", ["mf"], ["r"], keepdims=0), node("Add", ["y0", "r"], ["y"])],
                [("x", [])], [("y", [])], [init("two", np.array([2], np.int64)), init("one", np.float32(1.5))])
case("data_prop_empty_operand", "constant_folding,shape_folding,eliminate_deadend", m_empty, gone=("Shape", "Mul"))

# eliminate_nop_dropout (onnxoptimizer's narrower rule, not default): a Dropout whose ratio
# attribute is 0 (opset < 12) goes; one with ratio 0.5 stays for this pass
case("nop_dropout", "eliminate_nop_dropout",
     model([node("Dropout", ["x"], ["a"], ratio=0.0), node("Relu", ["a"], ["b"]), node("Dropout", ["b"], ["y"], ratio=0.5)],
           [("x", [2, 3])], [("y", [2, 3])], opset=11),
     check=lambda m: [n.op_type for n in m.graph.node] == ["Relu", "Dropout"])

# ---- push_transpose_down (channels-last conversions: NHWC <-> NCHW around each Conv)
TP, TQ = dict(perm=[0, 2, 3, 1]), dict(perm=[0, 3, 1, 2])  # NCHW -> NHWC, NHWC -> NCHW
PT = "push_transpose_down,fuse_consecutive_transposes,eliminate_nop_transpose,eliminate_deadend"


def n_transposes(m):
    return sum(1 for n in m.graph.node if n.op_type == "Transpose")


# Relu and Clip in NHWC between two Convs: both Transposes cancel
case("push_transpose_unary", PT,
     model([node("Conv", ["x", "w1"], ["c1"]), node("Transpose", ["c1"], ["t1"], **TP), node("Relu", ["t1"], ["r"]),
            node("Clip", ["r", "lo", "hi"], ["k"]), node("Transpose", ["k"], ["t2"], **TQ), node("Conv", ["t2", "w2"], ["y"])],
           [("x", [1, 3, 6, 6])], [("y", [1, 4, 2, 2])],
           [init("w1", rand(5, 3, 3, 3)), init("w2", rand(4, 5, 3, 3)), init("lo", np.float32(0)), init("hi", np.float32(0.5))]),
     gone=("Transpose",), kept=("Relu", "Clip", "Conv"))
# a residual Add in NHWC: one input a Transpose, the other a value whose NCHW Transpose exists;
# a constant per-channel bias [C] (NHWC's last axis) is permuted to [C, 1, 1]; Pad's pads and
# ReduceMean's axes (keepdims=0 over H, W: no Transpose left) are remapped
case("push_transpose_broadcast_pad_reduce", PT,
     model([node("Conv", ["x", "w1"], ["c1"]), node("Transpose", ["c1"], ["t1"], **TP), node("Relu", ["t1"], ["r"]),
            node("Transpose", ["r"], ["t2"], **TQ), node("Conv", ["t2", "w2"], ["c2"], pads=[1, 1, 1, 1]),
            node("Transpose", ["c2"], ["t3"], **TP), node("Add", ["r", "t3"], ["a"]), node("Add", ["a", "bias"], ["ab"]),
            node("Pad", ["ab", "pads"], ["p"]), node("ReduceMean", ["p"], ["y"], axes=[1, 2], keepdims=0)],
           [("x", [1, 3, 6, 6])], [("y", [1, 4])],
           [init("w1", rand(4, 3, 1, 1)), init("w2", rand(4, 4, 3, 3)), init("bias", rand(4)),
            init("pads", np.array([0, 1, 2, 0, 0, 2, 1, 0], dtype=np.int64))]),
     gone=("Transpose",), kept=("Add", "Pad", "ReduceMean", "Conv"))
# what must not move: a Transpose whose other use is not pushable (MatMul), an Add whose other
# input is a plain value with no inverse Transpose, a Concat with a constant input
case("push_transpose_kept", PT,
     model([node("Transpose", ["x"], ["t"], **TP), node("Relu", ["t"], ["r"]), node("MatMul", ["t", "m"], ["mm"]),
            node("Transpose", ["z"], ["tz"], **TP), node("Add", ["tz", "w"], ["a"]),
            node("Transpose", ["z"], ["tz2"], **TP), node("Concat", ["tz2", "c"], ["cc"], axis=3)],
           [("x", [1, 3, 4, 4]), ("z", [1, 3, 4, 4]), ("w", [1, 4, 4, 3])], [("r", [1, 4, 4, 3]), ("mm", [1, 4, 4, 5]), ("a", [1, 4, 4, 3]), ("cc", [1, 4, 4, 5])],
           [init("m", rand(3, 5)), init("c", rand(1, 4, 4, 2))]),
     kept=("Transpose", "Relu", "Add", "Concat", "MatMul"), check=lambda m: n_transposes(m) == 3)
# a graph output computed by the pushed op keeps its name and layout
case("push_transpose_graph_output", "push_transpose_down",
     model([node("Transpose", ["x"], ["t"], **TP), node("Sigmoid", ["t"], ["y"])], [("x", [1, 3, 4, 5])], [("y", [1, 4, 5, 3])]),
     kept=("Transpose", "Sigmoid"),
     check=lambda m: m.graph.node[-1].op_type == "Transpose" and m.graph.node[-1].output[0] == "y")
# constant_folding's Transpose fast path: a 2-D weight (tiles), a 4-D one, a default perm, int64
case("fold_transposes", "constant_folding,eliminate_unused_initializer",
     model([node("Transpose", ["w"], ["wt"], perm=[1, 0]), node("MatMul", ["x", "wt"], ["m1"]),
            node("Transpose", ["k"], ["kt"], perm=[2, 0, 3, 1]), node("Transpose", ["d"], ["dt"]),
            node("Reshape", ["kt", "s"], ["kt_r"]), node("Add", ["m1", "kt_r"], ["y0"]),
            node("Reshape", ["dt", "s"], ["dt_r"]), node("Add", ["y0", "dt_r"], ["y"])],
           [("x", [2, 37])], [("y", [2, 70])],
           [init("w", rand(70, 37)), init("k", rand(2, 5, 7, 2)), init("d", rand(7, 5, 2, 2)), init("s", np.array([2, 70], dtype=np.int64))]),
     gone=("Transpose",), kept=("MatMul",))


def counts(m):
    c = collections.Counter()

    def walk(g):
        for n in g.node:
            c[n.op_type] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
    walk(m.graph)
    return c


SINK_TABLE = os.path.join(HERE, "..", "mapping", "tables", "onnx_13_sink_transposes.yaml")
BAD_TABLES = {
    # file text -> the "file:line:column" the refusal must name
    "bad_yaml.yaml": ("table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/13\n  rules:\n    - rule_name: bad\n      src:\n"
                      "        ops: [{id: t, type: Transpose, attrs: {perm: {ref: p}}\n", ":8:1:"),
    "bad_graph.yaml": ("table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/13\n  rules:\n    - rule_name: bad\n      src:\n"
                       "        ops:\n          - {id: t, type: Transpose}\n      dst:\n        graph: |\n          y = Relu(X=\n", ":11:16:"),
    "not_rewrite.yaml": ("table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/12\n  rules: []\n", ": not a rewrite table"),
}


def table_cases(amanda, work, failures, jobs):
    """`amanda optimize --table`: a rewrite table as a pass (the mapping layer's test table of two
    rules that enable each other), and malformed tables refused with file, line and column."""
    m = model([node("Transpose", ["x"], ["a"], perm=[1, 0, 2]), node("Relu", ["a"], ["b"]), node("Transpose", ["b"], ["c"], perm=[0, 2, 1]),
               node("Relu", ["c"], ["d"]), node("Transpose", ["d"], ["y"], perm=[2, 1, 0])], [("x", [2, 3, 4])], [("y", [4, 2, 3])])
    src, dst = os.path.join(work, "table_sink.onnx"), os.path.join(work, "table_sink.opt.onnx")
    onnx.save(m, src)
    r = subprocess.run([amanda, "optimize", src, "-o", dst, "-q", "--passes", "eliminate_deadend", "--table", SINK_TABLE],
                       capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"table_sink: amanda optimize failed: {r.stderr.strip()}")
    else:
        got = [(n.op_type, [list(a.ints) for a in n.attribute]) for n in onnx.load(dst).graph.node]
        if got != [("Relu", []), ("Relu", []), ("Transpose", [[0, 2, 1]])]:
            failures.append(f"table_sink: {got}")
        f = os.path.join(work, "table_sink.x.bin")
        np.random.default_rng(27).uniform(-1, 1, size=[2, 3, 4]).astype(np.float32).tofile(f)
        jobs.append({"id": "table_sink", "reference": src, "candidates": [dst],
                     "inputs": {"x": {"type": "float32", "dims": [2, 3, 4], "file": f}}})
    for name, (text, want) in BAD_TABLES.items():
        path = os.path.join(work, name)
        with open(path, "w") as fh:
            fh.write(text)
        r = subprocess.run([amanda, "optimize", src, "-o", os.path.join(work, "never.onnx"), "--table", path],
                           capture_output=True, text=True)
        if r.returncode != 1 or path + want not in r.stderr:
            failures.append(f"{name}: want exit 1 and '{want}' in the message, got {r.returncode}: {r.stderr.strip()}")
        if os.path.exists(os.path.join(work, "never.onnx")):
            failures.append(f"{name}: an output was written")


# A shipped rewrite table whose rule the scan follows but the parser refuses (an unknown key): read
# only for a graph with Softmax and Log.
LAZY_BROKEN = """table:
  src: amanda/onnx/13
  dst: amanda/onnx/13
  rules:
    - rule_name: broken_log_softmax
      not_a_rule_key: 1
      src:
        graph: |
          output:s = Softmax(input=x) {axis: {ref: a}}
          output:y = Log(input=s)
      dst:
        graph: |
          output:y = LogSoftmax(input=x) {axis: "{a}"}
"""


def lazy_table_cases(amanda, work, failures):
    """The shipped rewrite tables (AMANDA_REWRITES_DIR) are read only when the graph has the op types
    of one of their rules (mapping::scan_table): a broken table does not stop a graph without
    Softmax and Log, and is refused with its file, line and column for a graph with them."""
    folder = os.path.join(work, "lazy_rewrites")
    os.makedirs(os.path.join(folder, "onnx"), exist_ok=True)
    broken = os.path.join(folder, "onnx", "broken_log_softmax.yaml")
    with open(broken, "w") as fh:
        fh.write(LAZY_BROKEN)
    env = dict(os.environ, AMANDA_REWRITES_DIR=folder)
    without = os.path.join(work, "lazy_without.onnx")
    onnx.save(model([node("Relu", ["x"], ["a"]), node("Exp", ["a"], ["y"])], [("x", [2, 3])], [("y", [2, 3])]), without)
    r = subprocess.run([amanda, "optimize", without, "-o", os.path.join(work, "lazy_without.opt.onnx"), "-q"], capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        failures.append(f"lazy_table: a graph without Softmax/Log failed on the table it cannot use: {r.stderr.strip()}")
    with_ops = os.path.join(work, "lazy_with.onnx")
    onnx.save(model([node("Softmax", ["x"], ["s"]), node("Log", ["s"], ["y"])], [("x", [2, 3])], [("y", [2, 3])]), with_ops)
    out = os.path.join(work, "lazy_with.opt.onnx")
    r = subprocess.run([amanda, "optimize", with_ops, "-o", out, "-q"], capture_output=True, text=True, env=env)
    if r.returncode != 1 or broken + ":5:7" not in r.stderr or os.path.exists(out):
        failures.append(f"lazy_table: want exit 1, '{broken}:5:7' and no output, got {r.returncode}: {r.stderr.strip()}")


LN_PATTERN = """# LayerNormalization written out (what fuse_layer_norm fuses at opset 17)
x = any
mean = ReduceMean(x, const?) [uses=1]
d = Sub(x, mean) [uses=2]
var = ReduceMean(Pow(d, const) [uses=1], const?) [uses=1]
Div(d, Sqrt(Add(var, const) [uses=1]) [uses=1])
"""


def pattern_cases(amanda, work, failures):
    """`amanda optimize --match`: the matcher's text patterns from a file (the ops where it
    matches; --why: the answer for one op), and a malformed pattern refused with file:line:column."""
    nodes = [node("ReduceMean", ["x"], ["m"], axes=[-1]), node("Sub", ["x", "m"], ["d"]), node("Pow", ["d", "two"], ["p"]),
             node("ReduceMean", ["p"], ["v"], axes=[-1]), node("Add", ["v", "eps"], ["ve"]), node("Sqrt", ["ve"], ["s"]),
             node("Div", ["d", "s"], ["ln"], name="ln_div"), node("Div", ["x", "s"], ["y2"], name="other_div"), node("Add", ["ln", "y2"], ["y"])]
    m = model(nodes, [("x", [2, 4])], [("y", [2, 4])],
              [init("two", np.array(2, np.float32)), init("eps", np.array(1e-5, np.float32))], opset=13)
    src, pat = os.path.join(work, "match_ln.onnx"), os.path.join(work, "ln.pat")
    onnx.save(m, src)
    with open(pat, "w") as f:
        f.write(LN_PATTERN)
    r = subprocess.run([amanda, "optimize", src, "--match", pat, "-q"], capture_output=True, text=True)
    # the Sqrt has two readers here, so the pattern (Sqrt [uses=1]) matches nowhere; --why says so
    if r.returncode != 0 or r.stdout.strip() != "":
        failures.append(f"match_ln (shared Sqrt): {r.returncode} {r.stdout!r} {r.stderr.strip()}")
    r = subprocess.run([amanda, "optimize", src, "--match", pat, "--why", "ln_div"], capture_output=True, text=True)
    if r.returncode != 0 or "has 2 uses" not in r.stdout:
        failures.append(f"match_ln --why: {r.returncode} {r.stdout!r} {r.stderr.strip()}")
    m.graph.node.remove(m.graph.node[7])
    m.graph.node[7].input[1] = "x"
    onnx.save(m, src)
    r = subprocess.run([amanda, "optimize", src, "--match", pat, "-q"], capture_output=True, text=True)
    if r.returncode != 0 or r.stdout.split() != ["ln_div"]:
        failures.append(f"match_ln: {r.returncode} {r.stdout!r} {r.stderr.strip()}")
    bad = os.path.join(work, "bad.pat")
    with open(bad, "w") as f:
        f.write("x = any\nmean = ReduceMean(x) [uses=1\nSub(x, mean)\n")
    r = subprocess.run([amanda, "optimize", src, "--match", bad], capture_output=True, text=True)
    if r.returncode != 1 or bad + ":3:1: error: expected ']' to close the predicates, found 'S'" not in r.stderr:
        failures.append(f"bad.pat: {r.returncode} {r.stderr.strip()}")


def main():
    amanda, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    failures, jobs = [], []
    for c in CASES:
        src = os.path.join(work, c["name"] + ".onnx")
        dst = os.path.join(work, c["name"] + ".opt.onnx")
        onnx.save(c["model"], src)
        r = subprocess.run([amanda, "optimize", src, "-o", dst, "-q", "--passes", c["passes"]] + c["extra"], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{c['name']}: amanda optimize failed: {r.stderr.strip()}")
            continue
        before, out = counts(c["model"]), onnx.load(dst)
        after = counts(out)
        try:
            onnx.checker.check_model(out)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{c['name']}: onnx.checker: {e}")
        for t in c["gone"]:
            if after[t]:
                failures.append(f"{c['name']}: {t} should be gone: {dict(after)}")
        for t in c["kept"]:
            if after[t] != before[t]:
                failures.append(f"{c['name']}: {t} should stay ({before[t]}): {dict(after)}")
        for t in c["present"]:
            if not after[t]:
                failures.append(f"{c['name']}: {t} should be there: {dict(after)}")
        if c["check"] and not c["check"](out):
            failures.append(f"{c['name']}: check failed: {[(n.op_type, n.name) for n in out.graph.node]}")
        if after == before and not c["kept"] and not c["check"]:
            failures.append(f"{c['name']}: nothing changed")
        inputs = {}
        for i in c["model"].graph.input:
            if i.name in {x.name for x in c["model"].graph.initializer}:
                continue
            dims = [d.dim_value if d.dim_value else 2 for d in i.type.tensor_type.shape.dim]
            f = os.path.join(work, f"{c['name']}.{i.name}.bin")
            # each case's inputs from its own seed: adding a case does not change the others'
            np.random.default_rng(zlib.crc32(c["name"].encode())).uniform(-1, 1, size=dims).astype(np.float32).tofile(f)
            inputs[i.name] = {"type": "float32", "dims": dims, "file": f}
        if c["compare"]:
            jobs.append({"id": c["name"], "reference": src, "candidates": [dst], "inputs": inputs})
    table_cases(amanda, work, failures, jobs)
    lazy_table_cases(amanda, work, failures)
    pattern_cases(amanda, work, failures)
    with open(os.path.join(work, "jobs.json"), "w") as f:
        json.dump(jobs, f)
    cmp = subprocess.run(["node", JS, "--jobs", os.path.join(work, "jobs.json")], capture_output=True, text=True)
    if cmp.returncode != 0:
        failures.append(f"ort_compare.js failed: {cmp.stderr[-2000:]}")
    else:
        for r in json.loads(cmp.stdout):
            res = (r.get("results") or [{}])[0]
            if "reference_error" in r or "error" in res:
                failures.append(f"{r['id']}: onnxruntime: {r.get('reference_error') or res.get('error')}")
            elif not r.get("max_abs_reference", 0) > 0:
                failures.append(f"{r['id']}: the reference output is all zero")
            elif res.get("max_rel_diff", 1) > 1e-5 or res.get("mismatches", 0):
                failures.append(f"{r['id']}: outputs differ: {res}")
    # Python's amanda.optimize, when the module is built
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(amanda), "python"))
        import amanda as am
        g = am.load(os.path.join(work, "bn_into_conv.onnx"))
        rep = am.optimize(g, passes=["fuse_bn_into_conv", "eliminate_deadend"])
        if rep["ops_before"] != 2 or rep["ops_after"] != 1:
            failures.append(f"python amanda.optimize: {rep}")
    except ImportError as e:
        print(f"(python module not importable: {e})")
    print(f"{len(CASES)} cases, {len(failures)} failures")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
