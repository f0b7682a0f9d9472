#!/usr/bin/python3
"""Writes the generated TF -> ONNX table (docs/tensorflow.md, "Conversion to ONNX"). (The ops with
a list of N ports, tables/tensorflow/tf_2.2_onnx_13_lists.yaml, are written by hand now: one rule
for any N with a list capture, docs/mapping-tables.md "Variadic captures".)

tables/tensorflow/tf_2.2_onnx_13_fused.yaml: TF.js's fused ops (_FusedConv2D,
FusedDepthwiseConv2dNative, _FusedMatMul) with each fused_ops list TF.js runs ([BiasAdd] or
[BiasAdd, ACTIVATION], and [] for a bare op), one rule per (op, activation): the table language
has no loop over a list attribute, so the combinations are spelled out here (docs/tensorflow.md)."""
import os, sys

# activation: compact lines from `v` (the biased value, NHWC) to `y`; Prelu's alpha is args.1.
ACTS = {
    None: ["y = Identity(v)"],
    "Relu": ["y = Relu(v)"],
    "Relu6": ["y = Clip(v, {tensor(0, t)}, {tensor(6, t)})"],
    "Elu": ["y = Elu(v) {alpha: 1.0}"],
    "Selu": ["y = Selu(v)"],
    "Sigmoid": ["y = Sigmoid(v)"],
    "Tanh": ["y = Tanh(v)"],
    "LeakyRelu": ['y = LeakyRelu(v) {alpha: "{la}"}'],
    "Prelu": ["y = PRelu(v, alpha)"],
}

PAD = "auto_pad: \"{value_map(pad, 'SAME', 'SAME_UPPER', 'VALID', 'VALID', 'NOTSET')}\""
EXPLICIT = "pads: \"{if(pad == 'EXPLICIT', [at(ep, 2), at(ep, 4), at(ep, 3), at(ep, 5)], null)}\""

OPS = {
    # op: (input ports, attrs captured, core lines from (x, w[, b]) to `v`, extra condition)
    "tfjs::_FusedConv2D": (
        "{name: x, ref: x}, {name: filter, ref: w}",
        "strides: {ref: s}, padding: {ref: pad}, explicit_paddings: {ref: ep}, data_format: NHWC, dilations: {ref: d}, T: {ref: t}, leakyrelu_alpha: {ref: la}",
        ["xt = Transpose(x) {perm: [0, 3, 1, 2]}",
         "wt = Transpose(w) {perm: [3, 2, 0, 1]}",
         "c = Conv(xt, wt%(bias)s) {strides: \"{slice(s, 1, 3)}\", dilations: \"{slice(d, 1, 3)}\", " + PAD + ", " + EXPLICIT + "}",
         "v = Transpose(c) {perm: [0, 2, 3, 1]}"],
        None),
    "tfjs::FusedDepthwiseConv2dNative": (
        "{name: x, ref: x}, {name: filter, ref: w}",
        "strides: {ref: s}, padding: {ref: pad}, explicit_paddings: {ref: ep}, data_format: NHWC, dilations: {ref: d}, T: {ref: t}",
        ["xt = Transpose(x) {perm: [0, 3, 1, 2]}",
         "wr = Reshape(w, {tensor([0, 0, 1, -1], 'int64')})",
         "wt = Transpose(wr) {perm: [3, 2, 0, 1]}",
         "c = Conv(xt, wt%(bias)s) {group: \"{at(shape(w), 2)}\", strides: \"{slice(s, 1, 3)}\", dilations: \"{slice(d, 1, 3)}\", " + PAD + ", " + EXPLICIT + "}",
         "v = Transpose(c) {perm: [0, 2, 3, 1]}"],
        "shape(w) != null"),
    "tfjs::_FusedMatMul": (
        "{name: a, ref: x}, {name: b, ref: w}",
        "transpose_a: {ref: ta}, transpose_b: {ref: tb}, T: {ref: t}, leakyrelu_alpha: {ref: la}",
        ["xt = Transpose(x) {perm: \"{if(ta, [1, 0], [0, 1])}\"}",
         "wt = Transpose(w) {perm: \"{if(tb, [1, 0], [0, 1])}\"}",
         "m = MatMul(xt, wt)",
         "%(biasadd)s"],
        None),
}


