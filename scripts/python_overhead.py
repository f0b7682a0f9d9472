#!/usr/bin/python3
"""The Python module's overhead against the C++ tool on the same conversion (docs/performance.md).

    /usr/bin/python3 scripts/python_overhead.py BUILD_DIR MODELS_DIR [--runs N] [--to onnx/11] [--models M ...]

For each torchvision export, the best of N wall times of
  tool:    amanda convert M.onnx --to onnx/11 -o OUT.onnx -q
  python:  /usr/bin/python3 -c "import amanda; amanda.save(amanda.convert(amanda.load(M), 'onnx/11'), OUT)"
each a new process (interpreter start and `import amanda` included, as a user's script pays them),
and overhead = (python - tool) / python: the share of the whole that Python adds, in wall and CPU
time. The interpreter's own start (`python3 -c pass`, measured too) is not the module's: the module's
overhead is (python - start - tool) / (python - start), on CPU time. Also the same
three calls timed inside one warm Python process (no start-up), against the tool's own read +
convert + write times (what it prints without -q). Both outputs are checked to be the same bytes.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "densenet121",
          "convnext_tiny", "vit_b_16", "swin_t"]


def timed(cmd, env=None):
    """(wall, cpu) seconds of one run; cpu = user + system of the child (steadier on a busy machine)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {cmd}")
    return wall, ru.ru_utime + ru.ru_stime


def best_pair(a_cmd, b_cmd, runs, b_env):
    """The two commands alternately, so that both see the same load; best wall and cpu of each."""
    a, b = [], []
    for _ in range(runs):
        a.append(timed(a_cmd))
        b.append(timed(b_cmd, b_env))
    return (min(w for w, _ in a), min(c for _, c in a)), (min(w for w, _ in b), min(c for _, c in b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("models_dir")
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--to", default="onnx/11")
    a = ap.parse_args()
    tool = os.path.join(a.build, "amanda")
    env = dict(os.environ, PYTHONPATH=os.path.join(a.build, "python"))
    sys.path.insert(0, os.path.join(a.build, "python"))
    import amanda
    start = min(timed([sys.executable, "-c", "pass"])[1] for _ in range(10))
    print(f"# python3 -c pass: {start * 1000:.1f} ms CPU")
    print("model\ttool_wall_s\tpython_wall_s\twall_overhead\ttool_cpu_s\tpython_cpu_s\tcpu_overhead\tmodule_overhead\ttool_inner_s\tpython_inner_s\tsame_bytes")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for m in a.models:
            src = os.path.join(a.models_dir, m + ".onnx")
            out_t, out_p = os.path.join(tmp, m + "_tool.onnx"), os.path.join(tmp, m + "_py.onnx")
            code = f"import amanda; amanda.save(amanda.convert(amanda.load({src!r}), {a.to!r}), {out_p!r})"
            refused = subprocess.run([tool, "convert", src, "--to", a.to, "-q"], capture_output=True).returncode != 0
            if refused:
                # The tables cannot take this model there: both must refuse it (the tool with exit 1, the
                # module with ConversionError), and there is nothing to time.
                try:
                    amanda.convert(amanda.load(src), a.to)
                    print(f"{m}\tthe tool refuses the conversion but the module did not")
                except amanda.ConversionError:
                    print(f"{m}\trefused by both (no rule for some op)")
                continue
            (t_tool, c_tool), (t_py, c_py) = best_pair([tool, "convert", src, "--to", a.to, "-o", out_t, "-q"],
                                                       [sys.executable, "-c", code], a.runs, env)
            # Inside processes: the tool's own timings, and the three calls in a warm interpreter.
            r = subprocess.run([tool, "convert", src, "--to", a.to, "-o", out_t], capture_output=True, text=True, check=True)
            inner_tool = sum(float(x) for x in re.findall(r"(?:read|convert|write) ([0-9.]+) s", r.stdout))
            inner = []
            for _ in range(a.runs):
                t = time.perf_counter()
                amanda.save(amanda.convert(amanda.load(src), a.to), out_p)
                inner.append(time.perf_counter() - t)
            same = open(out_t, "rb").read() == open(out_p, "rb").read()
            over = (t_py - t_tool) / t_py
            cover = (c_py - c_tool) / c_py
            module = (c_py - start - c_tool) / (c_py - start)
            worst = max(worst, module)
            print(f"{m}\t{t_tool:.3f}\t{t_py:.3f}\t{over * 100:.1f}%\t{c_tool:.3f}\t{c_py:.3f}\t{cover * 100:.1f}%\t{module * 100:.1f}%\t"
                  f"{inner_tool:.3f}\t{min(inner):.3f}\t{same}")
    print(f"# worst module overhead {worst * 100:.1f}% of the whole (CPU time, the interpreter's start left out)")


if __name__ == "__main__":
    main()
