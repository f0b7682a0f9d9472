#!/usr/bin/python3
"""Per-op ONNX -> TF.js tests: many one-op ONNX models (opset 13, made here with onnx.helper, with
attribute variants), each converted with `amanda convert M.onnx -o DIR/model.json`, run in TF.js
(pure-JS CPU backend) and in onnxruntime-node on the same random inputs: every output within 1e-4
of onnxruntime's relative to max(1, |x|) (integer and bool outputs equal), shapes equal. Cases
marked `refused` must exit 1, write nothing and name the op in the report. Before the cases, a
planted wrong rule (Relu made a Sigmoid, through --tables) must be caught: the test proves it can
fail.

  onnx2tf_ops_test.py AMANDA OUT_DIR [-v] [-k SUBSTRING]"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as oh, numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx2tf_common as common  # noqa: E402

TOL = 1e-4
F, I64, I32, B = TP.FLOAT, TP.INT64, TP.INT32, TP.BOOL
CASES = []


def case(name, op, inputs, attrs=None, inits=None, outs=1, out_types=None, given=None, expect="match", nodes=None, opset=13):
    CASES.append(dict(name=name, op=op, inputs=inputs, attrs=attrs or {}, inits=inits or {}, outs=outs,
                      out_types=out_types, given=given or {}, expect=expect, nodes=nodes, opset=opset))


def x(shape, t=F, name="x"):
    return (name, t, shape)


rng = np.random.default_rng(3)
R = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
POS = lambda *s: (rng.random(s) * 3 + 0.1).astype(np.float32)  # noqa: E731
UNIT = lambda *s: (rng.random(s) * 1.8 - 0.9).astype(np.float32)  # noqa: E731
I = lambda a: np.array(a, dtype=np.int64)  # noqa: E731

# ---- elementwise, one input
for op in ["Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Floor", "Ceil", "Round", "Sign", "Erf", "Sin", "Cos", "Tan",
           "Atan", "Sinh", "Cosh", "Asinh", "Softplus", "Softsign", "Identity", "IsNaN"]:
    case(op.lower(), op, [x([2, 3, 4])], out_types=[B] if op == "IsNaN" else None)
for op in ["Log", "Sqrt", "Reciprocal"]:
    case(op.lower(), op, [x([2, 3, 4])], given={"x": POS(2, 3, 4)})
for op in ["Asin", "Acos", "Atanh"]:
    case(op.lower(), op, [x([2, 3, 4])], given={"x": UNIT(2, 3, 4)})
case("acosh", "Acosh", [x([2, 3])], given={"x": POS(2, 3) + 1})
case("not", "Not", [x([2, 3], B)], out_types=[B])
case("leaky_relu", "LeakyRelu", [x([2, 3, 4])], {"alpha": 0.1})
case("leaky_relu_default", "LeakyRelu", [x([2, 3, 4])])
case("elu", "Elu", [x([2, 3, 4])], {"alpha": 0.5})
case("elu_default", "Elu", [x([2, 3, 4])])
case("selu", "Selu", [x([2, 3, 4])])
case("selu_attrs", "Selu", [x([2, 3, 4])], {"alpha": 2.0, "gamma": 1.5})
case("hard_sigmoid", "HardSigmoid", [x([2, 3, 4])], {"alpha": 0.3, "beta": 0.4})
case("thresholded_relu", "ThresholdedRelu", [x([2, 3, 4])], {"alpha": 0.5})
case("prelu", "PRelu", [x([2, 3, 4, 4]), ("slope", F, [3, 1, 1])], inits={"slope": R(3, 1, 1)})
case("clip_both", "Clip", [x([2, 3, 4]), ("lo", F, []), ("hi", F, [])], inits={"lo": np.array(-0.5, np.float32), "hi": np.array(0.7, np.float32)})
case("clip_min", "Clip", [x([2, 3, 4]), ("lo", F, []), ("", F, [])], inits={"lo": np.array(-0.5, np.float32)})
case("clip_max", "Clip", [x([2, 3, 4]), ("", F, []), ("hi", F, [])], inits={"hi": np.array(0.5, np.float32)})
case("clip_none", "Clip", [x([2, 3, 4])])
case("dropout", "Dropout", [x([2, 3, 4])])

# ---- elementwise, two or more inputs
for op in ["Add", "Sub", "Mul", "Div"]:
    case(op.lower(), op, [x([2, 3, 4], name="a"), x([2, 3, 4], name="b")])
    case(op.lower() + "_broadcast", op, [x([2, 3, 4], name="a"), x([4], name="b")])
case("add_broadcast_both", "Add", [x([2, 1, 4], name="a"), x([3, 1], name="b")])
case("div_int", "Div", [x([2, 5], I64, "a"), x([2, 5], I64, "b")], given={"b": I([[1, -2, 3, -4, 5], [2, 3, -3, 7, -1]])}, out_types=[I64])
case("pow", "Pow", [x([2, 3], name="a"), x([2, 3], name="b")], given={"a": POS(2, 3)})
case("pow_square", "Pow", [x([2, 3], name="a"), ("b", F, [])], inits={"b": np.array(2.0, np.float32)})
for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
    case(op.lower(), op, [x([2, 3], I64, "a"), x([2, 3], I64, "b")], out_types=[B])
case("less_float", "Less", [x([2, 3], name="a"), x([3], name="b")], out_types=[B])
for op in ["And", "Or", "Xor"]:
    case(op.lower(), op, [x([2, 3], B, "a"), x([2, 3], B, "b")], out_types=[B])
case("where", "Where", [x([2, 3], B, "c"), x([2, 3], name="a"), x([3], name="b")])
case("mod_int", "Mod", [x([2, 5], I64, "a"), x([2, 5], I64, "b")], given={"b": I([[1, -2, 3, -4, 5], [2, 3, -3, 7, -1]])}, out_types=[I64])
case("mod_fmod", "Mod", [x([2, 5], name="a"), x([2, 5], name="b")], {"fmod": 1}, given={"b": POS(2, 5) * np.sign(R(2, 5))})
for op in ["Max", "Min", "Sum", "Mean"]:
    case(op.lower() + "_3", op, [x([2, 3], name="a"), x([3], name="b"), x([2, 1], name="c")])
    case(op.lower() + "_1", op, [x([2, 3], name="a")])
case("max_2", "Max", [x([2, 3], name="a"), x([2, 3], name="b")])
# more inputs than the generated per-count rules had (Sum/Max/Min/Mean up to 8, Concat up to 64)
case("sum_10", "Sum", [x([2, 3], name=f"a{i}") for i in range(10)])
case("min_9", "Min", [x([2, 3], name=f"a{i}") for i in range(8)] + [x([3], name="b")])
case("mean_12", "Mean", [x([2, 3], name=f"a{i}") for i in range(12)])

# ---- types and shapes
case("cast_int32", "Cast", [x([2, 3])], {"to": TP.INT32}, given={"x": R(2, 3) * 10}, out_types=[I32])
case("cast_int64", "Cast", [x([2, 3])], {"to": TP.INT64}, given={"x": R(2, 3) * 10}, out_types=[I64])
case("cast_to_float", "Cast", [x([2, 3], I64)], {"to": TP.FLOAT})
case("cast_bool", "Cast", [x([2, 3])], {"to": TP.BOOL}, given={"x": np.round(R(2, 3))}, out_types=[B])
case("shape", "Shape", [x(["N", 3, 4])], out_types=[I64])
case("size", "Size", [x([2, 3, 4])], out_types=[I64])
case("constant_of_shape", "ConstantOfShape", [x([3], I64, "s")], {"value": nh.from_array(np.array([2.5], np.float32))}, given={"s": I([2, 3, 1])})
case("range", "Range", [("a", F, []), ("b", F, []), ("d", F, [])], given={"a": np.array(1.0, np.float32), "b": np.array(7.5, np.float32), "d": np.array(1.5, np.float32)})
case("reshape", "Reshape", [x([2, 3, 4]), ("s", I64, [2])], inits={"s": I([4, -1])})
case("reshape_zero", "Reshape", [x([2, 3, 4]), ("s", I64, [3])], inits={"s": I([0, -1, 2])})
case("reshape_symbolic", "Reshape", [x(["N", 3, 4]), ("s", I64, [2])], inits={"s": I([-1, 12])})
for a in (0, 1, 2, -1):
    case(f"flatten_{a}", "Flatten", [x([2, 3, 4])], {"axis": a})
case("transpose", "Transpose", [x([2, 3, 4])], {"perm": [1, 2, 0]})
case("transpose_default", "Transpose", [x([2, 3, 4])])
case("squeeze", "Squeeze", [x([2, 1, 4, 1]), ("a", I64, [1])], inits={"a": I([-1])})
case("squeeze_all", "Squeeze", [x([2, 1, 4, 1])])
case("unsqueeze", "Unsqueeze", [x([2, 3]), ("a", I64, [2])], inits={"a": I([0, -1])})
case("unsqueeze_symbolic", "Unsqueeze", [x(["N", 3]), ("a", I64, [1])], inits={"a": I([1])})
case("expand", "Expand", [x([3, 1]), ("s", I64, [3])], inits={"s": I([2, 1, 4])})
case("tile", "Tile", [x([2, 3]), ("r", I64, [2])], inits={"r": I([2, 3])})
case("gather", "Gather", [x([5, 4]), ("i", I64, [3])], {"axis": 0}, inits={"i": I([4, -1, 0])})
case("gather_axis1", "Gather", [x([3, 5, 2]), ("i", I64, [2, 2])], {"axis": 1}, inits={"i": I([[1, -2], [0, 4]])})
case("gather_scalar", "Gather", [x([3, 5]), ("i", I64, [])], {"axis": -1}, inits={"i": I(2)})
case("gather_runtime", "Gather", [x([5, 4]), x([3], I64, "i")], {"axis": 0}, given={"i": I([-1, 2, 0])})
case("gather_nd", "GatherND", [x([3, 4, 2]), ("i", I64, [2, 2])], inits={"i": I([[0, 1], [2, 3]])})
case("scatter_nd", "ScatterND", [x([4, 3]), ("i", I64, [2, 1]), x([2, 3], name="u")], inits={"i": I([[1], [3]])})
case("pad_constant", "Pad", [x([2, 3, 4]), ("p", I64, [6]), ("v", F, [])], inits={"p": I([0, 1, 2, 1, 0, 3]), "v": np.array(1.5, np.float32)})
case("pad_zero", "Pad", [x([1, 3, 4, 4]), ("p", I64, [8])], inits={"p": I([0, 0, 1, 2, 0, 0, 2, 1])})
case("pad_reflect", "Pad", [x([1, 2, 4, 5]), ("p", I64, [8])], {"mode": "reflect"}, inits={"p": I([0, 0, 1, 2, 0, 0, 2, 1])})
case("pad_edge", "Pad", [x([1, 2, 4, 5]), ("p", I64, [8])], {"mode": "edge"}, inits={"p": I([0, 0, 1, 2, 0, 0, 2, 1])}, expect="refused")
case("depth_to_space", "DepthToSpace", [x([1, 8, 2, 3])], {"blocksize": 2})
case("concat", "Concat", [x([2, 3], name="a"), x([2, 1], name="b"), x([2, 2], name="c")], {"axis": -1})
case("concat_1", "Concat", [x([2, 3], name="a")], {"axis": 0})
case("concat_70", "Concat", [x([1, 2], name=f"a{i}") for i in range(70)], {"axis": 0})
case("split_equal", "Split", [x([2, 6])], {"axis": 1}, outs=3)
case("split_sizes", "Split", [x([6, 2]), ("s", I64, [3])], {"axis": 0}, inits={"s": I([1, 2, 3])}, outs=3)
case("slice", "Slice", [x([5, 6]), ("s", I64, [1]), ("e", I64, [1]), ("a", I64, [1])], inits={"s": I([1]), "e": I([4]), "a": I([1])})
case("slice_two_axes", "Slice", [x([5, 6, 3]), ("s", I64, [2]), ("e", I64, [2]), ("a", I64, [2])], inits={"s": I([1, -2]), "e": I([9223372036854775807, 10]), "a": I([0, 2])})
case("slice_step", "Slice", [x([7, 6]), ("s", I64, [1]), ("e", I64, [1]), ("a", I64, [1]), ("t", I64, [1])], inits={"s": I([1]), "e": I([7]), "a": I([0]), "t": I([2])})
case("slice_reverse", "Slice", [x([5, 6]), ("s", I64, [1]), ("e", I64, [1]), ("a", I64, [1]), ("t", I64, [1])], inits={"s": I([-1]), "e": I([-9223372036854775807]), "a": I([1]), "t": I([-1])})
case("slice_runtime_bounds", "Slice", [x([5, 6]), x([1], I64, "s"), x([1], I64, "e"), ("a", I64, [1])], inits={"a": I([-1])}, given={"s": I([1]), "e": I([-1])})
case("flatten_symbolic", "Flatten", [x(["N", 3, 4])], {"axis": 1})
case("slice_no_axes", "Slice", [x([5, 6]), ("s", I64, [2]), ("e", I64, [2])], inits={"s": I([0, 2]), "e": I([3, -1])})

# ---- softmax, reductions
case("softmax", "Softmax", [x([2, 3, 5])])
case("softmax_axis1", "Softmax", [x([2, 3, 5])], {"axis": 1})
case("log_softmax", "LogSoftmax", [x([2, 3, 5])], {"axis": 0})
for op in ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"]:
    case(op.lower(), op, [x([2, 3, 4])], {"axes": [1]})
    case(op.lower() + "_all_nokeep", op, [x([2, 3, 4])], {"keepdims": 0})
case("reducesum", "ReduceSum", [x([2, 3, 4]), ("a", I64, [2])], {"keepdims": 0}, inits={"a": I([0, -1])})
case("reducesum_all", "ReduceSum", [x([2, 3, 4])])
case("argmax", "ArgMax", [x([2, 3, 4])], {"axis": 1}, out_types=[I64])
case("argmax_nokeep", "ArgMax", [x([2, 3, 4])], {"axis": -1, "keepdims": 0}, out_types=[I64])
case("argmin", "ArgMin", [x([2, 3, 4])], {"axis": 0}, out_types=[I64])
case("cumsum", "CumSum", [x([2, 5]), ("a", I64, [])], inits={"a": I(1)})
case("cumsum_exclusive_reverse", "CumSum", [x([2, 5]), ("a", I64, [])], {"exclusive": 1, "reverse": 1}, inits={"a": I(1)})
case("topk", "TopK", [x([3, 6]), ("k", I64, [1])], inits={"k": I([2])}, outs=2, out_types=[F, I64])

# ---- matrix products
case("matmul", "MatMul", [x([3, 4], name="a"), x([4, 5], name="b")])
case("matmul_batched", "MatMul", [x([2, 3, 4], name="a"), x([4, 5], name="b")])
case("matmul_4d", "MatMul", [x([2, 2, 3, 4], name="a"), x([2, 1, 4, 5], name="b")])
case("gemm", "Gemm", [x([3, 4], name="a"), ("w", F, [5, 4]), ("c", F, [5])], {"transB": 1}, inits={"w": R(5, 4), "c": R(5)})
case("gemm_scaled", "Gemm", [x([4, 3], name="a"), ("w", F, [4, 5]), ("c", F, [3, 5])], {"transA": 1, "alpha": 0.5, "beta": 2.0}, inits={"w": R(4, 5), "c": R(3, 5)})
case("gemm_no_c", "Gemm", [x([3, 4], name="a"), ("w", F, [4, 5])], {"alpha": 1.5}, inits={"w": R(4, 5)})

# ---- convolutions and pooling
W = lambda o, i, k=3: R(o, i, k, k)  # noqa: E731
case("conv", "Conv", [x([1, 3, 8, 8]), ("w", F, [4, 3, 3, 3]), ("b", F, [4])], {"pads": [1, 1, 1, 1]}, inits={"w": W(4, 3), "b": R(4)})
case("conv_nobias", "Conv", [x([2, 3, 8, 8]), ("w", F, [4, 3, 3, 3])], inits={"w": W(4, 3)})
case("conv_stride", "Conv", [x([1, 3, 9, 9]), ("w", F, [4, 3, 3, 3])], {"strides": [2, 2], "pads": [0, 1, 2, 0]}, inits={"w": W(4, 3)})
case("conv_dilation", "Conv", [x([1, 3, 9, 9]), ("w", F, [4, 3, 3, 3])], {"dilations": [2, 2], "pads": [2, 2, 2, 2]}, inits={"w": W(4, 3)})
case("conv_same_upper", "Conv", [x([1, 3, 9, 9]), ("w", F, [4, 3, 3, 3])], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, inits={"w": W(4, 3)})
case("conv_valid", "Conv", [x([1, 3, 9, 9]), ("w", F, [4, 3, 3, 3])], {"auto_pad": "VALID"}, inits={"w": W(4, 3)})
case("conv_1x1_rect", "Conv", [x([1, 3, 5, 7]), ("w", F, [6, 3, 1, 1])], inits={"w": W(6, 3, 1)})
case("conv_depthwise", "Conv", [x([1, 4, 8, 8]), ("w", F, [4, 1, 3, 3]), ("b", F, [4])], {"group": 4, "pads": [1, 1, 1, 1], "strides": [2, 2]}, inits={"w": W(4, 1), "b": R(4)})
case("conv_depthwise_multiplier", "Conv", [x([1, 3, 8, 8]), ("w", F, [6, 1, 3, 3])], {"group": 3, "pads": [1, 0, 1, 2]}, inits={"w": W(6, 1)})
case("conv_runtime_weights", "Conv", [x([1, 3, 6, 6]), x([4, 3, 3, 3], name="w")])
case("conv_groups", "Conv", [x([1, 4, 8, 8]), ("w", F, [4, 2, 3, 3])], {"group": 2}, inits={"w": W(4, 2)})
case("conv_groups_bias", "Conv", [x([1, 6, 7, 7]), ("w", F, [9, 2, 3, 3]), ("b", F, [9])], {"group": 3, "pads": [1, 0, 1, 2], "strides": [2, 1]}, inits={"w": W(9, 2), "b": R(9)})
# (one variadic rule for any group count: 33 groups were refused while the rules were generated per count up to 32)
case("conv_groups_33", "Conv", [x([1, 66, 4, 4]), ("w", F, [33, 2, 1, 1])], {"group": 33}, inits={"w": W(33, 2, 1)})
case("conv_groups_5_bias_dilated", "Conv", [x([1, 10, 9, 9]), ("w", F, [15, 2, 3, 3]), ("b", F, [15])], {"group": 5, "dilations": [2, 2], "pads": [1, 1, 1, 1]},
     inits={"w": W(15, 2), "b": R(15)})
case("conv_1d", "Conv", [x([1, 3, 8]), ("w", F, [4, 3, 3])], {"pads": [1, 2], "strides": [2]}, inits={"w": R(4, 3, 3)})
case("conv_1d_bias", "Conv", [x([2, 3, 9]), ("w", F, [4, 3, 3]), ("b", F, [4])], {"dilations": [2]}, inits={"w": R(4, 3, 3), "b": R(4)})
case("conv_3d", "Conv", [x([1, 2, 4, 4, 4]), ("w", F, [3, 2, 1, 1, 1])], inits={"w": R(3, 2, 1, 1, 1)}, expect="refused")
case("einsum_matmul", "Einsum", [x([2, 3, 4], name="a"), x([2, 4, 5], name="b")], {"equation": "bij,bjk->bik"})
case("einsum_transpose", "Einsum", [x([2, 3], name="a")], {"equation": "ij->ji"})
case("one_hot", "OneHot", [x([2, 3], I64, "i"), ("d", I64, []), ("v", F, [2])], inits={"d": I(5), "v": np.array([-1, 2], np.float32)}, given={"i": I([[0, 4, -1], [2, -5, 3]])})
case("conv_transpose", "ConvTranspose", [x([1, 3, 5, 5]), ("w", F, [3, 4, 3, 3]), ("b", F, [4])], {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, inits={"w": W(3, 4), "b": R(4)})
case("conv_transpose_plain", "ConvTranspose", [x([1, 3, 4, 4]), ("w", F, [3, 2, 3, 3])], inits={"w": W(3, 2)})
case("maxpool", "MaxPool", [x([1, 3, 8, 8])], {"kernel_shape": [2, 2], "strides": [2, 2]})
case("maxpool_pads", "MaxPool", [x([1, 3, 9, 9])], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
case("maxpool_ceil", "MaxPool", [x([1, 3, 8, 8])], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})
case("maxpool_asymmetric", "MaxPool", [x([1, 3, 7, 8])], {"kernel_shape": [3, 2], "pads": [0, 1, 2, 0]})
case("averagepool", "AveragePool", [x([1, 3, 8, 8])], {"kernel_shape": [2, 2], "strides": [2, 2]})
case("averagepool_pads", "AveragePool", [x([1, 3, 9, 9])], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
case("averagepool_pads_counted", "AveragePool", [x([1, 3, 9, 9])], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1})
case("averagepool_ceil", "AveragePool", [x([1, 3, 8, 8])], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})
case("global_average_pool", "GlobalAveragePool", [x([2, 3, 5, 4])])
case("global_max_pool", "GlobalMaxPool", [x([2, 3, 5, 4])])
case("batch_normalization", "BatchNormalization", [x([2, 3, 4, 4]), ("s", F, [3]), ("b", F, [3]), ("m", F, [3]), ("v", F, [3])], {"epsilon": 1e-3},
     inits={"s": R(3), "b": R(3), "m": R(3), "v": POS(3)})
case("batch_normalization_2d", "BatchNormalization", [x([4, 3]), ("s", F, [3]), ("b", F, [3]), ("m", F, [3]), ("v", F, [3])],
     inits={"s": R(3), "b": R(3), "m": R(3), "v": POS(3)})
case("instance_normalization", "InstanceNormalization", [x([2, 3, 4, 5]), ("s", F, [3]), ("b", F, [3])], inits={"s": R(3), "b": R(3)})
case("lrn", "LRN", [x([1, 5, 4, 4])], {"size": 3, "alpha": 0.001, "beta": 0.75, "bias": 1.0})
case("resize_linear", "Resize", [x([1, 2, 4, 6]), ("", F, []), ("sc", F, [4])], {"mode": "linear"}, inits={"sc": np.array([1, 1, 2, 1.5], np.float32)})
case("resize_linear_sizes", "Resize", [x([1, 2, 4, 5]), ("", F, []), ("", F, []), ("sz", I64, [4])], {"mode": "linear"}, inits={"sz": I([1, 2, 7, 8])})
case("resize_linear_inexact_scale", "Resize", [x([1, 2, 4, 5]), ("", F, []), ("sc", F, [4])], {"mode": "linear"}, inits={"sc": np.array([1, 1, 2, 1.5], np.float32)}, expect="refused")
case("resize_linear_align", "Resize", [x([1, 2, 4, 5]), ("", F, []), ("", F, []), ("sz", I64, [4])], {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, inits={"sz": I([1, 2, 7, 9])})
case("resize_nearest", "Resize", [x([1, 2, 4, 5]), ("", F, []), ("sc", F, [4])], {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, inits={"sc": np.array([1, 1, 2, 2], np.float32)})
case("resize_nearest_half_pixel", "Resize", [x([1, 2, 4, 5]), ("", F, []), ("sc", F, [4])], {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}, inits={"sc": np.array([1, 1, 3, 2], np.float32)})
case("resize_cubic", "Resize", [x([1, 2, 4, 5]), ("", F, []), ("sc", F, [4])], {"mode": "cubic"}, inits={"sc": np.array([1, 1, 2, 2], np.float32)}, expect="refused")

# ---- chains: the NCHW <-> NHWC transposes between ops sink and cancel (the boundary step)
N = oh.make_node
case("chain_conv_relu_conv", None, [x([1, 3, 8, 8]), ("w1", F, [4, 3, 3, 3]), ("w2", F, [5, 4, 3, 3])], inits={"w1": W(4, 3), "w2": W(5, 4)},
     nodes=lambda: [N("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]), N("Relu", ["a"], ["b"]), N("Conv", ["b", "w2"], ["y0"])])
case("chain_residual", None, [x([1, 4, 6, 6]), ("w1", F, [4, 4, 3, 3]), ("w2", F, [4, 4, 1, 1]), ("s", F, [])],
     inits={"w1": W(4, 4), "w2": W(4, 4, 1), "s": np.array(0.5, np.float32)},
     nodes=lambda: [N("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]), N("Conv", ["x", "w2"], ["b"]), N("Add", ["a", "b"], ["c"]),
                    N("Mul", ["c", "s"], ["d"]), N("Sigmoid", ["d"], ["e"]), N("MaxPool", ["e"], ["f"], kernel_shape=[2, 2], strides=[2, 2]),
                    N("Relu", ["f"], ["y0"])])
case("chain_two_outputs", None, [x([1, 3, 5, 5]), ("w1", F, [2, 3, 1, 1])], inits={"w1": W(2, 3, 1)}, outs=2,
     nodes=lambda: [N("Conv", ["x", "w1"], ["a"]), N("Relu", ["a"], ["y0"]), N("Tanh", ["a"], ["t"]), N("GlobalAveragePool", ["t"], ["y1"])])

# ---- constants
case("constant", None, [x([2, 3])], nodes=lambda: [oh.make_node("Constant", [], ["c"], value=nh.from_array(R(2, 3))),
                                                   oh.make_node("Add", ["x", "c"], ["y0"])])


# ---- other opsets: converted to opset 13 first by the ONNX opset tables (the planner chains them)
case("layer_normalization_opset17", "LayerNormalization", [x([2, 3, 4]), ("s", F, [4]), ("b", F, [4])], {"axis": -1, "epsilon": 1e-5},
     inits={"s": R(4), "b": R(4)}, opset=17)
case("hard_swish_opset14", "HardSwish", [x([2, 3, 4])], opset=14)
case("squeeze_opset11", "Squeeze", [x([2, 1, 3])], {"axes": [1]}, opset=11)
case("clip_opset9", "Clip", [x([2, 3])], {"min": -0.5, "max": 0.5}, opset=9)

# ---- no rule: refused naming the op
case("det_no_rule", "Det", [x([2, 3, 3])], expect="refused")


def build(c):
    inits = []
    graph_inputs = []
    names = []
    for n, t, shape in c["inputs"]:
        names.append(n)
        if not n:
            continue
        if n in c["inits"]:
            inits.append(nh.from_array(np.asarray(c["inits"][n]), n))
        else:
            graph_inputs.append(oh.make_tensor_value_info(n, t, shape))
    outs = [f"y{k}" for k in range(c["outs"])]
    nodes = c["nodes"]() if c["nodes"] else [oh.make_node(c["op"], names, outs, **c["attrs"])]
    types = c["out_types"] or [F] * len(outs)
    g = oh.make_graph(nodes, c["name"], graph_inputs, [oh.make_tensor_value_info(o, types[k], None) for k, o in enumerate(outs)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", c["opset"])], producer_name="onnx2tf_ops_test")
    m.ir_version = 8

    return m


PLANTED = """table:
  src: amanda/onnx/13
  dst: amanda/tensorflow/2.2
  rules:
    - rule_name: planted_wrong_relu
      src: {type: Relu, input_ports: [{name: X, ref: x}], output_ports: [{name: Y, ref: y}]}
      priority: 100
      dst: {type: Sigmoid, attrs: {T: "{dtype(x)}"}, input_ports: [{name: x, ref: x}], output_ports: [{name: y, ref: y}]}
