#!/usr/bin/env python3
"""Writes a model with big external weights: OUT_DIR/big.onnx and OUT_DIR/big.onnx.data.

A chain y_i = Add(y_{i-1}, w_i) over N float32 initializers of M MiB each (default 24 x 128 MiB
= 3 GiB), all in one external-data file. The data is written in 8 MiB chunks (the maker itself
stays small) with contents that differ per tensor, chunk and position. Prints one JSON line:
{"tensors": [{"name", "length", "blake2b"}, ...]} with the hash of each tensor's bytes.

  /usr/bin/python3 scripts/make_big_external_model.py OUT_DIR [--tensors 24] [--mib 128]
"""
import argparse
import hashlib
import json
import os

import numpy as np
from onnx import TensorProto, helper

CHUNK = 8 << 20


def chunk_bytes(tensor, index, n):
    # Knuth's multiplicative hash of the position, salted per tensor and chunk: cheap, not constant.
    x = np.arange(n // 4, dtype=np.uint32)
    x *= np.uint32(2654435761)
    x ^= np.uint32((tensor * 1000003 + index * 7919 + 1) & 0xFFFFFFFF)
    return x.tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--tensors", type=int, default=24)
    ap.add_argument("--mib", type=int, default=128)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    data_name = "big.onnx.data"
    size = a.mib << 20
    elems = size // 4
    inits, nodes, info = [], [], []
    prev = "x"
    offset = 0
    with open(os.path.join(a.out_dir, data_name), "wb") as f:
        for t in range(a.tensors):
            h = hashlib.blake2b(digest_size=16)
            left, c = size, 0
            while left:
                n = min(CHUNK, left)
                b = chunk_bytes(t, c, n)
                h.update(b)
                f.write(b)
                left -= n
                c += 1
            name = f"w{t}"
            tp = TensorProto()
            tp.name = name
            tp.data_type = TensorProto.FLOAT
            tp.dims.extend([elems])
            tp.data_location = TensorProto.EXTERNAL
            for k, v in (("location", data_name), ("offset", str(offset)), ("length", str(size))):
                e = tp.external_data.add()
                e.key, e.value = k, v
            inits.append(tp)
            out = f"y{t}"
            nodes.append(helper.make_node("Add", [prev, name], [out], name=f"add{t}"))
            prev = out
            info.append({"name": name, "length": size, "blake2b": h.hexdigest()})
            offset += size
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [elems])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [elems])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_big_external_model")
    with open(os.path.join(a.out_dir, "big.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    print(json.dumps({"tensors": info}))


if __name__ == "__main__":
    main()
