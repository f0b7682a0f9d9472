#!/usr/bin/python3
"""Lists the ops torch.onnx.export knows, from torch's own symbolic registry (not by hand).

    /usr/bin/python3 scripts/torch_onnx_ops.py              # one aten op per line: NAME OPSETS
    /usr/bin/python3 scripts/torch_onnx_ops.py --json       # {"torch": ..., "aten": {NAME: [opsets]}, "prim": {...}}

Importing torch.onnx imports its symbolic_opset9 ... symbolic_opset17 modules, which register
each symbolic function in torch.onnx._internal.registration.registry with the opset it starts at.
An op is listed when some opset 9..17 has a symbolic for it (the range `amanda convert` targets);
its opsets are those where registry.get_function_group(op).get(opset) finds one. Debian's
python3-torch 1.13 gives 345 aten ops (and 19 prim ops).
"""
import argparse
import json
import sys

OPSETS = range(9, 18)


def symbolic_ops():
    import torch
    import torch.onnx  # noqa: F401  (registers the symbolic functions)
    from torch.onnx._internal import registration

    reg = registration.registry
    out = {}
    for name in reg.all_functions():
        group = reg.get_function_group(name)
        opsets = [v for v in OPSETS if group is not None and group.get(v) is not None]
        if opsets:
            out[name] = opsets
    return torch.__version__, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="JSON with aten and prim ops and their opsets")
    a = ap.parse_args()
    version, ops = symbolic_ops()
    aten = {k[len("aten::"):]: v for k, v in sorted(ops.items()) if k.startswith("aten::")}
    prim = {k[len("prim::"):]: v for k, v in sorted(ops.items()) if k.startswith("prim::")}
    if a.json:
        json.dump({"torch": version, "opsets": [OPSETS.start, OPSETS.stop - 1], "aten": aten, "prim": prim}, sys.stdout, indent=1)
        print()
    else:
        for k, v in aten.items():
            print(k, ",".join(map(str, v)))


if __name__ == "__main__":
    main()
