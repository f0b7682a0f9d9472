#!/usr/bin/python3
"""Imports DL4J's ONNX -> nd4j mapping rule set (MapperNamespace.MappingDefinitionSet, text format)
as an Amanda mapping table: one rule per MapperDeclaration, each DL4J rule function written with the
expression language's functions (docs/nd4j.md, "DL4J's rule functions as expressions").

Usage: /usr/bin/python3 scripts/import_dl4j_rules.py ../shared/nd4j/onnx-mapping-ruleset.pbtxt [OUT [REVERSE_OUT]]
       /usr/bin/python3 scripts/import_dl4j_rules.py ../shared/nd4j/tensorflow-mapping-ruleset.pbtxt [OUT]
       (the TensorFlow table: OUT for source ops A-M and OUT's `_n_z.yaml` sibling for N-Z, one table)

Also writes the reverse table (nd4j -> ONNX) from the declarations whose rule functions invert.

ONNX attribute types and defaults come from Debian's python3-onnx (opset 13 schemas: the table's
source namespace); the nd4j side from namespaces/nd4j/1.0.nd4jops. tests/nd4j/onnx_rules_test.py
regenerates the table and fails when the shipped one differs, and checks every rule against an
independent interpreter of DL4J's rules (tests/nd4j/dl4j_oracle.py).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
OPSET = 13
MAX_VARIADIC = 64  # rules written for 1..64 inputs of a variadic ONNX input (densenet121 concatenates 49)
LIST = {"INT64": "int", "INT32": "int", "DOUBLE": "float", "FLOAT": "float", "BOOL": "bool",
        "DATA_TYPE": "dtype", "STRING": "string"}


def load_proto():
    tmp = tempfile.mkdtemp()
    subprocess.run(["protoc", "--python_out=" + tmp, "-I", os.path.join(ROOT, "src/frameworks/nd4j/proto"),
                    "nd4j_ir.proto"], check=True)
    sys.path.insert(0, tmp)
    import nd4j_ir_pb2
    return nd4j_ir_pb2


def load_descriptors():
    ops, cur = {}, None
    with open(os.path.join(ROOT, "namespaces/nd4j/1.0.nd4jops")) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "op":
                cur = ops[p[1]] = {"in": [], "out": [], "args": []}
            elif p[0] in ("in", "out") and cur is not None:
                cur[p[0]].append(p[2])
            elif p[0] == "arg" and cur is not None:
                cur["args"].append({"type": p[1], "index": int(p[2]), "name": p[3], "attr": p[4]})
    return ops


KIND_LIST = {"int64": "int", "int32": "int", "double": "float", "float": "float", "bool": "bool",
             "dtype": "dtype", "string": "string"}
ARGTYPE_KIND = {"INT64": ("int64", "int32"), "INT32": ("int32", "int64"), "DOUBLE": ("double", "float"),
                "FLOAT": ("float", "double"), "BOOL": ("bool",), "DATA_TYPE": ("dtype",), "STRING": ("string",)}


def lookup_index(desc, name, argtype):
    """DL4J's lookupIndexForArgDescriptor: the index of the argument of that name and type, or -1."""
    for a in desc["args"]:
        if a["name"] == name and a["type"] in ARGTYPE_KIND[argtype][:1]:
            return a["index"]
    for a in desc["args"]:
        if a["name"] == name and a["type"] in ARGTYPE_KIND[argtype]:
            return a["index"]
    return -1


def slot_attr(desc, lst, index):
    """The IR attribute of ordered slot (list, index): the descriptor's argument there, else None."""
    for a in desc["args"]:
        if KIND_LIST[a["type"]] == lst and a["index"] == index:
            return a["attr"]
    return None


SINGLE, OPTIONAL, VARIADIC = "single", "optional", "variadic"


class Port:
    def __init__(self, name, option):
        self.name, self.option = name, option


class OpInfo:
    """What the importer needs of a source op: attribute types (INT, FLOAT, STRING, BOOL, DTYPE, INTS,
    FLOATS, STRINGS, ...) and the ports."""
    def __init__(self, attributes, inputs, outputs):
        self.attributes, self.inputs, self.outputs = attributes, inputs, outputs


