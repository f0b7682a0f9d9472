#!/usr/bin/python3
"""Coverage of torch.onnx.export's vocabulary by Amanda's PyTorch -> ONNX conversion.

    /usr/bin/python3 scripts/torch_coverage.py [--results op_results.json] [--tables tables/pytorch] [--json]

The ops: every aten op torch.onnx.export 1.13 has a symbolic for at opsets 9..17, from torch's own
registry (scripts/torch_onnx_ops.py). Per op:

- `table`: the rules of tables/pytorch/*.yaml whose matcher takes `aten::OP` (any overload,
  in-place `OP_` included);
- `cases`: how many of its per-op test cases (tests/pytorch/op_test.py --results FILE, best with
  --all) passed, of how many;
- status `covered` when every case passed (whether through a rule or because the reader resolves
  the op, e.g. aten::size on known shapes, folding of constant creation ops), `partial` when some
  did, `missing` otherwise; an op without cases is `untested`.

Prints one line per op and the summary: ops covered and passing, of 345 (the percentage the issue
asks for). Run the tests first:

    /usr/bin/python3 tests/pytorch/op_test.py build/amanda --all --results /tmp/op_results.json
    /usr/bin/python3 scripts/torch_coverage.py --results /tmp/op_results.json
"""
import argparse
import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from torch_onnx_ops import symbolic_ops  # noqa: E402


def aten_name(op):
    """torch.onnx's registry spells dunder ops with one trailing underscore (`__and_`)."""
    return op + "_" if op.startswith("__") and op.endswith("_") and not op.endswith("__") else op


COMPACT_TYPE = re.compile(r"=\s*([A-Za-z_][\w:.]*)\s*\(")


def matcher_types(rule):
    """The op types a rule's matcher takes (single op, `type:` pushdown, several ops, compact form)."""
    out = []

    def types_of(t):
        if isinstance(t, list):
            return [str(x) for x in t]
        return [str(t)] if t is not None else []

    src = rule.get("src")
    if isinstance(rule.get("type"), dict):
        out += types_of(rule["type"].get("src"))
    elif "type" in rule and src is None:
        out += types_of(rule["type"])
    if isinstance(src, dict):
        out += types_of(src.get("type"))
        for o in src.get("ops", []) or []:
            out += types_of(o.get("type"))
        graph = src.get("graph")
        if isinstance(graph, str):
            out += COMPACT_TYPE.findall(graph)
    return out


def table_ops(folder):
    found = {}
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".yaml"):
            continue
        doc = yaml.safe_load(open(os.path.join(folder, f)))
        for r in doc["table"]["rules"]:
            if r.get("unsupported"):
                continue
            for t in matcher_types(r):
                if t.startswith("aten::"):
                    base = t[len("aten::"):].split(".")[0]
                    found.setdefault(base, set()).add(r["rule_name"])
                    if base.endswith("_") and not base.endswith("__"):
                        found.setdefault(base[:-1], set()).add(r["rule_name"])
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", help="tests/pytorch/op_test.py --results FILE")
    ap.add_argument("--tables", default=os.path.join(ROOT, "tables", "pytorch"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    version, ops = symbolic_ops()
    aten = sorted(k[len("aten::"):] for k in ops if k.startswith("aten::"))
    rules = table_ops(a.tables)
    cases = {}
    if a.results:
        for r in json.load(open(a.results))["cases"]:
            cases.setdefault(r["op"], []).append(r)
    # reasons written by hand for ops without cases (tests/pytorch/op_known_failures.txt)
    reasons = {}
    kf = os.path.join(ROOT, "tests", "pytorch", "op_known_failures.txt")
    if os.path.exists(kf):
        for line in open(kf):
            line = line.strip()
            if line and not line.startswith("#"):
                op, _, why = line.partition(" ")
                reasons[op] = why.strip()
    rows = []
    for op in aten:
        rs = cases.get(op, [])
        ok = sum(r["status"] == "passed" for r in rs)
        status = "untested" if not rs else "covered" if ok == len(rs) else "partial" if ok else "missing"
        why = sorted({r.get("detail", r["status"]).splitlines()[0][:160] for r in rs if r["status"] != "passed"})
        if not rs and op in reasons:
            why = [reasons[op][:160]]
        rows.append({"op": op, "table": sorted(rules.get(aten_name(op), [])), "passed": ok, "cases": len(rs), "status": status,
                     "failures": why[:3]})
    n = len(rows)
    cov = sum(r["status"] == "covered" for r in rows)
    ruled = sum(bool(r["table"]) for r in rows)
    summary = {"torch": version, "aten_ops": n, "with_rule": ruled, "covered_and_passing": cov,
               "percent": round(100.0 * cov / n, 1), "partial": sum(r["status"] == "partial" for r in rows),
               "untested": sum(r["status"] == "untested" for r in rows),
               "cases_passed": sum(r["passed"] for r in rows), "cases": sum(r["cases"] for r in rows)}
    if a.json:
        json.dump({"summary": summary, "ops": rows}, sys.stdout, indent=1)
        print()
        return 0
    for r in rows:
        print(f"{r['op']:<34} {r['status']:<9} {r['passed']:>2}/{r['cases']:<2} {','.join(r['table'])[:50]:<50} "
              f"{' | '.join(r['failures'])[:200]}")
    print(f"\ntorch {version}: {n} aten ops with a symbolic at opsets 9..17; {ruled} with a table rule; "
          f"{cov} covered and passing every case ({summary['percent']}%), {summary['partial']} partly, "
          f"{summary['untested']} without cases; cases {summary['cases_passed']}/{summary['cases']} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
