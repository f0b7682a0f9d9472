#!/usr/bin/python3
"""The amanda tool on SameDiff files, as on every other format: `amanda validate a.fb`, `amanda fmt a.fb
-o b.fb` (flatc --json of both equal), `amanda convert a.fb -o a.onnx` (onnx.checker accepts it), `amanda
convert model.onnx -o model.fb` and `--to nd4j/1.0`, and a refusal that names the op and writes nothing.

Usage: tool_test.py AMANDA SHARED_ND4J
"""
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
FB_SCHEMA = os.path.join(HERE, "..", "..", "src/frameworks/nd4j/samediff.fbs")


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def flatc_json(fb, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", out_dir, FB_SCHEMA, "--", fb],
                   check=True, stderr=subprocess.DEVNULL)
    return open(os.path.join(out_dir, os.path.basename(fb)[:-3] + ".json")).read()


def main():
    amanda, shared = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp()
    fails = []
    models = os.path.join(shared, "models")
    for name in sorted(os.listdir(models)):
        src = os.path.join(models, name)
        r = run(amanda, "validate", src)
        if r.returncode != 0 or "valid" not in r.stdout:
            fails.append("validate %s: %s %s" % (name, r.stdout, r.stderr))
        out = os.path.join(tmp, name)
        r = run(amanda, "fmt", src, "-o", out)
        if r.returncode != 0:
            fails.append("fmt %s: %s" % (name, r.stderr))
        elif flatc_json(src, os.path.join(tmp, "a")) != flatc_json(out, os.path.join(tmp, "b")):
            fails.append("fmt %s: the written file differs (flatc --json)" % name)
    crelu = os.path.join(models, "channels_last_b1_k2_s1_d1_SAME_crelu.fb")
    r = run(amanda, "convert", crelu, "-o", os.path.join(tmp, "crelu.onnx"))
    if r.returncode != 0:
        fails.append("convert crelu.fb -o .onnx: " + r.stderr)
    else:
        onnx.checker.check_model(onnx.load(os.path.join(tmp, "crelu.onnx")), full_check=True)
    n = helper.make_node("Conv", ["X", "W"], ["Y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    g = helper.make_graph([n], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 8, 8]),
                                     helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 2, 3, 3])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, 8, 8])])
    conv = os.path.join(tmp, "conv.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), conv)
    for extra in ([], ["--to", "nd4j/1.0"]):
        out = os.path.join(tmp, "conv%d.fb" % len(extra))
        r = run(amanda, "convert", conv, *extra, "-o", out)
        if r.returncode != 0 or not os.path.exists(out):
            fails.append("convert conv.onnx %s -o .fb: %s" % (extra, r.stderr))
        elif '"conv2d"' not in flatc_json(out, os.path.join(tmp, "c")):
            fails.append("convert conv.onnx -o .fb: no conv2d in the file")
    # A grouped convolution DL4J's rule would get wrong: refused, naming the op, nothing written.
    n2 = helper.make_node("Conv", ["X", "W"], ["Y"], kernel_shape=[3, 3], group=2, name="grouped")
    g2 = helper.make_graph([n2], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 4, 8, 8]),
                                       helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 2, 3, 3])],
                           [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    bad = os.path.join(tmp, "grouped.onnx")
    onnx.save(helper.make_model(g2, opset_imports=[helper.make_opsetid("", 13)]), bad)
    r = run(amanda, "convert", bad, "-o", os.path.join(tmp, "grouped.fb"))
    if r.returncode == 0 or os.path.exists(os.path.join(tmp, "grouped.fb")) or "grouped" not in r.stdout + r.stderr:
        fails.append("a grouped Conv: expected a refusal naming the op, got exit %d: %s" % (r.returncode, r.stdout + r.stderr))
    # amanda validate checks nd4j's ordered arguments (the framework's validate hook): conv2d with its
    # INT64 argument 3 (sW) taken out of the YAML form, the arguments after it kept, is an error
    # naming the argument and the op's path; the unchanged YAML form validates.
    text_form = os.path.join(tmp, "crelu.yaml")
    r = run(amanda, "fmt", crelu, "-o", text_form)
    lines = open(text_form).read().split("\n") if r.returncode == 0 else []
    at = [i for i, l in enumerate(lines) if l.strip() == "- type: conv2d"]
    sw = [i for i in range(at[0], min(at[0] + 16, len(lines))) if lines[i].strip() == "sW: 1"] if at else []
    if not sw:
        fails.append("fmt crelu.fb -o .yaml: no conv2d with sW: 1 in the text form: " + r.stderr)
    else:
        r = run(amanda, "validate", text_form)
        if r.returncode != 0:
            fails.append("validate crelu.yaml (unchanged): " + r.stdout + r.stderr)
        del lines[sw[0]]
        missing = os.path.join(tmp, "crelu_no_sw.yaml")
        open(missing, "w").write("\n".join(lines))
        r = run(amanda, "validate", missing)
        msg = r.stdout + r.stderr
        if r.returncode == 0 or "argument 3 'sW'" not in msg or "conv2d/Conv2D" not in msg:
            fails.append("validate of conv2d without sW: expected an error naming argument 3 'sW' and the op, got exit %d: %s"
                         % (r.returncode, msg))
    for f in fails:
        print("FAIL:", f)
    print("amanda on .fb files: %d problems" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