def onnx_op(op):
    import onnx
    try:
        sc = onnx.defs.get_schema(op, OPSET)
    except Exception:
        return None
    opt = {onnx.defs.OpSchema.FormalParameterOption.Single: SINGLE, onnx.defs.OpSchema.FormalParameterOption.Optional: OPTIONAL,
           onnx.defs.OpSchema.FormalParameterOption.Variadic: VARIADIC}
    return OpInfo({n: onnx.defs.OpSchema.AttrType(a.type).name for n, a in sc.attributes.items()},
                  [Port(p.name, opt[p.option]) for p in sc.inputs], [Port(p.name, opt[p.option]) for p in sc.outputs])


_TF = None
TF_TYPES = {"int": "INT", "float": "FLOAT", "str": "STRING", "bool": "BOOL", "tensorflow.DType": "DTYPE",
            "List[int]": "INTS", "List[float]": "FLOATS", "List[str]": "STRINGS"}


def tf_op(op):
    """From the TensorFlow namespace's compact file (namespaces/tensorflow/2.2.tfops)."""
    global _TF
    if _TF is None:
        _TF, cur = {}, None
        with open(os.path.join(ROOT, "namespaces/tensorflow/2.2.tfops")) as f:
            for line in f:
                q = line.rstrip("\n").split("\t")
                if q[0] == "op":
                    cur = _TF[q[1]] = OpInfo({}, [], [])
                elif q[0] == "attr" and cur is not None:
                    cur.attributes[q[1]] = TF_TYPES.get(q[2], "OTHER:" + q[2])
                elif q[0] in ("in", "out") and cur is not None:
                    (cur.inputs if q[0] == "in" else cur.outputs).append(Port(q[3], VARIADIC if q[1] == "*" else SINGLE))
    return _TF.get(op)


SOURCE = {"onnx": (onnx_op, "amanda/onnx/13"), "tensorflow": (tf_op, "amanda/tensorflow/2.2")}
get_op = onnx_op


def onnx_attr_type(schema, name):
    return schema.attributes.get(name)


class Lit:
    """A constant argument (an attribute's literal value in the table)."""
    def __init__(self, v):
        self.v = v

    def expr(self):  # the same value inside an expression
        if isinstance(self.v, bool):
            return "true" if self.v else "false"
        if isinstance(self.v, str):
            return "'" + self.v.replace("'", "\\'") + "'"
        return repr(self.v)

    def yaml(self):
        if isinstance(self.v, str):
            return self.v.replace("{", "{{").replace("}", "}}")
        return self.v


def lit(v):
    return Lit(v)


def literal_of(ad, pb):
    t = pb.ArgDescriptor.ArgType.Name(ad.argType)
    if t in ("INT64", "INT32"):
        return ad.int64Value if t == "INT64" else ad.int32Value
    if t in ("DOUBLE", "FLOAT"):
        return float(ad.doubleValue if t == "DOUBLE" else ad.floatValue)
    if t == "BOOL":
        return bool(ad.boolValue)
    if t == "STRING":
        return ad.stringValue
    raise ValueError("constant of type " + t)


class Unsupported(Exception):
    pass


