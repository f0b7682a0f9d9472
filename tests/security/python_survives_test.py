#!/usr/bin/python3
"""The Python module survives every hostile input with an exception, never a crash (issue 32).

Every reproducer of the regression tests (tests/security/security_test.py and round2_test.py: each
case's model, made by the case) and the fuzz corpora's seeds (fuzz/corpus/<target>/, each turned
into the files its target reads: an .onnx, a .pb/.pbtxt, a model.json with its shards, a
SavedModel folder, a .pt archive, a .fb, a Caffe2 predict net with its init net, a table file) is
given to the module in a child Python of its own:

    g = amanda.load(model)                       then, each on its own (an exception in one does
    amanda.save(g, out/g.yaml)                   not skip the others):
    amanda.save(amanda.convert(g, "onnx"), out/g.onnx)
    amanda.save(amanda.convert(g, "tensorflow"), out/g.pb)
    amanda.optimize(g)                           (constant folding runs the interpreter)
    amanda.convert(small ONNX graph, "onnx", tables=[table file])  (the table corpus)

The child must end by itself (exit 0, after printing END) with each step either returning or
raising a Python exception: a signal (SIGSEGV, SIGABRT, SIGFPE, SIGKILL at the memory limit), an
exit without END or a hang (more than 60 s) is a failure. A regression case whose command the tool
refuses (exit 1 expected of `inspect`/`convert`/`fmt`/`verify`) must also make one of the steps
raise: the module refuses what the tool refuses, not only survives it. The child runs under a 4 GB
address-space limit, as a user's Python would hit its machine's.

By default every regression reproducer and the first AMANDA_PY_CORPUS_SAMPLE (default 5) seeds of
each corpus, in name order, run; AMANDA_PY_CORPUS_SAMPLE=all runs every seed.

usage: python_survives_test.py AMANDA PYTHON_PACKAGE_DIR [--only WORD] [--keep]
"""
import argparse
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import round2_test as r2  # noqa: E402
import security_test as r1  # noqa: E402

LIMIT_WALL_S = 60
LIMIT_AS = 4 << 30

CHILD = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import amanda
model, out, shapes, table, to_table, reader = sys.argv[2:8]
raised = []

def step(name, f):
    try:
        return f()
    except Exception as e:
        raised.append(name)
        print("raised in %s: %s: %s" % (name, type(e).__name__, str(e).replace("\n", " ")[:160]))
    return None

kw = {"input_shapes": [[int(d) for d in s.split(",")] for s in shapes.split(";")]} if shapes else {}
if reader:
    kw["reader"] = reader
g = step("load", lambda: amanda.load(model, **kw))
if g is not None and table:
    step("convert with the table", lambda: amanda.convert(g, to_table, tables=[table]))
elif g is not None:
    step("save yaml", lambda: amanda.save(g, os.path.join(out, "g.yaml")))
    for to, name in (("onnx", "g.onnx"), ("tensorflow", "g.pb")):
        c = step("convert to " + to, lambda: amanda.convert(g, to))
        if c is not None:
            step("save " + name, lambda: amanda.save(c, os.path.join(out, name)))
    step("optimize", lambda: amanda.optimize(g))
print("END", "raised" if raised else "ok", ",".join(raised))
"""

def limit_child():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def survive(pydir, model, work, shapes="", table="", to="onnx", reader="", env=None):
    """Runs the child on `model`; returns (problem or None, 'ok'/'raised', the child's last lines)."""
    out = os.path.join(work, "out")
    os.makedirs(out, exist_ok=True)
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, pydir, model, out, shapes, table, to, reader], capture_output=True, text=True,
                           errors="replace", timeout=LIMIT_WALL_S, preexec_fn=limit_child, cwd=work,
                           env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        return "hung (more than %d s)" % LIMIT_WALL_S, "", ""
    tail = (r.stdout.strip().splitlines() or [""])
    if r.returncode < 0:
        return "killed by signal %d (%s)" % (-r.returncode, signal.Signals(-r.returncode).name), "", r.stderr[-600:]
    end = [l for l in tail if l.startswith("END ")]
    if r.returncode != 0 or not end:
        return "exit %d without finishing: %s" % (r.returncode, r.stderr.strip()[-600:]), "", ""
    words = end[-1].split(" ", 2)
    return None, words[1] if words[1] == "ok" else "raised in " + words[2], "\n".join(l for l in tail if l.startswith("raised"))


# ---------------------------------------------------------------- the regression reproducers

def option(args, flag):
    return args[args.index(flag) + 1] if flag in args else ""


