"""A stand-in for the `onnxoptimizer` package that runs `amanda optimize` instead.

onnxoptimizer's own test suite (../shared/rewrite/reference/onnxoptimizer_test.py) imports this
module (tests/passes/onnxoptimizer_suite.py puts it first on sys.path): optimize() writes the model
to a temporary file, runs `amanda optimize --passes ...` on it and reads the result back. A pass
Amanda does not have makes the test skip, naming the pass. $AMANDA is the amanda binary.
"""
import os
import subprocess
import tempfile

import onnx

# onnxoptimizer's names that Amanda spells otherwise (the same behaviour), and its no-op pass.
ALIASES = {
    "nop": [],
    "eliminate_shape_gather": ["shape_folding"],
    "eliminate_slice_after_shape": ["shape_folding"],
    "eliminate_shape_op": ["shape_folding"],
}


def _amanda():
    return os.environ.get("AMANDA", "amanda")


def _passes():
    out = subprocess.run([_amanda(), "optimize", "--list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def get_available_passes():
    return sorted(set(_passes()) | set(ALIASES))


def get_fuse_and_elimination_passes():
    return [p for p in get_available_passes() if p.startswith("fuse_") or p.startswith("eliminate_")]


class NotImplementedPass(Exception):
    pass


def optimize(model, passes=None, fixed_point=False):
    import pytest

    known = set(_passes())
    names = []
    for p in passes or []:
        if p in ALIASES:
            names += ALIASES[p]
        elif p in known:
            names.append(p)
        else:
            pytest.skip(f"amanda has no pass '{p}'")
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.onnx"), os.path.join(d, "out.onnx")
        onnx.save(model, src)
        if not names:
            return onnx.load(src)
        args = [_amanda(), "optimize", src, "-o", dst, "-q", "--passes", ",".join(names)]
        if not fixed_point:
            args += ["--rounds", "1"]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"amanda optimize failed: {r.stderr}")
        return onnx.load(dst)
