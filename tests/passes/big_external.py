#!/usr/bin/python3
"""A 3 GB model with external data through `amanda optimize`: peak memory under a limit.

    /usr/bin/python3 tests/passes/big_external.py AMANDA WORK_DIR [--gb=3] [--limit-mb=300] [--force]

Makes (in WORK_DIR, removed afterwards) an MLP whose weights are written to model.onnx.data by
streaming (the script never holds more than one 64 MB chunk): LAYERS x (Identity -> MatMul [D, D] ->
Add bias -> Relu), D = 8192, so each weight is 256 MB; Identity goes and MatMul + Add become Gemm,
every weight untouched. Runs `amanda optimize model.onnx -o out.onnx --external-data` under
/usr/bin/time -v and fails when the peak resident set is over the limit, when the op count is not
what the passes must leave (LAYERS x (Gemm, Relu)), or when the output's weights are not the input's
(bytes of each tensor compared by a hash, streaming). Behind AMANDA_TEST_BIG_MODELS=1 in ctest
(it writes 6 GB).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

D = 8192
CHUNK = 16 << 20  # floats per chunk (64 MB)


def write_tensor(f, rng, n):
    """n random float32 values appended to f; returns (offset, length, sha256)."""
    off = f.tell()
    h = hashlib.sha256()
    left = n
    while left:
        k = min(left, CHUNK)
        b = (rng.standard_normal(k, dtype=np.float32) * (1.0 / np.sqrt(D))).astype(np.float32).tobytes()
        h.update(b)
        f.write(b)
        left -= k
    return off, n * 4, h.hexdigest()


def ext(t, location, off, length):
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(off)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v


def make(work, gb):
    layers = max(1, int(gb * (1 << 30) // (D * D * 4)))
    rng = np.random.default_rng(27)
    nodes, inits, hashes = [], [], {}
    x = "x"
    with open(os.path.join(work, "model.onnx.data"), "wb") as f:
        for i in range(layers):
            w, b = f"w{i}", f"b{i}"
            for name, dims in ((w, [D, D]), (b, [D])):
                off, length, h = write_tensor(f, rng, int(np.prod(dims)))
                tp = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
                ext(tp, "model.onnx.data", off, length)
                inits.append(tp)
                hashes[name] = h
            nodes += [helper.make_node("Identity", [x], [f"id{i}"]),
                      helper.make_node("MatMul", [f"id{i}", w], [f"mm{i}"]),
                      helper.make_node("Add", [f"mm{i}", b], [f"add{i}"]),
                      helper.make_node("Relu", [f"add{i}"], [f"h{i}"])]
            x = f"h{i}"
    g = helper.make_graph(nodes, "big_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, D])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, D])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(os.path.join(work, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    return layers, hashes


def tensor_hash(work, model_path, t):
    info = {e.key: e.value for e in t.external_data}
    if t.data_location != TensorProto.EXTERNAL:
        return hashlib.sha256(t.raw_data).hexdigest()
    h = hashlib.sha256()
    with open(os.path.join(os.path.dirname(model_path), info["location"]), "rb") as f:
        f.seek(int(info.get("offset", 0)))
        left = int(info["length"])
        while left:
            b = f.read(min(left, 64 << 20))
            h.update(b)
            left -= len(b)
    return h.hexdigest()


def main():
    if os.environ.get("AMANDA_TEST_BIG_MODELS") != "1" and "--force" not in sys.argv:
        print("skipped: set AMANDA_TEST_BIG_MODELS=1 (writes 6 GB)")
        return 77
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    amanda, work = args[0], args[1]
    opt = {a.split("=")[0]: a.split("=")[1] for a in sys.argv[1:] if a.startswith("--") and "=" in a}
    gb, limit = float(opt.get("--gb", 3)), float(opt.get("--limit-mb", 300))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        layers, hashes = make(work, gb)
        size = os.path.getsize(os.path.join(work, "model.onnx.data"))
        out = os.path.join(work, "out.onnx")
        r = subprocess.run(["/usr/bin/time", "-v", amanda, "optimize", os.path.join(work, "model.onnx"), "-o", out,
                            "--external-data", "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"amanda optimize failed: {r.stderr[-2000:]}")
        rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
        wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", r.stderr).group(1)
        print(f"{layers} layers, {size / (1 << 30):.2f} GiB of weights: amanda optimize peak RSS {rss_kb / 1024:.1f} MB, "
              f"wall {wall} (limit {limit:.0f} MB)")
        m = onnx.load(out, load_external_data=False)
        ops = sorted(n.op_type for n in m.graph.node)
        fails = []
        if ops != sorted(["Gemm", "Relu"] * layers):
            fails.append(f"ops after: {ops}")
        for t in m.graph.initializer:
            if t.name in hashes and tensor_hash(work, out, t) != hashes[t.name]:
                fails.append(f"{t.name}: bytes differ from the input's")
        if len([t for t in m.graph.initializer if t.name in hashes]) != len(hashes):
            fails.append("initializers missing in the output")
        if rss_kb / 1024 > limit:
            fails.append(f"peak RSS {rss_kb / 1024:.1f} MB over {limit:.0f} MB")
        for f in fails:
            print("FAIL", f)
        return 1 if fails else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
