#!/usr/bin/python3
"""PyTorch 1.13.1's own ONNX exporter tests, run against `amanda convert` and torch.onnx.export.

    run_suite.py AMANDA [--suite DIR] [--all | --sample N] [--only REGEX] [--results FILE]
                 [--keep DIR] [--jobs N] [--min-ratio R] [-v]

The suite is test/onnx/test_pytorch_onnx_onnxruntime.py of Debian's pytorch source package
(fetch_suite.sh fetches it into build-cache/; nothing of it is committed). This runs its opset-13
tracing class (TestONNXRuntime_opset_version_13_is_script_False_keep_initializers_as_inputs_False)
with a stand-in for torch.onnx.verification.verify, the function every run_test ends in. For
each call the stand-in:

  * exports the model with torch.onnx.export exactly as verify does (opset 13, the test's
    dynamic_axes, input names, constant folding, training mode);
  * traces the same model (torch.jit.trace; Python numbers, None and bools among the arguments
    are constants of the trace, as for the exporter; outputs flattened as verify flattens them),
    saves it with torch.jit.save, and later converts it with
    `amanda convert M.pt --input-shape .. --input-type .. -o M.onnx` (one shape per tensor
    argument, '' for 0-d; the dimensions the test's dynamic_axes name are written as names, so
    the model takes the test's additional inputs too);
  * runs torch's model on the main and the additional inputs (as verify does).

Then every model of both exporters runs in onnxruntime-node (tests/js/ort_run_typed.js, one Node
process for all), amanda's models are first checked with onnx.checker (full check), and each
output is compared with torch's as verify compares (torch.testing.assert_close with the test's
rtol, atol at least 1e-5, same dtype and shape). A test passes for an exporter when every
verify call in it passes.

Outcomes for amanda: pass, mismatch (runs, numbers/dtype/shape differ), invalid (the checker or
onnxruntime refuses the model), run_error, refused (amanda convert exits with an error: its
message names the op), trace_error (torch.jit.trace/save of the model fails). Tests the harness
cannot judge (skipped by the suite, raising outside verify, expecting torch's exporter to raise)
are counted apart.

CI (ctest pytorch.peer_suite) runs a deterministic sample (--sample N: every k-th test by name);
--all or AMANDA_PEER_SUITE=all runs the whole class. Exits 1 if amanda gives a mismatch or an
invalid model, or passes fewer than --min-ratio of the tests torch passes; 77 when the suite is
not fetched.
"""
import argparse
import concurrent.futures
import copy
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import types
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
CLASS = "TestONNXRuntime_opset_version_13_is_script_False_keep_initializers_as_inputs_False"
ATOL_MIN = 1e-5
NP_TYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32, "bool": np.bool_,
            "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "float16": np.float16}


def install_stubs():
    """Modules the suite imports that the harness replaces: onnxruntime (Node's runs the models),
    parameterized (only the one class is made), expecttest (torch's test base class)."""
    ort = types.ModuleType("onnxruntime")
    ort.set_seed = lambda seed: None

    def no_ort(*a, **k):
        raise RuntimeError("harness: the Python onnxruntime is not available (the test calls it directly)")
    ort.InferenceSession = no_ort
    ort.SessionOptions = no_ort
    sys.modules["onnxruntime"] = ort

    par = types.ModuleType("parameterized")
    made = {}

    def parameterized_class(attrs=None, input_values=None, class_name_func=None, **_):
        def deco(cls):
            vals = dict(opset_version=13, is_script=False, keep_initializers_as_inputs=False)
            made[CLASS] = type(CLASS, (cls,), vals)
            return cls
        return deco
    par.parameterized_class = parameterized_class
    par.made = made
    sys.modules["parameterized"] = par

    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401
        except ImportError:
            et = types.ModuleType("expecttest")

            class TestCase(unittest.TestCase):
                def assertExpectedInline(self, *a, **k):
                    pass
            et.TestCase = TestCase
            et.ACCEPT = False
            sys.modules["expecttest"] = et
    return made


# --- the stand-in for verification.verify -------------------------------------------------------

class Recorder:
    def __init__(self, tmp):
        self.tmp = tmp
        self.test = None  # the running test's record
        self.n = 0


REC = None


