#!/usr/bin/python3
"""Writes tables/core/onnx_17_core.yaml, the table amanda/onnx/17 -> amanda/core.

    /usr/bin/python3 scripts/gen_onnx_core_table.py [OUT | --check]

The table is generated because most of its rules are one pattern repeated per op: ONNX's
implicit (numpy) broadcasting made explicit for every elementwise op (one rule when the shapes
are equal; otherwise Reshape + Broadcast on each operand whose shape is not the output's), and
the ONNX port names, which come from libonnx's schemas here (Debian's python3-onnx) rather than
by hand. Edit this script, not the YAML; the ctest core.table_fresh fails when they differ.
Every ONNX op that no rule maps is refused by the engine, by name (docs/mapping-tables.md).
"""
import os
import sys

import onnx.defs

OPSET = 17
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tables", "core", "onnx_17_core.yaml")


def ports(op):
    s = onnx.defs.get_schema(op, OPSET)
    return [i.name for i in s.inputs], [o.name for o in s.outputs]


rules = []


def rule(text):
    rules.append(text.strip("\n"))


def src(op, ins, out="y", attrs=None, const=None, optional=()):
    """The matcher: op with its inputs captured as refs (ONNX port names from the schema)."""
    names, outs = ports(op)
    parts = []
    for n, r in zip(names, ins):
        if r is None:
            continue
        if const and r in const:
            parts.append(f'{{name: {n}, const: "{{{r}}}"' + (", optional: true}" if r in optional else "}"))
        else:
            parts.append(f"{{name: {n}, ref: {r}" + (", optional: true}" if r in optional else "}"))
    a = ""
    if attrs:
        a = "attrs: {" + ", ".join(f"{k}: {{ref: {v}}}" for k, v in attrs.items()) + "}, "
    return f"{{type: {op}, {a}input_ports: [{', '.join(parts)}], output_ports: [{{name: {outs[0]}, ref: {out}}}]}}"


def bcast_lines(v, target):
    """Lines that place value v in shape `target` (an expression): Reshape away the 1-dimensions
    that broadcast, then Broadcast along the new axes. Returns (lines, new value name)."""
    return [f'r{v} = Reshape({v}) {{shape: "{{broadcast_kept(shape({v}), {target})}}"}}',
            f'b{v} = Broadcast(r{v}) {{shape: "{{{target}}}", axes: "{{broadcast_axes(shape({v}), {target})}}"}}'], f"b{v}"


def graph(lines):
    return "        graph: |\n" + "".join(f"          {l}\n" for l in lines).rstrip("\n")


def elementwise(onnx_op, core_op, name, n_in=2, same_type=True, ins=None):
    """Rules for an ONNX elementwise op with numpy broadcasting: equal shapes map straight; else
    every operand whose shape is not the output's is broadcast to it (all shapes known)."""
    refs = ["a", "b", "c"][:n_in] if ins is None else ins
    m = src(onnx_op, refs)
    if ins is not None:  # variadic ONNX ports (Max, Min, Sum): data_0.0, data_0.1
        names, outs = ports(onnx_op)
        m = (f"{{type: {onnx_op}, input_ports: [" + ", ".join(f"{{name: {names[0]}.{i}, ref: {r}}}" for i, r in enumerate(refs)) +
             f"], output_ports: [{{name: {outs[0]}, ref: y}}]}}")
    types = " and ".join(f"dtype({r}) == dtype({refs[-1]})" for r in refs[:-1]) if same_type else ""
    if core_op == "Select":
        types = f"dtype({refs[1]}) == dtype({refs[2]})"
    known = " and ".join(f"all_known(shape({r}))" for r in refs) + " and all_known(shape(y))"
    equal = " and ".join(f"shape({r}) == shape({refs[0]})" for r in refs[1:])
    cond = f"has(shape({refs[0]})) and {equal}" + (f" and {types}" if types else "")
    final = core_op if callable(core_op) else (lambda args: [f"y = {core_op}({', '.join(args)})"])
    rule(f"""
    - rule_name: {name}
      src: {m}
      when: "{cond}"
      dst:
{graph(final(refs))}""")
    # broadcast: every operand whose shape differs from the output's
    subsets = []
    import itertools
    for k in range(1, len(refs) + 1):
        for sub in itertools.combinations(refs, k):
            subsets.append(sub)
    for sub in subsets:
        lines, args = [], []
        for r in refs:
            if r in sub:
                l, nv = bcast_lines(r, "shape(y)")
                lines += l
                args.append(nv)
            else:
                args.append(r)
        lines += final(args)
        conds = [known] + [f"shape({r}) != shape(y)" if r in sub else f"shape({r}) == shape(y)" for r in refs]
        if types:
            conds.append(types)
        rule(f"""
    - rule_name: {name}_broadcast_{''.join(sub)}
      src: {m}
      when: "{' and '.join(conds)}"
      dst:
{graph(lines)}""")


