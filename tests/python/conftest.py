"""Fixtures of the Python module's tests (tests/CMakeLists.txt runs them with ctest: python.pytest).

Environment (ctest sets it): PYTHONPATH=<build>/python (the module), AMANDA_BINARY (the tool, for
comparisons), AMANDA_MODELS_DIR (the torchvision ONNX exports the torchvision_models fixture made).
Run by hand: PYTHONPATH=build/python AMANDA_MODELS_DIR=build/models /usr/bin/python3 -m pytest tests/python
AMANDA_PYTHON_TESTS_ALL=1 converts and runs every torchvision model, not only the CI sample.

Every public name of the module (its type stubs, amanda/__init__.pyi) is wrapped here so that
test_zz_coverage.py can check that the suite called each one.
"""
import ast
import functools
import os
import subprocess

import pytest

import amanda

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121",
          "convnext_tiny", "vit_b_16", "swin_t"]
# What CI converts and runs in onnxruntime; AMANDA_PYTHON_TESTS_ALL=1: every model.
SAMPLE = ["resnet18", "mobilenet_v2", "squeezenet1_0"]

CALLED = set()


def stub_names():
    """{"load", "Graph.walk", ...}: what the type stubs document."""
    path = os.path.join(os.path.dirname(amanda.__file__), "__init__.pyi")
    tree = ast.parse(open(path).read())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and (not item.name.startswith("_") or item.name in DUNDERS):
                    names.add(f"{node.name}.{item.name}")
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(f"{node.name}.{item.target.id}")
    return names


DUNDERS = {"__init__", "__getitem__", "__setitem__", "__delitem__", "__contains__", "__iter__", "__len__"}


def _record(name, f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        CALLED.add(name)
        return f(*args, **kwargs)
    return wrapper


def _instrument():
    for name in stub_names():
        if "." not in name:
            setattr(amanda, name, _record(name, getattr(amanda, name)))
            continue
        cls_name, attr = name.split(".")
        cls = getattr(amanda, cls_name)
        raw = cls.__dict__.get(attr)
        if isinstance(raw, property):
            setattr(cls, attr, property(_record(name, raw.fget) if raw.fget else None,
                                        _record(name, raw.fset) if raw.fset else None, None, raw.__doc__))
        elif raw is not None:
            setattr(cls, attr, _record(name, raw))


_instrument()


@pytest.fixture(scope="session")
def models_dir():
    d = os.environ.get("AMANDA_MODELS_DIR")
    if not d or not os.path.exists(os.path.join(d, "resnet18.onnx")):
        pytest.skip("AMANDA_MODELS_DIR holds no torchvision models (ctest's torchvision_models fixture makes them)")
    return d


@pytest.fixture(scope="session")
def amanda_binary():
    b = os.environ.get("AMANDA_BINARY")
    if not b or not os.path.exists(b):
        pytest.skip("AMANDA_BINARY is not set")
    return b


def ort_compare(reference, candidates):
    """Runs the reference and candidates in onnxruntime (tests/js/ort_compare.js) on one seeded input."""
    import json
    r = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_compare.js"), reference] + list(candidates),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)