def tensor_leaves(obj, out):
    """The tensors of a nested argument, in torch.jit._flatten's order."""
    import torch
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            tensor_leaves(o, out)
    elif isinstance(obj, dict):
        for k in obj:
            tensor_leaves(obj[k], out)
    return out


def rebuild(obj, it):
    import torch
    if isinstance(obj, torch.Tensor):
        return next(it)
    if isinstance(obj, tuple):
        return tuple(rebuild(o, it) for o in obj)
    if isinstance(obj, list):
        return [rebuild(o, it) for o in obj]
    if isinstance(obj, dict):
        return {k: rebuild(v, it) for k, v in obj.items()}
    return obj


def make_wrapper(model, args, kwargs):
    """A module whose forward takes the tensors of (args, kwargs) and returns the flat outputs:
    what torch.onnx.export sees of the model (non-tensor arguments are constants of the trace)."""
    import torch

    class Flat(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, *ts):
            it = iter(ts)
            a = rebuild(args, it)
            k = rebuild(kwargs, it)
            out = self.m(*a, **k)
            flat, _ = torch.jit._flatten(out)
            return tuple(flat)
    return Flat()


def dtype_name(t):
    import torch
    return {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64", torch.int32: "int32",
            torch.bool: "bool", torch.uint8: "uint8", torch.int8: "int8", torch.int16: "int16",
            torch.float16: "float16"}.get(t.dtype)


def save_inputs(base, values):
    """Writes each value (tensor or number, as torch's _run_ort makes them numpy) to a .bin."""
    import torch
    out = []
    for k, v in enumerate(values):
        a = v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else np.array(v)
        name = str(a.dtype) if a.dtype != np.bool_ else "bool"
        f = f"{base}.in{k}.bin"
        np.ascontiguousarray(a).tofile(f)
        out.append({"file": f, "shape": list(a.shape), "type": name})
    return out


def stand_in_verify(model, input_args, input_kwargs=None, do_constant_folding=True, dynamic_axes=None,
                    input_names=None, output_names=None, training=None, opset_version=None,
                    keep_initializers_as_inputs=True, verbose=False, fixed_batch_size=False,
                    use_external_data=False, additional_test_inputs=None, remained_onnx_input_idx=None,
                    flatten=True, ignore_none=True, check_shape=True, check_dtype=True, ort_providers=None,
                    rtol=0.001, atol=1e-7, acceptable_error_percentage=None, **_):
    import torch
    from torch.onnx import utils, verification as V
    if training is None:
        training = torch.onnx.TrainingMode.EVAL
    REC.n += 1
    base = os.path.join(REC.tmp, f"c{REC.n}")
    case = {"base": base, "rtol": rtol, "atol": max(atol, ATOL_MIN), "check_shape": check_shape,
            "check_dtype": check_dtype, "acceptable": acceptable_error_percentage, "sets": []}
    REC.test["cases"].append(case)
    if training == torch.onnx.TrainingMode.TRAINING:
        model.train()
    elif training == torch.onnx.TrainingMode.EVAL:
        model.eval()
    with torch.no_grad():
        pt_args, pt_kwargs = V._prepare_input_for_pytorch(input_args, input_kwargs)
        model_ref = V._try_clone_model(model)
        model_trace = V._try_clone_model(model)
        # amanda's side: the traced model
        try:
            wrapper = make_wrapper(model_trace, pt_args, pt_kwargs)
            leaves = tensor_leaves(pt_args, []) + tensor_leaves(pt_kwargs, [])
            traced = torch.jit.trace(wrapper, tuple(copy.deepcopy(leaves)), check_trace=False, strict=False)
            torch.jit.save(traced, base + ".pt")
            case["amanda_inputs"] = [{"shape": list(t.shape), "type": dtype_name(t)} for t in leaves]
            case["dynamic"] = dynamic_dims(input_names, dynamic_axes, len(leaves))
        except Exception as e:
            case["trace_error"] = f"{type(e).__name__}: {first_line(e)}"
        # torch's side
        inputs_for_export = V._prepare_input_for_export(input_args, input_kwargs)
        err = None
        try:
            utils._export(model, inputs_for_export, base + ".torch.onnx", opset_version=opset_version,
                          do_constant_folding=do_constant_folding,
                          keep_initializers_as_inputs=keep_initializers_as_inputs, dynamic_axes=dynamic_axes,
                          input_names=input_names, output_names=output_names, fixed_batch_size=fixed_batch_size,
                          training=training, verbose=False)
        except Exception as e:
            case["torch_error"] = f"{type(e).__name__}: {first_line(e)}"
            err = e
        # the reference outputs and both models' inputs, per input set
        sets = [(input_args, input_kwargs)] + [(a, {}) for a in (additional_test_inputs or [])]
        for j, (a, kw) in enumerate(sets):
            s = {}
            try:
                pa, pk = V._prepare_input_for_pytorch(a, kw)
                outs = V._try_clone_model(model_ref)(*pa, **pk)
                if ignore_none:
                    outs, _ = torch.jit._flatten(outs)
                else:
                    outs = V._inline_flatten_list([outs], [])
                refs = V._unpack_to_numpy(outs, cast_onnx_accepted=False)
                s["refs"] = [np.asarray(r) for r in refs]
                ort_in = V._prepare_input_for_ort(a, kw, remained_onnx_input_idx, flatten)
                if ort_in and isinstance(ort_in[-1], dict):
                    ort_in = list(ort_in[:-1])
                ort_in = V._unpack_to_numpy(V._flatten_tuples(ort_in))
                s["torch_inputs"] = save_inputs(f"{base}.s{j}.t", ort_in)
                pa, pk = V._prepare_input_for_pytorch(a, kw)
                s["amanda_inputs"] = save_inputs(f"{base}.s{j}.a", tensor_leaves(pa, []) + tensor_leaves(pk, []))
            except Exception as e:
                s["error"] = f"{type(e).__name__}: {first_line(e)}"
            case["sets"].append(s)
    if err is not None:
        raise err


