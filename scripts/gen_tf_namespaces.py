#!/usr/bin/python3
"""Generates the TensorFlow namespaces shipped in namespaces/tensorflow/ (docs/tensorflow.md).

  amanda/tensorflow/2.2        from TensorFlow's op registry, ops.pbtxt (a text tensorflow.OpList;
                               ../shared/tensorflow/ops.pbtxt, about TF 2.2): every op's inputs,
                               outputs, attributes, types, defaults and allowed values.
  amanda/tensorflow/tfjs/4.22  the ops TF.js's converter adds and the registry lacks (_FusedConv2D,
                               _FusedMatMul, FusedDepthwiseConv2dNative, Prelu, ...), from the op
                               lists of the npm package @tensorflow/tfjs-converter (its
                               dist/operations/op_list/*.js, read with node).

Both are written as seed-format namespaces in JSON (compact; the registry loads a file lazily,
the first time a graph names it). The registry is parsed with protobuf's text format against the
project's own src/frameworks/tensorflow/proto/amanda_tf_graph.proto (compiled with protoc into a temporary
folder), so this script needs Debian's protobuf-compiler and python3-protobuf; the TF.js part
needs node and `npm install` in tests/tensorflow/js.

  /usr/bin/python3 scripts/gen_tf_namespaces.py [--ops PATH] [--tfjs PATH] [--out namespaces/tensorflow]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# TensorFlow's DataType enum -> the dtype name Python's tf.DType.name gives (tf.float32.name).
DTYPE_NAMES = {
    "DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_INT32": "int32", "DT_UINT8": "uint8",
    "DT_INT16": "int16", "DT_INT8": "int8", "DT_STRING": "string", "DT_COMPLEX64": "complex64",
    "DT_INT64": "int64", "DT_BOOL": "bool", "DT_QINT8": "qint8", "DT_QUINT8": "quint8",
    "DT_QINT32": "qint32", "DT_BFLOAT16": "bfloat16", "DT_QINT16": "qint16", "DT_QUINT16": "quint16",
    "DT_UINT16": "uint16", "DT_COMPLEX128": "complex128", "DT_HALF": "float16",
    "DT_RESOURCE": "resource", "DT_VARIANT": "variant", "DT_UINT32": "uint32", "DT_UINT64": "uint64",
}

# An OpDef attr type -> the python type system's type (docs/namespaces.md, "Type systems").
ATTR_TYPES = {
    "type": "tensorflow.DType", "list(type)": "List[tensorflow.DType]",
    "int": "int", "list(int)": "List[int]",
    "float": "float", "list(float)": "List[float]",
    "bool": "bool", "list(bool)": "List[bool]",
    "string": "str", "list(string)": "List[str]",
    "shape": "tensorflow.TensorShape", "list(shape)": "List[tensorflow.TensorShape]",
    "tensor": "tensorflow.Tensor", "list(tensor)": "List[tensorflow.Tensor]",
    "func": "tensorflow.NameAttrList", "list(func)": "List[tensorflow.NameAttrList]",
}


def load_registry(ops_path):
    with tempfile.TemporaryDirectory() as tmp:
        proto_dir = os.path.join(ROOT, "src/frameworks/tensorflow/proto")
        subprocess.run(["protoc", "-I" + proto_dir, "--python_out=" + tmp, "amanda_tf_graph.proto"], check=True)
        sys.path.insert(0, tmp)
        import amanda_tf_graph_pb2 as graph_pb2  # noqa: E402
        from google.protobuf import text_format
        ops = graph_pb2.OpList()
        with open(ops_path, encoding="utf-8") as f:
            text_format.Parse(f.read(), ops)
        return graph_pb2, ops


def dtype_name(pb2, v):
    return DTYPE_NAMES[pb2.DataType.Name(v)]


def shape_value(s):
    # The importer's spelling (src/frameworks/tensorflow/attrs.cpp): dims, null for an unknown
    # one; null for an unknown rank.
    if s.unknown_rank:
        return None
    return [None if d.size == -1 else d.size for d in s.dim]


def attr_value(pb2, v):
    """A default AttrValue as the importer spells it; raises ValueError for what a default can't say."""
    kind = v.WhichOneof("value")
    if kind == "s":
        return v.s.decode("utf-8")
    if kind in ("i", "f", "b"):
        return getattr(v, kind)
    if kind == "type":
        return dtype_name(pb2, v.type)
    if kind == "shape":
        return shape_value(v.shape)
    if kind == "list":
        l = v.list
        if l.s:
            return [x.decode("utf-8") for x in l.s]
        if l.i:
            return list(l.i)
        if l.f:
            return list(l.f)
        if l.b:
            return list(l.b)
        if l.type:
            return [dtype_name(pb2, t) for t in l.type]
        if l.shape:
            return [shape_value(s) for s in l.shape]
        if l.tensor or l.func:
            raise ValueError("tensor or func list default")
        return []
    raise ValueError("default of kind %s" % kind)


