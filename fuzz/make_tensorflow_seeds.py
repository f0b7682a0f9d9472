#!/usr/bin/python3
"""Writes the TensorFlow fuzz target's seed corpus (fuzz/corpus/tensorflow): small GraphDefs in
binary ('b') and text ('t') form and small TF.js model.json files ('j', then a NUL byte, then the
bytes every shard path reads), and SavedModels ('s', then the lengths of saved_model.pb and of
variables.index as 4-byte little-endian integers, the two files, then the data shard; the bundle
index is written here with its own small SSTable writer and crc32c, from LevelDB's table format).
Needs protoc and python3-protobuf.

  /usr/bin/python3 fuzz/make_tensorflow_seeds.py
"""
import json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz/corpus/tensorflow")

GRAPHS = {
    "loop": r'''
node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "e" op: "Enter" input: "i0" attr { key: "T" value { type: DT_INT32 } } attr { key: "frame_name" value { s: "w" } } }
node { name: "m" op: "Merge" input: "e" input: "n" attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } } }
node { name: "c" op: "LoopCond" input: "m" }
node { name: "s" op: "Switch" input: "m" input: "c" attr { key: "T" value { type: DT_INT32 } } }
node { name: "n" op: "NextIteration" input: "s:1" attr { key: "T" value { type: DT_INT32 } } }
node { name: "x" op: "Exit" input: "s" input: "^c" attr { key: "T" value { type: DT_INT32 } } }
versions { producer: 27 }
''',
    "functions": r'''
library { function { signature { name: "f" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "o" type: DT_FLOAT } }
  node_def { name: "p" op: "Unpack" input: "a" attr { key: "num" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
  node_def { name: "s" op: "AddV2" input: "p:output:0" input: "p:output:1" attr { key: "T" value { type: DT_FLOAT } } }
  ret { key: "o" value: "s:z:0" } attr { key: "_k" value { list { i: 1 i: 2 } } } } }
node { name: "v" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
node { name: "if" op: "StatelessIf" input: "b" input: "v" attr { key: "then_branch" value { func { name: "f" } } }
  attr { key: "else_branch" value { func { name: "f" } } } attr { key: "Tin" value { list { type: DT_FLOAT } } } attr { key: "Tout" value { list { type: DT_FLOAT } } } }
node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_HALF } } attr { key: "value" value { tensor { dtype: DT_HALF tensor_shape { dim { size: 3 } } half_val: 15360 } } } }
node { name: "u" op: "Custom" input: "if:0" input: "k" attr { key: "s" value { shape { dim { size: 2 name: "n" } } } } attr { key: "t" value { list { type: DT_FLOAT } } } }
''',
}

TFJS = {
    "format": "graph-model", "generatedBy": "seed", "convertedBy": "seed",
    "signature": {"inputs": {"x:0": {"name": "x:0", "dtype": "DT_FLOAT"}}},
    "modelTopology": {"node": [
        {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"}, "shape": {"shape": {"dim": [{"size": "-1"}, {"size": "2"}]}}}},
        {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}, {"size": "2"}]}}}}},
        {"name": "b", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}}}}},
        {"name": "y", "op": "_FusedMatMul", "input": ["x", "w", "b"], "attr": {"T": {"type": "DT_FLOAT"}, "num_args": {"i": "1"},
                                                                          "fused_ops": {"list": {"s": ["Qmlhc0FkZA=="]}}}},
    ], "versions": {"producer": 440}},
}


def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff


def mask(c):
    return ((((c >> 15) | (c << 17)) & 0xffffffff) + 0xa282ead8) & 0xffffffff


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7f) | 0x80])
        v >>= 7
    return out + bytes([v])


def block(entries):
    """One uncompressed block: full keys (a restart at every entry), restart array, count."""
    body, restarts = b"", []
    for k, v in entries:
        restarts.append(len(body))
        body += varint(0) + varint(len(k)) + varint(len(v)) + k + v
    if not restarts:
        restarts = [0]
    return body + b"".join(r.to_bytes(4, "little") for r in restarts) + len(restarts).to_bytes(4, "little")


def sstable(entries):
    f = b""

    def put(contents):
        nonlocal f
        handle = varint(len(f)) + varint(len(contents))
        f += contents + b"\0" + mask(crc32c(b"\0", crc32c(contents))).to_bytes(4, "little")
        return handle

    data = put(block(entries))
    meta = put(block([]))
    index = put(block([(entries[-1][0], data)]))
    footer = (meta + index).ljust(40, b"\0") + (0xdb4775248b80fb57).to_bytes(8, "little")
    return f + footer


def bundle(sm_pb2, graph_pb2, tensors):
    """tensors: [(key, dtype, shape, raw bytes)] in key order -> (index, data)."""
    header = sm_pb2.BundleHeaderProto(num_shards=1)
    header.version.producer = 1
    entries, data = [(b"", header.SerializeToString())], b""
    for key, dtype, shape, raw in tensors:
        e = sm_pb2.BundleEntryProto(dtype=dtype, offset=len(data), size=len(raw), crc32c=mask(crc32c(raw)))
        for d in shape:
            e.shape.dim.add().size = d
        entries.append((key.encode(), e.SerializeToString()))
        data += raw
    return sstable(entries), data


