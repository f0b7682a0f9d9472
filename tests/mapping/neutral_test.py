#!/usr/bin/python3
"""The mapping layer knows no framework (issue 12, "Boundaries in the right place").

    neutral_test.py SRC_MAPPING_DIR

Fails when a source file in src/mapping/ (comments aside) holds a framework's convention: a
constant op's or initializer's spelling ("Constant", "prim::Constant", "initializer"), an element
type numbering's name ("onnx", "torch") or table ({1, "float32"}), or ONNX's/torch's type names
(TensorProto, ScalarType). Those are registered by the frontends (amanda/ir/conventions.h). Before
checking the tree the script checks itself on a snippet that must be refused.
"""
import os
import re
import sys

RULES = [
    ("constant/initializer spelling", re.compile(r'"(prim::Constant|Constant|initializer)"')),
    ("element type system name", re.compile(r'"(onnx|torch)"')),
    ("element type code table",
     re.compile(r'\{\s*-?\d+\s*,\s*"(u?int(8|16|32|64)|float(16|32|64)|bfloat16|bool|string|complex(64|128))"')),
    ("framework type name", re.compile(r'\b(TensorProto|ScalarType|c10::)')),
]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def violations(name, text):
    out = []
    for no, line in enumerate(strip_comments(text).split("\n"), 1):
        for what, rx in RULES:
            if rx.search(line):
                out.append(f"{name}:{no}: {what}: {line.strip()}")
    return out


def main():
    snippet = 'const T t = {{1, "float32"}};\nif (type == "prim::Constant") f("onnx"); // "Constant" in a comment is fine\n'
    found = violations("self-check", snippet)
    if len(found) != 3:
        print("the checker itself is broken; it found:", *found, sep="\n  ")
        return 2
    root = sys.argv[1]
    files = sorted(f for f in os.listdir(root) if f.endswith((".cpp", ".h")))
    if not files:
        print(f"no sources in {root}")
        return 2
    bad = []
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            bad += violations(f, fh.read())
    for b in bad:
        print(b)
    print(f"{len(files)} files in {root}: {len(bad)} framework conventions")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