def f32(x):
    """The shortest decimal that reads back as the same float32 (the registry's floats are float32)."""
    import struct
    want = struct.unpack("<f", struct.pack("<f", x))[0]
    for digits in range(1, 18):
        s = "%.*g" % (digits, want)
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == want:
            return float(s)
    return want


def tf_attr(pb2, a):
    t = ATTR_TYPES.get(a.type)
    if t is None:
        raise SystemExit("unknown attr type %r in the registry" % a.type)
    has_default = a.HasField("default_value")
    unsayable = False
    default = None
    if has_default:
        try:
            default = attr_value(pb2, a.default_value)
        except ValueError:
            has_default = False  # a tensor default (DecodeJpeg's bad_color...): may be absent
            unsayable = True
        if a.type == "float" and default is not None:
            default = f32(default)
        if a.type == "list(float)" and default is not None:
            default = [f32(x) for x in default]
    allowed = a.allowed_values.list if a.HasField("allowed_values") else None
    if allowed is not None and a.type in ("type", "string") and (allowed.type or allowed.s):
        if a.type == "type":
            values = [dtype_name(pb2, x) for x in allowed.type]
        else:
            values = [x.decode("utf-8") for x in allowed.s]
        spec = {"one_of": [{"type": t, "constant": v} for v in values]}
        if has_default:
            spec["default"] = default
        elif unsayable:
            spec["optional"] = True
        return spec
    if has_default:
        return {"type": t, "default": default}
    if unsayable:
        return {"type": t, "optional": True}
    return t


def tf_port(pb2, arg):
    attrs = {"name": {"type": "str", "constant": arg.name}}
    if arg.type_attr:
        attrs["type_attr"] = {"type": "str", "constant": arg.type_attr}
    if arg.number_attr:
        attrs["number_attr"] = {"type": "str", "constant": arg.number_attr}
    if arg.type_list_attr:
        attrs["type_list_attr"] = {"type": "str", "constant": arg.type_list_attr}
    if arg.type:
        attrs["type"] = {"type": "tensorflow.DType", "constant": dtype_name(pb2, arg.type)}
    if arg.is_ref:
        attrs["is_ref"] = {"type": "bool", "constant": True}
    port = {"attrs": attrs}
    # A list argument (N tensors of one type, or a list of types) is a variadic port: its ports
    # are named arg.0, arg.1, ... (how many: the number/type-list attribute's value).
    if arg.number_attr or arg.type_list_attr:
        port["arity"] = "variadic"
        port["min_arity"] = 0
    else:
        port["arity"] = "single"
    return port


def tensorflow_namespace(pb2, ops):
    out = []
    for op in sorted(ops.op, key=lambda o: o.name):
        s = {"type": op.name}
        attrs = {a.name: tf_attr(pb2, a) for a in op.attr}
        if attrs:
            s["attrs"] = attrs
        # minimum of an N attribute -> the variadic port's min_arity
        minimum = {a.name: a.minimum for a in op.attr if a.has_minimum}
        for key, args in (("input_ports", op.input_arg), ("output_ports", op.output_arg)):
            ports = []
            for arg in args:
                p = tf_port(pb2, arg)
                if arg.number_attr and minimum.get(arg.number_attr, 0) > 0:
                    p["min_arity"] = minimum[arg.number_attr]
                ports.append(p)
            if ports:
                s[key] = ports
        out.append(s)
    return {"namespace": {"name": "amanda/tensorflow/2.2", "type_system": "python", "op_schemas": out}}


# TF.js converter attr types -> python types. 'number' is an int or a float (both are floats to
# the python type system).
TFJS_ATTR_TYPES = {
    "dtype": "tensorflow.DType", "string": "str", "number": "float", "bool": "bool",
    "shape": "tensorflow.TensorShape", "func": "tensorflow.NameAttrList",
    "number[]": "List[float]", "string[]": "List[str]",
}


def load_tfjs_op_lists(converter_dir):
    op_list = os.path.join(converter_dir, "dist/operations/op_list")
    script = ("const fs=require('fs'),path=require('path');let all=[];"
              "for(const f of fs.readdirSync(process.argv[1]).filter(f=>f.endsWith('.js')).sort())"
              "{const m=require(path.join(process.argv[1],f));all=all.concat(m.json||[]);}"
              "process.stdout.write(JSON.stringify(all));")
    out = subprocess.run(["node", "-e", script, op_list], check=True, capture_output=True, text=True).stdout
    with open(os.path.join(converter_dir, "package.json")) as f:
        version = json.load(f)["version"]
    return json.loads(out), version


