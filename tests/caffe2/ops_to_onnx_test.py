#!/usr/bin/env python3
"""Coverage by vocabulary: one small Caffe2 net per case for the ops the Caffe2 -> ONNX table maps,
in every argument spelling Caffe2 accepts (kernel / kernel_h+kernel_w / kernels, pad / pad_t... /
pads, legacy_pad, global_pooling, broadcast with each axis, Softmax's flattening axis, ...), made
here with Google's protobuf (weights in an init net), converted by Amanda and run in onnxruntime,
against the tests' torch evaluator of Caffe2 ops (c2eval.py). Cases Caffe2 allows and ONNX cannot
express are checked to be refused, naming the op and the reason. Every rule of the hand table that
maps must be reached by some case (the test lists the ones that are not).

  ops_to_onnx_test.py AMANDA WORKDIR"""
import json
import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import c2common as c2  # noqa: E402
import c2eval  # noqa: E402

R = np.random.default_rng(11)


def arr(*shape):
    return R.standard_normal(shape).astype(np.float32)


X4 = (1, 4, 8, 8)
W = {"w": arr(6, 4, 3, 3), "b": arr(6)}
WG = {"w": arr(6, 2, 3, 3), "b": arr(6)}
CH = {"s": arr(4), "bb": arr(4), "m": arr(4), "v": np.abs(arr(4)) + 0.5}

