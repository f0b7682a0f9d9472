"""Amanda: one graph abstraction for every framework's neural-network graphs, namespaces that
know each framework version's vocabulary, and conversion between them by mapping tables.

    import amanda
    g = amanda.load("model.onnx")
    for op in g.ops:
        print(op.name, op.type)
    g11 = amanda.convert(g, "onnx/11")
    amanda.save(g11, "model_opset11.onnx")

See docs/python.md for a tour.
"""
import os as _os

# An installed package carries the shipped namespaces, tables, rewrite tables and PyTorch plugin in data/; a build
# tree's module finds the source tree's folders by itself. Variables already set win.
_data = _os.path.join(_os.path.dirname(__file__), "data")
for _var, _path in (("AMANDA_NAMESPACES_DIR", "namespaces"), ("AMANDA_TABLES_DIR", "tables"),
                    ("AMANDA_REWRITES_DIR", "rewrites"), ("AMANDA_TORCH_PLUGIN", "libamanda_torch.so")):
    if _os.path.exists(_os.path.join(_data, _path)):
        _os.environ.setdefault(_var, _os.path.join(_data, _path))

# Python loads extensions with RTLD_NOW, resolving every function the module and its libraries
# (libonnx, protobuf, Abseil, ...) could call; lazy binding resolves only those a script uses, as
# for the amanda executable, which takes a few milliseconds off `import amanda`.
import sys as _sys  # noqa: E402

_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_os.RTLD_LAZY | (_flags & ~_os.RTLD_NOW))
try:
    from . import _amanda  # noqa: E402,F401
finally:
    _sys.setdlopenflags(_flags)

from ._amanda import (  # noqa: E402
    ConversionError,
    Diagnostic,
    Edge,
    Error,
    Graph,
    GraphError,
    Namespace,
    Op,
    OpCount,
    OpSchema,
    ParseError,
    Port,
    Registry,
    Report,
    Tensor,
    ValidationError,
    ValidationResult,
    convert,
    default_registry,
    formats,
    load,
    load_plugin,
    loads,
    optimize,
    optimize_passes,
    save,
    torch_available,
)
from ._amanda import Attributes, PortList  # noqa: E402,F401  (views, for isinstance)

__version__ = "0.1.0"

__all__ = [
    "ConversionError", "Diagnostic", "Edge", "Error", "Graph", "GraphError", "Namespace", "Op", "OpCount",
    "OpSchema", "ParseError", "Port", "Registry", "Report", "Tensor", "ValidationError", "ValidationResult",
    "convert", "default_registry", "formats", "load", "load_plugin", "loads", "save", "torch_available",
]
