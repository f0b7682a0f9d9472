#!/usr/bin/python3
"""Makes examples/small_cnn_opset13.onnx, the README's example for `amanda convert`: a small
classifier at ONNX opset 13 (Conv, Relu, GlobalAveragePool, Squeeze with its axes as an input,
Gemm, Softmax) with seeded random weights. Going to opset 11, Squeeze's axes become an attribute
and Softmax's meaning is checked (tables/onnx/hand/down_13_12.yaml).

    /usr/bin/python3 scripts/make_example_onnx.py examples/small_cnn_opset13.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
inits = [
    numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.2, "conv.weight"),
    numpy_helper.from_array(rng.standard_normal(8).astype(np.float32) * 0.1, "conv.bias"),
    numpy_helper.from_array(np.array([2, 3], dtype=np.int64), "squeeze.axes"),
    numpy_helper.from_array(rng.standard_normal((10, 8)).astype(np.float32) * 0.3, "fc.weight"),
    numpy_helper.from_array(rng.standard_normal(10).astype(np.float32) * 0.1, "fc.bias"),
]
nodes = [
    helper.make_node("Conv", ["image", "conv.weight", "conv.bias"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
    helper.make_node("GlobalAveragePool", ["relu"], ["pool"], name="pool"),
    helper.make_node("Squeeze", ["pool", "squeeze.axes"], ["features"], name="squeeze"),
    helper.make_node("Gemm", ["features", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1),
]
graph = helper.make_graph(nodes, "small_cnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="amanda example")
model.ir_version = 7
onnx.checker.check_model(model, full_check=True)
onnx.save(model, sys.argv[1])