def regression_inputs(amanda, root, only):
    """(name, model path, shapes, table, env, must_raise) of every case of both rounds, made by the
    case; must_raise: "load" (the tool refuses reading it), "any" (one step must raise) or None."""
    out = []
    for rnd, cases in (("round1", r1.CASES), ("round2", r2.CASES)):
        for name, make in cases:
            full = rnd + "." + name
            if only and only not in full:
                continue
            base = os.path.join(root, full)
            d, outside = os.path.join(base, "model"), os.path.join(base, "outside")
            os.makedirs(d)
            os.makedirs(outside)
            with open(os.path.join(outside, "secret"), "w") as f:
                f.write("secret\n")
            made = make(d, amanda, outside)
            args = list(made[0])
            codes = {1} if rnd == "round1" else made[2]
            opts = made[4] if len(made) > 4 else {}
            if len(args) < 2 or args[0] in ("schema", "table"):
                continue
            model = os.path.join(d, args[1])
            # The module must refuse what the tool refuses on reading: a read-only command's
            # refusal, or a convert/fmt refused for the input itself (the round's read., crash.,
            # hang., memory., refuse., escape. classes), not for its -o target or a budget flag.
            reading = args[0] in ("inspect", "verify", "validate") or (
                args[0] in ("convert", "fmt") and name.split(".")[0] in ("read", "crash", "hang", "memory", "refuse", "escape"))
            flags = any(f in args for f in ("--tables", "--max-memory", "--max-depth", "--max-steps", "--check"))
            shapes = option(args, "--input-shape").replace(" ", "")
            table = os.path.join(d, option(args, "--tables")) if "--tables" in args else ""
            must = None
            if codes == {1} and reading and not flags:
                # (verify/validate refuse a graph that reads: amanda.load gives it to be looked
                # at, as `inspect` does; converting or saving it must raise.)
                must = "load" if args[0] == "inspect" else "any"
            out.append((full, model, shapes, (table, option(args, "--to") or "onnx", option(args, "--reader")), opts.get("env"), must))
    return out


# ---------------------------------------------------------------- the fuzz corpora as files

def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def savedmodel(d, pb, index, data):
    write(os.path.join(d, "saved_model.pb"), pb)
    write(os.path.join(d, "variables", "variables.index"), index)
    write(os.path.join(d, "variables", "variables.data-00000-of-00001"), data)
    return d


def lengths(body):
    if len(body) < 8:
        return None
    a, b = struct.unpack("<II", body[:8])
    if 8 + a + b > len(body):
        return None
    return body[8:8 + a], body[8 + a:8 + a + b], body[8 + a + b:]


def tfjs(d, manifest, shards):
    write(os.path.join(d, "model.json"), manifest)
    for i, s in enumerate(shards):
        write(os.path.join(d, "s%d.bin" % i), s)
    return os.path.join(d, "model.json")


def archive(path, entries):
    r1.write_zip(path, [r1.stored(n, b) for n, b in entries])
    return path


def code_archive(path, code):
    return archive(path, [("m/data.pkl", r1.DATA_PKL), ("m/code/__torch__.py", code), ("m/constants.pkl", b"\x80\x02)."),
                          ("m/version", b"3")])


