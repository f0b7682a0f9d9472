#!/usr/bin/python3
"""Control flow and sequences ONNX -> TorchScript (issue 29): generated small models with If (one to
three outputs, outer values read by the branches, nested Ifs, both conditions), Loop (a trip count,
a condition, both, carried values, scan outputs, early exit from the body's condition, loops in
loops) and sequences (SequenceConstruct / Empty / Insert / Erase at every position, negative ones
too, Length, At, ConcatFromSequence with and without a new axis, SplitToSequence, a sequence built
by a Loop), converted with `amanda convert M.onnx -o M.pt`, run by torch.jit.load and compared with
onnxruntime (tests/js/ort_run_typed.js) on the same inputs within 1e-5 relative to max(1, |x|);
integer results exactly. The models take and return tensors (onnxruntime's Node binding feeds
tensors only); the node tests cover sequences as graph inputs and outputs.

    control_cases_test.py AMANDA [--seed S] [--cases N]
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_runner import run_cases  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL


def tvi(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def graph_model(nodes, inputs, outputs, opset=13, inits=()):
    g = helper.make_graph(nodes, "case", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name + "_v"))


UNARY = ["Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Exp"]


def if_cases(rng, n):
    cases = []
    for k in range(n):
        shape = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))]
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.standard_normal(shape).astype(np.float32)
        nout = 1 + k % 3
        nested = k % 4 == 3
        branches = []
        for b in range(2):
            nodes, outs = [], []
            for o in range(nout):
                op = UNARY[int(rng.integers(len(UNARY)))]
                nodes.append(helper.make_node(op, ["x"], [f"b{b}_u{o}"]))
                nodes.append(helper.make_node(["Add", "Mul", "Sub"][(o + b) % 3], [f"b{b}_u{o}", "y"], [f"b{b}_o{o}"]))
                outs.append(tvi(f"b{b}_o{o}", F))
            if nested and b == 0:
                # an If inside the then branch, on another condition computed from the outer x
                inner = [helper.make_graph([helper.make_node("Neg", ["b0_o0"], ["in_t"])], "it", [], [tvi("in_t", F)]),
                         helper.make_graph([helper.make_node("Identity", ["y"], ["in_e"])], "ie", [], [tvi("in_e", F)])]
                nodes.append(helper.make_node("ReduceSum", ["x"], ["sx"], keepdims=0))
                nodes.append(const("zero", np.array(0.0, np.float32)))
                nodes.append(helper.make_node("Greater", ["sx", "zero"], ["c2"]))
                nodes.append(helper.make_node("If", ["c2"], ["nested_o"], then_branch=inner[0], else_branch=inner[1]))
                outs[0] = tvi("nested_o", F)
            branches.append(helper.make_graph(nodes, f"branch{b}", [], outs))
        names = [f"o{o}" for o in range(nout)]
        node = helper.make_node("If", ["c"], names, then_branch=branches[0], else_branch=branches[1])
        for cv in (True, False):
            c = np.array(cv)
            m = graph_model([node], [tvi("c", B, []), tvi("x", F, shape), tvi("y", F, shape)], [tvi(o, F) for o in names])
            cases.append((f"if_{k}_{'then' if cv else 'else'}{'_nested' if nested else ''}", m, {"c": c, "x": x, "y": y}, None))
    return cases


def loop_cases(rng, n):
    cases = []
    for k in range(n):
        shape = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 3)))]
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal(shape).astype(np.float32)
        kind = ["trip", "trip_cond", "cond", "trip_early"][k % 4]
        trips = int(rng.integers(0 if kind == "trip" else 1, 6))  # zero iterations too (empty scan outputs)
        ncarried = 1 + k % 2
        nscan = (k // 2) % 3
        # body: (i, cond, a[, b]) -> (cond', a', [b'], scans...)
        bin_ = [tvi("i", I64, []), tvi("cin", B, []), tvi("a", F)] + ([tvi("b", F)] if ncarried == 2 else [])
        nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
                 helper.make_node("Mul", ["a", "w"], ["aw"]),          # w: an outer value (a capture)
                 helper.make_node("Add", ["aw", "fi"], ["a2"]),
                 helper.make_node("Tanh", ["a2"], ["a_next"])]
        outs = ["a_next"]
        if ncarried == 2:
            nodes += [helper.make_node("Add", ["b", "a"], ["b_next"])]  # reads the previous a: the carried update order matters
            outs.append("b_next")
        if kind in ("cond", "trip_early"):
            stop = int(rng.integers(1, trips + 1))  # the body's condition ends the loop after `stop` iterations
            nodes += [const("stop", np.array(stop, np.int64)), const("one", np.array(1, np.int64)),
                      helper.make_node("Add", ["i", "one"], ["i1"]), helper.make_node("Less", ["i1", "stop"], ["cout"])]
        else:
            nodes.append(helper.make_node("Identity", ["cin"], ["cout"]))
        scans = []
        for s in range(nscan):
            nodes.append(helper.make_node(["Sin", "Cos"][s], ["a_next"], [f"sc{s}"]))
            scans.append(f"sc{s}")
        body = helper.make_graph(nodes, "body", bin_, [tvi("cout", B, [])] + [tvi(o, F) for o in outs] + [tvi(s, F, shape) for s in scans])
        inputs = {"x": x, "w": w}
        gin = [tvi("x", F, shape), tvi("w", F, shape)]
        loop_in = ["", ""]
        if kind in ("trip", "trip_cond", "trip_early"):
            inputs["M"] = np.array(trips, np.int64)
            gin.append(tvi("M", I64, []))
            loop_in[0] = "M"
        if kind in ("trip_cond", "cond", "trip_early"):
            inputs["c0"] = np.array(True)
            gin.append(tvi("c0", B, []))
            loop_in[1] = "c0"
        carried_init = ["x"] + (["w"] if ncarried == 2 else [])
        lout = [f"v{j}" for j in range(ncarried)] + [f"s{j}" for j in range(nscan)]
        node = helper.make_node("Loop", loop_in + carried_init, lout, body=body)
        m = graph_model([node], gin, [tvi(o, F) for o in lout])
        cases.append((f"loop_{k}_{kind}_c{ncarried}_s{nscan}", m, inputs, None))
    return cases


def scan_cases(rng, n):
    """Scan (opset 9 on): one or two states, one or two scan inputs along any axis, forward or
    reverse, scan outputs stacked along any axis, forward or reverse; an If inside the body."""
    cases = []
    for k in range(n):
        length = int(rng.integers(1, 5))
        m = 1 + k % 2  # scan inputs
        nstate = 1 + (k // 2) % 2
        d = int(rng.integers(1, 4))
        in_axes = [int(rng.integers(-2, 2)) for _ in range(m)]
        in_dirs = [int(rng.integers(0, 2)) for _ in range(m)]
        xs = []
        for j in range(m):
            shape = [d, d]
            shape[in_axes[j] % 2] = length
            xs.append(rng.standard_normal(shape).astype(np.float32))
        states = [rng.standard_normal([d]).astype(np.float32) for _ in range(nstate)]
        bin_ = [tvi(f"s{j}_in", F, [d]) for j in range(nstate)] + [tvi(f"e{j}", F, [d]) for j in range(m)]
        nodes = [helper.make_node("Add", ["s0_in", "e0"], ["t0"])]
        if m == 2:
            nodes.append(helper.make_node("Mul", ["t0", "e1"], ["t1"]))
        last = f"t{m - 1}"
        nodes.append(helper.make_node("Tanh", [last], ["s0_out"]))
        outs = ["s0_out"]
        if nstate == 2:
            nodes.append(helper.make_node("Sub", ["s1_in", "s0_in"], ["s1_out"]))  # reads the previous s0
            outs.append("s1_out")
        if k % 3 == 2:  # an If in the body on the sign of the sum of the state
            then_g = helper.make_graph([helper.make_node("Neg", ["s0_out"], ["th"])], "th", [], [tvi("th", F)])
            else_g = helper.make_graph([helper.make_node("Identity", ["e0"], ["el"])], "el", [], [tvi("el", F)])
            nodes += [helper.make_node("ReduceSum", ["s0_in"], ["rs"], keepdims=0), const("z", np.array(0.0, np.float32)),
                      helper.make_node("Greater", ["rs", "z"], ["cnd"]),
                      helper.make_node("If", ["cnd"], ["so"], then_branch=then_g, else_branch=else_g)]
        else:
            nodes.append(helper.make_node("Sin", ["s0_out"], ["so"]))
        nodes.append(helper.make_node("Identity", [last], ["so2"]))
        scan_outs = ["so", "so2"]
        out_axes = [int(rng.integers(-2, 2)) for _ in scan_outs]
        out_dirs = [int(rng.integers(0, 2)) for _ in scan_outs]
        body = helper.make_graph(nodes, "body", bin_, [tvi(o, F, [d]) for o in outs] + [tvi(o, F, [d]) for o in scan_outs])
        ins = {f"init{j}": v for j, v in enumerate(states)}
        ins.update({f"x{j}": v for j, v in enumerate(xs)})
        lout = [f"final{j}" for j in range(nstate)] + [f"scan{j}" for j in range(len(scan_outs))]
        node = helper.make_node("Scan", list(ins), lout, body=body, num_scan_inputs=m, scan_input_axes=in_axes,
                                scan_input_directions=in_dirs, scan_output_axes=out_axes, scan_output_directions=out_dirs)
        mdl = graph_model([node], [tvi(kk, F, list(v.shape)) for kk, v in ins.items()], [tvi(o, F) for o in lout], opset=11)
        cases.append((f"scan_{k}_m{m}_n{nstate}_in{in_axes}{in_dirs}_out{out_axes}{out_dirs}", mdl, ins, None))
    return cases


def sequence_cases(rng, n):
    cases = []
    for k in range(n):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 4)) for _ in range(rank)]
        cnt = int(rng.integers(1, 5))
        xs = {f"x{j}": rng.standard_normal(shape).astype(np.float32) for j in range(cnt)}
        extra = rng.standard_normal(shape).astype(np.float32)
        nodes = [helper.make_node("SequenceConstruct", list(xs), ["s0"])]
        inputs = dict(xs)
        inputs["e"] = extra
        length = cnt
        # insert: at the back, or at a position in [-n, n]
        if k % 3 == 0:
            nodes.append(helper.make_node("SequenceInsert", ["s0", "e"], ["s1"]))
        else:
            p = int(rng.integers(-length, length + 1))
            nodes += [const("pi", np.array(p, np.int64)), helper.make_node("SequenceInsert", ["s0", "e", "pi"], ["s1"])]
        length += 1
        # erase: the last, or a position in [-n, n - 1]
        if k % 4 == 1:
            nodes.append(helper.make_node("SequenceErase", ["s1"], ["s2"]))
        else:
            p = int(rng.integers(-length, length))
            nodes += [const("pe", np.array(p, np.int64)), helper.make_node("SequenceErase", ["s1", "pe"], ["s2"])]
        length -= 1
        at = int(rng.integers(-length, length))
        axis = int(rng.integers(-rank, rank))
        new_axis = k % 2
        if new_axis:
            axis = int(rng.integers(-rank - 1, rank + 1))
        nodes += [helper.make_node("SequenceLength", ["s2"], ["len"]),
                  const("pa", np.array(at, np.int64)), helper.make_node("SequenceAt", ["s2", "pa"], ["at"]),
                  helper.make_node("ConcatFromSequence", ["s2"], ["cat"], axis=axis, new_axis=new_axis)]
        m = graph_model(nodes, [tvi(k2, F, shape) for k2 in inputs], [tvi("len", I64, []), tvi("at", F), tvi("cat", F)], opset=13)
        cases.append((f"sequence_{k}_n{cnt}_axis{axis}{'_new' if new_axis else ''}", m, inputs, None))
    for k in range(n // 2):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(2, 5)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        x = rng.standard_normal(shape).astype(np.float32)
        kind = ["none_keep", "none_drop", "scalar", "list"][k % 4]
        d = shape[axis]
        inits = []
        if kind.startswith("none"):
            node = helper.make_node("SplitToSequence", ["x"], ["s"], axis=axis, keepdims=int(kind == "none_keep"))
        elif kind == "scalar":
            inits = [("sp", np.array(int(rng.integers(1, d + 1)), np.int64))]
            node = helper.make_node("SplitToSequence", ["x", "sp"], ["s"], axis=axis)
        else:
            cut = int(rng.integers(0, d + 1))
            inits = [("sp", np.array([cut, d - cut], np.int64))]
            node = helper.make_node("SplitToSequence", ["x", "sp"], ["s"], axis=axis)
        back = helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis if kind != "none_drop" else axis, new_axis=int(kind == "none_drop"))
        nodes = [node, helper.make_node("SequenceLength", ["s"], ["len"]), back,
                 const("p0", np.array(-1, np.int64)), helper.make_node("SequenceAt", ["s", "p0"], ["last"])]
        m = graph_model(nodes, [tvi("x", F, shape)], [tvi("len", I64, []), tvi("y", F), tvi("last", F)], inits=inits)
        cases.append((f"split_to_sequence_{k}_{kind}_axis{axis}", m, {"x": x}, None))
    # a sequence built by a Loop (SequenceEmpty carried, one insert per iteration), concatenated
    for k in range(max(2, n // 4)):
        shape = [int(rng.integers(1, 4)) for _ in range(2)]
        x = rng.standard_normal(shape).astype(np.float32)
        trips = int(rng.integers(1, 5))
        body = helper.make_graph(
            [helper.make_node("Cast", ["i"], ["fi"], to=F), helper.make_node("Mul", ["x", "fi"], ["xi"]),
             helper.make_node("SequenceInsert", ["sq", "xi"], ["sq2"]), helper.make_node("Identity", ["cin"], ["cout"])],
            "body", [tvi("i", I64, []), tvi("cin", B, []), helper.make_tensor_sequence_value_info("sq", F, None)],
            [tvi("cout", B, []), helper.make_tensor_sequence_value_info("sq2", F, None)])
        nodes = [helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
                 helper.make_node("Loop", ["M", "", "e"], ["sq_final"], body=body),
                 helper.make_node("ConcatFromSequence", ["sq_final"], ["y"], axis=k % 2, new_axis=1)]
        m = graph_model(nodes, [tvi("x", F, shape), tvi("M", I64, [])], [tvi("y", F)])
        cases.append((f"loop_sequence_{k}", m, {"x": x, "M": np.array(trips, np.int64)}, None))
    return cases


def family_cases(rng, n):
    """The op families added with control flow: CumSum (any axis, exclusive, reverse, axis as an
    input), TopK, OneHot, EyeLike, QuantizeLinear / DequantizeLinear, GatherND / ScatterND, Size,
    BitShift (uint8)."""
    cases = []
    for k in range(n):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 5)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        dt = [np.float32, np.int64, np.int32][k % 3]
        x = (rng.standard_normal(shape) * 5).astype(dt)
        ex, rv = k % 2, (k // 2) % 2
        elem = {np.float32: F, np.int64: I64, np.int32: TensorProto.INT32}[dt]
        node = helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=ex, reverse=rv)
        a = np.array(axis, np.int64)
        if k % 4 == 3:  # the axis as a constant
            m = graph_model([node], [tvi("x", elem, shape)], [tvi("y", elem)], inits=[("axis", a)])
            ins = {"x": x}
        else:
            m = graph_model([node], [tvi("x", elem, shape), tvi("axis", I64, [])], [tvi("y", elem)])
            ins = {"x": x, "axis": a}
        cases.append((f"cumsum_{k}_{np.dtype(dt).name}_axis{axis}_ex{ex}_rev{rv}", m, ins, None))
    for k in range(n):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(2, 6)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)  # no ties
        kk = int(rng.integers(1, shape[axis] + 1))
        node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=int(k % 2 == 0))
        m = graph_model([node], [tvi("x", F, shape), tvi("k", I64, [1])], [tvi("v", F), tvi("i", I64)])
        cases.append((f"topk_{k}_axis{axis}_k{kk}", m, {"x": x, "k": np.array([kk], np.int64)}, None))
    for k in range(n):
        rank = int(rng.integers(1, 3))
        shape = [int(rng.integers(1, 4)) for _ in range(rank)]
        depth = int(rng.integers(2, 6))
        axis = int(rng.integers(-rank - 1, rank + 1))
        idx = rng.integers(-depth, depth, size=shape).astype(np.int64)
        vals = np.array([rng.integers(-5, 0), rng.integers(1, 6)], np.float32)
        node = helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=axis)
        m = graph_model([node], [tvi("i", I64, shape), tvi("d", I64, []), tvi("v", F, [2])], [tvi("y", F)])
        cases.append((f"one_hot_{k}_axis{axis}_depth{depth}", m, {"i": idx, "d": np.array(depth, np.int64), "v": vals}, None))
    for k in range(n):
        shape = [int(rng.integers(1, 6)), int(rng.integers(1, 6))]
        kd = int(rng.integers(-3, 4))
        node = helper.make_node("EyeLike", ["x"], ["y"], k=kd, **({"dtype": I64} if k % 2 else {}))
        m = graph_model([node], [tvi("x", F, shape)], [tvi("y", I64 if k % 2 else F)])
        cases.append((f"eye_like_{k}_{shape}_k{kd}", m, {"x": rng.standard_normal(shape).astype(np.float32)}, None))
    for k in range(n):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 5)) for _ in range(rank)]
        x = (rng.standard_normal(shape) * 50).astype(np.float32)
        signed = k % 2
        zdt, zel = (np.int8, TensorProto.INT8) if signed else (np.uint8, TensorProto.UINT8)
        per_axis = k % 3 == 2 and rank >= 2
        if per_axis:
            axis = int(rng.integers(-rank, rank))
            c = shape[axis]
            s = (rng.random(c) + 0.1).astype(np.float32)
            z = rng.integers(-20 if signed else 0, 20 if signed else 40, size=c).astype(zdt)
            q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis)
            d = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis)
        else:
            s = np.array(rng.random() + 0.1, np.float32)
            z = np.array(rng.integers(-20 if signed else 0, 20 if signed else 40), zdt)
            q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])
            d = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])
        m = graph_model([q, d], [tvi("x", F, shape)], [tvi("q", zel), tvi("y", F)], inits=[("s", s), ("z", z)])
        cases.append((f"quantize_{k}_{np.dtype(zdt).name}{'_axis' if per_axis else ''}", m, {"x": x}, None))
    for k in range(n):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(2, 5)) for _ in range(rank)]
        x = rng.standard_normal(shape).astype(np.float32)
        q = int(rng.integers(1, rank + 1))  # the indexed axes
        nidx = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 3)))]
        idx = np.stack([rng.integers(-shape[j], shape[j], size=nidx) for j in range(q)], -1).astype(np.int64)
        g = helper.make_node("GatherND", ["x", "i"], ["y"])
        m = graph_model([g], [tvi("x", F, shape), tvi("i", I64, list(idx.shape))], [tvi("y", F)])
        cases.append((f"gather_nd_{k}_r{rank}_q{q}", m, {"x": x, "i": idx}, None))
        # ScatterND: distinct positions (ONNX leaves duplicates undefined without a reduction)
        total = int(np.prod(shape[:q]))
        sidx = nidx if int(np.prod(nidx)) <= total else [total]  # no more positions than there are
        flat = rng.permutation(total)[: int(np.prod(sidx))]
        pos = np.stack(np.unravel_index(flat, shape[:q]), -1).reshape(sidx + [q]).astype(np.int64)
        upd = rng.standard_normal(sidx + shape[q:]).astype(np.float32)
        red = "add" if k % 2 else "none"
        sn = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], **({"reduction": red} if red == "add" else {}))
        m = graph_model([sn], [tvi("x", F, shape), tvi("i", I64, list(pos.shape)), tvi("u", F, list(upd.shape))], [tvi("y", F)],
                        opset=16 if red == "add" else 13)
        cases.append((f"scatter_nd_{k}_r{rank}_q{q}_{red}", m, {"x": x, "i": pos, "u": upd}, None))
    for k in range(max(2, n // 2)):
        shape = [int(rng.integers(1, 5)) for _ in range(int(rng.integers(0, 4)))]
        x = rng.standard_normal(shape).astype(np.float32)
        m = graph_model([helper.make_node("Size", ["x"], ["y"])], [tvi("x", F, shape)], [tvi("y", I64, [])])
        cases.append((f"size_{k}_{shape}", m, {"x": x}, None))
        a = rng.integers(0, 256, size=[3, 4]).astype(np.uint8)
        b = rng.integers(0, 8, size=[4]).astype(np.uint8)
        d = ["LEFT", "RIGHT"][k % 2]
        m = graph_model([helper.make_node("BitShift", ["a", "b"], ["y"], direction=d)],
                        [tvi("a", TensorProto.UINT8, [3, 4]), tvi("b", TensorProto.UINT8, [4])], [tvi("y", TensorProto.UINT8)], opset=13)
        cases.append((f"bitshift_{k}_{d}", m, {"a": a, "b": b}, None))
    return cases


def more_family_cases(rng, n):
    """RNN / LSTM / GRU (linear_before_reset 1; sizes, the three directions, with and without bias and
    initial states), Unique (repeats, sorted or not,
    axes), Gather (index ranks 0-2, negative indices, every axis), n-ary Max/Min/Sum/Mean, pools with
    auto_pad SAME_UPPER/LOWER, LRN (odd sizes: onnxruntime's limit), ReverseSequence."""
    cases = []
    for k in range(n):
        seq, batch, inp, hid = [int(v) for v in rng.integers(1, 5, size=4)]
        kind = ["LSTM", "RNN", "GRU"][k % 3]
        lstm = kind == "LSTM"
        gates = {"LSTM": 4, "RNN": 1, "GRU": 3}[kind]
        direction = ["forward", "reverse", "bidirectional"][(k // 3) % 3]
        nd = 2 if direction == "bidirectional" else 1
        x = rng.standard_normal([seq, batch, inp]).astype(np.float32)
        w = (rng.standard_normal([nd, gates * hid, inp]) * 0.5).astype(np.float32)
        r = (rng.standard_normal([nd, gates * hid, hid]) * 0.5).astype(np.float32)
        ins = {"x": x, "w": w, "r": r}
        names = ["x", "w", "r"]
        if k % 4 in (1, 2):
            ins["b"] = (rng.standard_normal([nd, 2 * gates * hid]) * 0.5).astype(np.float32)
            names.append("b")
        else:
            names.append("")
        if k % 3 == 2:
            names += ["", "h0"] + (["c0"] if lstm else [])
            ins["h0"] = rng.standard_normal([nd, batch, hid]).astype(np.float32)
            if lstm:
                ins["c0"] = rng.standard_normal([nd, batch, hid]).astype(np.float32)
        while names and names[-1] == "":
            names.pop()
        outs = ["y", "yh"] + (["yc"] if lstm else [])
        extra = {"linear_before_reset": 1} if kind == "GRU" else {}  # (torch.onnx's GRU; 0 is refused)
        node = helper.make_node(kind, names, outs, hidden_size=hid, direction=direction, **extra)
        m = graph_model([node], [tvi(kk, F, list(v.shape)) for kk, v in ins.items()], [tvi(o, F) for o in outs])
        cases.append((f"{kind.lower()}_{k}_{direction}_s{seq}b{batch}i{inp}h{hid}", m, ins, None))
    for k in range(n):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 4)) for _ in range(rank)]
        x = rng.integers(0, 3, size=shape).astype(np.float32)  # repeats
        attrs = {"sorted": int(k % 3 != 0)}
        if k % 2 and rank >= 2 and attrs["sorted"]:
            attrs["axis"] = int(rng.integers(-rank, rank))
        node = helper.make_node("Unique", ["x"], ["y", "i", "inv", "c"], **attrs)
        m = graph_model([node], [tvi("x", F, shape)], [tvi("y", F), tvi("i", I64), tvi("inv", I64), tvi("c", I64)], opset=11)
        cases.append((f"unique_{k}_{attrs}", m, {"x": x}, None))
    for k in range(n):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(1, 5)) for _ in range(rank)]
        axis = int(rng.integers(-rank, rank))
        irank = k % 3
        ishape = [int(rng.integers(1, 4)) for _ in range(irank)]
        idx = rng.integers(-shape[axis], shape[axis], size=ishape).astype(np.int64)
        x = rng.standard_normal(shape).astype(np.float32)
        node = helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)
        m = graph_model([node], [tvi("x", F, shape), tvi("i", I64, ishape)], [tvi("y", F)])
        cases.append((f"gather_{k}_r{rank}_axis{axis}_irank{irank}", m, {"x": x, "i": idx}, None))
    for k in range(n):
        op = ["Max", "Min", "Sum", "Mean"][k % 4]
        cnt = [1, 3, 4, 5][(k // 4) % 4]
        shapes = [[int(rng.integers(1, 4)) for _ in range(2)] for _ in range(cnt)]
        full = [max(s[0] for s in shapes), max(s[1] for s in shapes)]
        shapes = [[s[0] if s[0] == full[0] else 1, s[1] if s[1] == full[1] else 1] for s in shapes]  # broadcastable
        ins = {f"x{j}": rng.standard_normal(sh).astype(np.float32) for j, sh in enumerate(shapes)}
        m = graph_model([helper.make_node(op, list(ins), ["y"])], [tvi(kk, F, list(v.shape)) for kk, v in ins.items()], [tvi("y", F)])
        cases.append((f"{op.lower()}_{k}_n{cnt}", m, ins, None))
    for k in range(n):
        op = ["MaxPool", "AveragePool"][k % 2]
        ap = ["SAME_UPPER", "SAME_LOWER"][(k // 2) % 2]
        hw = [int(rng.integers(3, 9)), int(rng.integers(3, 9))]
        strides = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
        kern = [int(rng.integers(st, 4)) for st in strides]  # (onnxruntime rejects a kernel below the stride: negative pads)
        x = rng.standard_normal([1, 2] + hw).astype(np.float32)
        node = helper.make_node(op, ["x"], ["y"], kernel_shape=kern, strides=strides, auto_pad=ap)
        m = graph_model([node], [tvi("x", F, list(x.shape))], [tvi("y", F)], opset=11)
        cases.append((f"{op.lower()}_same_{k}_{ap}_k{kern}_s{strides}", m, {"x": x}, None))
    for k in range(n):
        # ConvTranspose (2-D) with output_shape: shorter than the transposed convolution (cut as ONNX
        # pads), equal, or one longer where the stride allows (the extra row holds the bias), or SAME_UPPER
        hw = [int(rng.integers(1, 5)), int(rng.integers(1, 5))]
        strides = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        kern = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        full = [st * (i - 1) + kk for st, i, kk in zip(strides, hw, kern)]
        out = [f + int(rng.integers(-2, 2 if st > 1 else 1)) for f, st in zip(full, strides)]
        out = [max(o, 1) for o in out]
        x = rng.standard_normal([1, 2] + hw).astype(np.float32)
        if k % 4 == 3:  # SAME_UPPER with a kernel at least the stride (smaller ones are refused)
            kern = [max(kk, st) for kk, st in zip(kern, strides)]
        attrs = {"strides": strides, "kernel_shape": kern}
        attrs.update({"auto_pad": "SAME_UPPER"} if k % 4 == 3 else {"output_shape": out})
        wt = rng.standard_normal([2, 3] + kern).astype(np.float32)
        bias = rng.standard_normal([3]).astype(np.float32)
        node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
        m = graph_model([node], [tvi("x", F, list(x.shape)), tvi("w", F, list(wt.shape)), tvi("b", F, [3])], [tvi("y", F)], opset=11)
        cases.append((f"conv_transpose_{k}_{attrs}", m, {"x": x, "w": wt, "b": bias}, None))
    for k in range(max(2, n // 2)):
        size = int(rng.choice([1, 3, 5]))  # (onnxruntime's LRN takes odd sizes only)
        x = rng.standard_normal([1, int(rng.integers(1, 7)), 3, 2]).astype(np.float32)
        node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=float(rng.random() * 1e-2), beta=0.75, bias=1.0 + float(rng.random()))
        m = graph_model([node], [tvi("x", F, list(x.shape))], [tvi("y", F)])
        cases.append((f"lrn_{k}_size{size}", m, {"x": x}, None))
        t_len, b = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        tb = k % 2
        shape = [t_len, b, 2] if tb == 0 else [b, t_len, 2]
        x = rng.standard_normal(shape).astype(np.float32)
        lens = rng.integers(1, t_len + 1, size=[b]).astype(np.int64)
        node = helper.make_node("ReverseSequence", ["x", "l"], ["y"], time_axis=tb, batch_axis=1 - tb)
        m = graph_model([node], [tvi("x", F, shape), tvi("l", I64, [b])], [tvi("y", F)])
        cases.append((f"reverse_sequence_{k}_time{tb}", m, {"x": x, "l": lens}, None))
    return cases


def refused_cases():
    """Models that must be refused with the op named: GRU (ONNX's default linear_before_reset 0),
    training-mode Dropout (random). (NonMaxSuppression converts now: nms_cases_test.py.)"""
    gru = graph_model([helper.make_node("GRU", ["x", "w", "r"], ["y", "yh"], hidden_size=2)],
                      [tvi("x", F, [2, 1, 3]), tvi("w", F, [1, 6, 3]), tvi("r", F, [1, 6, 2])], [tvi("y", F), tvi("yh", F)])
    drop = graph_model([const("r", np.array(0.5, np.float32)), const("t", np.array(True)),
                        helper.make_node("Dropout", ["x", "r", "t"], ["y"])], [tvi("x", F, [3])], [tvi("y", F)])
    return [("refused_gru", gru, "GRU"), ("refused_training_dropout", drop, "Dropout")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--cases", type=int, default=16, help="cases per family (If, Loop, sequences)")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    cases = if_cases(rng, a.cases) + loop_cases(rng, a.cases) + scan_cases(rng, a.cases) + sequence_cases(rng, a.cases) + family_cases(rng, a.cases) + more_family_cases(rng, a.cases)
    return run_cases(a.amanda, cases, refused_cases())


if __name__ == "__main__":
    sys.exit(main())
