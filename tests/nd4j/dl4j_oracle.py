"""An interpreter of DL4J's mapping rules, written from DL4J's Kotlin rule classes
(samediff-import-api, rule/attribute/*.kt), independently of the table importer: it applies a
MapperDeclaration to one ONNX node and returns the ArgDescriptors DL4J's import would give the nd4j
op. tests/nd4j/onnx_rules_test.py compares them with what Amanda's engine makes from the imported
table. Raises Refused where DL4J's rule throws (an attribute it needs is missing).
"""
import onnx
from onnx import helper, numpy_helper


class Refused(Exception):
    pass


class NotImported(Exception):
    """A rule function this interpreter (and the importer) does not have."""


KIND = {"INT64": "int", "INT32": "int", "DOUBLE": "float", "FLOAT": "float", "BOOL": "bool",
        "DATA_TYPE": "dtype", "STRING": "string"}


class Descriptors:
    def __init__(self, path):
        self.ops, cur = {}, None
        for line in open(path):
            p = line.rstrip("\n").split("\t")
            if p[0] == "op":
                cur = self.ops[p[1]] = {"in": [], "out": [], "args": []}
            elif p[0] in ("in", "out"):
                cur[p[0]].append(p[2])
            elif p[0] == "arg":
                cur["args"].append((p[1], int(p[2]), p[3]))

    def lookup(self, op, name, argtype):
        """lookupIndexForArgDescriptor: exact name and type."""
        want = {"INT64": "int64", "INT32": "int32", "DOUBLE": "double", "FLOAT": "float", "BOOL": "bool",
                "DATA_TYPE": "dtype", "STRING": "string"}[argtype]
        for t, i, n in self.ops[op]["args"]:
            if n == name and t == want:
                return i
        return -1

    def types_for(self, op, name):
        """argDescriptorTypeForName: the types of the arguments of that name."""
        m = {"int64": "INT64", "int32": "INT32", "double": "DOUBLE", "float": "FLOAT", "bool": "BOOL",
             "dtype": "DATA_TYPE", "string": "STRING"}
        return [m[t] for t, i, n in self.ops[op]["args"] if n == name]


A = onnx.AttributeProto
ONNX_KIND = {A.INT: "INT", A.FLOAT: "FLOAT", A.STRING: "STRING", A.INTS: "INTS", A.FLOATS: "FLOATS",
             A.STRINGS: "STRINGS", A.TENSOR: "TENSOR"}


def attr_value(node, schema, name):
    """irAttributeValueForNode: the node's attribute, else the op definition's default, else None;
    with its kind (INT, FLOAT, STRING, INTS, FLOATS, STRINGS, BOOL, DTYPE)."""
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a), ONNX_KIND.get(a.type, "OTHER")
    d = schema.attributes.get(name)
    if d is not None and d.default_value.name:
        return helper.get_attribute_value(d.default_value), ONNX_KIND.get(d.default_value.type, "OTHER")
    return None, None