def unary(onnx_op, core_op, name):
    rule(f"""
    - rule_name: {name}
      src: {src(onnx_op, ['x'])}
      dst:
{graph([f"y = {core_op}(x)"])}""")


def scalar(value, out):
    """out = the scalar `value` (an expression) in x's element type, broadcast to x's shape."""
    return f'{out} = Broadcast({{tensor({value}, dtype(x))}}) {{shape: "{{shape(x)}}", axes: "{{range(rank(x))}}"}}'


# ---- elementwise ops
for onnx_op, core_op in [("Add", "Add"), ("Sub", "Subtract"), ("Mul", "Multiply"), ("Div", "Divide"), ("Pow", "Power"),
                         ("Equal", "Equal"), ("Less", "Less"), ("Greater", "Greater"), ("And", "And"), ("Or", "Or")]:
    elementwise(onnx_op, core_op, onnx_op.lower())
for onnx_op, core_op in [("Max", "Maximum"), ("Min", "Minimum")]:
    elementwise(onnx_op, core_op, onnx_op.lower() + "_2", ins=["a", "b"])
elementwise("Where", "Select", "where", n_in=3)
# a >= b is (a > b) or (a == b); a <= b likewise
elementwise("GreaterOrEqual", lambda x: [f"gt = Greater({x[0]}, {x[1]})", f"eq = Equal({x[0]}, {x[1]})", "y = Or(gt, eq)"], "greater_or_equal")
elementwise("LessOrEqual", lambda x: [f"lt = Less({x[0]}, {x[1]})", f"eq = Equal({x[0]}, {x[1]})", "y = Or(lt, eq)"], "less_or_equal")

for onnx_op, core_op in [("Relu", "Relu"), ("Neg", "Negative"), ("Abs", "Abs"), ("Sign", "Sign"), ("Exp", "Exp"),
                         ("Log", "Log"), ("Sqrt", "Sqrt"), ("Erf", "Erf"), ("Tanh", "Tanh"), ("Sigmoid", "Sigmoid"),
                         ("Sin", "Sin"), ("Cos", "Cos"), ("Floor", "Floor"), ("Ceil", "Ceiling"), ("Not", "Not")]:
    unary(onnx_op, core_op, onnx_op.lower())

# ops that are a scalar and an elementwise op: the scalar broadcast explicitly
rule(f"""
    - rule_name: reciprocal
      src: {src('Reciprocal', ['x'])}
      when: "all_known(shape(x))"
      dst:
{graph([scalar('1.0', 'one'), 'y = Divide(one, x)'])}""")
rule(f"""
    - rule_name: leaky_relu   # max(x, 0) + alpha * min(x, 0)
      src: {src('LeakyRelu', ['x'], attrs={'alpha': 'alpha'})}
      when: "all_known(shape(x)) and dtype(x) in ['float32', 'float64']"
      dst:
{graph([scalar('0.0', 'zero'), scalar('alpha', 'al'),
        'p = Maximum(x, zero)', 'n = Minimum(x, zero)', 'an = Multiply(al, n)', 'y = Add(p, an)'])}""")
rule(f"""
    - rule_name: hard_sigmoid   # clamp(alpha * x + beta, 0, 1)
      src: {src('HardSigmoid', ['x'], attrs={'alpha': 'alpha', 'beta': 'beta'})}
      when: "all_known(shape(x)) and dtype(x) in ['float32', 'float64']"
      dst:
{graph([scalar('alpha', 'al'), scalar('beta', 'be'), 'ax = Multiply(al, x)', 's = Add(ax, be)', 'y = Clamp(s) {min: 0.0, max: 1.0}'])}""")
rule(f"""
    - rule_name: hard_swish   # x * clamp(x / 6 + 1 / 2, 0, 1)
      src: {src('HardSwish', ['x'])}
      when: "all_known(shape(x)) and dtype(x) in ['float32', 'float64']"
      dst:
{graph([scalar('0.16666666666666666', 'al'), scalar('0.5', 'be'),
        'ax = Multiply(al, x)', 's = Add(ax, be)', 'h = Clamp(s) {min: 0.0, max: 1.0}', 'y = Multiply(x, h)'])}""")