def convert(m, pb, descs, onnx_defs):
    """One MapperDeclaration -> one rule (a dict written as YAML flow)."""
    import onnx
    name = "dl4j_" + m.inputFrameworkOpName + "_" + m.opName
    desc = descs.get(m.opName)
    if desc is None:
        raise Unsupported("nd4j has no op '%s'" % m.opName)
    schema = get_op(m.inputFrameworkOpName)
    if schema is None:
        raise Unsupported("the source namespace has no op %s" % m.inputFrameworkOpName)
    slots = {}      # (list, index) -> expression text
    consts = {}     # onnx input name -> capture name of its constant value
    attrs_read = set()
    when = []
    inputs_map = {}  # nd4j input name -> onnx input name
    list_inputs = {}  # nd4j input name -> the constant a list attribute becomes
    notes = []

    def put(lst, index, expr, why):
        if (index[1] if isinstance(index, tuple) else index) < 0:
            notes.append("%s: no %s argument to put it in (DL4J's index is -1)" % (why, lst))
            return
        slots[(lst, index)] = expr

    for r in m.rule:
        fn = r.functionName
        io = dict(sorted(r.inputToOutput.items()))
        targs = {}
        for t in r.transformerArgs:
            targs.setdefault(t.key, list(t.transformerArgs))
        if fn in ("ndarraymapping", "multiinputindex"):  # (multiinputindex: every input of a variadic port)
            inputs_map.update(io)
        elif fn == "argdescriptorconstant":
            for ad in targs.get("value", []):
                t = pb.ArgDescriptor.ArgType.Name(ad.argType)
                put(LIST[t], ad.argIndex, lit(literal_of(ad, pb)), "constant " + ad.name)
        elif fn == "ndarraysizeat":
            # the size of an input tensor along a dimension (the filter's kH, kW), -1 for a scalar
            for k, v in io.items():
                i = targs[k][0].int64Value
                when.append("shape(i_%s) != null" % v)
                put("int", lookup_index(desc, k, "INT64"), "{if(len(shape(i_%s)) == 0, -1, at(shape(i_%s), %d))}" % (v, v, i), fn + " " + k)
        elif fn == "listnumbertondarray":
            # a list attribute as an input tensor: a constant (SameDiff's CONSTANT variable)
            for k, v in io.items():
                at = onnx_attr_type(schema, v)
                if at not in ("INTS", "FLOATS"):
                    raise Unsupported("listnumbertondarray of a %s attribute" % at)
                attrs_read.add(v)
                when.append("has(a_%s)" % v)
                list_inputs[k] = "{tensor(a_%s, '%s')}" % (v, "int64" if at == "INTS" else "float32")
        elif fn == "passthrough":
            continue  # (its inputs are ndarraymapping's)
        elif fn == "conditionalfieldvalueintindex":
            # element trueIndex or falseIndex of a list attribute, by whether another attribute equals a string
            for k, v in io.items():
                a = {x.name: x for x in targs[k]}
                lst = a["attributeNameOfListAttribute"].stringValue
                if onnx_attr_type(schema, v) != "STRING" or onnx_attr_type(schema, lst) != "INTS":
                    raise Unsupported("conditionalfieldvalueintindex of '%s' and '%s'" % (v, lst))
                attrs_read.update([v, lst])
                when.append("has(a_%s) and has(a_%s)" % (v, lst))
                put("int", lookup_index(desc, k, "INT64"), "{at(a_%s, if(a_%s == %s, %d, %d))}" % (
                    lst, v, lit(a["targetValue"].stringValue).expr(), a["trueIndex"].int64Value, a["falseIndex"].int64Value), fn + " " + k)
        elif fn in ("valuemapping", "invertbooleannumber", "stringequals", "stringcontains", "stringtoindex",
                    "listattributevaluelookuptoindex", "listnumbertolistnumber", "stringnotequalsadapterrule"):
            for k, v in io.items():
                at = onnx_attr_type(schema, v)
                if at is None:
                    raise Unsupported("%s reads attribute '%s', which %s-%d lacks" % (fn, v, m.inputFrameworkOpName, OPSET))
                attrs_read.add(v)
                ref = "a_" + v
                if fn == "valuemapping":
                    kind = {"INT": "INT64", "FLOAT": "DOUBLE", "STRING": "STRING", "BOOL": "BOOL", "DTYPE": "DATA_TYPE"}.get(at)
                    if kind is None:
                        raise Unsupported("valuemapping of a %s attribute" % at)
                    when.append("has(%s)" % ref)
                    put(LIST[kind], lookup_index(desc, k, kind), "{%s}" % ref, "valuemapping " + k)
                elif fn == "invertbooleannumber":
                    when.append("has(%s)" % ref)
                    if at == "BOOL":  # a boolean to 1/0, into the INT64 and DOUBLE arguments of that name
                        for kind in ("INT64", "DOUBLE"):
                            idx = lookup_index(desc, k, kind)
                            if idx >= 0:
                                put(LIST[kind], idx, "{if(%s, %s)}" % (ref, "1, 0" if kind == "INT64" else "1.0, 0.0"), fn + " " + k)
                        continue
                    if at not in ("INT", "FLOAT"):
                        raise Unsupported("invertbooleannumber of a %s attribute" % at)
                    put("bool", lookup_index(desc, k, "BOOL"), "{%s > 0}" % ref, "invertbooleannumber " + k)
                elif fn in ("stringequals", "stringcontains", "stringnotequalsadapterrule"):
                    comp = targs[k][0].stringValue
                    test = ("%s == %s" % (ref, lit(comp).expr())) if fn == "stringequals" else \
                        ("%s != %s" % (ref, lit(comp).expr())) if fn == "stringnotequalsadapterrule" else \
                        ("len(%s) > 0 and find(%s, %s) >= 0" % (ref, lit(comp).expr(), ref))
                    when.append("has(%s)" % ref)
                    for a in desc["args"]:
                        if a["name"] == k and a["type"] == "bool":
                            put("bool", a["index"], "{%s}" % test, fn + " " + k)
                        elif a["name"] == k and a["type"] in ("int64", "int32"):
                            put("int", a["index"], "{if(%s, 1, 0)}" % test, fn + " " + k)
                elif fn == "stringtoindex":
                    values = [a.stringValue for a in targs[k]]
                    pairs = ", ".join("%s, %d" % (lit(s).expr(), i) for i, s in enumerate(values))
                    when.append("has(%s)" % ref)
                    put("int", lookup_index(desc, k, "INT64"), "{value_map(%s, %s, -1)}" % (ref, pairs), "stringtoindex " + k)
                elif fn == "listattributevaluelookuptoindex":
                    if at not in ("INTS", "FLOATS"):
                        raise Unsupported("listattributevaluelookuptoindex of a %s attribute" % at)
                    kind = "INT64" if at == "INTS" else "DOUBLE"
                    i = targs[k][0].int64Value
                    pick = "at(%s, min(%d, len(%s) - 1))" % (ref, i, ref)
                    fb = targs[k][1] if len(targs[k]) > 1 else None
                    idx = lookup_index(desc, k, kind)
                    if fb is None:
                        when.append("has(%s) and len(%s) > 0" % (ref, ref))
                        put(LIST[kind], idx, "{%s}" % pick, "lookup " + k)
                    else:
                        ft = pb.ArgDescriptor.ArgType.Name(fb.argType)
                        if LIST[ft] != LIST[kind] or fb.argIndex != idx:
                            # DL4J's fallback names another argument (maxpool2d's sH fallback is index 6,
                            # dH's): only the path that reads the list is taken.
                            notes.append("lookup %s: DL4J's default goes to %s argument %d, not %d: the rule "
                                         "requires '%s'" % (k, LIST[ft], fb.argIndex, idx, v))
                            when.append("has(%s) and len(%s) > 0" % (ref, ref))
                            put(LIST[kind], idx, "{%s}" % pick, "lookup " + k)
                        else:
                            put(LIST[kind], idx, "{if(has(%s) and len(%s) > 0, %s, %s)}" % (ref, ref, pick, lit(literal_of(fb, pb)).expr()),
                                "lookup " + k)
                elif fn == "listnumbertolistnumber":
                    if at not in ("INTS", "FLOATS"):
                        raise Unsupported("listnumbertolistnumber of a %s attribute" % at)
                    kind = "INT64" if at == "INTS" else "DOUBLE"
                    put(LIST[kind], ("list", lookup_index(desc, k, kind)), "{%s}" % ref, "list " + k)
        elif fn == "mapstringtoindex":
            # a list of strings' element at transformerArgs["index"], mapped through the named
            # ArgDescriptors of key k (name -> int64Value); DL4J throws when the name is not there
            at_index = targs["index"][0].int64Value
            for k, v in io.items():
                if onnx_attr_type(schema, v) != "STRINGS":
                    raise Unsupported("mapstringtoindex of attribute '%s', not a list of strings" % v)
                attrs_read.add(v)
                ref = "a_" + v
                table = [(a.name, a.int64Value) for a in targs[k]]
                pairs = ", ".join("%s, %d" % (lit(n).expr(), x) for n, x in table)
                when.append("has(%s) and len(%s) > %d and find([%s], at(%s, %d)) >= 0" % (
                    ref, ref, at_index, ", ".join(lit(n).expr() for n, _ in table), ref, at_index))
                put("int", lookup_index(desc, k, "INT64"), "{value_map(at(%s, %d), %s)}" % (ref, at_index, pairs),
                    "mapstringtoindex " + k)
        elif fn in ("ndarrayinputtonumericalattribute", "ndarraytointattributevalue"):
            for k, v in io.items():
                cref = "c_" + v
                consts[v] = cref
                if fn == "ndarraytointattributevalue":
                    put("int", ("list", lookup_index(desc, k, "INT64")), "{list(%s)}" % cref, fn + " " + k)
                else:
                    for a in desc["args"]:
                        if a["name"] == k and a["type"] in ("int64", "double"):
                            e = "{if(len(list(%s)) > 0, at(list(%s), 0), 0.0)}" % (cref, cref)
                            if a["type"] == "int64":
                                e = "{if(len(list(%s)) > 0, int(at(list(%s), 0)), 0)}" % (cref, cref)
                            put(KIND_LIST[a["type"]], a["index"], e, fn + " " + k)
        else:
            raise Unsupported("DL4J rule function '%s' has no expression here (%s)" % (fn, "a constant input would "
                              "need a constant op, and SameDiff's constants are variables" if fn == "listnumbertondarray" else "not written yet"))

    # Ordered slots -> attributes: a list value (listnumbertolistnumber, ndarraytointattributevalue) fills
    # its index and every one after it, so it must be the last of its list.
    attrs = {}
    by_list = {}
    for (lst, index), e in slots.items():
        is_list = isinstance(index, tuple)
        i = index[1] if is_list else index
        if i < 0:
            notes.append("list argument of %s: no index" % lst)
            continue
        by_list.setdefault(lst, []).append((i, is_list, e))
    for lst, items in by_list.items():
        items.sort(key=lambda x: (x[0], x[1]))
        rest = []
        for n, (i, is_list, e) in enumerate(items):
            if is_list and n != len(items) - 1:
                raise Unsupported("a list argument at %s index %d is followed by another" % (lst, i))
            a = slot_attr(desc, lst, i)
            if a is not None:
                attrs[a] = e
                continue
            first_rest = len([x for x in desc["args"] if KIND_LIST[x["type"]] == lst])
            if i - first_rest != len(rest):
                raise Unsupported("%s argument %d is beyond the descriptor with a gap before it" % (lst, i))
            rest.append(e)
        if rest:
            attrs["rest_" + lst] = "{[%s]}" % ", ".join(x.expr() if isinstance(x, Lit) else x[1:-1] for x in rest)

    # Ports: the nd4j inputs in descriptor order; the ONNX ones by name, optional where ONNX says so.
    src_in, dst_in = [], []
    onnx_inputs = {p.name: p for p in schema.inputs}
    variadic = any(onnx_inputs[v].option == VARIADIC for v in inputs_map.values() if v in onnx_inputs)
    for k, v in inputs_map.items():
        if v not in onnx_inputs:
            raise Unsupported("ndarraymapping reads input '%s', which %s-%d lacks" % (v, m.inputFrameworkOpName, OPSET))
    for v in onnx_inputs:
        if v in consts and v not in inputs_map.values():
            src_in.append({"name": v, "const": "{%s}" % consts[v]})
    order = [n for n in desc["in"] if n in inputs_map or n in list_inputs] + [n for n in inputs_map if n not in desc["in"]]
    if any(n not in desc["in"] for n in list(inputs_map) + list(list_inputs)):
        raise Unsupported("ndarraymapping names nd4j inputs %s that the descriptor lacks" % [n for n in inputs_map if n not in desc["in"]])
    for pos, k in enumerate(order):
        if k in list_inputs:
            dst_in.append({"name": desc["in"][pos], "const": list_inputs[k]})
            continue
        v = inputs_map[k]
        p = onnx_inputs[v]
        opt = p.option == OPTIONAL
        spec = {"name": v, "ref": "i_" + v}
        if v in consts:
            spec["const"] = "{%s}" % consts[v]
        if opt:
            spec["optional"] = True
        src_in.append(spec)
        dst = {"name": desc["in"][pos] if pos < len(desc["in"]) else "more.%d" % (pos - len(desc["in"])), "ref": "i_" + v}
        if opt:
            dst["optional"] = True
        dst_in.append(dst)
    src_out, dst_out = [], []
    for i, p in enumerate(schema.outputs):
        spec = {"name": p.name, "ref": "o_" + p.name}
        if p.option == OPTIONAL:
            spec["optional"] = True
        src_out.append(spec)
        d = {"name": desc["out"][i] if i < len(desc["out"]) else "more.%d" % (i - len(desc["out"])), "ref": "o_" + p.name}
        if "optional" in spec:
            d["optional"] = True
        dst_out.append(d)
    src = {"type": m.inputFrameworkOpName}
    if attrs_read:
        src["attrs"] = {a: {"ref": "a_" + a} for a in sorted(attrs_read)}
    if variadic:
        if consts:
            raise Unsupported("a variadic input and an input read as a constant")
    else:
        src["input_ports"] = src_in
        src["output_ports"] = src_out
    dst = {"type": m.opName}
    if attrs:
        dst["attrs"] = {k: (attrs[k].yaml() if isinstance(attrs[k], Lit) else attrs[k]) for k in sorted(attrs)}
    if not variadic:
        dst["input_ports"] = dst_in
        dst["output_ports"] = dst_out
    rule = {"rule_name": name, "src": src, "dst": dst}
    if when:
        rule["when"] = " and ".join(dict.fromkeys(when))
    if not variadic:
        return [rule], notes
    # A variadic ONNX input (Concat's inputs): one rule per count of inputs, as the engine matches
    # variadic ports by name (inputs.0, inputs.1, ...), each refusing an op with one more.
    if len(inputs_map) != 1:
        raise Unsupported("a variadic input beside other inputs")
    (k, v), = inputs_map.items()
    rules = []
    for n in range(1, MAX_VARIADIC + 1):
        r = json.loads(json.dumps(rule))
        r["rule_name"] = "%s_%d" % (name, n)
        r["src"]["input_ports"] = [{"name": "%s.%d" % (v, i), "ref": "i%d" % i} for i in range(n)] + \
            [{"name": "%s.%d" % (v, n), "ref": "more", "optional": True}]
        r["src"]["output_ports"] = src_out
        # nd4j ports are named by position (the descriptor's names, then more.K), as the .fb reader names them
        r["dst"]["input_ports"] = [{"name": desc["in"][i] if i < len(desc["in"]) else "more.%d" % (i - len(desc["in"])),
                                    "ref": "i%d" % i} for i in range(n)]
        r["dst"]["output_ports"] = dst_out
        r["when"] = " and ".join([x for x in [rule.get("when")] if x] + ["not connected(more)"])
        rules.append(r)
    return rules, notes


