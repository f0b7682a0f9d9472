#!/usr/bin/python3
"""Writes tables/onnx/opset_A_B.yaml: the ONNX opset tables between neighbouring opsets 7..17, both
ways, for every default-domain op whose schema changed between A and B, except the ops that the
hand-written tables in tables/onnx/hand/ cover.

    /usr/bin/python3 scripts/gen_onnx_opset_tables.py      (Debian's python3-onnx 1.12, python3-yaml)

A rule here is one of two kinds:
  - identity (`type: Op`): the op's attributes and ports (names, defaults, arity) are the same in both
    opsets, so only type constraints changed (e.g. bfloat16 added in 13), or ONNX's own version
    converter registers a CompatibleAdapter / ExtendSupportedTypes / TypeRestriction for the step
    (/usr/include/onnx/version_converter/convert.h);
  - unsupported, with the reason: the op does not exist in the older opset, or its meaning changed
    and no rule has been written yet. The conversion report lists these by name.
Going down, an identity whose older schema accepts fewer element types (uint8 Add before 14, int64
Constant before 9, bfloat16 before 13, ...) comes after an `unsupported` rule `OP_types` that takes
the op when an input (or output) of that type parameter has an element type the older opset lacks;
unknown element types (no value info) pass, as before.
The output is committed; rerun this after editing tables/onnx/hand/.
"""
import os
import re
import sys

import onnx.defs
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOW, HIGH = 7, 17

history = {}
for s in onnx.defs.get_all_schemas_with_history():
    if s.domain in ("", "ai.onnx"):
        history.setdefault(s.name, []).append(s)


def schema_at(op, v):
    best = None
    for s in history.get(op, []):
        if s.since_version <= v and (best is None or s.since_version > best.since_version):
            best = s
    if best is not None and best.deprecated:
        return None
    return best


def signature(s):
    attrs = sorted((n, a.required, a.default_value.SerializeToString()) for n, a in s.attributes.items())
    ins = [(i.name, int(i.option)) for i in s.inputs]
    outs = [(o.name, int(o.option)) for o in s.outputs]
    return attrs, ins, outs, s.min_input, s.max_input, s.min_output, s.max_output


compat = set()
header = "/usr/include/onnx/version_converter/convert.h"
text = open(header).read() if os.path.exists(header) else ""
for kind in ("CompatibleAdapter", "ExtendSupportedTypes", "TypeRestriction"):
    for m in re.finditer(kind + r'>\(\s*"(\w+)",\s*OpSetID\((\d+)\),\s*OpSetID\((\d+)\)', text):
        compat.add((m.group(1), int(m.group(2)), int(m.group(3))))

hand = {}
hand_dir = os.path.join(ROOT, "tables", "onnx", "hand")
for f in sorted(os.listdir(hand_dir)):
    doc = yaml.safe_load(open(os.path.join(hand_dir, f)))["table"]
    a, b = int(doc["src"].split("/")[-1]), int(doc["dst"].split("/")[-1])
    ops = hand.setdefault((a, b), set())
    for r in doc["rules"]:
        src = r.get("src", r)
        t = src.get("type") if isinstance(src, dict) else None
        if isinstance(t, dict):
            t = t.get("src")
        if t:
            ops.add(t)


ONNX_TYPES = {"float": "float32", "double": "float64", "float16": "float16", "bfloat16": "bfloat16", "bool": "bool",
              "string": "string", "complex64": "complex64", "complex128": "complex128"}
for bits in (8, 16, 32, 64):
    ONNX_TYPES[f"int{bits}"] = f"int{bits}"
    ONNX_TYPES[f"uint{bits}"] = f"uint{bits}"


def tensor_types(tc):
    out = set()
    for t in tc.allowed_type_strs:
        m = re.fullmatch(r"tensor\((\w+)\)", t)
        if m and m.group(1) in ONNX_TYPES:
            out.add(ONNX_TYPES[m.group(1)])
    return out


def type_rules(op, s_old, s_new, a):
    """Unsupported rules for element types s_new accepts and s_old does not (one per type parameter)."""
    new_tc = {tc.type_param_str: tensor_types(tc) for tc in s_new.type_constraints}
    rules = []
    for tc in s_old.type_constraints:
        old = tensor_types(tc)
        lost = sorted(new_tc.get(tc.type_param_str, set()) - old)
        if not old or not lost:
            continue
        # The first port that has the type parameter (the first of a variadic one): inputs, then outputs.
        port = None
        for kind, params in (("input_ports", s_new.inputs), ("output_ports", s_new.outputs)):
            for f in params:
                if f.typeStr == tc.type_param_str:
                    variadic = f.option == onnx.defs.OpSchema.FormalParameterOption.Variadic
                    entry = {"name": f.name + (".0" if variadic else ""), "ref": "p"}
                    if f.option == onnx.defs.OpSchema.FormalParameterOption.Optional:
                        entry["optional"] = True
                    port = (kind, entry)
                    break
            if port:
                break
        if not port:
            continue
        kind, entry = port
        name = entry["name"]
        allowed = ", ".join(f"'{t}'" for t in sorted(old))
        rules.append({"rule_name": f"{op}_types" + ("" if not rules else f"_{tc.type_param_str}"),
                      "src": {"type": op, kind: [entry]},
                      "when": f"dtype(p) != null and not (dtype(p) in [{allowed}])",
                      "priority": 1,
                      "unsupported": f"{op}'s {name} has an element type that opset {a - 1}'s {op} does not take "
                                     f"({tc.type_param_str} is one of {', '.join(sorted(old))} there)"})
    return rules


def write(a, b):
    changed_at = max(a, b)
    rules = []
    for op in sorted(history):
        s_new = schema_at(op, changed_at)
        if s_new is None or s_new.since_version != changed_at:
            continue
        if op in hand.get((a, b), set()):
            continue
        s_old = schema_at(op, changed_at - 1)
        up = b > a
        if s_old is None:
            if up:
                continue  # a new op: an opset-A graph cannot have it
            rules.append({"rule_name": op, "type": op,
                          "unsupported": f"{op} does not exist before opset {changed_at}"})
            continue
        same = signature(s_old) == signature(s_new)
        if same or (op, a, b) in compat:
            why = "attributes and ports unchanged" if same else "ONNX's version converter registers it as compatible"
            if not up:
                rules += type_rules(op, s_old, s_new, a)
            rules.append({"rule_name": op, "type": op, "doc": why})
        else:
            rules.append({"rule_name": op, "type": op,
                          "unsupported": f"{op} changed in opset {changed_at}; no rule for opset {a} -> {b} yet"})
    path = os.path.join(ROOT, "tables", "onnx", f"opset_{a}_{b}.yaml")
    with open(path, "w") as f:
        f.write(f"# Generated by scripts/gen_onnx_opset_tables.py: ops whose schema changed in opset {changed_at}.\n")
        f.write(f"# Hand-written rules for this step: tables/onnx/hand/. Ops whose schema did not change need no rule.\n")
        yaml.safe_dump({"table": {"src": f"amanda/onnx/{a}", "dst": f"amanda/onnx/{b}", "rules": rules}}, f,
                       sort_keys=False, width=120)
    return len(rules)


for v in range(LOW, HIGH):
    n_up, n_down = write(v, v + 1), write(v + 1, v)
    print(f"opset {v} <-> {v + 1}: {n_up} up rules, {n_down} down rules")