# Clip: constant bounds (absent: the element type's whole range)
rule(f"""
    - rule_name: clip
      src: {src('Clip', ['x', 'lo', 'hi'], const=('lo', 'hi'), optional=('lo', 'hi'))}
      when: "dtype(x) in ['float32', 'float64', 'float16']"
      dst:
{graph(['y = Clamp(x) {min: "{if(lo == null, -3.4028234663852886e+38, scalar(lo))}", max: "{if(hi == null, 3.4028234663852886e+38, scalar(hi))}"}'])}""")

# Cast
G = graph(['''y = Convert(x) {to: "{dtype_name(to, 'onnx')}"}'''])
rule(f"""
    - rule_name: cast
      src: {src('Cast', ['x'], attrs={'to': 'to'})}
      when: "dtype_name(to, 'onnx') in ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float16', 'bfloat16', 'float32', 'float64']"
      dst:
{G}""")

# ---- shapes: everything that only changes the shape is a Reshape to the output's known shape
for onnx_op, ins, cond in [("Reshape", ["x", "s"], ""), ("Flatten", ["x"], ""), ("Squeeze", ["x", "ax"], ""),
                           ("Unsqueeze", ["x", "ax"], ""), ("Identity", ["x"], "")]:
    m = src(onnx_op, ins, optional=("ax",))
    rule(f"""
    - rule_name: {onnx_op.lower()}
      src: {m}
      when: "all_known(shape(x)) and all_known(shape(y))"
      dst:
{graph(['y = Reshape(x) {shape: "{shape(y)}"}'])}""")
G = graph(['''y = Constant() {value: "{tensor(slice(shape(x), default(st, 0), default(en, rank(x))), 'int64')}"}'''])
rule(f"""
    - rule_name: dropout   # inference: the identity (training with a ratio of 0 too); the mask is not mapped
      src: {src('Dropout', ['x', 'r', 'tm'], const=('r', 'tm'), optional=('r', 'tm'))}
      when: "all_known(shape(x)) and (tm == null or not scalar(tm) or (r != null and scalar(r) == 0.0))"
      dst:
{graph(['y = Reshape(x) {shape: "{shape(x)}"}'])}""")
rule(f"""
    - rule_name: shape
      src: {src('Shape', ['x'], attrs={'start': 'st', 'end': 'en'})}
      when: "all_known(shape(x))"
      dst:
{G}""")
G = graph(['''y = Constant() {value: "{tensor(strides(concat([1], shape(x)))[0], 'int64')}"}'''])
rule(f"""
    - rule_name: size
      src: {src('Size', ['x'])}
      when: "all_known(shape(x))"
      dst:
{G}""")
rule(f"""
    - rule_name: expand
      src: {src('Expand', ['x', 's'])}
      when: "all_known(shape(x)) and all_known(shape(y)) and shape(x) == shape(y)"
      dst:
{graph(['y = Reshape(x) {shape: "{shape(y)}"}'])}""")
rule(f"""
    - rule_name: expand_broadcast
      src: {src('Expand', ['x', 's'])}
      when: "all_known(shape(x)) and all_known(shape(y)) and shape(x) != shape(y)"
      dst:
{graph(bcast_lines('x', 'shape(y)')[0] + ['y = Reshape(bx) {shape: "{shape(y)}"}'])}""")
rule(f"""
    - rule_name: constant
      src: {{type: Constant, attrs: {{value: {{ref: v}}}}, output_ports: [{{name: output, ref: y}}]}}
      when: "v != null"
      dst:
{graph(['y = Constant() {value: "{v}"}'])}""")
rule(f"""
    - rule_name: transpose
      src: {src('Transpose', ['x'], attrs={'perm': 'perm'})}
      when: "has(rank(x))"
      dst:
{graph(['y = Transpose(x) {perm: "{default(perm, reverse(range(rank(x))))}"}'])}""")
rule(f"""
    - rule_name: concat
      src: {{type: Concat, attrs: {{axis: {{ref: axis}}}}, input_ports: [{{name: inputs.0, ref: x}}], output_ports: [{{name: concat_result, ref: y}}]}}
      when: "has(rank(x))"
      dst: {{type: Concat, attrs: {{axis: "{{normalize_axes(axis, rank(x))}}"}}, output_ports: [{{name: out, ref: y}}]}}""")
