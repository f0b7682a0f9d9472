#!/usr/bin/python3
"""End-to-end test of `amanda view` in headless Chromium (tests/CMakeLists.txt registers it).

    view_test.py AMANDA MODELS_DIR OUT_DIR

For vit_b_16 (the torchvision export of the models fixture) and ONNX test models with Loop and If
bodies (Debian's libonnx-testdata): writes the HTML view, opens it in Debian's chromium through
tests/view/cdp_view.js, and checks that the page logs no error, that the op count it shows is the
model's (counted here with onnx, nested graphs included), that a real click on an op shows that
op's type and attributes, and that double-clicking a Loop/If shows its body; takes a screenshot of
each into OUT_DIR. Then --diff of a conversion (a Softmax that opset 13 needs rewritten as
Flatten/Softmax/Reshape), a seed-form document with op bodies two deep, the progress line on
a terminal (and none with -q or without a terminal), the SVG output through Graphviz, and bad input (exit 1, no file).
Run with /usr/bin/python3 (Debian's python3-onnx).
"""
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import onnx
import yaml
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "cdp_view.js")
TESTDATA = "/usr/share/libonnx-testdata/data/node"
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def count_ops(graph):
    """Nodes of a graph and of every graph its nodes hold, as onnx sees them."""
    n = 0
    for node in graph.node:
        n += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += count_ops(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                n += sum(count_ops(g) for g in a.graphs)
    return n


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def browse(page, *args):
    r = run(["node", DRIVER, page, *args, "--timeout", "120"])
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"error": "driver printed no JSON: " + r.stdout[-500:] + r.stderr[-1500:]}