def apply(m, node, consts, desc, pb, get_attr=None):
    """The ArgDescriptors of mapping m on node: a list of (name, ARGTYPE, index, value). `get_attr(name)`
    gives an attribute's value and kind (an ONNX node's by default)."""
    if get_attr is None:
        schema = onnx.defs.get_schema(node.op_type, 13)
        get_attr = lambda name: attr_value(node, schema, name)  # noqa: E731
    out = []
    op = m.opName
    AT = pb.ArgDescriptor.ArgType

    def literal(ad):
        t = AT.Name(ad.argType)
        v = {"INT64": ad.int64Value, "INT32": ad.int32Value, "DOUBLE": ad.doubleValue, "FLOAT": ad.floatValue,
             "BOOL": ad.boolValue, "STRING": ad.stringValue}[t]
        return (ad.name, t, ad.argIndex, v)

    for r in m.rule:
        fn = r.functionName
        io = dict(r.inputToOutput)
        targs = {}
        for t in r.transformerArgs:
            targs.setdefault(t.key, list(t.transformerArgs))
        if fn == "ndarraymapping":
            continue
        if fn == "mapstringtoindex":
            at_index = targs["index"][0].int64Value
            for k, v in io.items():
                if k == "index":
                    continue
                val, typ = get_attr(v)
                if typ != 'STRINGS' or len(val) <= at_index:
                    raise Refused("mapstringtoindex: attribute %s missing" % v)
                name = val[at_index].decode() if isinstance(val[at_index], bytes) else val[at_index]
                hits = [a.int64Value for a in targs[k] if a.name == name]
                if not hits:
                    raise Refused("mapstringtoindex: %s is not one of DL4J's names" % name)
                out.append((k, "INT64", desc.lookup(op, k, "INT64"), hits[0]))
            continue
        if fn in ("passthrough", "multiinputindex"):
            continue
        if fn == "conditionalfieldvalueintindex":
            for k, v in io.items():
                a = {x.name: x for x in targs[k]}
                test, t1 = get_attr(v)
                lst, t2 = get_attr(a["attributeNameOfListAttribute"].stringValue)
                if t1 != "STRING" or t2 != "INTS":
                    raise Refused("conditionalfieldvalueintindex: attributes missing")
                test = test.decode() if isinstance(test, bytes) else test
                i = a["trueIndex"].int64Value if test == a["targetValue"].stringValue else a["falseIndex"].int64Value
                out.append((v, "INT64", desc.lookup(op, k, "INT64"), int(lst[i])))
            continue
        if fn == "listnumbertondarray":
            # ListNumberToNDArray: the list as an input tensor (INPUT_TENSOR at the input's index)
            for k, v in io.items():
                val, typ = get_attr(v)
                if typ not in ('INTS', 'FLOATS'):
                    raise Refused("listnumbertondarray: attribute %s missing" % v)
                out.append((k, "INPUT_TENSOR", desc.ops[op]["in"].index(k), list(val)))
            continue
        if fn not in ("argdescriptorconstant", "ndarrayinputtonumericalattribute", "listnumbertondarray", "stringnotequalsadapterrule", "ndarraytointattributevalue",
                      "valuemapping", "invertbooleannumber", "stringequals", "stringcontains", "stringtoindex",
                      "listattributevaluelookuptoindex", "listnumbertolistnumber"):
            raise NotImported("DL4J rule function %s" % fn)
        if fn == "argdescriptorconstant":
            out += [literal(a) for a in targs.get("value", [])]
            continue
        for k, v in io.items():
            if fn in ("ndarrayinputtonumericalattribute", "ndarraytointattributevalue"):
                if v not in consts:
                    raise Refused("%s: input %s is not a constant" % (fn, v))
                arr = consts[v].reshape(-1)
                if fn == "ndarraytointattributevalue":
                    base = desc.lookup(op, k, "INT64")
                    out += [(k, "INT64", base + i, int(x)) for i, x in enumerate(arr)]
                else:
                    for t, i, n in desc.ops[op]["args"]:
                        if n == k and t in ("int64", "double"):
                            val = float(arr[0]) if arr.size else 0.0
                            out.append((k, "INT64" if t == "int64" else "DOUBLE", i, int(val) if t == "int64" else val))
                continue
            val, typ = get_attr(v)
            if fn == "valuemapping":
                kind = {'INT': "INT64", 'FLOAT': "DOUBLE", 'STRING': "STRING", 'BOOL': "BOOL", 'DTYPE': "DATA_TYPE"}.get(typ)
                if kind is None:
                    raise Refused("valuemapping: attribute %s missing or of type %s" % (v, typ))
                if isinstance(val, bytes):
                    val = val.decode()
                out.append((k, kind, desc.lookup(op, k, kind), val))
            elif fn == "invertbooleannumber" and typ == "BOOL":
                for kind in ("INT64", "DOUBLE"):
                    idx = desc.lookup(op, k, kind)
                    if idx >= 0:
                        out.append((k, kind, idx, (1 if val else 0) if kind == "INT64" else (1.0 if val else 0.0)))
            elif fn == "invertbooleannumber":
                if typ not in ('INT', 'FLOAT'):
                    raise Refused("invertbooleannumber: attribute %s missing" % v)
                out.append((k, "BOOL", desc.lookup(op, k, "BOOL"), val > 0))
            elif fn in ("stringequals", "stringcontains", "stringnotequalsadapterrule"):
                if typ != 'STRING':
                    raise Refused("%s: attribute %s missing" % (fn, v))
                test = val.decode() if isinstance(val, bytes) else val
                comp = targs[k][0].stringValue
                hit = test == comp if fn == "stringequals" else test != comp if fn == "stringnotequalsadapterrule" \
                    else (len(test) > 0 and test in comp)
                for t in desc.types_for(op, k):
                    if t == "BOOL":
                        out.append((v if fn == "stringequals" else k, t, desc.lookup(op, k, t), hit))
                    elif t in ("INT64", "INT32"):
                        out.append((v if fn == "stringequals" else k, t, desc.lookup(op, k, t), 1 if hit else 0))
            elif fn == "stringtoindex":
                if typ != 'STRING':
                    raise Refused("stringtoindex: attribute %s missing" % v)
                test = val.decode() if isinstance(val, bytes) else val
                values = [a.stringValue for a in targs[k]]
                out.append((k, "INT64", desc.lookup(op, k, "INT64"), values.index(test) if test in values else -1))
            elif fn == "listattributevaluelookuptoindex":
                index = targs[k][0].int64Value
                if typ in ('INTS', 'FLOATS') and len(val) > 0:
                    kind = "INT64" if typ == 'INTS' else "DOUBLE"
                    x = val[min(index, len(val) - 1)]
                    out.append((k, kind, desc.lookup(op, k, kind), int(x) if kind == "INT64" else float(x)))
                elif len(targs[k]) > 1:
                    out.append(literal(targs[k][1]))
                else:
                    raise Refused("listattributevaluelookuptoindex: %s missing and no default" % v)
            elif fn == "listnumbertolistnumber":
                if typ in ('INTS', 'FLOATS'):
                    kind = "INT64" if typ == 'INTS' else "DOUBLE"
                    base = desc.lookup(op, k, kind)
                    out += [(k + (str(i) if i else ""), kind, base + i, int(x) if kind == "INT64" else float(x))
                            for i, x in enumerate(val)]
            else:
                raise NotImported("DL4J rule function %s" % fn)
    return out


def ordered_lists(args):
    """What libnd4j receives: per list, the values in index order (an index given twice is an error)."""
    lists = {}
    for name, t, i, v in args:
        if i < 0 or t == "INPUT_TENSOR":
            continue
        lst = lists.setdefault(KIND[t], {})
        if i in lst and lst[i][1] != v:
            raise Refused("index %d of the %s arguments given twice (%s and %s)" % (i, KIND[t], lst[i][0], name))
        lst[i] = (name, v)
    # DL4J sorts each list by index and passes the values in that order (listnumbertolistnumber
    # numbers from descriptorsSoFar().size, so its indices may start past 0).
    return {k: [d[i] for i in sorted(d)] for k, d in lists.items()}