rule(f"""
    - rule_name: gather
      src: {src('Gather', ['x', 'i'], attrs={'axis': 'axis'})}
      when: "has(rank(x))"
      dst:
{graph(['y = Gather(x, i) {axis: "{normalize_axes(axis, rank(x))}"}'])}""")
rule(f"""
    - rule_name: slice
      src: {src('Slice', ['x', 'st', 'en', 'ax', 'sp'], const=('st', 'en', 'ax', 'sp'), optional=('ax', 'sp'))}
      when: "has(rank(x))"
      dst:
{graph(['y = Slice(x) {starts: "{list(st)}", ends: "{list(en)}", axes: "{normalize_axes(default(list(ax), range(len(list(st)))), rank(x))}", steps: "{default(list(sp), repeat(1, len(list(st))))}"}'])}""")

rule(f"""
    - rule_name: pad
      src: {src('Pad', ['x', 'p', 'v'], attrs={'mode': 'mode'}, const=('p', 'v'), optional=('v',))}
      when: "mode == 'constant' and sort(concat(list(p), [0]))[0] >= 0 and dtype(x) in ['float32', 'float64', 'int32', 'int64']"
      dst:
{graph(['y = Pad(x) {pads: "{list(p)}", value: "{if(v == null, 0.0, float(scalar(v)))}"}'])}""")

# ---- products
rule(f"""
    - rule_name: matmul
      src: {src('MatMul', ['a', 'b'])}
      when: "rank(a) == 2 and rank(b) == 2"
      dst:
{graph(['y = Dot(a, b)'])}""")
rule(f"""
    - rule_name: matmul_rows   # [..., m, k] x [k, n]: the rows of a as one matrix
      src: {src('MatMul', ['a', 'b'])}
      when: "all_known(shape(a)) and all_known(shape(y)) and rank(a) >= 3 and rank(b) == 2"
      dst:
{graph(['ra = Reshape(a) {shape: "{[strides(concat([1], slice(shape(a), 0, rank(a) - 1)))[0], shape(a)[rank(a) - 1]]}"}',
        'm = Dot(ra, b)', 'y = Reshape(m) {shape: "{shape(y)}"}'])}""")
