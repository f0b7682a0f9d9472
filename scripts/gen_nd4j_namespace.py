#!/usr/bin/python3
"""Writes namespaces/nd4j/1.0.nd4jops, the nd4j namespace, from nd4j's op descriptors.

Usage: /usr/bin/python3 scripts/gen_nd4j_namespace.py ../shared/nd4j/nd4j-op-def.pbtxt [OUT]

The descriptors (OpNamespace.OpDescriptorList, DL4J commit 8129c4acc1) are parsed with protobuf's
text format against src/frameworks/nd4j/proto/nd4j_ir.proto (compiled by protoc into a temporary
folder). The compact form is read by src/frameworks/nd4j/namespace_file.cpp; its grammar is there.
tests/nd4j/namespace_gen_test.py regenerates it and fails when the shipped file differs.
"""
import collections
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "src", "frameworks", "nd4j", "proto")

KIND = {"INT64": "int64", "INT32": "int32", "DOUBLE": "double", "FLOAT": "float", "BOOL": "bool",
        "DATA_TYPE": "dtype", "STRING": "string"}
# The IR attribute's suffix when one name is used by arguments of several types (range's from/to/step
# are DOUBLE and INT64 arguments both): from_double, from_int64.
ORDER = ["INPUT_TENSOR", "OUTPUT_TENSOR", "INT64", "INT32", "DOUBLE", "FLOAT", "BOOL", "DATA_TYPE", "STRING"]

# libnd4j registers some ops under second names (DECLARE_SYN in the op's .cpp); SameDiff files
# written by older importers use them (libnd4j's own test graphs do), the descriptors list only
# the first name.
ALIASES = {
    "create_list": ["tensorarrayv3"],
    "read_list": ["tensorarrayreadv3"],
    "split_list": ["tensorarraysplitv3"],
    "scatter_list": ["tensorarrayscatterv3"],
    "strided_slice": ["stridedslice"],
}


def load(pbtxt):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["protoc", "--python_out=" + tmp, "-I", PROTO_DIR, "nd4j_ir.proto"], check=True)
        sys.path.insert(0, tmp)
        import nd4j_ir_pb2 as pb
        from google.protobuf import text_format
        lst = pb.OpDescriptorList()
        with open(pbtxt) as f:
            text_format.Parse(f.read(), lst)
        return pb, lst


def main():
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "namespaces", "nd4j", "1.0.nd4jops")
    pb, lst = load(src)
    AT = pb.ArgDescriptor.ArgType
    DT = pb.OpDescriptor.OpDeclarationType
    lines = ["amanda-nd4jops 1", "namespace\tamanda/nd4j/1.0"]
    for op in sorted(lst.opList, key=lambda o: o.name):
        lines.append("op\t%s\t%s" % (op.name, DT.Name(op.opDeclarationType)))
        args = sorted(op.argDescriptor, key=lambda a: (ORDER.index(AT.Name(a.argType)), a.argIndex))
        kinds = collections.defaultdict(set)
        for a in args:
            t = AT.Name(a.argType)
            if t not in ("INPUT_TENSOR", "OUTPUT_TENSOR"):
                kinds[a.name].add(t)
        for a in args:
            t = AT.Name(a.argType)
            if t == "INPUT_TENSOR":
                lines.append("in\t%d\t%s" % (a.argIndex, a.name))
            elif t == "OUTPUT_TENSOR":
                lines.append("out\t%d\t%s" % (a.argIndex, a.name))
            else:
                attr = a.name if len(kinds[a.name]) == 1 else a.name + "_" + KIND[t]
                lines.append("arg\t%s\t%d\t%s\t%s" % (KIND[t], a.argIndex, a.name, attr))
        for alias in ALIASES.get(op.name, []):
            lines.append("alias\t%s" % alias)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
