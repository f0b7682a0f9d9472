#!/usr/bin/env python3
"""A model with 3 GiB of external weights (scripts/make_big_external_model.py) goes through
`amanda inspect`, `amanda fmt -o out.onnx --external-data` and `amanda fmt --to yaml -o out.yaml`
(big tensors into the side file out.yaml.data), each with a peak RSS under the limit; the
written tensor bytes must equal the input's (blake2b per tensor, read in chunks).

  big_external_test.py AMANDA WORK_DIR [--tensors 24] [--mib 128] [--rss-limit-mb 300]

WORK_DIR is created and removed (also on failure). Exit 0 pass, 1 fail, 77 skipped (not enough
free disk: it needs the input plus one output, about 2 x 3 GiB, at a time).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import onnx
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
MAKER = os.path.join(HERE, "..", "..", "scripts", "make_big_external_model.py")


def run_measured(cmd, label, results):
    # Popen + wait4 ourselves, so the rusage is this child's alone.
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    rss_mb = ru.ru_maxrss / 1024.0
    results.append((label, wall, rss_mb))
    print(f"{label:52} {wall:7.2f} s  peak RSS {rss_mb:8.1f} MB", flush=True)
    if p.returncode != 0:
        sys.stderr.write(err.decode(errors="replace"))
        raise SystemExit(f"FAIL: {label} exited with {p.returncode}")
    return out.decode(errors="replace")


def hash_range(path, offset, length):
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        f.seek(offset)
        left = length
        while left:
            b = f.read(min(8 << 20, left))
            if not b:
                raise SystemExit(f"FAIL: {path} ends before {offset} + {length}")
            h.update(b)
            left -= len(b)
        # Do not keep the written file in the page cache longer than needed.
        try:
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        except (AttributeError, OSError):
            pass
    return h.hexdigest()


def check_onnx(out_dir, expected):
    m = onnx.load(os.path.join(out_dir, "out.onnx"), load_external_data=False)
    got = {}
    for t in m.graph.initializer:
        kv = {e.key: e.value for e in t.external_data}
        if t.data_location != onnx.TensorProto.EXTERNAL or "location" not in kv:
            raise SystemExit(f"FAIL: out.onnx: {t.name} is not external")
        got[t.name] = hash_range(os.path.join(out_dir, kv["location"]), int(kv.get("offset", 0)), int(kv["length"]))
    return got


class Loader(yaml.SafeLoader):
    pass


Loader.add_multi_constructor("!", lambda loader, tag, node: loader.construct_mapping(node) if isinstance(node, yaml.MappingNode) else None)


def check_yaml(out_dir, expected):
    with open(os.path.join(out_dir, "out.yaml")) as f:
        doc = yaml.load(f, Loader=Loader)
    got = {}
    for p in doc["graph"]["input_ports"]:
        t = (p.get("attrs") or {}).get("initializer")
        if not t:
            continue
        if "file" not in t:
            raise SystemExit(f"FAIL: out.yaml: {p['name']} is not in the side file")
        got[p["name"]] = hash_range(os.path.join(out_dir, t["file"]), int(t["offset"]), int(t["length"]))
    return got


def compare(what, got, expected):
    exp = {t["name"]: t["blake2b"] for t in expected}
    if got != exp:
        bad = sorted(k for k in set(got) | set(exp) if got.get(k) != exp.get(k))
        raise SystemExit(f"FAIL: {what}: tensors differ from the input: {bad[:5]}")
    print(f"{what}: {len(got)} tensors equal to the input", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("work_dir")
    ap.add_argument("--tensors", type=int, default=24)
    ap.add_argument("--mib", type=int, default=128)
    ap.add_argument("--rss-limit-mb", type=float, default=300)
    a = ap.parse_args()
    total = a.tensors * (a.mib << 20)
    parent = os.path.dirname(os.path.abspath(a.work_dir)) or "."
    os.makedirs(parent, exist_ok=True)
    free = shutil.disk_usage(parent).free
    if free < 2 * total + (1 << 30):
        print(f"SKIP: {free / 2**30:.1f} GiB free under {parent}, need {(2 * total + (1 << 30)) / 2**30:.1f}")
        return 77
    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(a.work_dir)
    results = []
    try:
        d = a.work_dir
        big = os.path.join(d, "big.onnx")
        made = run_measured([sys.executable, MAKER, d, "--tensors", str(a.tensors), "--mib", str(a.mib)],
                            f"make {a.tensors} x {a.mib} MiB external", results)
        expected = json.loads(made.strip().splitlines()[-1])["tensors"]
        out = run_measured([a.amanda, "inspect", big], "amanda inspect big.onnx", results)
        if "ops: " not in out and "op" not in out:
            raise SystemExit("FAIL: inspect printed no summary:\n" + out)
        run_measured([a.amanda, "fmt", big, "-o", os.path.join(d, "out.onnx"), "--external-data"],
                     "amanda fmt big.onnx -o out.onnx --external-data", results)
        compare("out.onnx + out.onnx.data", check_onnx(d, expected), expected)
        for f in ("out.onnx", "out.onnx.data"):
            os.remove(os.path.join(d, f))
        run_measured([a.amanda, "fmt", big, "--to", "yaml", "-o", os.path.join(d, "out.yaml")],
                     "amanda fmt big.onnx --to yaml -o out.yaml", results)
        compare("out.yaml + out.yaml.data", check_yaml(d, expected), expected)
    finally:
        shutil.rmtree(a.work_dir, ignore_errors=True)
    over = [(l, r) for l, w, r in results if l.startswith("amanda") and r >= a.rss_limit_mb]
    if over:
        for l, r in over:
            print(f"FAIL: {l}: peak RSS {r:.1f} MB >= {a.rss_limit_mb} MB")
        return 1
    print(f"PASS: {total / 2**30:.2f} GiB of external weights; every amanda step under {a.rss_limit_mb:.0f} MB peak RSS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