rule(f"""
    - rule_name: matmul_batch
      src: {src('MatMul', ['a', 'b'])}
      when: "has(rank(a)) and rank(a) >= 3 and rank(a) == rank(b) and slice(shape(a), 0, rank(a) - 2) == slice(shape(b), 0, rank(b) - 2) and all_known(slice(shape(a), 0, rank(a) - 2))"
      dst:
{graph(['y = BatchDot(a, b)'])}""")
BA = "concat(slice(shape(y), 0, rank(y) - 2), slice(shape(a), rank(a) - 2))"
BB = "concat(slice(shape(y), 0, rank(y) - 2), slice(shape(b), rank(b) - 2))"
rule(f"""
    - rule_name: matmul_batch_broadcast
      src: {src('MatMul', ['a', 'b'])}
      when: "all_known(shape(a)) and all_known(shape(b)) and all_known(shape(y)) and rank(y) >= 3 and rank(a) >= 2 and rank(b) >= 2"
      dst:
{graph(bcast_lines('a', BA)[0] + bcast_lines('b', BB)[0] + ['y = BatchDot(ba, bb)'])}""")
for ta in (0, 1):
    for tb in (0, 1):
        for c in ("none", "same", "broadcast"):
            lines = []
            a, b = "a", "b"
            if ta:
                lines.append("at = Transpose(a) {perm: [1, 0]}")
                a = "at"
            if tb:
                lines.append("bt = Transpose(b) {perm: [1, 0]}")
                b = "bt"
            if c == "none":
                lines.append(f"y = Dot({a}, {b})")
                cond = "not connected(c)"
            # the output's shape from A's and B's (a graph output's declared shape may be symbolic)
            mn = f"[shape(a)[{ta}], shape(b)[{1 - tb}]]"
            if c == "same":
                lines += [f"m = Dot({a}, {b})", "y = Add(m, c)"]
                cond = f"connected(c) and all_known(shape(a)) and all_known(shape(b)) and shape(c) == {mn}"
            elif c == "broadcast":
                lines += [f"m = Dot({a}, {b})"] + bcast_lines("c", mn)[0] + ["y = Add(m, bc)"]
                cond = f"connected(c) and all_known(shape(a)) and all_known(shape(b)) and all_known(shape(c)) and shape(c) != {mn}"
            rule(f"""
    - rule_name: gemm_{ta}{tb}_{c}
      src: {src('Gemm', ['a', 'b', 'c'], attrs={'alpha': 'alpha', 'beta': 'beta', 'transA': 'ta', 'transB': 'tb'}, optional=('c',))}
      when: "alpha == 1.0 and beta == 1.0 and ta == {ta} and tb == {tb} and {cond} and dtype(a) == dtype(b)"
      dst:
{graph(lines)}""")
rule(f"""
    - rule_name: gemm_scaled
      src: {src('Gemm', ['a', 'b', 'c'], attrs={'alpha': 'alpha', 'beta': 'beta'}, optional=('c',))}
      when: "alpha != 1.0 or beta != 1.0"
      unsupported: "Gemm with alpha or beta other than 1 is not mapped to amanda/core yet"
""")

# ---- convolution, pooling, normalisation
GEO = ('strides: "{default(s, repeat(1, rank(x) - 2))}", dilations: "{default(d, repeat(1, rank(x) - 2))}", '
       'pads: "{default(p, repeat(0, 2 * (rank(x) - 2)))}"')
CONV_ATTRS = {"auto_pad": "ap", "strides": "s", "pads": "p", "dilations": "d", "group": "g"}
rule(f"""
    - rule_name: conv
      src: {src('Conv', ['x', 'w', 'b'], attrs=CONV_ATTRS, optional=('b',))}
      when: "ap == 'NOTSET' and has(rank(x)) and not connected(b)"
      dst:
{graph(['y = Convolution(x, w) {' + GEO + ', group: "{g}"}'])}""")
rule(f"""
    - rule_name: conv_bias
      src: {src('Conv', ['x', 'w', 'b'], attrs=CONV_ATTRS, optional=('b',))}
      when: "ap == 'NOTSET' and all_known(shape(y)) and connected(b)"
      dst:
{graph(['c = Convolution(x, w) {' + GEO + ', group: "{g}"}',
        'bb = Broadcast(b) {shape: "{shape(y)}", axes: "{concat([0], range(2, rank(y)))}"}', 'y = Add(c, bb)'])}""")
rule(f"""
    - rule_name: conv_auto_pad
      src: {src('Conv', ['x', 'w', 'b'], attrs=CONV_ATTRS, optional=('b',))}
      when: "ap != 'NOTSET'"
      unsupported: "Conv with auto_pad (SAME_UPPER, SAME_LOWER, VALID) is not mapped to amanda/core yet: give explicit pads"
""")
POOL_GEO = ('strides: "{default(s, repeat(1, rank(x) - 2))}", pads: "{default(p, repeat(0, 2 * (rank(x) - 2)))}", '
            'kernel_shape: "{k}", ceil_mode: "{cm}"')