INVERTIBLE = {"ndarraymapping", "argdescriptorconstant", "valuemapping", "invertbooleannumber"}
# Why the other rule functions do not run backwards (docs/nd4j.md, "What inverts").
WHY_NOT = {
    "listattributevaluelookuptoindex": "it keeps one element of an ONNX list per argument (Conv reads pads[0] and "
                                       "pads[1] of four): the rest of the list is lost",
    "listnumbertolistnumber": "the list is spread over the ordered integers, which a .fb gives back as one argument "
                              "and rest_int: the generated rule cannot tell where the list ends",
    "stringequals": "several strings give the same 0/1 (auto_pad NOTSET, VALID and SAME_LOWER all give 0)",
    "stringcontains": "several strings give the same 0/1",
    "stringtoindex": "DL4J maps every string it does not list to -1, so -1 has no string to go back to",
    "mapstringtoindex": "one element of a list of strings becomes an index: the rest of the list is lost",
    "ndarraytointattributevalue": "the tensor's values become arguments: its element type and shape are lost",
    "ndarrayinputtonumericalattribute": "the tensor's first value becomes an argument: its element type and the "
                                        "other values are lost",
    "listnumbertondarray": "an attribute made a constant input: going back, the constant would have to be "
                           "read into the attribute, and DL4J's rule keeps no element type",
}


