#!/usr/bin/env python3
"""ONNX -> Caffe2 for the torchvision exports (scripts/make_torchvision_onnx.py: random weights,
opset 13): the NetDef Amanda writes (predict_net.pb + init_net.pb) validates against
amanda/caffe2/1.13; the tests' torch evaluator of Caffe2 ops (c2eval.py), reading the NetDef with
Google's protobuf, computes what onnxruntime computes on the original within 1e-5 (absolute, for
logits of magnitude ~1..6); and Caffe2 -> ONNX of that NetDef gives a model onnxruntime runs to the
same outputs. Refused models must say which ops and why.

  onnx_to_caffe2_test.py AMANDA MODELS_DIR WORKDIR [MODEL...]"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import c2common as c2  # noqa: E402
import c2eval  # noqa: E402

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121", "convnext_tiny", "vit_b_16", "swin_t"]
CI_MODELS = ["resnet18", "squeezenet1_0"]  # AMANDA_CAFFE2_TORCHVISION_ALL=1: all eight
TOL = 1e-5


def main():
    amanda, models_dir, work = sys.argv[1:4]
    models = sys.argv[4:] or (MODELS if os.environ.get("AMANDA_CAFFE2_TORCHVISION_ALL") == "1" else CI_MODELS)
    os.makedirs(work, exist_ok=True)
    failures = []
    for m in models:
        src = os.path.join(models_dir, m + ".onnx")
        d = os.path.join(work, m)
        os.makedirs(d, exist_ok=True)
        predict = os.path.join(d, "predict_net.pb")
        try:
            # (an output named predict_net.pb is a Caffe2 net: init_net.pb is written beside it)
            c2.run([amanda, "convert", src, "-o", predict])
            c2.run([amanda, "validate", predict])
            net, init = c2.read_net(predict), c2.read_net(os.path.join(d, "init_net.pb"))
            x = np.random.default_rng(3).standard_normal((1, 3, 224, 224)).astype(np.float32)
            want = c2.run_ort([(src, {"input": x}, os.path.join(d, "orig"))], d)[0][0]
            assert np.abs(want).max() > 1e-4, "onnxruntime's output is all zeros"
            ev = c2eval.Evaluator()
            for blob, arr in c2.fills(init).items():
                ev.ws[blob] = __import__("torch").from_numpy(arr)
            got = ev.run(net, {net.external_input[0]: x})[0]
            diff = float(np.abs(got - want).max())
            back = os.path.join(d, "back.onnx")
            c2.to_onnx(amanda, predict, back, input_shapes=[(net.external_input[0], [1, 3, 224, 224])])
            again = c2.run_ort([(back, {net.external_input[0]: x}, os.path.join(d, "back"))], d)[0][0]
            diff_back = float(np.abs(again - want).max())
        except Exception as e:  # noqa: BLE001
            failures.append(f"{m}: {e}")
            print(f"{m}: FAILED {str(e)[:2000]}")
            continue
        print(f"{m}: {len(net.op)} Caffe2 ops, {len(init.op)} fills; torch evaluator vs onnxruntime {diff:.2g}; "
              f"back to ONNX vs original {diff_back:.2g}")
        if diff > TOL or diff_back > TOL:
            failures.append(f"{m}: differs ({diff}, {diff_back})")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
