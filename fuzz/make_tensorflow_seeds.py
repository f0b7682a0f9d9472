#!/usr/bin/python3
"""Writes the TensorFlow fuzz target's seed corpus (fuzz/corpus/tensorflow): small GraphDefs in
binary ('b') and text ('t') form and small TF.js model.json files ('j', then a NUL byte, then the
bytes every shard path reads). Needs protoc and python3-protobuf.

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


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["protoc", "-I" + os.path.join(ROOT, "src/frontends/tensorflow/proto"), "--python_out=" + tmp, "amanda_tf_graph.proto"], check=True)
        sys.path.insert(0, tmp)
        import amanda_tf_graph_pb2 as graph_pb2
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
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
