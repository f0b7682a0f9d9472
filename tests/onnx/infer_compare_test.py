#!/usr/bin/python3
"""`amanda infer` against onnx.shape_inference.infer_shapes(model, strict_mode=True).

    infer_compare_test.py AMANDA [MODELS_DIR]

For every libonnx-testdata model (/usr/share/libonnx-testdata/data/**/model.onnx) and every
torchvision export in MODELS_DIR (tests/onnx/torchvision_models.py makes them), runs
`amanda infer M.onnx -o OUT.onnx` and compares, value by value (graph inputs, outputs and
value_info of the main graph and of every subgraph, keyed by the subgraph's path and the value's
name), the element type and shape with what libonnx's Python inference gives where that one gives
a type. A dimension libonnx names `unk__N` (a fresh symbol for an unknown size) equals an unknown
one. Prints the agreement count and every disagreement with its model and value.

That comparison runs `amanda infer --no-data-prop` (onnx's default). A second one runs `amanda
infer` as it is by default, with data propagation (the values of shape tensors), against
infer_shapes(model, strict_mode=True, data_prop=True) on the sampled test models and on three
torchvision models exported with a dynamic batch axis (`N`; without weights, made once into
MODELS_DIR/dynamic). There ours may be more precise than libonnx's (data_prop.h: ops libonnx 1.12
has no propagation function for); such values are counted and listed, never a disagreement where
libonnx knows a dimension. The output of each dynamic model must be what torch's own run gives at
two batch sizes ([N, 1000]).

CI runs a deterministic sample (every 8th test model, sorted by path); AMANDA_INFER_ALL=1 runs all
1,072. Fails when a sampled value disagrees, unless the model is listed in KNOWN below with the
reason (docs/onnx.md, "Type inference").

Run with /usr/bin/python3 (Debian's python3-onnx).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

import onnx
import onnx.shape_inference

TESTDATA = "/usr/share/libonnx-testdata/data"
UNK = re.compile(r"^unk__\d+$")

# Models where we knowingly differ from libonnx's Python inference, and why.
KNOWN = {}


def describe(t):
    """A comparable description of a TypeProto, or None when it says nothing."""
    which = t.WhichOneof("value")
    if which is None:
        return None
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(t, which)
        if not tt.HasField("shape"):
            dims = None
        else:
            dims = []
            for d in tt.shape.dim:
                if d.HasField("dim_value"):
                    dims.append(d.dim_value)
                elif d.HasField("dim_param") and d.dim_param and not UNK.match(d.dim_param):
                    dims.append(d.dim_param)
                else:
                    dims.append("?")
            dims = tuple(dims)
        return (which, tt.elem_type, dims)
    if which == "sequence_type":
        return ("seq", describe(t.sequence_type.elem_type))
    if which == "optional_type":
        return ("optional", describe(t.optional_type.elem_type))
    if which == "map_type":
        return ("map", t.map_type.key_type, describe(t.map_type.value_type))
    return (which,)


def collect(graph, path, out):
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        d = describe(vi.type) if vi.HasField("type") else None
        if d is not None:
            out[(path, vi.name)] = d
    for i, n in enumerate(graph.node):
        for a in n.attribute:
            sub = f"{path}/{n.name or n.op_type + '#' + str(i)}.{a.name}"
            if a.type == onnx.AttributeProto.GRAPH:
                collect(a.g, sub, out)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for k, g in enumerate(a.graphs):
                    collect(g, f"{sub}[{k}]", out)
    return out


def theirs(path, data_prop=False):
    m = onnx.load(path)
    try:
        r = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=data_prop)
    except Exception as e:  # libonnx gives no answer for this model
        return None, str(e).strip().splitlines()[-1][:200] if str(e).strip() else type(e).__name__
    return collect(r.graph, "", {}), None


def ours(amanda, path, tmp, data_prop=False):
    out = os.path.join(tmp, "out.onnx")
    args = [amanda, "infer", path, "-o", out] + ([] if data_prop else ["--no-data-prop"])
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()[-300:]
    return collect(onnx.load(out).graph, "", {}), None


def refines(have, want):
    """`have` says all `want` says, and maybe more: a dimension libonnx leaves unknown ('?'), or a
    shape it does not give, may be known to us; every dimension it knows must be equal."""
    if have is None or want is None or have[0] != want[0] or have == want:
        return have == want
    if want[0] not in ("tensor_type", "sparse_tensor_type") or have[1] != want[1]:
        return False
    if want[2] is None:
        return True
    if have[2] is None or len(have[2]) != len(want[2]):
        return False
    return all(w == "?" or h == w for h, w in zip(have[2], want[2]))


def compare(ref, got, allow_refinement):
    """(agreeing values, values where ours is more precise, disagreements)"""
    agree, finer, bad = 0, [], []
    for key, want in ref.items():
        have = got.get(key)
        if have == want:
            agree += 1
        elif allow_refinement and refines(have, want):
            finer.append(f"{key[0] or '/'}:{key[1]}: ours {have}, libonnx {want}")
        else:
            bad.append(f"{key[0] or '/'}:{key[1]}: ours {have}, libonnx {want}")
    return agree, finer, bad


# A symbolic batch survives: resnet18, mobilenet_v2 and vit_b_16 exported with a dynamic batch
# axis (torch.onnx.export dynamic_axes, so reshapes take their shape from Shape/Gather/Concat),
# the declared output shape and value_info dropped; `amanda infer` must give the output what
# torch's own run gives ([N, 1000]: the dimension that follows the batch is N).
SYMBOLIC = ["resnet18", "mobilenet_v2", "vit_b_16"]


def export_dynamic(name, folder):
    """MODELS_DIR/dynamic/NAME.onnx (no weights: they are graph inputs) and the output shapes torch
    gives at batch 2 and 3, made once per torch version and version of this function."""
    import hashlib
    import inspect
    import json
    import torch
    import torchvision
    key = hashlib.sha256((inspect.getsource(export_dynamic) + torch.__version__ + torchvision.__version__).encode()).hexdigest()[:12]
    path = os.path.join(folder, f"{name}.{key}.onnx")
    meta = path + ".json"
    if os.path.exists(path) and os.path.exists(meta):
        with open(meta) as f:
            return path, json.load(f)
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    with torch.no_grad():
        shapes = [list(model(torch.randn(b, 3, 224, 224)).shape) for b in (2, 3)]
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), path + ".part", opset_version=13, input_names=["input"],
                      output_names=["logits"], dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                      export_params=False)
    m = onnx.load(path + ".part")
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    del m.graph.value_info[:]
    onnx.save(m, path + ".part")
    os.replace(path + ".part", path)
    with open(meta, "w") as f:
        json.dump(shapes, f)
    return path, shapes


def symbolic_batch(amanda, models_dir, tmp):
    """(failures, values compared, agreeing, ours more precise)"""
    bad, finer_all = [], []
    values = agree_all = 0
    for name in SYMBOLIC:
        label = f"{name} (symbolic batch)"
        try:
            path, shapes = export_dynamic(name, os.path.join(models_dir, "dynamic"))
        except Exception as e:  # torch's exporter failed: report, do not crash the comparison
            bad.append((label, f"export failed: {e}"))
            continue
        # What torch gives: a dimension that changes with the batch is the batch, N.
        want = ["N" if a != b else a for a, b in zip(*shapes)]
        got, err = ours(amanda, path, tmp, data_prop=True)
        if got is None:
            bad.append((label, err))
            continue
        out = got.get(("", "logits"))
        dims = list(out[2]) if out and out[2] is not None else None
        print(f"symbolic batch {name}: output {dims}, torch {want} (batch 2 and 3: {shapes[0]}, {shapes[1]})")
        if dims != want:
            bad.append((label, f"output {dims}, torch gives {want}"))
        ref, why = theirs(path, data_prop=True)
        if ref is None:
            bad.append((label, f"libonnx's inference fails: {why}"))
            continue
        agree, finer, diff = compare(ref, got, allow_refinement=True)
        values += len(ref)
        agree_all += agree
        finer_all += [f"{name}: {f}" for f in finer]
        print(f"symbolic batch {name}: {agree} of {len(ref)} values as libonnx's data_prop=True gives, "
              f"{len(finer)} more precise, {len(diff)} disagree")
        bad += [(label, d) for d in diff]
    return bad, values, agree_all, finer_all


def main():
    amanda = sys.argv[1]
    models_dir = sys.argv[2] if len(sys.argv) > 2 else None
    models = sorted(glob.glob(os.path.join(TESTDATA, "**", "model.onnx"), recursive=True))
    total_models = len(models)
    if not os.environ.get("AMANDA_INFER_ALL"):
        models = models[::8]
    if models_dir:
        models += sorted(glob.glob(os.path.join(models_dir, "*.onnx")))
    agree_values = values = agree_models = skipped = 0
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in models:
            name = os.path.relpath(path, TESTDATA) if path.startswith(TESTDATA) else os.path.basename(path)
            ref, why = theirs(path)
            if ref is None:
                skipped += 1
                print(f"skip {name}: libonnx's strict inference fails: {why}")
                continue
            got, err = ours(amanda, path, tmp)
            if got is None:
                failures.append((name, f"amanda infer failed: {err}"))
                continue
            bad = []
            for key, want in ref.items():
                values += 1
                have = got.get(key)
                if have == want:
                    agree_values += 1
                else:
                    bad.append(f"{key[0] or '/'}:{key[1]}: ours {have}, libonnx {want}")
            if bad:
                for b in bad:
                    failures.append((name, b))
            else:
                agree_models += 1
    compared = len(models) - skipped
    print(f"models: {agree_models} of {compared} agree on every value ({skipped} skipped: libonnx's strict "
          f"inference fails; {len(models)} models: {len(models) - (len(glob.glob(os.path.join(models_dir, '*.onnx'))) if models_dir else 0)} of {total_models} test models"
          f"{'' if os.environ.get('AMANDA_INFER_ALL') else ', AMANDA_INFER_ALL=1 for all'})")
    print(f"values: {agree_values} of {values} agree")
    # With data propagation (amanda infer's default): the sampled test models.
    dp_values = dp_agree = dp_skipped = 0
    dp_finer = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in [m for m in models if m.startswith(TESTDATA)]:
            name = os.path.relpath(path, TESTDATA)
            ref, why = theirs(path, data_prop=True)
            if ref is None:
                dp_skipped += 1
                continue
            got, err = ours(amanda, path, tmp, data_prop=True)
            if got is None:
                failures.append((name + " (data_prop)", f"amanda infer failed: {err}"))
                continue
            agree, finer, bad = compare(ref, got, allow_refinement=True)
            dp_values += len(ref)
            dp_agree += agree
            dp_finer += [f"{name}: {f}" for f in finer]
            failures += [(name + " (data_prop)", b) for b in bad]
        if models_dir:
            bad, v, a, finer = symbolic_batch(amanda, models_dir, tmp)
            failures += bad
            dp_values += v
            dp_agree += a
            dp_finer += finer
    print(f"data_prop=True: {dp_agree} of {dp_values} values agree, {len(dp_finer)} more precise than libonnx's "
          f"({dp_skipped} test models skipped: libonnx's inference fails)")
    if dp_finer:
        print("  (ours more precise, src/frameworks/onnx/data_prop.cpp: libonnx 1.12 has no propagation function "
              "for Div and Identity, nor for Add/Sub/Mul before opset 14, and its Reshape does not read propagated "
              "values; a dimension libonnx leaves unknown is known to us)")
    for f in dp_finer[:40]:
        print(f"MORE PRECISE {f}")
    if len(dp_finer) > 40:
        print(f"MORE PRECISE ... and {len(dp_finer) - 40} more")
    unexplained = [(n, b) for n, b in failures if n not in KNOWN]
    for n, b in failures:
        print(f"DIFF {n}: {b}" + (f"  [known: {KNOWN[n]}]" if n in KNOWN else ""))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