def fix_string_crc(sm_pb2, index, data):
    """Rewrites the first entry's crc32c (a scalar string tensor) as TensorFlow computes it."""
    import struct
    e = sm_pb2.BundleEntryProto()
    # the data of entry "_CHECKPOINTABLE_OBJECT_GRAPH": varint(3), masked crc, "obj"
    raw = data[:8]
    crc = crc32c(struct.pack("<I", 3))
    crc = crc32c(raw[1:5], crc)
    crc = crc32c(raw[5:], crc)
    header = sm_pb2.BundleHeaderProto(num_shards=1)
    header.version.producer = 1
    entries = [(b"", header.SerializeToString())]
    e = sm_pb2.BundleEntryProto(dtype=7, offset=0, size=8, crc32c=mask(crc))
    entries.append((b"_CHECKPOINTABLE_OBJECT_GRAPH", e.SerializeToString()))
    e = sm_pb2.BundleEntryProto(dtype=9, offset=8, size=8, crc32c=mask(crc32c(data[8:16])))
    entries.append((b"step", e.SerializeToString()))
    e = sm_pb2.BundleEntryProto(dtype=1, offset=16, size=16, crc32c=mask(crc32c(data[16:32])))
    e.shape.dim.add().size = 2
    e.shape.dim.add().size = 2
    entries.append((b"w", e.SerializeToString()))
    return sstable(entries), data


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["protoc", "-I" + os.path.join(ROOT, "src/frameworks/tensorflow/proto"), "--python_out=" + tmp, "amanda_tf_graph.proto",
                        "amanda_tf_saved_model.proto"], check=True)
        sys.path.insert(0, tmp)
        import amanda_tf_graph_pb2 as graph_pb2
        import amanda_tf_saved_model_pb2 as sm_pb2
        from google.protobuf import text_format
        os.makedirs(OUT, exist_ok=True)
        for name, text in GRAPHS.items():
            g = graph_pb2.GraphDef()
            text_format.Parse(text, g)
            open(os.path.join(OUT, name + ".b"), "wb").write(b"b" + g.SerializeToString())
            open(os.path.join(OUT, name + ".t"), "wb").write(b"t" + text_format.MessageToString(g).encode())
    # Quantised and plain weights; the shard is the whole fuzz input, so the sizes are chosen to fit it.
    for name, weights in {
        "tfjs_plain": [{"name": "w", "shape": [2, 2], "dtype": "float32"}, {"name": "b", "shape": [2], "dtype": "float32"}],
        "tfjs_quant": [{"name": "w", "shape": [2, 2], "dtype": "float32", "quantization": {"dtype": "uint8", "min": -1, "scale": 0.5, "original_dtype": "float32"}},
                       {"name": "b", "shape": [2], "dtype": "float32", "quantization": {"dtype": "float16", "original_dtype": "float32"}}],
    }.items():
        m = dict(TFJS)
        m["weightsManifest"] = [{"paths": ["group1-shard1of1.bin"], "weights": weights}]
        body = json.dumps(m, separators=(",", ":"))
        need = sum((4 if "quantization" not in w else (1 if w["quantization"]["dtype"] == "uint8" else 2)) *
                   (w["shape"][0] * (w["shape"][1] if len(w["shape"]) > 1 else 1)) for w in weights)
        shard = bytes((7 * i + 3) % 251 for i in range(need))
        open(os.path.join(OUT, name + ".j"), "wb").write(b"j" + body.encode() + b"\0" + shard)
        # SavedModels: a frozen graph without variables; resource variables with a bundle (float,
        # int64, a string tensor) and a signature; two meta graphs, the served one second.
        import struct
        loop = graph_pb2.GraphDef()
        text_format.Parse(GRAPHS["loop"], loop)
        var_graph = graph_pb2.GraphDef()
        text_format.Parse(r'''
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
node { name: "w" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } dim { size: 2 } } } } attr { key: "shared_name" value { s: "w" } } }
node { name: "r" op: "ReadVariableOp" input: "w" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "y" op: "MatMul" input: "x" input: "r" attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 1087 }
''', var_graph)

        def saved_model(graphs, signature):
            sm = sm_pb2.SavedModel(saved_model_schema_version=1)
            for tags, g in graphs:
                mg = sm.meta_graphs.add()
                mg.meta_info_def.tags.extend(tags)
                mg.meta_info_def.tensorflow_version = "2.15.0"
                mg.graph_def = g.SerializeToString(deterministic=True)
                if signature and "serve" in tags:
                    s = mg.signature_def["serving_default"]
                    s.method_name = "tensorflow/serving/predict"
                    s.inputs["x"].name = "x:0"
                    s.inputs["x"].dtype = 1
                    s.inputs["x"].tensor_shape.dim.add().size = -1
                    s.outputs["y"].name = "y:0"
            return sm.SerializeToString(deterministic=True)

        def seed(name, pb, index=b"", data=b""):
            open(os.path.join(OUT, name + ".s"), "wb").write(b"s" + struct.pack("<II", len(pb), len(index)) + pb + index + data)

        seed("savedmodel_frozen", saved_model([(["serve"], loop)], False))
        index, data = bundle(sm_pb2, graph_pb2, [
            ("_CHECKPOINTABLE_OBJECT_GRAPH", 7, [], varint(3) + mask(crc32c(struct.pack("<I", 3))).to_bytes(4, "little") + b"obj"),
            ("step", 9, [], struct.pack("<q", 42)),
            ("w", 1, [2, 2], struct.pack("<4f", 1.0, -2.0, 0.5, 3.0)),
        ])
        # (the string entry's crc: the lengths as uint32, their masked crc, the bytes)
        seed("savedmodel_vars", saved_model([(["serve"], var_graph)], True), *fix_string_crc(sm_pb2, index, data))
        seed("savedmodel_two_graphs", saved_model([(["train"], loop), (["serve", "gpu"], var_graph)], True), *fix_string_crc(sm_pb2, index, data))
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
