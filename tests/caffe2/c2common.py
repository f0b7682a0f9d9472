"""Shared by the Caffe2 tests (tests/caffe2/*.py): the NetDef schema compiled by protoc from
../shared/caffe2/proto (an independent reader of the same files: Google's protobuf, not ours),
onnxruntime-node runs (tests/js), and the commands under test."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shared_dir():
    for d in (os.path.join(ROOT, "..", "shared"), os.path.join(ROOT, "..", "..", "shared")):
        if os.path.isdir(os.path.join(d, "caffe2")):
            return os.path.abspath(os.path.join(d, "caffe2"))
    sys.exit("../shared/caffe2 not found")


_pb2 = None


def caffe2_pb2():
    global _pb2
    if _pb2 is None:
        out = tempfile.mkdtemp(prefix="c2pb")
        proto = os.path.join(shared_dir(), "proto")
        subprocess.run(["protoc", "--python_out=" + out, "-I" + proto, os.path.join(proto, "caffe2.proto")], check=True)
        sys.path.insert(0, out)
        import caffe2_pb2 as m
        _pb2 = m
    return _pb2


def read_net(path):
    n = caffe2_pb2().NetDef()
    data = open(path, "rb").read()
    if path.endswith(".pbtxt"):
        from google.protobuf import text_format
        text_format.Parse(data.decode(), n)
    else:
        n.ParseFromString(data)
    return n


def fills(init):
    """blob -> numpy array of an init net's GivenTensor*Fill ops."""
    out = {}
    for op in init.op:
        args = {a.name: a for a in op.arg}
        dt = {"GivenTensorFill": np.float32, "GivenTensorIntFill": np.int32, "GivenTensorInt64Fill": np.int64}[op.type]
        vals = list(args["values"].floats) if dt == np.float32 else list(args["values"].ints)
        out[op.output[0]] = np.array(vals, dtype=dt).reshape(list(args["shape"].ints))
    return out


def run_ort(jobs, tmp, raise_errors=True):
    """jobs: [(model, {name: array}, prefix)] -> [[outputs]] (float32) via onnxruntime-node; with
    raise_errors False, a job that fails gives a RuntimeError in its place."""
    spec = []
    for j, (model, inputs, prefix) in enumerate(jobs):
        ins = {}
        for name, x in inputs.items():
            f = os.path.join(tmp, f"job{j}.{len(ins)}.in.bin")
            x.astype(np.float32).tofile(f)
            ins[name] = {"file": f, "shape": list(x.shape)}
        spec.append({"model": model, "inputs": ins, "out": prefix})
    jf = os.path.join(tmp, "jobs.json")
    json.dump(spec, open(jf, "w"))
    r = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run.js"), jf], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr)
    res = []
    for _, _, prefix in spec_iter(spec):
        meta = json.load(open(prefix + ".json"))
        if "error" in meta:
            if raise_errors:
                raise RuntimeError(meta["error"])
            res.append(RuntimeError(meta["error"]))
            continue
        outs = []
        for k, o in enumerate(meta["outputs"]):
            outs.append(np.fromfile(f"{prefix}.{k}.bin", dtype=np.float32).reshape(o["shape"]))
        res.append(outs)
    return res


def spec_iter(spec):
    for s in spec:
        yield s["model"], s["inputs"], s["out"]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r


def to_onnx(amanda, predict, out, init=None, input_shapes=()):
    """A NetDef -> ONNX opset 13 with the tool: `amanda convert predict_net.pb --option
    init_net=init_net.pb --input-shape NAME:DIMS --to onnx/13 --report json -o out`. The reader
    reaches the init net through the gate (the model's folder): one kept elsewhere is copied beside
    the predict net first. Returns the completed process (stdout: the JSON report)."""
    if init and os.path.dirname(os.path.abspath(init)) != os.path.dirname(os.path.abspath(predict)):
        d = out + ".net"
        os.makedirs(d, exist_ok=True)
        ext = os.path.splitext(predict)[1]
        shutil.copyfile(predict, os.path.join(d, "predict_net" + ext))
        shutil.copyfile(init, os.path.join(d, "init_net.pb"))
        predict, init = os.path.join(d, "predict_net" + ext), os.path.join(d, "init_net.pb")
    cmd = [amanda, "convert", predict, "--to", "onnx/13", "--report", "json", "-o", out]
    if init:
        cmd += ["--option", "init_net=" + os.path.basename(init)]
    for name, shape in input_shapes:
        cmd += ["--input-shape", f"{name}:{','.join(map(str, shape))}"]
    return run(cmd)