def tfjs_namespace(mappers, version, registry_names):
    out = []
    seen = set()
    for m in sorted(mappers, key=lambda m: m["tfOpName"]):
        name = m["tfOpName"]
        if name in registry_names or name in seen:
            continue  # the registry's own schema is the reference for its ops
        seen.add(name)
        s = {"type": name}
        attrs = {}
        # Inputs: TF.js lists each with its start (and end for a list); the ones of type
        # 'tensor'/'tensors' are the node's inputs, in order. Non-tensor "inputs" (an axis given
        # as a tensor) are still node inputs in TensorFlow's sense.
        ports = []
        for i in sorted(m.get("inputs", []), key=lambda i: i["start"]):
            p = {"attrs": {"name": {"type": "str", "constant": i["name"]}}}
            if i["type"] == "tensors":
                p["arity"] = "variadic"
                p["min_arity"] = 0
            else:
                p["arity"] = "single"
            ports.append(p)
        for a in m.get("attrs", []):
            t = TFJS_ATTR_TYPES.get(a["type"])
            if t is None:
                raise SystemExit("unknown TF.js attr type %r (op %s)" % (a["type"], name))
            spec = {"type": t, "optional": True}
            if "defaultValue" in a:
                spec = {"type": t, "default": a["defaultValue"]}
            attrs[a["tfName"]] = spec
        if attrs:
            s["attrs"] = attrs
        if ports:
            s["input_ports"] = ports
        # TF.js lists outputs only for ops with several; the others have one (TensorFlow calls
        # _FusedConv2D's and _FusedMatMul's `output`, TF.js reads output 0).
        outs = m.get("outputs") or ["output"]
        s["output_ports"] = [{"attrs": {"name": {"type": "str", "constant": o}}, "arity": "single"} for o in outs]
        out.append(s)
    major_minor = ".".join(version.split(".")[:2])
    return {"namespace": {"name": "amanda/tensorflow/tfjs/" + major_minor, "type_system": "python",
                          "op_schemas": out}}, major_minor


def field(s):
    s = str(s)
    if any(c in s for c in "\t\n\r,="):
        raise SystemExit("%r cannot be written in the .tfops form" % s)
    return s


def jvalue(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def compact(doc):
    """The seed-format namespace `doc` in the compact .tfops form (src/frameworks/tensorflow/namespace_file.cpp)."""
    ns = doc["namespace"]
    lines = ["amanda-tfops 1", "namespace\t%s\t%s" % (ns["name"], ns["type_system"])]
    for op in ns["op_schemas"]:
        lines.append("op\t" + field(op["type"]))
        for name, spec in op.get("attrs", {}).items():
            if isinstance(spec, str):
                lines.append("attr\t%s\t%s\t-\t\t" % (field(name), spec))
            elif "one_of" in spec:
                t = spec["one_of"][0]["type"]
                assert all(o["type"] == t for o in spec["one_of"])
                consts = ",".join(field(o["constant"]) for o in spec["one_of"])
                flag, d = ("d", jvalue(spec["default"])) if "default" in spec else ("?" if spec.get("optional") else "-", "")
                lines.append("attr\t%s\t%s\t%s\t%s\t%s" % (field(name), t, flag, d, consts))
            elif "default" in spec:
                lines.append("attr\t%s\t%s\td\t%s\t" % (field(name), spec["type"], jvalue(spec["default"])))
            else:
                assert spec.get("optional")
                lines.append("attr\t%s\t%s\t?\t\t" % (field(name), spec["type"]))
        for key, tag in (("input_ports", "in"), ("output_ports", "out")):
            for p in op.get(key, []):
                a = p["attrs"]
                kv = []
                for k in ("type_attr", "number_attr", "type_list_attr", "type"):
                    if k in a:
                        kv.append("%s=%s" % (k, field(a[k]["constant"])))
                if "is_ref" in a:
                    kv.append("is_ref=1")
                arity = "*" if p["arity"] == "variadic" else "1"
                lines.append("%s\t%s\t%d\t%s\t%s" % (tag, arity, p.get("min_arity", 1), field(a["name"]["constant"]), ",".join(kv)))
    return "\n".join(lines) + "\n"


def write(doc, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        if path.endswith(".json"):
            json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
            f.write("\n")
        else:
            f.write(compact(doc))
    print("wrote %s (%d ops, %d bytes)" % (path, len(doc["namespace"]["op_schemas"]), os.path.getsize(path)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default=os.path.join(ROOT, "../shared/tensorflow/ops.pbtxt"))
    ap.add_argument("--tfjs", default=os.path.join(ROOT, "tests/tensorflow/js/node_modules/@tensorflow/tfjs-converter"))
    ap.add_argument("--out", default=os.path.join(ROOT, "namespaces/tensorflow"))
    ap.add_argument("--json", action="store_true", help="write the seed-format JSON instead of the compact .tfops form")
    args = ap.parse_args()
    ext = ".json" if args.json else ".tfops"
    pb2, ops = load_registry(args.ops)
    write(tensorflow_namespace(pb2, ops), os.path.join(args.out, "2.2" + ext))
    mappers, version = load_tfjs_op_lists(args.tfjs)
    doc, mm = tfjs_namespace(mappers, version, {o.name for o in ops.op})
    write(doc, os.path.join(args.out, "tfjs", mm + ext))


if __name__ == "__main__":
    main()