# (name, op type, inputs, args, extra inputs {blob: array}, input shape, number of outputs)
CASES = [
    ("conv_kernel", "Conv", ["x", "w", "b"], {"kernel": 3}, W, X4, 1),
    ("conv_kernels_pads", "Conv", ["x", "w", "b"], {"kernels": [3, 3], "strides": [2, 1], "pads": [1, 0, 1, 2]}, W, X4, 1),
    ("conv_hw", "Conv", ["x", "w", "b"], {"kernel_h": 3, "kernel_w": 3, "stride_h": 1, "stride_w": 2, "pad_t": 1, "pad_l": 1, "pad_b": 0, "pad_r": 1}, W, X4, 1),
    ("conv_pad_stride_dilation", "Conv", ["x", "w"], {"kernel": 3, "pad": 2, "stride": 2, "dilation": 2}, {"w": W["w"]}, X4, 1),
    ("conv_group", "Conv", ["x", "w", "b"], {"kernel": 3, "group": 2, "order": "NCHW"}, WG, X4, 1),
    ("conv_legacy_valid", "Conv", ["x", "w", "b"], {"kernel": 3, "pad": 1, "legacy_pad": 1}, W, X4, 1),
    ("max_pool", "MaxPool", ["x"], {"kernel": 2, "stride": 2}, {}, X4, 1),
    ("max_pool_pads", "MaxPool", ["x"], {"kernels": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, {}, X4, 1),
    ("max_pool_legacy_ceil", "MaxPool", ["x"], {"kernel": 3, "stride": 2, "legacy_pad": 3}, {}, (1, 4, 8, 8), 1),
    ("max_pool_global", "MaxPool", ["x"], {"global_pooling": 1}, {}, X4, 1),
    ("average_pool", "AveragePool", ["x"], {"kernel_h": 2, "kernel_w": 3, "stride": 1}, {}, X4, 1),
    ("average_pool_pads", "AveragePool", ["x"], {"kernel": 3, "stride": 2, "pad": 1}, {}, X4, 1),
    ("average_pool_legacy_ceil", "AveragePool", ["x"], {"kernel": 3, "stride": 2, "legacy_pad": 3}, {}, X4, 1),
    ("average_pool_global", "AveragePool", ["x"], {"global_pooling": 1}, {}, X4, 1),
    ("spatial_bn", "SpatialBN", ["x", "s", "bb", "m", "v"], {"is_test": 1, "epsilon": 1e-3}, CH, X4, 1),
    ("lrn", "LRN", ["x"], {"size": 3, "alpha": 1e-2, "beta": 0.75, "bias": 2.0}, {}, X4, 1),
    ("fc_2d", "FC", ["x", "fw", "fb"], {}, {"fw": arr(5, 12), "fb": arr(5)}, (3, 12), 1),
    ("fc_4d", "FC", ["x", "fw", "fb"], {}, {"fw": arr(5, 256), "fb": arr(5)}, X4, 1),
    ("fc_axis_w", "FC", ["x", "fw", "fb"], {"axis_w": 3}, {"fw": arr(1, 1, 5, 12), "fb": arr(5)}, (3, 12), 1),
    ("fc_axis_2", "FC", ["x", "fw", "fb"], {"axis": 2}, {"fw": arr(5, 64), "fb": arr(5)}, X4, 1),
    ("fc_transposed", "FCTransposed", ["x", "fw", "fb"], {}, {"fw": arr(12, 5), "fb": arr(5)}, (3, 12), 1),
    ("add_numpy", "Add", ["x", "y"], {}, {"y": arr(8)}, X4, 1),
    ("add_axis1", "Add", ["x", "y"], {"broadcast": 1, "axis": 1}, {"y": arr(4)}, X4, 1),
    ("sub_axis_last", "Sub", ["x", "y"], {"broadcast": 1}, {"y": arr(8, 8)}, X4, 1),
    ("mul_axis0", "Mul", ["x", "y"], {"broadcast": 1, "axis": 0}, {"y": arr(1, 4)}, X4, 1),
    ("div_axis2", "Div", ["x", "y"], {"broadcast": 1, "axis": 2}, {"y": np.abs(arr(8)) + 1}, X4, 1),
    ("softmax_2d", "Softmax", ["x"], {}, {}, (3, 7), 1),
    ("softmax_flatten", "Softmax", ["x"], {"axis": 1}, {}, X4, 1),
    ("softmax_axis2", "Softmax", ["x"], {"axis": 2}, {}, X4, 1),
    ("relu", "Relu", ["x"], {}, {}, X4, 1),
    ("sigmoid", "Sigmoid", ["x"], {}, {}, X4, 1),
    ("tanh", "Tanh", ["x"], {}, {}, X4, 1),
    ("leaky_relu", "LeakyRelu", ["x"], {"alpha": 0.2}, {}, X4, 1),
    ("elu", "Elu", ["x"], {"alpha": 0.5}, {}, X4, 1),
    ("softplus", "Softplus", ["x"], {}, {}, X4, 1),
    ("hard_sigmoid", "HardSigmoid", ["x"], {}, {}, X4, 1),
    ("swish", "Swish", ["x"], {}, {}, X4, 1),
    ("abs", "Abs", ["x"], {}, {}, X4, 1),
    ("clip", "Clip", ["x"], {"min": -0.5, "max": 0.25}, {}, X4, 1),
    ("clip_max_only", "Clip", ["x"], {"max": 0.1}, {}, X4, 1),
    ("scale", "Scale", ["x"], {"scale": 2.5}, {}, X4, 1),
    ("dropout_test", "Dropout", ["x"], {"is_test": 1, "ratio": 0.3}, {}, X4, 1),
    ("copy", "Copy", ["x"], {}, {}, X4, 1),
    ("sum3", "Sum", ["x", "y", "z"], {}, {"y": arr(*X4), "z": arr(*X4)}, X4, 1),
    ("mean2", "Mean", ["x", "y"], {}, {"y": arr(*X4)}, X4, 1),
    ("max2", "Max", ["x", "y"], {}, {"y": arr(*X4)}, X4, 1),
    ("concat3", "Concat", ["x", "y", "z"], {"axis": 1}, {"y": arr(1, 2, 8, 8), "z": arr(1, 3, 8, 8)}, X4, 1),
    ("concat_order", "Concat", ["x", "y"], {"order": "NCHW"}, {"y": arr(1, 2, 8, 8)}, X4, 1),
    ("reshape", "Reshape", ["x"], {"shape": [0, -1, 4]}, {}, X4, 1),
    ("flatten_axis2", "Flatten", ["x"], {"axis": 2}, {}, X4, 1),
    ("flatten_to_vec", "FlattenToVec", ["x"], {}, {}, X4, 1),
    ("transpose", "Transpose", ["x"], {"axes": [0, 2, 3, 1]}, {}, X4, 1),
    ("transpose_reverse", "Transpose", ["x"], {}, {}, X4, 1),
    ("squeeze", "Squeeze", ["x"], {"dims": [0]}, {}, X4, 1),
    ("expand_dims", "ExpandDims", ["x"], {"dims": [4, 0]}, {}, X4, 1),
    ("resize_nearest", "ResizeNearest", ["x"], {"width_scale": 2.0, "height_scale": 2.0}, {}, X4, 1),
    ("channel_shuffle", "ChannelShuffle", ["x"], {"group": 2}, {}, X4, 1),
    ("conv_transpose", "ConvTranspose", ["x", "w", "b"], {"kernel": 3, "stride": 2, "pad": 1}, {"w": arr(4, 3, 3, 3), "b": arr(3)}, X4, 1),
    ("exp", "Exp", ["x"], {}, {}, X4, 1),
    ("log_pos", "Log", ["x"], {}, {}, X4, 1),
    ("sqrt_pos", "Sqrt", ["x"], {}, {}, X4, 1),
    ("reciprocal_pos", "Reciprocal", ["x"], {}, {}, X4, 1),
    ("negative", "Negative", ["x"], {}, {}, X4, 1),
    ("floor", "Floor", ["x"], {}, {}, X4, 1),
    ("ceil", "Ceil", ["x"], {}, {}, X4, 1),
    ("erf", "Erf", ["x"], {}, {}, X4, 1),
    ("sqr", "Sqr", ["x"], {}, {}, X4, 1),
    ("pow_pos", "Pow", ["x"], {"exponent": 1.5}, {}, X4, 1),
    ("prelu", "PRelu", ["x", "sl"], {}, {"sl": arr(4)}, X4, 1),
    ("mat_mul", "MatMul", ["x", "y"], {}, {"y": arr(12, 5)}, (3, 12), 1),
    ("batch_mat_mul", "BatchMatMul", ["x", "y"], {}, {"y": arr(2, 8, 5)}, (2, 3, 8), 1),
    ("batch_mat_mul_trans", "BatchMatMul", ["x", "y"], {"trans_a": 1, "trans_b": 1}, {"y": arr(2, 5, 3)}, (2, 3, 8), 1),
    ("cast_double", "Cast", ["x"], {"to": 13}, {}, X4, 1),
    ("reduce_mean", "ReduceMean", ["x"], {"axes": [2, 3], "keepdims": 0}, {}, X4, 1),
    ("sub_axis1", "Sub", ["x", "y"], {"broadcast": 1, "axis": 1}, {"y": arr(4, 8)}, X4, 1),
    ("mul_numpy", "Mul", ["x", "y"], {}, {"y": arr(4, 1, 1)}, X4, 1),
    ("div_numpy", "Div", ["x", "y"], {}, {"y": np.abs(arr(1, 8)) + 1}, X4, 1),
    ("reshape_old_shape", "Reshape", ["x"], {"shape": [1, -1]}, {}, X4, 2),
    ("reshape_input", "Reshape", ["x", "ns"], {}, {"ns": np.array([4, 64], dtype=np.int64)}, X4, 1),
    ("slice", "Slice", ["x"], {"starts": [0, 1, 2, 0], "ends": [1, 3, 8, 4]}, {}, X4, 1),
    ("gather_axis0", "Gather", ["x", "gi"], {}, {"gi": np.array([2, 0, 1], dtype=np.int64)}, (3, 5, 2), 1),
    ("gather_axis2_2d", "Gather", ["x", "gi"], {"axis": 2}, {"gi": np.array([[7, 0], [3, 3]], dtype=np.int64)}, X4, 1),
    ("roi_align", "RoIAlign", ["x", "r"], {"pooled_h": 2, "pooled_w": 3, "spatial_scale": 0.5, "sampling_ratio": 2},
     {"r": np.array([[0, 1, 1, 9, 11], [0, 0, 0, 15, 15], [0, 2.5, 3, 6, 7]], dtype=np.float32)}, X4, 1),
    # constants in the predict net itself: GivenTensor*Fill ops before the op that reads them
    ("given_tensor_fill", "Add", ["x", "c"], {}, {}, X4, 1),
    ("given_tensor_int_fill", "Cast", ["ci"], {"to": 1}, {}, X4, 1),
    ("given_tensor_int64_fill", "Reshape", ["x", "cl"], {}, {}, X4, 1),
]

# Fills placed in the predict net before the case's op (blob -> (type, array)).
PREDICT_FILLS = {
    "given_tensor_fill": {"c": ("GivenTensorFill", arr(8))},
    "given_tensor_int_fill": {"ci": ("GivenTensorIntFill", np.array([[1, -2], [3, 4]], dtype=np.int32))},
    "given_tensor_int64_fill": {"cl": ("GivenTensorInt64Fill", np.array([8, 32], dtype=np.int64))},
}

REFUSED = [  # (name, op, inputs, args, extra, shape, text the refusal must hold)
    ("conv_nhwc", "Conv", ["x", "w", "b"], {"kernel": 3, "order": "NHWC"}, W, (1, 8, 8, 4), "order NHWC"),
    ("spatial_bn_training", "SpatialBN", ["x", "s", "bb", "m", "v"], {"is_test": 0}, CH, X4, "training mode"),
    ("dropout_training", "Dropout", ["x"], {"is_test": 0}, {}, X4, "training mode"),
    ("pool_legacy_padded", "MaxPool", ["x"], {"kernel": 3, "stride": 2, "pad": 1, "legacy_pad": 3}, {}, X4, "CAFFE_LEGACY_POOLING"),
    ("gather_match_outer", "Gather", ["x", "gi"], {"axis": 1, "match_outer": 1}, {"gi": np.array([[0, 1]], dtype=np.int64)}, X4, "match_outer"),
    ("slice_negative", "Slice", ["x"], {"starts": [0, 0, 0, 0], "ends": [-1, -1, -1, -2]}, {}, X4, "negative starts or ends"),
]


def make(name, op_type, inputs, args, extra, work, outputs=1):
    pb2 = c2.caffe2_pb2()
    net, init = pb2.NetDef(), pb2.NetDef()
    net.name = name
    for blob, (ftype, value) in PREDICT_FILLS.get(name, {}).items():
        f = net.op.add()
        f.type = ftype
        f.output.append(blob)
        va = f.arg.add()
        va.name = "values"
        (va.floats if value.dtype == np.float32 else va.ints).extend(value.ravel().tolist())
        sa = f.arg.add()
        sa.name = "shape"
        sa.ints.extend(value.shape)
    op = net.op.add()
    op.type = op_type
    op.input.extend(inputs)
    op.output.extend(["out"] + [f"out{k}" for k in range(1, outputs)])
    for k, v in args.items():
        a = op.arg.add()
        a.name = k
        if isinstance(v, str):
            a.s = v.encode()
        elif isinstance(v, float):
            a.f = v
        elif isinstance(v, int):
            a.i = v
        elif all(isinstance(e, int) for e in v):
            a.ints.extend(v)
        else:
            a.floats.extend(v)
    net.external_input.extend(["x"] + [i for i in inputs if i != "x" and i not in PREDICT_FILLS.get(name, {})])
    net.external_output.extend(op.output)
    for blob, value in extra.items():
        f = init.op.add()
        f.type = "GivenTensorInt64Fill" if value.dtype == np.int64 else "GivenTensorFill"
        f.output.append(blob)
        va = f.arg.add()
        va.name = "values"
        (va.ints if value.dtype == np.int64 else va.floats).extend(value.ravel().tolist())
        sa = f.arg.add()
        sa.name = "shape"
        sa.ints.extend(value.shape)
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "predict_net.pb"), "wb").write(net.SerializeToString())
    open(os.path.join(d, "init_net.pb"), "wb").write(init.SerializeToString())
    return net, d


