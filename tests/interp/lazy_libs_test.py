#!/usr/bin/python3
"""The libraries the interpreter opens on first use are not loaded by commands that do not use them.

oneDNN (libdnnl, and libOpenCL behind it) and OpenBLAS are opened with dlopen the first time a
convolution or a product runs (src/interp/kernels/dnnl_lazy.cpp, matmul.cpp): mapping and
relocating libdnnl cost 1.1-1.4 ms of CPU in every process, a tenth of `amanda optimize` on a small
model (docs/performance.md). The dynamic loader's own trace (LD_DEBUG=files) says which libraries a
process initialised:

- `amanda --version` and `amanda optimize` of a graph without a convolution or a product: neither
  libdnnl nor libOpenCL nor libopenblas;
- `amanda optimize` of a graph whose constant MatMul is folded, and `amanda run` of a Conv: libdnnl
  is loaded (the products and convolutions still go through oneDNN, not silently to the fallback),
  and nothing says it could not be.

That the numbers are right with oneDNN loaded this way is tests/interp/fusion_test.py's check
(every Conv pattern against onnxruntime-node, with and without oneDNN).

  lazy_libs_test.py AMANDA
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

LAZY = ("libdnnl.so", "libOpenCL.so", "libopenblas.so")


def loaded(amanda, args):
    """(libraries initialised by the process, its stderr without the loader's lines)."""
    env = dict(os.environ, LD_DEBUG="files")
    r = subprocess.run([amanda] + args, capture_output=True, text=True, env=env)
    libs, rest = set(), []
    for line in r.stderr.splitlines():
        if "calling init:" in line:
            libs.add(os.path.basename(line.split("calling init:", 1)[1].strip()))
        elif not line.lstrip()[:1].isdigit():
            rest.append(line)
    if r.returncode != 0:
        sys.exit(f"FAIL: amanda {' '.join(args)} exited {r.returncode}: {chr(10).join(rest)}")
    return libs, "\n".join(rest)


def lazy_in(libs):
    return sorted(l for l in libs if l.startswith(LAZY))


def save(path, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    amanda = sys.argv[1]
    rng = np.random.default_rng(0)
    fails = []
    with tempfile.TemporaryDirectory() as d:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        plain = os.path.join(d, "plain.onnx")
        save(plain, [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Identity", ["r"], ["i"]),
                     helper.make_node("Add", ["i", "c"], ["y"])], [x], [y],
             [numpy_helper.from_array(np.zeros((1, 3, 8, 8), np.float32), "c")])
        # A MatMul of two constants: constant folding computes it with the interpreter's sgemm.
        folds = os.path.join(d, "folds.onnx")
        save(folds, [helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Add", ["x2", "m"], ["y"])],
             [helper.make_tensor_value_info("x2", TensorProto.FLOAT, [4, 4])], [y],
             [numpy_helper.from_array(rng.standard_normal((4, 5)).astype(np.float32), "a"),
              numpy_helper.from_array(rng.standard_normal((5, 4)).astype(np.float32), "b")])
        conv = os.path.join(d, "conv.onnx")
        save(conv, [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])], [x], [y],
             [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")])

        libs, _ = loaded(amanda, ["--version"])
        if lazy_in(libs):
            fails.append(f"amanda --version loads {lazy_in(libs)}")
        libs, _ = loaded(amanda, ["optimize", plain, "-o", os.path.join(d, "plain.out.onnx")])
        if lazy_in(libs):
            fails.append(f"amanda optimize of Relu/Identity/Add loads {lazy_in(libs)}")
        if "libc.so.6" not in libs:  # the trace itself must be there for the checks above to mean anything
            fails.append(f"LD_DEBUG=files gave no 'calling init' lines: {sorted(libs)}")

        libs, err = loaded(amanda, ["optimize", folds, "-o", os.path.join(d, "folds.out.onnx")])
        folded = onnx.load(os.path.join(d, "folds.out.onnx"))
        if [n.op_type for n in folded.graph.node] != ["Add"]:
            fails.append(f"the constant MatMul was not folded: {[n.op_type for n in folded.graph.node]}")
        if "libdnnl.so.2" not in libs or "oneDNN" in err:
            fails.append(f"folding a MatMul did not load libdnnl: {sorted(libs)} {err}")

        out = os.path.join(d, "run")
        libs, err = loaded(amanda, ["run", conv, "-o", out, "-q"])
        if "libdnnl.so.2" not in libs or "oneDNN" in err:
            fails.append(f"amanda run of a Conv did not load libdnnl: {sorted(libs)} {err}")
        yv = np.load(os.path.join(out, "y.npy"))
        if yv.shape != (1, 4, 8, 8) or not np.any(yv):
            fails.append(f"amanda run of a Conv gave {yv.shape}, all zero: {not np.any(yv)}")
    for f in fails:
        print("FAIL:", f)
    print(f"lazy libraries: {len(fails)} failure(s)")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
