#!/usr/bin/python3
# Runs onnx.checker.check_model on every model of Debian's libonnx-testdata and prints the ones it
# rejects (relative to the data folder), one per line. tests/onnx/checker_rejects.txt is its output;
# the ONNX tests skip the schema validation of exactly those models.
# Run with /usr/bin/python3: Debian's python3-onnx is not visible to other interpreters.
import glob
import os
import sys

import onnx
import onnx.checker

root = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/libonnx-testdata/data"
for path in sorted(glob.glob(os.path.join(root, "*", "*", "model.onnx"))):
    try:
        onnx.checker.check_model(onnx.load(path, load_external_data=False))
    except Exception as e:  # the checker's own error types vary between versions
        print(os.path.relpath(path, root), "#", str(e).splitlines()[0][:120] if str(e) else type(e).__name__)
