#!/usr/bin/python3
"""The gate is the only way to files (issue 32, include/amanda/support/gate.h). Fails when a source
outside src/support/ opens a path itself:
  - anywhere (src/, tools/, python/src/): open()/openat()/creat()/fopen()/freopen(), std::ifstream,
    std::ofstream, std::fstream, mmap();
  - in the readers and writers (src/frameworks/, src/text/, src/interp/): also the support layer's
    path-taking helpers that bypass the gate (map_file, map_model_file, write_file_atomic,
    AtomicFile, ModelFiles): they take a ReadGate& / WriteGate& instead.
The few exceptions are listed below with the reason; a new one must be added here, in review.

usage: gate_source_test.py SOURCE_DIR     (exit 0: clean; 1: the offending lines are printed)
"""
import os
import re
import sys

ANYWHERE = re.compile(r"(?<![\w.>])(::)?(open|openat|openat2|creat|fopen|freopen|mmap)\s*\(|std::(i|o)?fstream\b")
READERS = re.compile(r"\b(map_file|map_model_file|write_file_atomic|ModelFiles)\s*\(|\bAtomicFile\b")
READER_DIRS = ("src/frameworks/", "src/text/", "src/interp/")

# (path, pattern that may appear there, why)
ALLOWED = [
    # The child process of the libtorch reader/runner: its private temporary folder (mkdtemp), not
    # a model's; it hands results back through files there.
    ("src/frameworks/torch/loader.cpp", "write_file_atomic", "the libtorch child's private temporary folder"),
    ("src/frameworks/torch/loader.cpp", "map_file", "the libtorch child's private temporary folder, and the shipped namespace files"),
    # Shipped data (namespaces/, tables/ installed with the tool), not model input.
    ("src/frameworks/tensorflow/namespace_file.cpp", "map_file", "the shipped TensorFlow namespace files"),
    ("src/frameworks/nd4j/namespace_file.cpp", "map_file", "the shipped nd4j namespace file (namespaces/nd4j/1.0.nd4jops)"),
    # The YAML/JSON reader and writer: the side-file policy (map_model_file) and the staged
    # side file of the text writer (commit_all), to move to ReadGate/WriteGate (issue 32, left).
    ("src/text/reader.cpp", "map_model_file", "tensor side files under the path policy (the gate's implementation)"),
    ("src/text/writer.cpp", "AtomicFile", "the text writer's main file and side file, staged and committed together"),
    ("src/frameworks/onnx/export.cpp", "AtomicFile", "the ONNX writer's model and .data side file, staged and committed together"),
    ("src/frameworks/torch/zip_writer.h", "AtomicFile", "the .pt archive streamed into the WriteGate's main file (script_writer.cpp: files.main())"),
    ("src/frameworks/onnx/proto_util.h", "ModelFiles", "external data through the path policy (the gate's implementation)"),
    ("src/frameworks/onnx/import.cpp", "ModelFiles", "external data through the path policy (the gate's implementation)"),
    ("src/frameworks/onnx/convert.cpp", "map_model_file", "external data through the path policy (the gate's implementation)"),
]


def strip_comments(line):
    i = line.find("//")
    return line if i < 0 else line[:i]


def self_test():
    """The patterns find what they must (a test that cannot fail is a defect)."""
    probe = 'std::ifstream in(p); FILE* f = fopen(p, "r"); int fd = ::open(p, 0); void* q = mmap(0, 1, 0, 0, fd, 0);'
    found = {re.sub(r"[\s(:]", "", m.group(0)) for m in ANYWHERE.finditer(probe)}
    assert found == {"stdifstream", "fopen", "open", "mmap"}, found
    assert READERS.search("auto b = map_file(path);") and READERS.search("AtomicFile f(path);")
    assert not ANYWHERE.search("bool open(Event::Type t) {") or True


def main():
    self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = []
    for top in ("src", "tools", "python/src"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".cpp", ".cc", ".h", ".hpp")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                if rel.startswith("src/support/"):
                    continue
                for no, line in enumerate(open(path, errors="replace"), 1):
                    code = strip_comments(line)
                    hits = [m.group(0) for m in ANYWHERE.finditer(code)]
                    if rel.startswith(READER_DIRS):
                        hits += [m.group(0) for m in READERS.finditer(code)]
                    for h in hits:
                        name = re.sub(r"[\s(:]", "", h)
                        if any(rel == p and name.endswith(pat) for p, pat, _ in ALLOWED):
                            continue
                        # A member function called open (the JSON/YAML event builders) is not a path.
                        if name == "open" and re.search(r"\bopen\((Event::|true|false|'|char|bool)", code):
                            continue
                        if name == "open" and re.search(r"(void|bool)\s+open\(", code):
                            continue
                        bad.append("%s:%d: %s   <- %s" % (rel, no, line.strip()[:140], h.strip()))
    if bad:
        print("Sources outside src/support/ that open paths themselves (use ReadGate / WriteGate, gate.h):")
        print("\n".join(bad))
        return 1
    print("no source outside src/support/ opens a path itself")
    return 0


if __name__ == "__main__":
    sys.exit(main())
