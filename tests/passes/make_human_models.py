#!/usr/bin/python3
"""Amanda's own TF.js -> ONNX conversions of @vladmandic/human's graph models, for the optimize
comparison (tests/passes/peer.py, docs/optimize.md).

    /usr/bin/python3 tests/passes/make_human_models.py AMANDA HUMAN_MODELS_DIR OUT_DIR [name ...]

Each MODEL.json is converted by `amanda convert` (no optimization) to OUT_DIR/human_MODEL.onnx, and
a deterministic reference input of the model's signature is written beside it (human_MODEL.input.bin,
its name, type and shape in human_MODEL.json, as make_models.py writes them): images in [0, 1) for
float inputs, 0..255 for integer ones, a symbolic dimension set to 1 (batch) or 256 (image sides).
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx

# Every graph model of human@3.3.6 that Amanda converts (models.json is an index, not a model).
ALL = ["antispoof", "blazeface", "centernet", "emotion", "facemesh", "faceres", "handlandmark-lite", "handtrack", "iris",
       "liveness", "movenet-lightning"]
# Tolerances above peer.py's 1e-5, each with its reason (the comparison prints them).
TOLERANCE = {
    # The squeeze-excite blocks' ReduceMean sums over H and W: once the Transposes are gone the sum
    # runs over the contiguous NCHW axes, in another order than over NHWC; the box decoding then
    # amplifies float32 rounding. onnxruntime's own basic-level graph differs by 7.6e-5 for the
    # same reason (and Amanda's with the Conv fusions left out differs by exactly that).
    "centernet": (1e-4, "reduction order after the layout change; onnxruntime's own graph: 7.6e-5"),
}
TYPES = {onnx.TensorProto.FLOAT: ("float32", np.float32), onnx.TensorProto.UINT8: ("uint8", np.uint8),
         onnx.TensorProto.INT32: ("int32", np.int32)}


def main():
    amanda, human, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(27)
    for n in sys.argv[4:] or ALL:
        dst = os.path.join(out, "human_" + n + ".onnx")
        subprocess.run([amanda, "convert", "-q", os.path.join(human, n + ".json"), "-o", dst], check=True)
        m = onnx.load(dst, load_external_data=False)
        inits = {i.name for i in m.graph.initializer}
        ins = [i for i in m.graph.input if i.name not in inits]
        if len(ins) != 1:
            sys.exit(f"{n}: {len(ins)} inputs; the comparison feeds one")
        i = ins[0]
        tname, np_t = TYPES[i.type.tensor_type.elem_type]
        shape = []
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            shape.append(d.dim_value if d.HasField("dim_value") else (1 if k == 0 else 256))
        x = rng.random(shape) if np_t == np.float32 else rng.integers(0, 256, shape)
        x.astype(np_t).tofile(dst[:-5] + ".input.bin")
        with open(dst[:-5] + ".json", "w") as f:
            spec = {"input": i.name, "shape": shape, "type": tname}
            if n in TOLERANCE:
                spec["tolerance"], spec["tolerance_reason"] = TOLERANCE[n]
            json.dump(spec, f)
        print(dst, os.path.getsize(dst))


if __name__ == "__main__":
    main()