def dynamic_dims(input_names, dynamic_axes, n):
    """{input index: {dim: name}} from the test's dynamic_axes (keyed by input names)."""
    out = {}
    if not dynamic_axes or not input_names:
        return out
    for i, name in enumerate(input_names[:n]):
        axes = dynamic_axes.get(name)
        if axes is None:
            continue
        if isinstance(axes, dict):
            out[i] = {int(d): str(v) for d, v in axes.items()}
        else:
            out[i] = {int(d): f"{name}_dim{d}" for d in axes}
    return out


def first_line(e):
    s = str(e).strip()
    return (s.splitlines()[0] if s else "")[:400]


class Timeout(Exception):
    pass


def run_tests(cls, names, tmp, per_test_timeout, verbose):
    global REC
    REC = Recorder(tmp)
    records = []

    def on_alarm(signum, frame):
        raise Timeout(f"test ran over {per_test_timeout} s")
    signal.signal(signal.SIGALRM, on_alarm)
    for name in names:
        rec = {"test": name, "cases": []}
        REC.test = rec
        res = unittest.TestResult()
        t0 = time.time()
        signal.alarm(per_test_timeout)
        try:
            cls(name).run(res)
        except Timeout as e:
            res.errors.append((None, str(e)))
        finally:
            signal.alarm(0)
        rec["seconds"] = round(time.time() - t0, 2)
        if res.skipped:
            rec["outcome"] = "skipped"
            rec["detail"] = str(res.skipped[0][1])[:300]
        elif res.errors or res.failures:
            tb = (res.errors + res.failures)[0][1]
            rec["outcome"] = "raised"
            rec["detail"] = tb.strip().splitlines()[-1][:400]
        elif res.expectedFailures:
            rec["outcome"] = "expected_failure"
        else:
            rec["outcome"] = "ok"
        records.append(rec)
        if verbose:
            print(f"  {name}: {rec['outcome']} ({len(rec['cases'])} calls, {rec['seconds']} s)", flush=True)
    return records


# --- conversion, running, comparison -------------------------------------------------------------