def main():
    amanda, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    failures, jobs, refs = [], [], []
    reached = set()
    for name, op_type, inputs, args, extra, shape, outputs in CASES:
        net, d = make(name, op_type, inputs, args, extra, work, outputs)
        x = arr(*shape)
        if name.endswith("_pos"):
            x = np.abs(x) + 0.1
        ev = c2eval.Evaluator()
        for blob, value in extra.items():
            ev.ws[blob] = torch.from_numpy(value)
        try:
            want = ev.run(net, {"x": x})[0]
            r = c2.to_onnx(amanda, os.path.join(d, "predict_net.pb"), os.path.join(d, "m.onnx"), input_shapes=[("x", shape)])
            reached |= set(json.loads(r.stdout).get("by_rule", {}))
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name}: {e}")
            continue
        jobs.append((os.path.join(d, "m.onnx"), {"x": x}, os.path.join(d, "ort")))
        refs.append((name, want))
    outs = c2.run_ort(jobs, work, raise_errors=False) if jobs else []
    worst = 0.0
    for (name, want), got in zip(refs, outs):
        if isinstance(got, Exception):
            failures.append(f"{name}: onnxruntime: {got}")
            continue
        if got[0].shape != want.shape:
            failures.append(f"{name}: shape {got[0].shape} != {want.shape}")
            continue
        if np.abs(want).max() == 0:
            failures.append(f"{name}: the evaluator's output is all zeros")
        err = float(np.abs(got[0] - want).max() / max(1.0, float(np.abs(want).max())))
        worst = max(worst, err)
        if err > 1e-5:
            failures.append(f"{name}: differs by {err}")
    for name, op_type, inputs, args, extra, shape, reason in REFUSED:
        _, d = make(name, op_type, inputs, args, extra, work)
        try:
            c2.to_onnx(amanda, os.path.join(d, "predict_net.pb"), os.path.join(d, "m.onnx"), input_shapes=[("x", shape)])
            failures.append(f"{name}: converted, but it should be refused ({reason})")
        except RuntimeError as e:
            if reason not in str(e) or op_type not in str(e):
                failures.append(f"{name}: refused without naming {op_type} and '{reason}': {e}")
    # Which rules of the hand table the cases reach (amanda convert --report json).
    table = open(os.path.join(c2.ROOT, "tables", "caffe2", "caffe2_1.13_onnx_13.yaml")).read()
    mapping = [m.group(1) for m in re.finditer(r"rule_name: (\w+)", table)]
    refusing = set(re.findall(r"rule_name: (\w+)\n(?:[^\n]*\n){0,3}?\s+unsupported:", table))
    unreached = [r for r in mapping if r not in reached and r not in refusing]
    print(f"rules reached: {len(reached & set(mapping))} of {len(mapping) - len(refusing)} mapping rules")
    if unreached:
        failures.append(f"mapping rules no case reaches (add a case): {', '.join(unreached)}")
    print(f"{len(refs)} cases converted and matched the evaluator (worst {worst:.2g} relative); {len(REFUSED)} refusals checked")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