def reverse(m, pb, descs):
    """The nd4j -> ONNX rule of one declaration, run backwards: ports swapped, a constant argument
    checked (absent, or the constant), valuemapping's argument copied back, invertbooleannumber's
    boolean back to 0/1. Every other argument of the nd4j op must be absent (it would be lost)."""
    import onnx
    desc = descs.get(m.opName)
    schema = get_op(m.inputFrameworkOpName)
    if schema is None:
        raise Unsupported("the source namespace has no op %s" % m.inputFrameworkOpName)
    fns = {r.functionName for r in m.rule}
    if not fns <= INVERTIBLE:
        raise Unsupported("; ".join("%s: %s" % (f, WHY_NOT.get(f, "no inverse")) for f in sorted(fns - INVERTIBLE)))
    inputs_map, attrs_dst, consts, used, when = {}, {}, {}, set(), []
    for r in m.rule:
        io = dict(sorted(r.inputToOutput.items()))
        targs = {}
        for t in r.transformerArgs:
            targs.setdefault(t.key, list(t.transformerArgs))
        if r.functionName == "ndarraymapping":
            inputs_map.update(io)
        elif r.functionName == "argdescriptorconstant":
            for ad in targs.get("value", []):
                t = pb.ArgDescriptor.ArgType.Name(ad.argType)
                a = slot_attr(desc, LIST[t], ad.argIndex)
                if a is None:
                    raise Unsupported("constant %s at %s index %d is past the descriptor" % (ad.name, LIST[t], ad.argIndex))
                consts[a] = lit(literal_of(ad, pb)).expr()
        else:
            for k, v in io.items():
                at = onnx_attr_type(schema, v)
                kind = {"INT": "INT64", "FLOAT": "DOUBLE", "STRING": "STRING", "BOOL": "BOOL", "DTYPE": "DATA_TYPE"}.get(at)
                if r.functionName == "invertbooleannumber":
                    kind = "BOOL"
                idx = lookup_index(desc, k, kind) if kind else -1
                a = slot_attr(desc, LIST[kind], idx) if idx >= 0 else None
                if a is None:
                    raise Unsupported("%s %s: no argument to read back" % (r.functionName, k))
                used.add(a)
                attrs_dst[v] = "{if(%s, 1, 0)}" % ("r_" + a) if r.functionName == "invertbooleannumber" else "{%s}" % ("r_" + a)
    src_attrs = {}
    for a in sorted(set(consts) | used):
        src_attrs[a] = {"ref": "r_" + a}
    for a, e in sorted(consts.items()):
        when.append("(not has(r_%s) or r_%s == %s)" % (a, a, e))
    for x in desc["args"]:
        if x["attr"] not in consts and x["attr"] not in used:
            src_attrs[x["attr"]] = {"ref": "r_" + x["attr"]}
            when.append("not has(r_%s)" % x["attr"])
    for l in ("int", "float", "bool", "dtype", "string"):
        src_attrs["rest_" + l] = {"ref": "r_rest_" + l}
        when.append("not has(r_rest_%s)" % l)
    onnx_inputs = [p.name for p in schema.inputs]
    if any(schema.inputs[onnx_inputs.index(v)].option == VARIADIC for v in inputs_map.values()):
        raise Unsupported("a variadic ONNX input: one rule per count of inputs (nd4j_1.0_onnx_13_hand.yaml has them)")
    src_in, dst_in = [], []
    for pos, k in enumerate(n for n in desc["in"] if n in inputs_map):
        v = inputs_map[k]
        opt = schema.inputs[onnx_inputs.index(v)].option == OPTIONAL
        src_in.append(dict({"name": desc["in"][pos], "ref": "i_" + k}, **({"optional": True} if opt else {})))
    for v in onnx_inputs:
        ks = [k for k, x in inputs_map.items() if x == v]
        if ks:
            dst_in.append({"name": v, "ref": "i_" + ks[0]})
    src_out = [{"name": desc["out"][i] if i < len(desc["out"]) else "more.%d" % (i - len(desc["out"])), "ref": "o%d" % i}
               for i, p in enumerate(schema.outputs) if p.option != OPTIONAL]
    dst_out = [{"name": p.name, "ref": "o%d" % i} for i, p in enumerate(schema.outputs) if p.option != OPTIONAL]
    rule = {"rule_name": "dl4j_%s_%s_reverse" % (m.inputFrameworkOpName, m.opName),
            "src": {"type": m.opName, "attrs": src_attrs, "input_ports": src_in, "output_ports": src_out},
            "dst": {"type": m.inputFrameworkOpName, "input_ports": dst_in, "output_ports": dst_out}}
    if attrs_dst:
        rule["dst"]["attrs"] = attrs_dst
    if when:
        rule["when"] = " and ".join(when)
    return rule


