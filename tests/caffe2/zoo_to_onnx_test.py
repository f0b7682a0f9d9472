#!/usr/bin/env python3
"""SqueezeNet and the five model-zoo nets of ../shared/caffe2/models convert to ONNX models that
onnx.checker accepts (full check: strict shape inference), every op mapped, and compute in
onnxruntime what the tests' torch evaluator of the Caffe2 net computes (c2eval.py), within 1e-4
relative. Their init nets are not available: the evaluator makes random weights of the shapes the
ops imply (small channel counts), and the test writes them as an init net of GivenTensorFill ops
with Google's protobuf.

  zoo_to_onnx_test.py AMANDA WORKDIR [MODEL...]"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import c2common as c2  # noqa: E402
import c2eval  # noqa: E402

MODELS = ["squeezenet", "bvlc_alexnet", "vgg19", "inception_v1", "densenet121", "zfnet512"]


def input_of(d, net):
    vi = os.path.join(d, "value_info.json")
    if os.path.exists(vi):
        (name, (_, shape)), = json.load(open(vi)).items()
        return name, shape
    return net.external_input[0], [1, 3, 224, 224]  # squeezenet: the torch export's image input


def main():
    amanda, work = sys.argv[1:3]
    models = sys.argv[3:] or MODELS
    os.makedirs(work, exist_ok=True)
    import onnx
    pb2 = c2.caffe2_pb2()
    failures = []
    for m in models:
        d = os.path.join(c2.shared_dir(), "models", m)
        path = os.path.join(d, "predict_net.pb" if os.path.exists(os.path.join(d, "predict_net.pb")) else "predict_net.pbtxt")
        net = c2.read_net(path)
        name, shape = input_of(d, net)
        x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
        ev = c2eval.Evaluator(make_weights=True, seed=1, last_conv_channels=1000 if m == "squeezenet" else None)
        ref = ev.run(net, {name: x})
        init = pb2.NetDef()
        init.name = m + "_init"
        for blob, arr in ev.made.items():
            op = init.op.add()
            op.type = "GivenTensorFill"
            op.output.append(blob)
            v = op.arg.add()
            v.name = "values"
            v.floats.extend(arr.astype(np.float32).ravel().tolist())
            s = op.arg.add()
            s.name = "shape"
            s.ints.extend(arr.shape)
        init_path = os.path.join(work, m + "_init_net.pb")
        open(init_path, "wb").write(init.SerializeToString())
        out = os.path.join(work, m + ".onnx")
        try:
            c2.to_onnx(amanda, path, out, init=init_path, input_shapes=[(name, shape)])
            model = onnx.load(out)
            onnx.checker.check_model(model, full_check=True)
            got = c2.run_ort([(out, {name: x}, os.path.join(work, m))], work)[0]
        except Exception as e:  # noqa: BLE001
            failures.append(f"{m}: {e}")
            print(f"{m}: FAILED {e}")
            continue
        worst = 0.0
        for g, want in zip(got, ref):
            assert g.shape == want.shape, (m, g.shape, want.shape)
            assert np.abs(want).max() > 1e-6, f"{m}: the reference output is all zeros"
            worst = max(worst, float(np.abs(g - want).max() / max(np.abs(want).max(), 1e-6)))
        ops = len(net.op)
        print(f"{m}: {ops} ops -> {len(model.graph.node)} ONNX nodes, checker ok, max rel diff vs torch evaluator {worst:.2g}")
        if worst > 1e-4:
            failures.append(f"{m}: differs from the evaluator by {worst}")
    # Without an init net: the weights become graph inputs typed by their role, the dimensions only
    # a weight would tell (a Conv's output channels) symbolic; where the predict net does not say
    # a weight's rank (a broadcast operand, an FC with axis_w 3) the conversion is refused, naming it.
    for m in models:
        d = os.path.join(c2.shared_dir(), "models", m)
        path = os.path.join(d, "predict_net.pb" if os.path.exists(os.path.join(d, "predict_net.pb")) else "predict_net.pbtxt")
        net = c2.read_net(path)
        name, shape = input_of(d, net)
        out = os.path.join(work, m + ".noinit.onnx")
        try:
            c2.to_onnx(amanda, path, out, input_shapes=[(name, shape)])
        except RuntimeError as e:
            if "have no type" not in str(e):
                failures.append(f"{m} without init net: refused without naming the untyped inputs: {e}")
            else:
                print(f"{m} without init net: refused: {str(e).strip().splitlines()[-1][:160]}")
            continue
        model = onnx.load(out)
        onnx.checker.check_model(model, full_check=True)
        symbolic = sum(1 for i in model.graph.input for dd in i.type.tensor_type.shape.dim if dd.dim_param)
        print(f"{m} without init net: checker ok, {len(model.graph.input) - 1} weight inputs, {symbolic} symbolic dimensions")
        if symbolic == 0:
            failures.append(f"{m} without init net: no symbolic dimension")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
