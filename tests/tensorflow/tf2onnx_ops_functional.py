"""TF2 functional control flow (If/StatelessIf, While/StatelessWhile with function-library
bodies) for tf2onnx_ops.py: graphs with a `library` of FunctionDefs written as TensorFlow writes
them (node inputs `node:out_arg:index` inside functions), converted to onnx::If / onnx::Loop and
compared with TF.js, whose executor runs these functions (executeAsync)."""

F = "DT_FLOAT"
I = "DT_INT32"
B = "DT_BOOL"


def _attr_type(k, t):
    return f'attr {{ key: "{k}" value {{ type: {t} }} }}'


def _attr_types(k, ts):
    return f'attr {{ key: "{k}" value {{ list {{ {" ".join(f"type: {t}" for t in ts)} }} }} }}'


def _fn(name, args, outs, nodes, ret):
    """A FunctionDef: args/outs [(name, DT)], nodes (NodeDef texts), ret {out: "node:arg:i"}."""
    sig = f'signature {{ name: "{name}" ' + " ".join(f'input_arg {{ name: "{a}" type: {t} }}' for a, t in args) + " " + \
          " ".join(f'output_arg {{ name: "{a}" type: {t} }}' for a, t in outs) + " }"
    rets = " ".join(f'ret {{ key: "{k}" value: "{v}" }}' for k, v in ret.items())
    return f"function {{ {sig} {' '.join(nodes)} {rets} }}"


def _node(name, op, inputs, *attrs):
    ins = " ".join(f'input: "{i}"' for i in inputs)
    return f'node_def {{ name: "{name}" op: "{op}" {ins} {" ".join(attrs)} }}'


def _const(name, value, dt=F):
    field = {F: "float_val", I: "int_val"}[dt]
    return (f'node_def {{ name: "{name}" op: "Const" {_attr_type("dtype", dt)} attr {{ key: "value" value {{ tensor {{ dtype: {dt} '
            f'tensor_shape {{ }} {field}: {value} }} }} }} }}')


def _call(c, name, op, inputs, **funcs):
    """A functional If/While node of the main graph (attributes as TF writes them)."""
    attrs = []
    for k, v in funcs.items():
        if isinstance(v, str):
            attrs.append(f'attr {{ key: "{k}" value {{ func {{ name: "{v}" }} }} }}')
        elif isinstance(v, list):
            attrs.append(_attr_types(k, v))
        elif isinstance(v, int):
            attrs.append(f'attr {{ key: "{k}" value {{ i: {v} }} }}')
    attrs.append('attr { key: "output_shapes" value { list { } } }')
    ins = " ".join(f'input: "{i}"' for i in inputs)
    c.nodes.append(f'node {{ name: "{name}" op: "{op}" {ins} {" ".join(attrs)} }}')


def _if_functions(c, then_name="then_fn", else_name="else_fn"):
    # then: (x * 2 + y, x - y); else: (x - y, |x| * y)
    c.library.append(_fn(then_name, [("x", F), ("y", F)], [("a", F), ("b", F)], [
        _node("m", "AddV2", ["x", "x"], _attr_type("T", F)),
        _node("s", "AddV2", ["m:z:0", "y"], _attr_type("T", F)), _node("d", "Sub", ["x", "y"], _attr_type("T", F))],
        {"a": "s:z:0", "b": "d:z:0"}))
    c.library.append(_fn(else_name, [("x", F), ("y", F)], [("a", F), ("b", F)], [
        _node("d", "Sub", ["x", "y"], _attr_type("T", F)), _node("ab", "Abs", ["x"], _attr_type("T", F)),
        _node("m", "Mul", ["ab:y:0", "y"], _attr_type("T", F))],
        {"a": "d:z:0", "b": "m:z:0"}))


def _while_functions(c, cond_name, body_name):
    # (i, n, x, w): i < n; (i + 1, n, x * w + w, w): the bound and the step come in as loop values,
    # as TF2 passes captured tensors (no Consts in the functions: see functional_cases)
    V = [("i", I), ("n", I), ("x", F), ("w", F)]
    c.library.append(_fn(cond_name, V, [("ok", B)], [_node("lt", "Less", ["i", "n"], _attr_type("T", I))], {"ok": "lt:z:0"}))
    c.library.append(_fn(body_name, V, [("i2", I), ("n2", I), ("x2", F), ("w2", F)], [
        _node("sg", "Sign", ["n"], _attr_type("T", I)), _node("inc", "AddV2", ["i", "sg:y:0"], _attr_type("T", I)),
        _node("ni", "Identity", ["n"], _attr_type("T", I)),
        _node("m", "Mul", ["x", "w"], _attr_type("T", F)), _node("a", "AddV2", ["m:z:0", "w"], _attr_type("T", F)),
        _node("wi", "Identity", ["w"], _attr_type("T", F))],
        {"i2": "inc:z:0", "n2": "ni:output:0", "x2": "a:z:0", "w2": "wi:output:0"}))