rule(f"""
    - rule_name: max_pool
      src: {{type: MaxPool, attrs: {{auto_pad: {{ref: ap}}, strides: {{ref: s}}, pads: {{ref: p}}, dilations: {{ref: d}}, kernel_shape: {{ref: k}}, ceil_mode: {{ref: cm}}, storage_order: {{ref: so}}}}, input_ports: [{{name: X, ref: x}}], output_ports: [{{name: Y, ref: y}}]}}
      when: "ap == 'NOTSET' and has(rank(x))"
      dst:
{graph(['y = MaxPool(x) {' + POOL_GEO + ', dilations: "{default(d, repeat(1, rank(x) - 2))}"}'])}""")
rule(f"""
    - rule_name: average_pool
      src: {src('AveragePool', ['x'], attrs={'auto_pad': 'ap', 'strides': 's', 'pads': 'p', 'kernel_shape': 'k', 'ceil_mode': 'cm', 'count_include_pad': 'cip'})}
      when: "ap == 'NOTSET' and has(rank(x))"
      dst:
{graph(['y = AvgPool(x) {' + POOL_GEO + ', count_include_pad: "{cip}"}'])}""")
for onnx_op, core_op in [("GlobalAveragePool", "ReduceMean"), ("GlobalMaxPool", "ReduceMax")]:
    rule(f"""
    - rule_name: {onnx_op.lower()}
      src: {src(onnx_op, ['x'])}
      when: "has(rank(x)) and rank(x) >= 3"
      dst:
{graph(['y = ' + core_op + '(x) {axes: "{range(2, rank(x))}", keepdims: 1}'])}""")
rule(f"""
    - rule_name: batch_normalization
      src: {{type: BatchNormalization, attrs: {{epsilon: {{ref: eps}}, training_mode: {{ref: tm}}}}, input_ports: [{{name: X, ref: x}}, {{name: scale, ref: g}}, {{name: B, ref: b}}, {{name: input_mean, ref: m}}, {{name: input_var, ref: v}}], output_ports: [{{name: Y, ref: y}}]}}
      when: "tm == 0"
      dst:
{graph(['y = BatchNormInference(x, g, b, m, v) {epsilon: "{eps}"}'])}""")

# LayerNormalization (new in opset 17): written out over the axes from `axis` on; the Mean and
# InvStdDev outputs are not mapped (an op that uses them stays unmapped: the rule's mapper has no
# port for them)
A = "normalize_axes(axis, rank(x))"
LN = [f'm = ReduceMean(x) {{axes: "{{range({A}, rank(x))}}", keepdims: 0}}',
      f'bm = Broadcast(m) {{shape: "{{shape(x)}}", axes: "{{range({A}, rank(x))}}"}}',
      'd = Subtract(x, bm)', 'sq = Multiply(d, d)',
      f'v = ReduceMean(sq) {{axes: "{{range({A}, rank(x))}}", keepdims: 0}}',
      f'ep = Broadcast({{tensor(eps, dtype(x))}}) {{shape: "{{slice(shape(x), 0, {A})}}", axes: "{{range({A})}}"}}',
      've = Add(v, ep)', 'sd = Sqrt(ve)',
      f'bs = Broadcast(sd) {{shape: "{{shape(x)}}", axes: "{{range({A}, rank(x))}}"}}',
      'n = Divide(d, bs)',
      f'bg = Broadcast(g) {{shape: "{{shape(x)}}", axes: "{{range({A})}}"}}']
LN_COND = f"all_known(shape(x)) and dtype(x) in ['float32', 'float64'] and shape(g) == slice(shape(x), {A})"
rule(f"""
    - rule_name: layer_normalization
      src: {src('LayerNormalization', ['x', 'g', 'b'], attrs={'axis': 'axis', 'epsilon': 'eps'}, optional=('b',))}
      when: "{LN_COND} and not connected(b)"
      dst:
{graph(LN + ['y = Multiply(n, bg)'])}""")
rule(f"""
    - rule_name: layer_normalization_bias
      src: {src('LayerNormalization', ['x', 'g', 'b'], attrs={'axis': 'axis', 'epsilon': 'eps'}, optional=('b',))}
      when: "{LN_COND} and connected(b) and shape(b) == shape(g)"
      dst:
{graph(LN + ['ng = Multiply(n, bg)', f'bb = Broadcast(b) {{shape: "{{shape(x)}}", axes: "{{range({A})}}"}}', 'y = Add(ng, bb)'])}""")
# Softplus = log(exp(x) + 1); Elu = x if x > 0 else alpha * (exp(x) - 1)
rule(f"""
    - rule_name: softplus
      src: {src('Softplus', ['x'])}
      when: "all_known(shape(x)) and dtype(x) in ['float32', 'float64']"
      dst:
{graph(['e = Exp(x)', scalar('1.0', 'one'), 'e1 = Add(e, one)', 'y = Log(e1)'])}""")
rule(f"""
    - rule_name: elu
      src: {src('Elu', ['x'], attrs={'alpha': 'alpha'})}
      when: "all_known(shape(x)) and dtype(x) in ['float32', 'float64']"
      dst:
{graph([scalar('0.0', 'zero'), scalar('1.0', 'one'), scalar('alpha', 'al'), 'pos = Greater(x, zero)', 'e = Exp(x)',
        'em = Subtract(e, one)', 'neg = Multiply(al, em)', 'y = Select(pos, x, neg)'])}""")