def write_reverse(s, pb, descs, out):
    lines = [
        "# nd4j -> ONNX opset 13: DL4J's ONNX rule set run backwards (scripts/import_dl4j_rules.py; do not edit).",
        "# A declaration inverts when its rule functions do (ndarraymapping, argdescriptorconstant, valuemapping,",
        "# invertbooleannumber); each other one is listed with the reason, and nd4j_1.0_onnx_13_hand.yaml has",
        "# the hand rules (docs/nd4j.md, \"What inverts\").",
        "table:",
        "  src: amanda/nd4j/1.0",
        "  dst: amanda/onnx/13",
        "  carry_attrs: false",
        "  constant: {src: {type: constant, attr: value, port: outputs}, dst: {type: Constant, attr: value, port: output}}",
        "  rules:",
    ]
    seen = set()
    n_ok = 0
    for m in s.mappings:
        if m.opName == "noop":
            continue
        try:
            rule = reverse(m, pb, descs)
            if m.opName in seen:
                lines.append("    # %s: nd4j op %s is already mapped back by an earlier declaration" % (rule["rule_name"], m.opName))
                continue
            seen.add(m.opName)
            lines.append("    - " + json.dumps(rule))
            n_ok += 1
        except Unsupported as e:
            lines.append("    # dl4j_%s_%s: does not invert: %s" % (m.inputFrameworkOpName, m.opName, e))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%d reverse rules" % n_ok, file=sys.stderr)