"""


def main():
    amanda, out = sys.argv[1:3]
    verbose = "-v" in sys.argv
    only = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else None
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    cases = [c for c in CASES if not only or only in c["name"]]
    jobs, failures, refused_ok = [], [], 0
    planted = os.path.join(out, "planted.yaml")
    with open(planted, "w") as f:
        f.write(PLANTED)
    for c in cases + [dict(CASES[0], name="planted", expect="planted")]:
        folder = os.path.join(out, c["name"])
        os.makedirs(folder)
        m = build(c)
        src = os.path.join(folder, "model.onnx")
        onnx.save(m, src)
        target = os.path.join(folder, "tfjs", "model.json")
        rc, log = common.convert(amanda, src, target, ["--tables", planted] if c["expect"] == "planted" else [])
        if c["expect"] == "refused":
            if rc != 1 or os.path.exists(target) or c["op"] not in log:
                failures.append(f"{c['name']}: expected a refusal naming {c['op']} (exit 1, nothing written), got exit {rc}: {log[-800:]}")
            else:
                refused_ok += 1
                if verbose:
                    print(f"{c['name']}: refused as expected: {' '.join(log.split())[:300]}")
            continue
        if rc != 0:
            failures.append(f"{c['name']}: convert failed: {log[-1200:]}")
            continue
        jobs.append({"id": c["name"], "onnx": src, "tfjs": target, "inputs": common.make_inputs(m, folder, 11, c["given"])})
    results = common.compare(jobs, out) if jobs else {}
    passed = 0
    for c in cases + [{"name": "planted", "expect": "planted"}]:
        r = results.get(c["name"])
        if not r:
            continue
        ok = "error" not in r and r["max_rel"] <= TOL and r["mismatches"] == 0
        if c["expect"] == "planted":
            if ok:
                failures.append("planted: a wrong rule (Relu -> Sigmoid) was not caught: the comparison cannot fail")
            elif verbose:
                print(f"planted wrong rule caught: {r.get('error') or 'max rel diff %.3g' % r['max_rel']}")
            continue
        if verbose or not ok:
            print(f"{c['name']}: " + (r["error"] if "error" in r else f"max rel diff {r['max_rel']:.3g}, mismatches {r['mismatches']}, max |output| {r['max_ref']:.3g}"))
        if ok:
            passed += 1
        else:
            failures.append(f"{c['name']}: " + (r.get("error") or f"max rel diff {r['max_rel']:.3g}, {r['mismatches']} integer mismatches"))
    print(f"{len(cases)} cases: {passed} match onnxruntime in TF.js, {refused_ok} refused as expected, {len(failures)} failures")
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