# ---- reductions and softmax
for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"):
    rule(f"""
    - rule_name: {op.lower()}
      src: {src(op, ['x'], attrs={'axes': 'axes', 'keepdims': 'kd'})}
      when: "has(rank(x))"
      dst:
{graph(['y = ' + op + '(x) {axes: "{sort(normalize_axes(default(axes, range(rank(x))), rank(x)))}", keepdims: "{kd}"}'])}""")
rule(f"""
    - rule_name: reducesum
      src: {src('ReduceSum', ['x', 'axes'], attrs={'keepdims': 'kd', 'noop_with_empty_axes': 'noop'}, const=('axes',), optional=('axes',))}
      when: "has(rank(x)) and (axes != null or noop == 0)"
      dst:
{graph(['y = ReduceSum(x) {axes: "{sort(normalize_axes(if(axes == null, range(rank(x)), list(axes)), rank(x)))}", keepdims: "{kd}"}'])}""")
for op in ("ArgMax", "ArgMin"):
    rule(f"""
    - rule_name: {op.lower()}
      src: {src(op, ['x'], attrs={'axis': 'axis', 'keepdims': 'kd', 'select_last_index': 'last'})}
      when: "has(rank(x)) and last == 0"
      dst:
{graph(['y = ' + op + '(x) {axis: "{normalize_axes(axis, rank(x))}", keepdims: "{kd}"}'])}""")
# Tile: x [a, b] repeated [r, s] is x broadcast to [r, s, a, b], transposed to [r, a, s, b]
# (index_grid([n, 2], [1, n]) interleaves the axes: [0, n, 1, n + 1, ...]) and reshaped to [r*a, s*b]
rule(f"""
    - rule_name: tile
      src: {src('Tile', ['x', 'rep'], const=('rep',))}
      when: "all_known(shape(x)) and all_known(shape(y)) and len(list(rep)) == rank(x) and rank(x) >= 1"
      dst:
{graph(['b = Broadcast(x) {shape: "{concat(list(rep), shape(x))}", axes: "{range(rank(x))}"}',
        't = Transpose(b) {perm: "{index_grid([rank(x), 2], [1, rank(x)])}"}', 'y = Reshape(t) {shape: "{shape(y)}"}'])}""")
for op in ("Softmax", "LogSoftmax"):
    rule(f"""
    - rule_name: {op.lower()}
      src: {src(op, ['x'], attrs={'axis': 'axis'})}
      when: "has(rank(x))"
      dst:
{graph(['y = ' + op + '(x) {axis: "{normalize_axes(axis, rank(x))}"}'])}""")


HEADER = f"""# amanda/onnx/17 -> amanda/core, the typed core (include/amanda/core/builder.h).
# GENERATED by scripts/gen_onnx_core_table.py (edit it, not this file; ctest core.table_fresh
# compares them). ONNX's implicit broadcasting is made explicit: an elementwise op whose operand
# shapes differ gets Reshape + Broadcast on each operand that is not of the output's shape (all
# shapes known: the conversion from ONNX runs libonnx's inference first). Every ONNX op no rule
# maps is refused by the engine, by name; `amanda table coverage --from onnx/17 --to core` lists them.
table:
  src: amanda/onnx/{OPSET}
  dst: amanda/core
  carry_attrs: false
  constant: {{src: {{type: Constant, attr: value, port: output}}, dst: {{type: Constant, attr: value, port: out}}}}
  rules:
"""


def main():
    text = HEADER + "\n".join(rules) + "\n"
    if "--check" in sys.argv:  # ctest core.table_fresh: the committed table is this script's output
        have = open(OUT).read() if os.path.exists(OUT) else ""
        if have != text:
            print(f"{OUT} is not what {__file__} writes: run it and commit the result")
            return 1
        print(f"{OUT}: up to date ({len(rules)} rules)")
        return 0
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {out}: {len(rules)} rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())