def functional_cases(case):
    nested_conds(case)
    # (No Consts inside the functions: `amanda fmt` writes a function's Const values inline, and
    # TF.js's function executor reads Const values from the weights manifest only; constants come
    # in as arguments, as TF2 passes captured tensors.)
    # ---- If / StatelessIf: the predicate a placeholder (both sides taken across the seeds' inputs
    # is not certain: two cases fix it with a computed predicate each way)
    for op in ("StatelessIf", "If"):
        for side, k in (("then", 1.0), ("else", -1.0)):
            c = case(f"{op}_{side}")
            _if_functions(c)
            x, y = c.placeholder("x", [2, 3], low=0.5, rng=1.0), c.placeholder("y", [2, 3])
            c.op("sx", "Sum", [x, c.const("ax", [0, 1], [2], "int32")], T=F, Tidx=I, keep_dims=False)
            c.op("p", "Greater", [c.op("sk", "Mul", ["sx", c.const("k", [k], [])], T=F), c.const("z", [0.0], [])], T=F)
            _call(c, "if", op, ["p", x, y], Tcond=[B], Tin=[F, F], Tout=[F, F], then_branch="then_fn", else_branch="else_fn")
            c.op("o0", "Identity", ["if"], T=F)
            c.op("o1", "Identity", ["if:1"], T=F)
    # ---- While / StatelessWhile: a counter, a value and an invariant (TF2 passes captures as loop values)
    # (limit 0: the body never runs)
    for op, limit in (("StatelessWhile", 3), ("While", 5), ("StatelessWhile", 0)):
        c = case(f"{op}_{limit}")
        _while_functions(c, "cond_fn", "body_fn")
        _call(c, "w", op, [c.const("i0", [0], [], "int32"), c.const("n", [limit], [], "int32"), c.placeholder("x", [2, 3]),
                           c.placeholder("wt", [2, 3])], T=[I, I, F, F], cond="cond_fn", body="body_fn", parallel_iterations=10)
        c.op("y", "Identity", ["w:2"], T=F)
        c.op("k", "Identity", ["w"], T=I)
    # ---- an If inside a While's body: (x * 2 + w, x - w) when i is even, (x - w, |x| * w) when odd; four times
    c = case("StatelessWhile_if_in_body")
    _if_functions(c)
    V = [("i", I), ("n", I), ("two", I), ("x", F), ("w", F)]
    c.library.append(_fn("cond_fn", V, [("ok", B)], [_node("lt", "Less", ["i", "n"], _attr_type("T", I))], {"ok": "lt:z:0"}))
    c.library.append(_fn("body_fn", V, [("i2", I), ("n2", I), ("t2", I), ("x2", F), ("w2", F)], [
        _node("sg", "Sign", ["n"], _attr_type("T", I)), _node("inc", "AddV2", ["i", "sg:y:0"], _attr_type("T", I)),
        _node("md", "FloorMod", ["i", "two"], _attr_type("T", I)),
        _node("ev", "Less", ["md:z:0", "sg:y:0"], _attr_type("T", I)),
        _node("br", "StatelessIf", ["ev:z:0", "x", "w"], _attr_type("Tcond", B), _attr_types("Tin", [F, F]), _attr_types("Tout", [F, F]),
              'attr { key: "then_branch" value { func { name: "then_fn" } } }', 'attr { key: "else_branch" value { func { name: "else_fn" } } }',
              'attr { key: "output_shapes" value { list { } } }'),
        _node("ni", "Identity", ["n"], _attr_type("T", I)), _node("ti", "Identity", ["two"], _attr_type("T", I)),
        _node("wi", "Identity", ["w"], _attr_type("T", F))],
        {"i2": "inc:z:0", "n2": "ni:output:0", "t2": "ti:output:0", "x2": "br:output:0", "w2": "wi:output:0"}))
    _call(c, "w", "StatelessWhile", [c.const("i0", [0], [], "int32"), c.const("n", [4], [], "int32"), c.const("t", [2], [], "int32"),
                                     c.placeholder("x", [3]), c.placeholder("wt", [3])],
          T=[I, I, I, F, F], cond="cond_fn", body="body_fn", parallel_iterations=10)
    c.op("y", "Identity", ["w:3"], T=F)
    # ---- a function whose branch is itself (no end): refused, not expanded forever
    for op in ("StatelessIf", "StatelessWhile"):
        c = case(f"{op}_recursive", refuse="error:control flow nested more than")
        if op == "StatelessIf":
            c.library.append(_fn("rec", [("p", B), ("x", F)], [("y", F)], [
                _node("r", "StatelessIf", ["p", "p", "x"], _attr_type("Tcond", B), _attr_types("Tin", [B, F]), _attr_types("Tout", [F]),
                      'attr { key: "then_branch" value { func { name: "rec" } } }', 'attr { key: "else_branch" value { func { name: "rec" } } }',
                      'attr { key: "output_shapes" value { list { } } }')], {"y": "r:output:0"}))
            _call(c, "w", "StatelessIf", [c.placeholder("p", [], "bool"), "p", c.placeholder("x", [2])], Tcond=[B], Tin=[B, F], Tout=[F],
                  then_branch="rec", else_branch="rec")
        else:  # the cond function runs a While with itself as cond: the first tests copy it into the root without end
            c.library.append(_fn("rc", [("x", F)], [("ok", B)], [
                _node("w2", "StatelessWhile", ["x"], _attr_types("T", [F]), 'attr { key: "cond" value { func { name: "rc" } } }',
                      'attr { key: "body" value { func { name: "bd" } } }', 'attr { key: "output_shapes" value { list { } } }'),
                _node("g", "Greater", ["w2:output:0", "x"], _attr_type("T", F))], {"ok": "g:z:0"}))
            c.library.append(_fn("bd", [("x", F)], [("y", F)], [_node("n", "Neg", ["x"], _attr_type("T", F))], {"y": "n:y:0"}))
            _call(c, "w", "StatelessWhile", [c.placeholder("x", [2])], T=[F], cond="rc", body="bd")
        c.op("o", "Identity", ["w"], T=F)
    # ---- a call of a library function by another op: refused by name
    c = case("PartitionedCall", refuse="error:calls a function of the graph's library")
    _if_functions(c)
    _call(c, "pc", "PartitionedCall", [c.placeholder("x", [2]), c.placeholder("y", [2])], Tin=[F, F], Tout=[F, F], f="then_fn")
    c.op("o", "Identity", ["pc"], T=F)


