"""Every function, method and property the type stubs document (amanda/__init__.pyi) exists in the
module, and the suite called each one (conftest.py records the calls). Runs last (file order)."""
import amanda
from conftest import CALLED, stub_names


def documented():
    out = set()
    for name in stub_names():
        if "." not in name:
            out.add(name)
            continue
        cls, attr = name.split(".")
        if issubclass(getattr(amanda, cls), BaseException):
            continue  # exception attributes are data set on instances, not functions
        out.add(name)
    return out


def test_stubs_match_the_module():
    for name in documented():
        obj = amanda
        for part in name.split("."):
            assert hasattr(obj, part), f"{name} is in the stubs but not in the module"
            obj = getattr(obj, part)
    import ast
    import os
    tree = ast.parse(open(os.path.join(os.path.dirname(amanda.__file__), "__init__.pyi")).read())
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert set(amanda.__all__) <= stubbed, set(amanda.__all__) - stubbed


def test_every_documented_function_was_called():
    missing = sorted(documented() - CALLED)
    assert not missing, f"documented but never exercised by tests/python: {missing}"