def scene_of(page):
    text = open(page, encoding="utf-8").read()
    m = re.search(r'<script id="scene" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def view_model(amanda, model_path, out_dir, name, click_node=None, expand=None):
    model = onnx.load(model_path, load_external_data=False)
    expected = count_ops(model.graph)
    page = os.path.join(out_dir, name + ".html")
    r = run([amanda, "view", model_path, "-o", page])
    check(r.returncode == 0, f"{name}: amanda view exits 0 ({r.stderr.strip()[:300]})")
    if r.returncode:
        return
    args = ["--screenshot", os.path.join(out_dir, name + ".png")]
    node = click_node or next((n for n in model.graph.node if n.attribute and n.op_type != "Constant"), model.graph.node[0])
    # The viewer's search finds an op by name or type; an unnamed op by its type.
    args += ["--click", node.name or node.op_type]
    if expand:
        args += ["--expand", expand]
    res = browse(page, *args)
    check("error" not in res, f"{name}: the page opens and is driven ({res.get('error', '')[:500]})")
    if "error" in res:
        return
    check(res["errors"] == [], f"{name}: no console errors or exceptions ({res['errors'][:3]})")
    check(res["opCountShown"] == expected, f"{name}: the page shows {res['opCountShown']} ops, the model has {expected}")
    c = res.get("click", {})
    check(c.get("found") and c.get("selected") == c.get("index"), f"{name}: clicking {c.get('query')} selects it")
    check(c.get("heading", "").startswith(node.op_type), f"{name}: the panel names the op type {node.op_type} ({c.get('heading')})")
    shown = [row[0] for row in c.get("attributes", [])]
    want = [a.name for a in node.attribute]
    check(want and all(a in shown for a in want), f"{name}: the panel lists the attributes {want} (shows {shown})")
    check(len(c.get("inputs", [])) == len(node.input), f"{name}: the panel lists {len(node.input)} inputs")
    if expand:
        e = res.get("expand", {})
        check(e.get("expanded") and e.get("shownNodes", 0) > e.get("shownBefore", 0),
              f"{name}: double-clicking {expand} opens its body ({e.get('shownBefore')} -> {e.get('shownNodes')} nodes drawn)")
    print(f"      {name}: {expected} ops, ready in {res['readyMs']} ms")


def on_terminal(cmd, env):
    """Runs cmd with standard error on a pseudo-terminal; returns the exit code and what it wrote there."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(), out.decode("utf-8", "replace")


def softmax_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["s"], name="softmax", axis=1),
             helper.make_node("Neg", ["s"], ["y"], name="neg")]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 12)])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main():
    amanda, models, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    view_model(amanda, os.path.join(models, "vit_b_16.onnx"), out_dir, "vit_b_16")
    view_model(amanda, os.path.join(TESTDATA, "test_loop11", "model.onnx"), out_dir, "test_loop11", expand="Loop")
    view_model(amanda, os.path.join(TESTDATA, "test_if", "model.onnx"), out_dir, "test_if", expand="If")

    # A document of the seed's own form: an op whose body holds an op with a body (no ONNX).
    seed_doc = os.path.join(HERE, "..", "golden", "features", "nested_bodies.yaml")

    def yaml_ops(node):
        return sum(1 + yaml_ops(op) for op in node.get("ops", []) or [])

    expected = 1 + yaml_ops(yaml.safe_load(open(seed_doc))["op"])
    page = os.path.join(out_dir, "nested_bodies.html")
    r = run([amanda, "view", seed_doc, "-o", page])
    res = browse(page, "--expand", "outer", "--click", "inner") if r.returncode == 0 else {"error": r.stderr}
    check("error" not in res and res["errors"] == [], f"nested bodies: the page opens without errors ({res.get('error') or res['errors']})")
    if "error" not in res:
        check(res["opCountShown"] == expected, f"nested bodies: the page shows {res['opCountShown']} ops, the document has {expected}")
        check(res["expand"]["expanded"], "nested bodies: double-clicking the op document's op opens its body")
        c = res["click"]
        check(c["heading"] == "Relu" and ["alpha", "0"] in c["attributes"],
              f"nested bodies: clicking an op two bodies down (found by search) shows it ({c['heading']}, {c['attributes']})")

    with tempfile.TemporaryDirectory() as tmp:
        # A conversion: opset 12's Softmax over axis 1 of a rank-3 tensor becomes Shape, Flatten,
        # Softmax(-1) and Reshape in opset 13 (tables/onnx/hand/up_12_13.yaml).
        a, b, page = os.path.join(tmp, "a.onnx"), os.path.join(tmp, "b.onnx"), os.path.join(out_dir, "diff.html")
        softmax_model(a)
        r = run([amanda, "convert", a, "--to", "onnx/13", "-o", b, "-q"])
        check(r.returncode == 0, "diff: the Softmax model converts to opset 13")
        r = run([amanda, "view", a, "--diff", b, "-o", page])
        check(r.returncode == 0, "diff: amanda view --diff exits 0")
        s = scene_of(page)
        types = {i: s["types"][s["type"][i]] for i in range(len(s["kind"])) if s["kind"][i] == 0}
        marks = {s["label"][i] + ":" + t: s["mark"][i] for i, t in types.items()}
        converted = onnx.load(b)
        check(len(types) == len(converted.graph.node), f"diff: the page holds the converted graph's {len(converted.graph.node)} ops")
        check(marks.get("relu:Relu") == 0 and marks.get("neg:Neg") == 0, f"diff: Relu and Neg are unchanged ({marks})")
        check(marks.get("softmax:Reshape") == 2, "diff: the op that kept the name softmax is marked retyped (now a Reshape)")
        added = sorted(k for k, m in marks.items() if m == 3)
        check(len(added) == 3 and all(k.startswith("softmax/") for k in added), f"diff: the rule's three new ops are marked added ({added})")
        changes = s["diff"]["changes"]
        check(len(changes) == 1 and changes[0][0] == [["softmax", "Softmax"]] and len(changes[0][1]) == 4,
              f"diff: one change, Softmax softmax -> the four ops ({changes})")
        res = browse(page, "--click", "softmax")
        check("error" not in res and res["errors"] == [], f"diff: the page opens without errors ({res.get('error') or res['errors']})")
        check(res.get("click", {}).get("heading", "").endswith("added") or "retyped" in res.get("click", {}).get("heading", ""),
              f"diff: the panel shows the mark ({res.get('click', {}).get('heading')})")

        # Progress: a line on a terminal (here with no delay, so a small model shows it), erased at
        # the end; nothing with -q, nothing when standard error is not a terminal.
        env = dict(os.environ, AMANDA_PROGRESS_DELAY="0")
        vit = os.path.join(models, "vit_b_16.onnx")
        rc, err = on_terminal([amanda, "view", vit, "-o", os.path.join(tmp, "p.html")], env)
        check(rc == 0 and "reading nodes: " in err and "laying out: " in err and err.endswith("\r\x1b[K"),
              f"progress: view on a terminal shows reading and laying out, then erases the line ({err[-120:]!r})")
        rc, err = on_terminal([amanda, "convert", a, "--to", "onnx/13", "-o", os.path.join(tmp, "p.onnx")], env)
        check(rc == 0 and "converting amanda/onnx/12 -> amanda/onnx/13: " in err, f"progress: convert shows each table ({err[-120:]!r})")
        rc, err = on_terminal([amanda, "view", vit, "-o", os.path.join(tmp, "p.html"), "-q"], env)
        check(rc == 0 and err == "", f"progress: -q shows nothing ({err[-80:]!r})")
        r = run([amanda, "view", vit, "-o", os.path.join(tmp, "p.html")], env=env)
        check(r.returncode == 0 and r.stderr == "", f"progress: nothing when standard error is not a terminal ({r.stderr[-80:]!r})")

        # SVG through Graphviz: every op is a node, labelled with its type.
        svg = os.path.join(tmp, "if.svg")
        r = run([amanda, "view", os.path.join(TESTDATA, "test_if", "model.onnx"), "-o", svg])
        check(r.returncode == 0, f"svg: amanda view -o x.svg exits 0 ({r.stderr.strip()[:200]})")
        if r.returncode == 0:
            root = ET.parse(svg).getroot()
            ns = "{http://www.w3.org/2000/svg}"
            check(root.tag == ns + "svg", "svg: the output is an SVG document")
            texts = [t.text for t in root.iter(ns + "text")]
            model = onnx.load(os.path.join(TESTDATA, "test_if", "model.onnx"))
            inner = [n.op_type for a in model.graph.node[0].attribute for n in a.g.node]
            check(all(t in texts for t in ["If"] + inner), f"svg: the If and its branches' ops {inner} are drawn")
            check(any(g.get("class") == "cluster" for g in root.iter(ns + "g")), "svg: the branches are clusters")

        # Bad input: a clear error, exit 1, nothing written.
        out = os.path.join(tmp, "bad.html")
        r = run([amanda, "view", os.path.join(tmp, "missing.onnx"), "-o", out])
        check(r.returncode == 1 and "missing.onnx" in r.stderr and not os.path.exists(out), "bad input: a missing file is exit 1, no output")
        junk = os.path.join(tmp, "junk.onnx")
        with open(junk, "wb") as f:
            f.write(b"\x08\x07\x12\xff\xff\xff\xff\x0f" * 16)
        r = run([amanda, "view", junk, "-o", out])
        check(r.returncode == 1 and r.stderr and not os.path.exists(out), f"bad input: a corrupt model is exit 1, no output ({r.stderr.strip()[:120]})")
        r = run([amanda, "view", a, "-o", os.path.join(tmp, "x.png")])
        check(r.returncode == 2, "bad usage: an unknown output format is exit 2")
        r = run([amanda, "view", a, "-o", svg + "2.svg"], env=dict(os.environ, AMANDA_DOT="/nonexistent/dot"))
        check(r.returncode == 1 and "graphviz" in r.stderr.lower() and not os.path.exists(svg + "2.svg") and
              not [f for f in os.listdir(tmp) if ".tmp-" in f], "svg without Graphviz: exit 1, says what is missing, leaves no file")

    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