def nested_conds(case):
    """TF1 conds nested as control_flow_ops.cond writes them: the inner cond inside the outer true
    branch, its Switches fed by the outer Switch's true output and its predicate computed there;
    thresholds pick each path (outer false; outer true with inner true or false)."""
    for name, t_out, t_in, side in (("tt", -10.0, -10.0, 1), ("tf", -10.0, 10.0, 1), ("f", 10.0, 0.0, 1),
                                    ("false_side_ft", 10.0, -10.0, 0), ("false_side_t", -10.0, 0.0, 0)):
        c = case(f"cond_nested_{name}")
        x = c.placeholder("x", [2, 3])
        ax = c.const("axes", [0, 1], [2], "int32")
        p = c.op("p", "Greater", [c.op("sum", "Sum", [x, ax], T=F, Tidx=I, keep_dims=False), c.const("to", [t_out], [])], T=F)
        c.op("sw", "Switch", [x, p], T=F)
        c.op("sw_k", "Switch", [c.op("k", "Abs", [x], T=F), p], T=F)  # an outer value both levels read
        # the outer true branch: an inner cond on q = sum(sw:1 * sw_k:1) > t_in
        # (side 0: the inner cond in the outer false branch instead)
        sx, sk = ("sw:1", "sw_k:1") if side else ("sw", "sw_k")
        q = c.op("q", "Greater", [c.op("isum", "Sum", [c.op("pr", "Mul", [sx, sk], T=F), ax], T=F, Tidx=I, keep_dims=False),
                                  c.const("ti", [t_in], [])], T=F)
        c.op("isw", "Switch", [sx, q], T=F)
        c.op("isw_k", "Switch", [sk, q], T=F)
        it = c.op("it", "AddV2", [c.op("i2", "Mul", ["isw:1", "isw:1"], T=F), "isw_k:1"], T=F)
        i_f = c.op("if_", "Neg", ["isw"], T=F)
        im = c.op("im", "Merge", [i_f, it], T=F, N=2)
        t = c.op("t", "Sub", [im, sk], T=F)
        f = c.op("f", "Tanh", ["sw" if side else "sw:1"], T=F)
        c.op("m", "Merge", [f, t] if side else [t, f], T=F, N=2)
        c.op("y", "Identity", ["m"], T=F)