def corpus_model(target, data, d):
    """The files fuzz target `target` reads from input `data`, written under d; the model's path,
    or None when the input does not make one (too short for its framing)."""
    if target in ("onnx", "run"):
        write(os.path.join(d, "m.onnx"), data)
        return os.path.join(d, "m.onnx")
    if target in ("yaml", "writers"):
        write(os.path.join(d, "m.yaml"), data)
        return os.path.join(d, "m.yaml")
    if target == "json":
        write(os.path.join(d, "m.json"), data)
        return os.path.join(d, "m.json")
    if target == "nd4j":
        write(os.path.join(d, "m.fb"), data)
        return os.path.join(d, "m.fb")
    if target == "tensorflow" and data:
        mode, body = data[:1], data[1:]
        if mode == b"b":
            write(os.path.join(d, "m.pb"), body)
            return os.path.join(d, "m.pb")
        if mode == b"t":
            write(os.path.join(d, "m.pbtxt"), body)
            return os.path.join(d, "m.pbtxt")
        if mode == b"j":
            manifest, _, shard = body.partition(b"\0")
            path = tfjs(d, manifest, [])
            # The target gives every shard path the same bytes: the paths that are plain names here.
            import json
            try:
                for g in json.loads(manifest.decode("utf-8", "replace")).get("weightsManifest", []):
                    for p in g.get("paths", []):
                        if isinstance(p, str) and p and "/" not in p and p not in (".", "..", "model.json"):
                            write(os.path.join(d, p), shard)
            except (ValueError, AttributeError, TypeError):
                pass
            return path
        if mode == b"s":
            parts = lengths(body)
            return savedmodel(d, *parts) if parts else None
        return None
    if target == "savedmodel" and data:
        parts = lengths(data[1:])
        return savedmodel(d, *parts) if parts else None
    if target == "tfjs":
        manifest, *shards = data.split(b"\0")
        return tfjs(d, manifest, shards)
    if target == "caffe2" and data:
        mode, body = data[:1], data[1:]
        if mode == b"b":
            write(os.path.join(d, "predict_net.pb"), body)
        elif mode == b"t":
            write(os.path.join(d, "predict_net.pbtxt"), body)
            return os.path.join(d, "predict_net.pbtxt")
        elif mode == b"i" and len(body) >= 4:
            n = struct.unpack("<I", body[:4])[0]
            write(os.path.join(d, "predict_net.pb"), body[4:4 + n])
            write(os.path.join(d, "init_net.pb"), body[4 + n:])
        else:
            return None
        return os.path.join(d, "predict_net.pb")
    if target == "torchscript" and data:
        kind, body = data[0] % 3, data[1:]
        if kind == 2:
            write(os.path.join(d, "m.pt"), body)
            return os.path.join(d, "m.pt")
        if kind == 0:
            return code_archive(os.path.join(d, "m.pt"), body)
        return archive(os.path.join(d, "m.pt"), [("m/data.pkl", body), ("m/code/__torch__.py", b""),
                                                 ("m/constants.pkl", b"\x80\x02)."), ("m/version", b"3")])
    if target == "torchscript_interp":
        return code_archive(os.path.join(d, "m.pt"), data)
    if target == "table":
        write(os.path.join(d, "t.yaml"), data)
        return os.path.join(d, "t.yaml")
    return None  # npy: the module reads no .npy (the tool's `run --input` does; npy_fuzz covers it)


def corpus_inputs(root, only, sample):
    out = []
    for target in sorted(os.listdir(os.path.join(ROOT, "fuzz", "corpus"))):
        names = sorted(os.listdir(os.path.join(ROOT, "fuzz", "corpus", target)))
        if sample is not None:
            names = names[:sample]
        for n in names:
            full = "corpus.%s.%s" % (target, n)
            if only and only not in full:
                continue
            with open(os.path.join(ROOT, "fuzz", "corpus", target, n), "rb") as f:
                data = f.read()
            d = os.path.join(root, full, "model")
            os.makedirs(d)
            model = corpus_model(target, data, d)
            if model:
                out.append((full, model, "1,3,8,8" if target.startswith("torchscript") else "", ("", "onnx", ""), None, None))
    return out


def relu_yaml(amanda, root):
    d = os.path.join(root, "relu")
    os.makedirs(d)
    r2.relu_onnx(os.path.join(d, "relu.onnx"))
    subprocess.run([amanda, "fmt", "relu.onnx", "-o", "relu.yaml"], cwd=d, check=True, capture_output=True)
    return os.path.join(d, "relu.yaml")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("pydir")
    ap.add_argument("--only")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    amanda, pydir = os.path.abspath(a.amanda), os.path.abspath(a.pydir)
    s = os.environ.get("AMANDA_PY_CORPUS_SAMPLE", "5")
    sample = None if s == "all" else int(s)
    root = tempfile.mkdtemp(prefix="amanda-pysurvive-")
    failures, counts = [], {"ok": 0, "raised": 0}
    try:
        inputs = regression_inputs(amanda, root, a.only) + corpus_inputs(root, a.only, sample)
        relu = relu_yaml(amanda, root)
        for name, model, shapes, table, env, must_raise in inputs:
            work = os.path.dirname(model) if os.path.isfile(model) else model
            work = os.path.join(os.path.dirname(work), "py")
            os.makedirs(work, exist_ok=True)
            if name.startswith("corpus.table."):
                problem, how, said = survive(pydir, relu, work, table=model)
            else:
                problem, how, said = survive(pydir, model, work, shapes=shapes, table=table[0], to=table[1], reader=table[2], env=env)
            if not problem and must_raise == "any" and how == "ok":
                problem = "the tool refuses this input, the module took it without an exception"
            if not problem and must_raise == "load" and not how.startswith("raised in load"):
                problem = "the tool refuses to read this input, amanda.load took it (%s)" % how
            if problem:
                failures.append(name)
                print("  FAIL %s: %s %s" % (name, problem, said))
            else:
                counts["ok" if how == "ok" else "raised"] += 1
                print("  ok   %-66s %s" % (name, said.splitlines()[0][:130] if said else "no exception"))
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print("inputs kept in", root)
    total = counts["ok"] + counts["raised"] + len(failures)
    print("%d inputs: %d raised an exception, %d were taken, %d failed" % (total, counts["raised"], counts["ok"], len(failures)))
    if failures:
        print("failures: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
