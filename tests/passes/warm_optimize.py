#!/usr/bin/python3
"""`amanda optimize` in a warm process: the like-for-like peer of onnxruntime-node's measurement.

    PYTHONPATH=BUILD/python /usr/bin/python3 tests/passes/warm_optimize.py MODEL.onnx OUT.onnx [MODEL OUT ...]

tests/js/ort_basic_optimize.js times onnxruntime's session creation in a node process that has
already loaded onnxruntime and created one session. This does the same for Amanda: one Python
process imports the module, optimizes the first model once untimed (the warm-up), then times each
model's `amanda.load` + `amanda.optimize` (the default passes, as `amanda optimize` runs them) +
`amanda.save`: wall time, and the process's CPU time (every thread, user + system) over them.
Prints one JSON array: [{"model", "out", "seconds", "cpu_seconds", "ops_after"} | {"model", "error"}].
"""
import json
import sys
import time

import amanda


def once(src, out):
    g = amanda.load(src)
    r = amanda.optimize(g)
    amanda.save(g, out)
    return r


def main():
    args = sys.argv[1:]
    if len(args) % 2:
        sys.exit(__doc__)
    results = []
    if args:
        try:
            once(args[0], args[1])
        except Exception:  # reported below, on the timed run
            pass
    for src, out in zip(args[0::2], args[1::2]):
        try:
            c0 = time.process_time()
            t0 = time.perf_counter()
            r = once(src, out)
            t1 = time.perf_counter()
            c1 = time.process_time()
            results.append({"model": src, "out": out, "seconds": t1 - t0, "cpu_seconds": c1 - c0,
                            "ops_after": r["ops_after"]})
        except Exception as e:
            results.append({"model": src, "error": str(e)})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