def convert(amanda, case, timeout=180):
    """The test's dynamic axes as symbolic dimensions; where amanda refuses those, a model per
    distinct shape of the input sets (as a user of a fixed-shape converter would)."""
    dyn = case.get("dynamic", {})
    if dyn:
        status, detail = convert_one(amanda, case, case["amanda_inputs"], dyn, case["base"] + ".amanda.onnx", timeout)
        if status == "converted":
            return status, detail
    shapes_done = {}
    for j, s in enumerate(case["sets"]):
        if "amanda_inputs" not in s:
            continue
        key = tuple(tuple(x["shape"]) for x in s["amanda_inputs"])
        if key in shapes_done:
            s["amanda_model"] = shapes_done[key]
            continue
        out = case["base"] + (".amanda.onnx" if j == 0 else f".s{j}.amanda.onnx")
        status, detail = convert_one(amanda, case, s["amanda_inputs"], {}, out, timeout)
        if status != "converted":
            return status, detail
        shapes_done[key] = s["amanda_model"] = out
    return "converted", ""


def convert_one(amanda, case, inputs, dyn, out, timeout):
    cmd = [amanda, "convert", case["base"] + ".pt", "-o", out]
    for i, x in enumerate(inputs):
        dims = [str(d) for d in x["shape"]]
        for d, nm in dyn.get(i, {}).items():
            if d < len(dims):
                dims[d] = "d_" + re.sub(r"[^A-Za-z0-9_]", "_", nm)  # a name, never a number
        cmd += ["--input-shape", ",".join(dims)]
    for x in inputs:
        cmd += ["--input-type", x["type"] or "float32"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "refused", f"amanda convert ran over {timeout} s"
    if r.returncode != 0:
        return "refused", refusal_reason(r.stdout + "\n" + r.stderr, r.returncode)
    return "converted", ""


def refusal_reason(text, code):
    """The ops amanda names (the unmapped list), else its error line."""
    lines = text.splitlines()
    ops = [m.group(1) for m in (re.match(r"^\s+(\S+::\S+)\s+x\d+", l) for l in lines) if m]
    if ops:
        return "unmapped: " + ", ".join(ops)
    errs = [l.strip() for l in lines if "error" in l.lower() and "cpuinfo" not in l and "no output written" not in l]
    if errs:
        return errs[-1][:500]
    rest = [l.strip() for l in lines if l.strip()]
    return (rest[-1] if rest else f"exit {code}")[:500]


def graph_inputs(path):
    import onnx
    g = onnx.load(path).graph
    inits = {t.name for t in g.initializer}
    return [v.name for v in g.input if v.name not in inits]


def onnx_check(path):
    import onnx
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
        return ""
    except Exception as e:
        return first_line(e)


def compare(outs, refs, base, case):
    """verify's comparison (torch.testing.assert_close, dtype and shape checked)."""
    import torch
    if len(outs) != len(refs):
        return f"{len(outs)} outputs, torch gives {len(refs)}"
    for k, (o, want) in enumerate(zip(outs, refs)):
        got = np.fromfile(f"{base}.{k}.bin", dtype=NP_TYPES.get(o["type"], np.float32)).reshape(o["shape"])
        try:
            g, w = got, np.asarray(want)
            if not case["check_shape"]:
                g, w = np.broadcast_arrays(g, w)
            torch.testing.assert_close(g, w, rtol=case["rtol"], atol=case["atol"],
                                       check_dtype=case["check_dtype"], equal_nan=True)
        except (AssertionError, ValueError, TypeError, RuntimeError) as e:
            acc = case.get("acceptable")
            if acc and got.shape == np.shape(want):
                bad = 1 - np.sum(np.isclose(got, want, rtol=case["rtol"], atol=case["atol"])) / max(got.size, 1)
                if bad <= acc:
                    continue
            msg = " ".join(str(e).split())[:300]
            return f"output {k} ({o['type']} {o['shape']}; torch {np.asarray(want).dtype} {list(np.shape(want))}): {msg}"
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("amanda")
    ap.add_argument("--suite", help="the folder of test_pytorch_onnx_onnxruntime.py (default: fetch_suite.sh's)")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--sample", type=int, default=60, help="tests in the deterministic sample (default 60)")
    ap.add_argument("--only", help="tests whose name matches this regex")
    ap.add_argument("--results", help="write every test's outcome here (JSON)")
    ap.add_argument("--keep", help="keep the models here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test (export and trace)")
    ap.add_argument("--min-ratio", type=float, default=0.0,
                    help="fail when amanda passes fewer than this share of the tests torch passes")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    suite = a.suite or os.path.join(ROOT, "build-cache", "pytorch-src", "pytorch-1.13.1", "test", "onnx")
    if not os.path.exists(os.path.join(suite, "test_pytorch_onnx_onnxruntime.py")):
        print(f"peer suite: {suite} has no test_pytorch_onnx_onnxruntime.py (run tests/pytorch/peer_suite/fetch_suite.sh)")
        return 77
    run_all = a.all or os.environ.get("AMANDA_PEER_SUITE") == "all"
    t0 = time.time()

    made = install_stubs()
    sys.path.insert(0, suite)
    argv, sys.argv = sys.argv, [sys.argv[0]]
    import torch
    import warnings
    warnings.filterwarnings("ignore")
    from torch.onnx import verification
    verification.verify = stand_in_verify
    import test_pytorch_onnx_onnxruntime  # noqa: F401  (makes the class through the stub)
    sys.argv = argv
    cls = made[CLASS]
    names = sorted(n for n in dir(cls) if n.startswith("test_") and callable(getattr(cls, n)))
    n_class = len(names)
    if a.only:
        names = [n for n in names if re.search(a.only, n)]
    elif not run_all:
        step = max(1, len(names) // a.sample)
        names = names[::step][: a.sample]

    tmp_ctx = tempfile.TemporaryDirectory()
    tmp = a.keep or tmp_ctx.name
    os.makedirs(tmp, exist_ok=True)
    records = run_tests(cls, names, tmp, a.timeout, a.v)
    t1 = time.time()

    # convert every traced model
    cases = [c for r in records for c in r["cases"] if "trace_error" not in c]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(convert, a.amanda, c): c for c in cases}
        for f in concurrent.futures.as_completed(futs):
            c = futs[f]
            c["amanda"], c["amanda_detail"] = f.result()
    t2 = time.time()

    # check amanda's models, then run both exporters' models in one Node process
    jobs = []
    for c in cases:
        if c["amanda"] == "converted":
            models = {s.get("amanda_model", c["base"] + ".amanda.onnx") for s in c["sets"] if "error" not in s}
            err = next((e for e in (onnx_check(m) for m in sorted(models)) if e), "")
            if err:
                c["amanda"], c["amanda_detail"] = "invalid", "onnx.checker: " + err
                continue
            for j, s in enumerate(c["sets"]):
                if "error" in s:
                    continue
                model = s.get("amanda_model", c["base"] + ".amanda.onnx")
                names_in = graph_inputs(model)
                ins = s["amanda_inputs"]
                if len(names_in) != len(ins):
                    c["amanda"], c["amanda_detail"] = "run_error", f"{len(names_in)} graph inputs for {len(ins)} tensors"
                    break
                jobs.append({"model": model, "inputs": dict(zip(names_in, ins)),
                             "out": f"{c['base']}.s{j}.amanda.ort"})
    for r in records:
        for c in r["cases"]:
            if "torch_error" in c or not os.path.exists(c["base"] + ".torch.onnx"):
                continue
            try:
                names_in = graph_inputs(c["base"] + ".torch.onnx")
            except Exception as e:
                c["torch"] = f"invalid: {first_line(e)}"
                continue
            for j, s in enumerate(c["sets"]):
                if "error" in s:
                    continue
                ins = s["torch_inputs"]
                if len(ins) > len(names_in):
                    s["torch_run"] = f"got too many positional inputs ({len(ins)} for {len(names_in)})"
                    continue
                jobs.append({"model": c["base"] + ".torch.onnx", "inputs": dict(zip(names_in, ins)),
                             "out": f"{c['base']}.s{j}.torch.ort"})
    jf = os.path.join(tmp, "ort_jobs.json")
    with open(jf, "w") as f:
        json.dump(jobs, f)
    r = subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run_typed.js"), jf], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr[-2000:])
        return 2
    t3 = time.time()

    # outcomes
    def side(c, who):
        if who == "amanda":
            if "trace_error" in c:
                return "trace_error", c["trace_error"]
            if c["amanda"] != "converted":
                return c["amanda"], c["amanda_detail"]
        else:
            if "torch_error" in c:
                return "refused", c["torch_error"]
            if "torch" in c:
                return "invalid", c["torch"]
        for j, s in enumerate(c["sets"]):
            if "error" in s:
                return "harness", s["error"]
            if who == "torch" and "torch_run" in s:
                return "run_error", s["torch_run"]
            out = f"{c['base']}.s{j}.{who}.ort"
            if not os.path.exists(out + ".json"):
                return "run_error", "not run"
            res = json.load(open(out + ".json"))
            if "error" in res:
                e = res["error"]
                kind = ("run_error" if "Non-zero status code returned while running" in e
                        else "harness" if "is not supported here" in e else "invalid")
                return kind, " ".join(e.split())[:400]
            diff = compare(res["outputs"], s["refs"], out, c)
            if diff:
                return "mismatch", f"input set {j}: {diff}"
        return "pass", ""

    for r in records:
        for c in r["cases"]:
            c["amanda_outcome"] = side(c, "amanda")
            c["torch_outcome"] = side(c, "torch")
        if r["outcome"] == "skipped" or not r["cases"]:
            r["judged"] = False
            r["why"] = r.get("detail") or "no verify call"
            continue
        torch_raised = any("torch_error" in c for c in r["cases"])
        if r["outcome"] == "ok" and torch_raised:
            r["judged"], r["why"] = False, "the test expects torch's exporter to raise"
            continue
        if r["outcome"] == "raised" and not torch_raised:
            r["judged"], r["why"] = False, "the test raised outside verify: " + r.get("detail", "")
            continue
        r["judged"] = True
        for who in ("amanda", "torch"):
            bad = [c[f"{who}_outcome"] for c in r["cases"] if c[f"{who}_outcome"][0] != "pass"]
            r[who] = bad[0] if bad else ("pass", "")
    t4 = time.time()

    judged = [r for r in records if r["judged"]]
    am = {r["test"] for r in judged if r["amanda"][0] == "pass"}
    to = {r["test"] for r in judged if r["torch"][0] == "pass"}
    by_kind = {}
    for r in judged:
        by_kind.setdefault(r["amanda"][0], []).append(r)
    print(f"peer suite ({CLASS}): {len(records)} of {n_class} tests run"
          f"{'' if run_all or a.only else f' (sample: every {max(1, n_class // a.sample)}th; --all or AMANDA_PEER_SUITE=all for all)'}, "
          f"{len(judged)} judged")
    print(f"  amanda passes {len(am)}, torch.onnx.export passes {len(to)}, both {len(am & to)}, "
          f"amanda only {len(am - to)}, torch only {len(to - am)}")
    if to:
        print(f"  amanda passes {len(am & to)}/{len(to)} = {100.0 * len(am & to) / len(to):.1f}% of the tests torch passes")
    for kind in sorted(by_kind):
        print(f"  amanda {kind}: {len(by_kind[kind])}")
    print(f"  times: tests+exports+traces {t1 - t0:.0f} s, amanda convert {t2 - t1:.0f} s, "
          f"onnxruntime {t3 - t2:.0f} s, compare {t4 - t3:.0f} s")
    for kind in ("mismatch", "invalid", "run_error", "trace_error", "harness", "refused"):
        for r in by_kind.get(kind, []):
            if kind == "refused" and not a.v:
                continue
            mark = "" if r["test"] in to else " (torch fails too)"
            print(f"  {kind}: {r['test']}{mark}: {r['amanda'][1][:300]}")
    if a.v:
        for r in records:
            if not r["judged"]:
                print(f"  not judged: {r['test']}: {r['why'][:200]}")
    for t in sorted(am - to):
        r = next(x for x in judged if x["test"] == t)
        print(f"  amanda only: {t} (torch: {r['torch'][0]}: {r['torch'][1][:200]})")

    if a.results:
        for r in records:
            for c in r["cases"]:
                for s in c["sets"]:
                    s.pop("refs", None)
        with open(a.results, "w") as f:
            json.dump({"class": CLASS, "tests_in_class": n_class, "all": run_all, "records": records}, f, indent=1)
    wrong = len(by_kind.get("mismatch", [])) + len(by_kind.get("invalid", []))
    ratio = len(am & to) / len(to) if to else 1.0
    if wrong or ratio < a.min_ratio:
        print(f"FAILED: {wrong} mismatches/invalid models; {100 * ratio:.1f}% of torch's passes (need {100 * a.min_ratio:.0f}%)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
