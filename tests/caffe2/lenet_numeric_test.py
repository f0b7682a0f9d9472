#!/usr/bin/env python3
"""LeNet (../shared/caffe2/models/lenet: predict_net.pb + init_net.pb with trained weights)
converted to ONNX by Amanda computes, in onnxruntime, what torch's LeNet (the network of its
pytorch_genmodel.py) computes with the same weights, on 5 random inputs, within 1e-5. The weights
are read from the init net by Google's protobuf (not by Amanda), and placed into torch's layers by
the predict net's own op order (conv1, bias, pool, relu, conv2, bias, pool, relu, view, fc1, fc2).

  lenet_numeric_test.py AMANDA WORKDIR"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import c2common as c2  # noqa: E402


class LeNet(nn.Module):  # pytorch_genmodel.py's
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 5, 1)
        self.conv2 = nn.Conv2d(20, 50, 5, 1)
        self.fc1 = nn.Linear(4 * 4 * 50, 500)
        self.fc2 = nn.Linear(500, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2, 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2, 2))
        x = x.view(-1, 4 * 4 * 50)
        return self.fc2(self.fc1(x))


def main():
    amanda, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    d = os.path.join(c2.shared_dir(), "models", "lenet")
    predict, init = c2.read_net(os.path.join(d, "predict_net.pb")), c2.read_net(os.path.join(d, "init_net.pb"))
    w = c2.fills(init)
    convs = [op for op in predict.op if op.type == "Conv"]
    adds = [op for op in predict.op if op.type == "Add"]
    fcs = [op for op in predict.op if op.type == "FC"]
    assert len(convs) == 2 and len(adds) == 2 and len(fcs) == 2, "not the LeNet of pytorch_genmodel.py"
    m = LeNet().eval()
    with torch.no_grad():
        for layer, conv, add in ((m.conv1, convs[0], adds[0]), (m.conv2, convs[1], adds[1])):
            layer.weight.copy_(torch.from_numpy(w[conv.input[1]]))
            layer.bias.copy_(torch.from_numpy(w[add.input[1]]))
        for layer, fc in ((m.fc1, fcs[0]), (m.fc2, fcs[1])):
            layer.weight.copy_(torch.from_numpy(w[fc.input[1]]))
            layer.bias.copy_(torch.from_numpy(w[fc.input[2]]))
    onnx_path = os.path.join(work, "lenet.onnx")
    # (init_net.pb beside predict_net.pb is read with it)
    c2.to_onnx(amanda, os.path.join(d, "predict_net.pb"), onnx_path, input_shapes=[(predict.external_input[0], [1, 1, 28, 28])])
    import onnx
    onnx.checker.check_model(onnx.load(onnx_path), full_check=True)
    rng = np.random.default_rng(30)
    xs = [rng.standard_normal((1, 1, 28, 28)).astype(np.float32) for _ in range(5)]
    outs = c2.run_ort([(onnx_path, {predict.external_input[0]: x}, os.path.join(work, f"lenet{k}")) for k, x in enumerate(xs)], work)
    worst = 0.0
    for x, o in zip(xs, outs):
        with torch.no_grad():
            ref = m(torch.from_numpy(x)).numpy()
        assert np.abs(ref).max() > 1e-3, "torch's output is all zeros: the check would prove nothing"
        assert o[0].shape == ref.shape, (o[0].shape, ref.shape)
        worst = max(worst, float(np.abs(o[0] - ref).max()))
    print(f"lenet: 5 inputs, max |onnxruntime - torch| = {worst:.3g}")
    if worst > 1e-5:
        sys.exit(f"lenet differs from torch by {worst}")


if __name__ == "__main__":
    main()