def second_part(out):
    """The file of the TensorFlow table's N-Z ops beside OUT: tf_2.2_nd4j_1.0.yaml -> tf_2.2_nd4j_1.0_n_z.yaml."""
    return out[:-len(".yaml")] + "_n_z.yaml" if out.endswith(".yaml") else out + "_n_z"


def main():
    src = sys.argv[1]
    pb = load_proto()
    from google.protobuf import text_format
    s = pb.MappingDefinitionSet()
    with open(src) as f:
        text_format.Parse(f.read(), s)
    descs = load_descriptors()
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tables/nd4j/onnx_13_nd4j_1.0.yaml")
    global get_op
    framework = s.mappings[0].frameworkName if s.mappings else "onnx"
    get_op, src_ns = SOURCE[framework]
    if framework == "tensorflow":
        out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tables/nd4j/tf_2.2_nd4j_1.0.yaml")
        lines = [
            "# TensorFlow 2.2 -> nd4j: DL4J's own TensorFlow mapping rule set (tensorflow-mapping-ruleset.pbtxt,",
            "# DL4J commit 8129c4acc1), imported by scripts/import_dl4j_rules.py (do not edit: regenerate).",
            "# Source ops A-M; N-Z are in tf_2.2_nd4j_1.0_n_z.yaml (the loader reads both as one table).",
            "table:",
            "  src: amanda/tensorflow/2.2",
            "  dst: amanda/nd4j/1.0",
            "  carry_attrs: false",
            "  constant: {src: {type: Const, attr: value, port: output}, dst: {type: constant, attr: value, port: outputs}}",
            "  rules:",
            "    - {rule_name: const, src: {type: Const, attrs: {value: {ref: v}}, output_ports: [{name: output, ref: y}]}, "
            "dst: {type: constant, attrs: {value: \"{v}\"}, output_ports: [{name: outputs, ref: y}]}}",
        ]
    else:
        lines = [
        "# ONNX opset 13 -> nd4j: DL4J's own ONNX mapping rule set (onnx-mapping-ruleset.pbtxt, DL4J commit",
        "# 8129c4acc1), imported by scripts/import_dl4j_rules.py (do not edit: regenerate). One rule per DL4J",
        "# MapperDeclaration; each DL4J rule function is an expression (docs/nd4j.md). The 35 declarations",
        "# DL4J maps to `noop` (handled in Kotlin) are in onnx_13_nd4j_1.0_hand.yaml.",
        "table:",
        "  src: amanda/onnx/13",
        "  dst: amanda/nd4j/1.0",
        "  carry_attrs: false",
        "  constant: {src: {type: Constant, attr: value, port: output}, dst: {type: constant, attr: value, port: outputs}}",
        "  rules:",
        ]
    # The TensorFlow table is split in two files by the source op's first letter (A-M, N-Z), which
    # the loader reads as one table (same src and dst): one file would be 1.18 MB, and no file over
    # 1 MB is committed. All rules of one op stay in one file, in the rule set's order.
    second = None
    if framework == "tensorflow":
        second = list(lines[:-2]) + ["  rules:"]
        second[0:3] = [
            "# TensorFlow 2.2 -> nd4j, source ops N-Z (A-M: tf_2.2_nd4j_1.0.yaml; the loader reads both as one",
            "# table): DL4J's TensorFlow rule set, imported by scripts/import_dl4j_rules.py (do not edit: regenerate).",
        ]
    n_ok = n_unsup = 0
    for m in s.mappings:
        if m.opName == "noop":
            continue
        dest = second if second is not None and m.inputFrameworkOpName[:1].upper() > "M" else lines
        try:
            rules, notes = convert(m, pb, descs, None)
            for note in notes:
                dest.append("    # %s: %s" % (rules[0]["rule_name"], note))
            for rule in rules:
                dest.append("    - " + json.dumps(rule))
            n_ok += 1
        except Unsupported as e:
            name = "dl4j_%s_%s" % (m.inputFrameworkOpName, m.opName)
            if str(e).startswith("the source namespace has no op"):
                # A rule for an op the source namespace lacks could never match (and the table
                # checker refuses it): a note, not a rule.
                dest.append("    # %s: not imported: %s" % (name, e))
            else:
                dest.append("    - " + json.dumps({"rule_name": name, "type": m.inputFrameworkOpName, "unsupported": str(e)}))
            n_unsup += 1
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    if second is not None:
        with open(second_part(out), "w") as f:
            f.write("\n".join(second) + "\n")
    print("%d rules, %d unsupported" % (n_ok, n_unsup), file=sys.stderr)
    if framework != "onnx":
        return
    rev = sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "tables/nd4j/nd4j_1.0_onnx_13.yaml")
    write_reverse(s, pb, descs, rev)


if __name__ == "__main__":
    main()