def rules():
    out = []
    for op, (ports, attrs, core, cond) in OPS.items():
        short = op.split("::")[-1].lstrip("_").lower()
        for act, lines in ACTS.items():
            for bias in (True, False):
                if not bias and act is not None:
                    continue  # TF.js fuses an activation only after a BiasAdd
                fused = (["BiasAdd"] if bias else []) + ([act] if act else [])
                in_ports = ports
                nargs = 0
                if bias:
                    in_ports += ", {name: args.0, ref: b}"
                    nargs = 1
                if act == "Prelu":
                    in_ports += ", {name: args.1, ref: alpha}"
                    nargs = 2
                a = attrs
                if "leakyrelu_alpha" in a and act != "LeakyRelu":
                    a = a.replace(", leakyrelu_alpha: {ref: la}", "")
                la = "0.2" if act == "LeakyRelu" and "leakyrelu_alpha" not in attrs else None
                body = []
                for l in core:
                    if "%(biasadd)s" in l:
                        body.append("v = Add(m, b)" if bias else "v = Identity(m)")
                    else:
                        body.append(l % {"bias": ", b" if bias else ""})
                act_lines = [x.replace('"{la}"', la) if la else x for x in lines]
                if act is None:
                    # the last core line makes y itself
                    body[-1] = body[-1].replace("v = ", "y = ", 1)
                    act_lines = []
                name = f"{short}_{'_'.join(f.lower() for f in fused) or 'plain'}"
                when = [f"fused_ops == {fused!r}".replace("'", "'"), f"num_args == {nargs}"]
                if cond:
                    when.append(cond)
                out.append(f"    - rule_name: {name}\n"
                           f"      src: {{type: {op}, attrs: {{{a}, fused_ops: {{ref: fused_ops}}, num_args: {{ref: num_args}}}}, "
                           f"input_ports: [{in_ports}], output_ports: [{{name: output, ref: y}}]}}\n"
                           f"      when: \"{' and '.join(when)}\"\n"
                           f"      dst:\n        graph: |\n" + "".join(f"          {l}\n" for l in body + act_lines))
        out.append(f"    - {{rule_name: {short}_other, type: {op}, unsupported: \"fused_ops other than [], [BiasAdd] or [BiasAdd, "
                   f"{'|'.join(a for a in ACTS if a)}] (TF.js runs no others: FusedBatchNorm is folded by its converter), "
                   f"NCHW, or a depthwise filter of unknown shape\"}}")
    return out


HEADER = """# Generated by scripts/gen_tf_onnx_rules.py: do not edit. TF.js's fused ops -> ONNX opset 13,
# one rule per (op, fused_ops) (docs/tensorflow.md, "Conversion to ONNX"). NHWC: Transposes around
# the ONNX Conv; the bias is Conv's B (MatMul: an Add); the activation runs on the NHWC result, so
# that Prelu's per-channel alpha broadcasts along the last axis as in TF.js.
table:
  src: amanda/tensorflow/2.2
  dst: amanda/onnx/13
  carry_attrs: false
  imports: {tfjs: amanda/tensorflow/tfjs/4.22}
  constant: {src: {type: Const, attr: value, port: output}, dst: {type: Constant, attr: value, port: output}}
  rules:
"""

if __name__ == "__main__":
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name, header, body in (("tf_2.2_onnx_13_fused.yaml", HEADER, rules()),):
        path = os.path.join(root, "tables", "tensorflow", name)
        with open(path, "w") as f:
            f.write(header + "\n".join(body) + "\n")
        print(path)
