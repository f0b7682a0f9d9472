#!/usr/bin/python3
"""DL4J's ONNX rule set as the specification: for every one of its 86 real (non-noop) mappings,
single-op ONNX models (opset 13; attributes unset and set) convert to nd4j through the imported table
(tables/nd4j/onnx_13_nd4j_1.0.yaml) with exactly the ordered arguments DL4J's rules give
(tests/nd4j/dl4j_oracle.py: values and types at every index, and the descriptor's name at the index
where DL4J names the argument as the descriptor does), and the inputs DL4J's ndarraymapping wires.
Where DL4J's rule would throw, Amanda must refuse (exit 1, nothing written).

Also checks that scripts/import_dl4j_rules.py still gives the shipped table.

Usage: onnx_rules_test.py ND4J_CONVERT SHARED_ND4J [-v]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)
import dl4j_oracle  # noqa: E402

FB_SCHEMA = os.path.join(ROOT, "src/frameworks/nd4j/samediff.fbs")

# Inputs per op where floats of shape [2, 3, 4] do not do: (name -> (dtype, shape)), and constants.
F = TensorProto.FLOAT
SPECIAL = {
    "And": {"A": (TensorProto.BOOL, [2, 3]), "B": (TensorProto.BOOL, [2, 3])},
    "Or": {"A": (TensorProto.BOOL, [2, 3]), "B": (TensorProto.BOOL, [2, 3])},
    "Xor": {"A": (TensorProto.BOOL, [2, 3]), "B": (TensorProto.BOOL, [2, 3])},
    "Not": {"X": (TensorProto.BOOL, [2, 3])},
    "Where": {"condition": (TensorProto.BOOL, [2, 3]), "X": (F, [2, 3]), "Y": (F, [2, 3])},
    "Gather": {"data": (F, [3, 4]), "indices": (TensorProto.INT64, [2])},
    "GatherND": {"data": (F, [2, 2]), "indices": (TensorProto.INT64, [1, 2])},
    "ScatterND": {"data": (F, [4]), "indices": (TensorProto.INT64, [2, 1]), "updates": (F, [2])},
    "ScatterElements": {"data": (F, [3, 3]), "indices": (TensorProto.INT64, [1, 3]), "updates": (F, [1, 3])},
    "Conv": {"X": (F, [1, 2, 8, 8]), "W": (F, [4, 2, 3, 3]), "B": (F, [4])},
    "MaxPool": {"X": (F, [1, 2, 8, 8])},
    "AveragePool": {"X": (F, [1, 2, 8, 8])},
    "LRN": {"X": (F, [1, 4, 5, 5])},
    "SpaceToDepth": {"input": (F, [1, 4, 4, 4])},
    "DepthToSpace": {"input": (F, [1, 8, 2, 2])},
    "Det": {"X": (F, [2, 3, 3])},
    "MatMul": {"A": (F, [2, 3]), "B": (F, [3, 4])},
    "Tile": {"input": (F, [2, 3]), "repeats": (TensorProto.INT64, [2])},
    "Pad": {"data": (F, [2, 3]), "pads": (TensorProto.INT64, [4])},
    "Mod": {"A": (TensorProto.INT64, [2, 3]), "B": (TensorProto.INT64, [2, 3])},
    "BitShift": {"X": (TensorProto.UINT8, [3]), "Y": (TensorProto.UINT8, [3])},
    "NonMaxSuppression": {"boxes": (F, [1, 3, 4]), "scores": (F, [1, 1, 3])},
    "LSTM": {"X": (F, [2, 1, 3]), "W": (F, [1, 8, 3]), "R": (F, [1, 8, 2])},
    "IsInf": {"X": (F, [2, 3])}, "IsNaN": {"X": (F, [2, 3])},
}
CONSTS = {  # inputs made constants (initializers): DL4J reads them as values
    "TopK": {"K": np.array([2], np.int64)},
    "ReduceSum": {"axes": np.array([0, 2], np.int64)},
    "Squeeze": {"axes": np.array([0], np.int64)},
    "Range": {"start": np.array(1.0, np.float32), "limit": np.array(7.0, np.float32), "delta": np.array(2.0, np.float32)},
    "NonMaxSuppression": {"max_output_boxes_per_class": np.array([2], np.int64)},
    "Squeeze_shape": None,
}
SHAPE_OVERRIDE = {"Squeeze": {"data": (F, [1, 3, 4])}}
# A value per attribute type for the "set" variant; strings by attribute name.
STRINGS = {"auto_pad": "SAME_UPPER", "mode": "reflect", "direction": "reverse"}


# Where DL4J's rule gives arguments libnd4j cannot read right, Amanda refuses (docs/nd4j.md).
DIVERGENT = {
    ("MaxPool -> maxpool2d", "default"): "without strides DL4J's defaults for sH/sW go to indices 6/7 (dH/dW's) and "
                                         "indices 2/3 stay empty; the imported rule requires strides",
}


def attr_value(name, a, rank):
    t = a.type
    A = onnx.AttributeProto
    if t == A.INT:
        return 0 if name in ("keepdims", "sorted") else 1
    if t == A.FLOAT:
        return 0.25
    if t == A.STRING:
        return STRINGS.get(name, "x")
    if t == A.INTS:
        n = 2 if name in ("kernel_shape", "strides", "dilations") else 4 if name == "pads" else 2
        base = {"kernel_shape": [2, 3], "strides": [2, 1], "dilations": [1, 2], "pads": [1, 0, 1, 0],
                "axes": [0, 2], "perm": [1, 0, 2]}.get(name, list(range(n)))
        return base
    if t == A.FLOATS:
        return [0.5, 1.5]
    if t == A.STRINGS:
        return ["Sigmoid", "Tanh", "Tanh"] if name == "activations" else ["x"]
    return None


def make_model(m, variant, tmp):
    op = m.inputFrameworkOpName
    schema = onnx.defs.get_schema(op, 13)
    read = set()
    for r in m.rule:
        if r.functionName not in ("ndarraymapping", "argdescriptorconstant", "ndarrayinputtonumericalattribute",
                                  "ndarraytointattributevalue"):
            read.update(dict(r.inputToOutput).values())
    attrs = {}
    if variant == "set":
        for name in sorted(read):
            a = schema.attributes.get(name)
            if a is not None:
                v = attr_value(name, a, 3)
                if v is not None:
                    attrs[name] = v
    if op in ("MaxPool", "AveragePool", "Conv") and "kernel_shape" not in attrs:
        attrs["kernel_shape"] = [2, 2]
    spec = dict(SPECIAL.get(op, {}))
    spec.update(SHAPE_OVERRIDE.get(op, {}))
    consts = CONSTS.get(op) or {}
    inputs, inits, names = [], [], []
    for p in schema.inputs:
        variadic = p.option == onnx.defs.OpSchema.FormalParameterOption.Variadic
        optional = p.option == onnx.defs.OpSchema.FormalParameterOption.Optional
        if p.name in consts:
            inits.append(numpy_helper.from_array(consts[p.name], p.name))
            names.append(p.name)
            continue
        if optional and p.name not in spec:
            names.append("")
            continue
        dt, shape = spec.get(p.name, (F, [2, 3, 4]))
        for k in range(2 if variadic else 1):
            n = p.name if not variadic else "%s_%d" % (p.name, k)
            inputs.append(helper.make_tensor_value_info(n, dt, shape))
            names.append(n)
    while names and names[-1] == "":
        names.pop()
    outs = [o.name for o in schema.outputs if o.option != onnx.defs.OpSchema.FormalParameterOption.Optional] or [schema.outputs[0].name]
    node = helper.make_node(op, names, outs, **attrs)
    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(tmp, "%s_%s.onnx" % (op, variant))
    onnx.save(model, path)
    return path, node, consts


def fb_json(fb, tmp):
    subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", tmp, FB_SCHEMA, "--", fb],
                   check=True, stderr=subprocess.DEVNULL)
    with open(os.path.join(tmp, os.path.basename(fb)[:-3] + ".json")) as f:
        return json.load(f)


SD_DTYPES = {"FLOAT": "float32"}


def main():
    conv, shared = sys.argv[1], sys.argv[2]
    verbose = "-v" in sys.argv
    pb = __import__("import_dl4j_rules_shim") if False else None
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import import_dl4j_rules as imp
    pb = imp.load_proto()
    from google.protobuf import text_format
    rules = pb.MappingDefinitionSet()
    with open(os.path.join(shared, "onnx-mapping-ruleset.pbtxt")) as f:
        text_format.Parse(f.read(), rules)
    desc = dl4j_oracle.Descriptors(os.path.join(ROOT, "namespaces/nd4j/1.0.nd4jops"))
    failures = []
    tmp = tempfile.mkdtemp()
    # The shipped table is what the importer makes.
    regen = os.path.join(tmp, "regen.yaml")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts/import_dl4j_rules.py"),
                    os.path.join(shared, "onnx-mapping-ruleset.pbtxt"), regen, os.path.join(tmp, "regen_reverse.yaml")],
                   check=True, stderr=subprocess.DEVNULL)
    if open(os.path.join(tmp, "regen_reverse.yaml")).read() != open(os.path.join(ROOT, "tables/nd4j/nd4j_1.0_onnx_13.yaml")).read():
        failures.append("tables/nd4j/nd4j_1.0_onnx_13.yaml differs from what scripts/import_dl4j_rules.py makes")
    if open(regen).read() != open(os.path.join(ROOT, "tables/nd4j/onnx_13_nd4j_1.0.yaml")).read():
        failures.append("tables/nd4j/onnx_13_nd4j_1.0.yaml differs from what scripts/import_dl4j_rules.py makes")
    regen_tf = os.path.join(tmp, "regen_tf.yaml")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts/import_dl4j_rules.py"),
                    os.path.join(shared, "tensorflow-mapping-ruleset.pbtxt"), regen_tf], check=True, stderr=subprocess.DEVNULL)
    for made, shipped in ((regen_tf, "tables/nd4j/tf_2.2_nd4j_1.0.yaml"), (imp.second_part(regen_tf), "tables/nd4j/tf_2.2_nd4j_1.0_n_z.yaml")):
        if open(made).read() != open(os.path.join(ROOT, shipped)).read():
            failures.append(shipped + " differs from what scripts/import_dl4j_rules.py makes")
        if os.path.getsize(os.path.join(ROOT, shipped)) > 1_000_000:
            failures.append(shipped + " is over 1 MB (no file over 1 MB is committed: split it further)")
    mappings = [m for m in rules.mappings if m.opName != "noop"]
    exact = set()
    results = []
    for m in mappings:
        key = "%s -> %s" % (m.inputFrameworkOpName, m.opName)
        ok_variants = 0
        for variant in ("default", "set"):
            path, node, consts = make_model(m, variant, tmp)
            tensor_args = []
            try:
                raw_args = dl4j_oracle.apply(m, node, consts, desc, pb)
                tensor_args = [a for a in raw_args if a[1] == "INPUT_TENSOR"]
                expected = dl4j_oracle.ordered_lists(raw_args)
                exp_err = None
            except dl4j_oracle.Refused as e:
                expected, exp_err = None, str(e)
            except dl4j_oracle.NotImported as e:
                results.append((key, variant, "FAIL", "not imported: " + str(e)))
                continue
            fb = path[:-5] + ".fb"
            r = subprocess.run([conv, path, fb], capture_output=True, text=True)
            if (key, variant) in DIVERGENT:
                if r.returncode != 0:
                    results.append((key, variant, "ok-divergent", DIVERGENT[(key, variant)]))
                else:
                    results.append((key, variant, "FAIL", "converted; expected the refusal: " + DIVERGENT[(key, variant)]))
                continue
            if exp_err is not None:
                if r.returncode == 0:
                    results.append((key, variant, "FAIL", "DL4J refuses (%s) but Amanda converted" % exp_err))
                else:
                    results.append((key, variant, "ok-refused", exp_err))
                    ok_variants += 1
                continue
            if r.returncode != 0:
                results.append((key, variant, "FAIL", "Amanda refused: " + (r.stderr.strip().splitlines() or ["?"])[-1][:300]))
                continue
            d = fb_json(fb, tmp)
            n = d["nodes"][0]
            got = {"int": n.get("extraInteger", []), "float": n.get("extraParams", []), "bool": n.get("extraBools", []),
                   "string": n.get("extraStrings", [])}
            problems = []
            if n.get("opName") != m.opName:
                problems.append("op %s, not %s" % (n.get("opName"), m.opName))
            names_by_index = {}
            for t, i, nm in desc.ops[m.opName]["args"]:
                names_by_index[(dl4j_oracle.KIND[{"int64": "INT64", "int32": "INT32", "double": "DOUBLE", "float": "FLOAT",
                                                  "bool": "BOOL", "dtype": "DATA_TYPE", "string": "STRING"}[t]], i)] = nm
            for lst in ("int", "float", "bool", "string"):
                want = [v for _, v in expected.get(lst, [])]
                have = got[lst]
                if lst == "float":
                    same = len(want) == len(have) and all(abs(float(a) - float(b)) <= 1e-6 * max(1, abs(float(a))) for a, b in zip(want, have))
                else:
                    same = [bool(x) if lst == "bool" else x for x in want] == have
                if not same:
                    problems.append("%s arguments %s, DL4J's rules give %s" % (lst, have, want))
                for i, (name, _) in enumerate(expected.get(lst, [])):
                    dn = names_by_index.get((lst, i))
                    # DL4J names some arguments after the ONNX attribute they come from (stringequals,
                    # listattributevaluelookuptoindex's defaults); the index decides what libnd4j reads.
                    onnx_attrs = onnx.defs.get_schema(m.inputFrameworkOpName, 13).attributes
                    dl4j_names = {a.name for r3 in m.rule for t3 in r3.transformerArgs for a in t3.transformerArgs}
                    if dn is not None and name != dn and name.rstrip("0123456789") != dn and name not in onnx_attrs \
                            and name not in dl4j_names:
                        problems.append("%s argument %d: DL4J names it %s, the descriptor %s" % (lst, i, name, dn))
            # Inputs: DL4J's ndarraymapping order (the descriptor's), by the ONNX tensors' variable names.
            var_by_id = {(v["id"].get("first", 0), v["id"].get("second", 0)): v.get("name") for v in d["variables"]}
            ins = [var_by_id.get((p.get("first", 0), p.get("second", 0))) for p in n.get("inputPaired", [])]
            io = {}
            for r2 in m.rule:
                if r2.functionName == "ndarraymapping":
                    io.update(dict(r2.inputToOutput))
            want_ins = []
            for k in desc.ops[m.opName]["in"]:
                if k in io:
                    onnx_name = io[k]
                    schema = onnx.defs.get_schema(m.inputFrameworkOpName, 13)
                    idx = [p.name for p in schema.inputs].index(onnx_name)
                    if schema.inputs[idx].option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
                        want_ins += [x for x in node.input[idx:] if x]
                    elif idx < len(node.input) and node.input[idx]:
                        want_ins.append(node.input[idx])
            # listnumbertondarray: the list is a CONSTANT variable at the input's index
            var_by_id_full = {(v["id"].get("first", 0), v["id"].get("second", 0)): v for v in d["variables"]}
            for name, _, idx, values in tensor_args:
                pairs = n.get("inputPaired", [])
                v = var_by_id_full.get((pairs[idx].get("first", 0), pairs[idx].get("second", 0))) if idx < len(pairs) else None
                got_vals = None
                if v is not None and v.get("variabletype") == "CONSTANT" and v.get("ndarray"):
                    buf = bytes(b & 255 for b in v["ndarray"].get("buffer", []))
                    got_vals = list(np.frombuffer(buf, np.int64)) if v["ndarray"].get("dtype") == "INT64" else list(np.frombuffer(buf, np.float32))
                if got_vals is None or [float(x) for x in got_vals] != [float(x) for x in values]:
                    problems.append("input %d (%s): %s, DL4J makes a tensor of %s" % (idx, name, got_vals, values))
                if idx < len(ins):
                    ins[idx] = None
            ins = [x for x in ins if x is not None]
            if ins != want_ins:
                problems.append("inputs %s, DL4J wires %s" % (ins, want_ins))
            if problems:
                results.append((key, variant, "FAIL", "; ".join(problems)))
            else:
                results.append((key, variant, "ok", ""))
                ok_variants += 1
        if ok_variants == 2:
            exact.add(key)
    for key, variant, status, why in results:
        if status == "FAIL" or verbose:
            print("%-45s %-8s %-10s %s" % (key, variant, status, why))
    fails = [r for r in results if r[2] == "FAIL"]
    divergent = sum(r[2] == "ok-divergent" for r in results)
    print("DL4J ONNX rule set: %d mappings, %d exact in every variant; %d conversions compared, %d as DL4J "
          "(%d of them refused where DL4J's rule throws), %d refused where DL4J's rule gives arguments libnd4j "
          "cannot read, %d differ" % (len(mappings), len(exact), len(results), len(results) - len(fails) - divergent,
                                      sum(r[2] == "ok-refused" for r in results), divergent, len(fails)))
    for key, variant, status, why in results:
        if status == "ok-divergent":
            print("refused where DL4J's rule is wrong: %s (%s): %s" % (key, variant, why))
    for f in failures:
        print("FAIL:", f)
    return 1 if fails or failures else 0


def node_attr_names(node):
    return [(a.name, a.name) for a in node.attribute]


if __name__ == "__main__":
    sys.exit(main())
