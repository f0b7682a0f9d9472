#!/usr/bin/python3
"""Writes the generated part of tables/pytorch/pytorch_1.13_onnx_13_rnn.yaml (after its marker line):
the rules for torch's recurrent layers.

    gen_torch_rnn_rules.py [OUT]

One rule per op (aten::lstm.input, gru.input, rnn_tanh.input, rnn_relu.input, and the .data ops
between _pack_padded_sequence and _pad_packed_sequence), direction count (1, 2), with or without
biases, and the way the reader hands over the parameters (the libtorch reader: one constant list;
the libtorch-free reader: a prim::ListConstruct of values), for any layer count: the mapper makes
the layers with one `for l in range(nl): ...; ...` line of the table language. Each layer becomes
one ONNX LSTM/GRU/RNN (opset 13) whose W, R and B stack the directions (no B without biases: ONNX's
default is 0); torch's gate blocks are put in ONNX's order with one Gather per weight; the layers
chain through [seq, batch, dirs * hidden]. The rules are mechanical, so they are generated.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tables", "pytorch", "pytorch_1.13_onnx_13_rnn.yaml")

U0 = "{tensor([0], 'int64')}"
# torch's gate blocks -> ONNX's order, as a row permutation of the stacked weights ({H}: hidden size)
PERM = {"lstm": "concat(range(0, {H}), range(3 * {H}, 4 * {H}), range({H}, 2 * {H}), range(2 * {H}, 3 * {H}))",
        "gru": "concat(range({H}, 2 * {H}), range(0, {H}), range(2 * {H}, 3 * {H}))"}
NOTE = {"lstm": "ONNX's LSTM; torch's gate blocks i, f, g, o gathered into ONNX's i, o, f, c",
        "gru": "ONNX's GRU; torch's r, z, n gathered into ONNX's z, r, h; linear_before_reset as torch computes n",
        "rnn_tanh": "ONNX's RNN (Tanh)", "rnn_relu": "ONNX's RNN (Relu)"}


def body(kind, src, h, dirs, bias, count="nl"):
    """The mapper for any layer count (count: nl, or len(ps) / per_layer where the parameters are a
    list capture: `amanda table check` expands the text with 3-element lists and does not know nl) (the table's list loops: one `for l in range(nl)` line
    whose statements make one layer, so one rule serves every depth). src(e): the parameter at index expression e; h: the
    hidden size. bias: torch's has_biases; without, each layer and direction has 2 parameters
    (w_ih, w_hh) rather than 4 and ONNX's B is left out (its default is 0)."""
    stride = 4 if bias else 2
    lines = []
    if kind in PERM:
        lines.append(f"gi = Identity({{tensor({PERM[kind].format(H=h)}, 'int64')}})")
    lines.append("z[0] = Transpose(x) {perm: \"{if(bf, [1, 0, 2], [0, 1, 2])}\"}")
    loop = ""  # the lines of one layer: one `for` line, its statements separated by ';'
    head = len(lines)
    acc = {"W": [], "R": [], "B": []}
    for d in range(dirs):
        k = f"{stride * dirs} * l + {stride * d}"
        p = {}  # w, r, a, b: torch's w_ih, w_hh, b_ih, b_hh (gathered into ONNX's gate order)
        for j, nm in enumerate(("w", "r", "a", "b")[:stride]):
            if kind in PERM:
                lines.append(f"{loop}{nm}{d}[l] = Gather({src(f'{k} + {j}')}, gi) {{axis: 0}}")
                p[nm] = f"{nm}{d}[l]"
            else:
                p[nm] = src(f"{k} + {j}")
        lines += [f"{loop}Wu{d}[l] = Unsqueeze({p['w']}, {U0})", f"{loop}Ru{d}[l] = Unsqueeze({p['r']}, {U0})"]
        acc["W"].append(f"Wu{d}[l]")
        acc["R"].append(f"Ru{d}[l]")
        if bias:
            lines += [f"{loop}Bc{d}[l] = Concat({p['a']}, {p['b']}) {{axis: 0}}", f"{loop}Bu{d}[l] = Unsqueeze(Bc{d}[l], {U0})"]
            acc["B"].append(f"Bu{d}[l]")
    args = []
    for nm in ("W", "R", "B"):
        if nm == "B" and not bias:
            args.append("_")
        elif dirs == 1:
            args.append(acc[nm][0])
        else:
            lines.append(f"{loop}{nm}[l] = Concat({', '.join(acc[nm])}) {{axis: 0}}")
            args.append(f"{nm}[l]")
    lines.append(f"{loop}hi[l] = Slice(h0, {{tensor([l * {dirs}], 'int64')}}, {{tensor([(l + 1) * {dirs}], 'int64')}}, {U0})")
    direction = "" if dirs == 1 else ", direction: bidirectional"
    if kind == "lstm":
        lines.append(f"{loop}ci[l] = Slice(c0, {{tensor([l * {dirs}], 'int64')}}, {{tensor([(l + 1) * {dirs}], 'int64')}}, {U0})")
        lines.append(f"{loop}ys[l], hs[l], cs[l] = LSTM(z[l], {', '.join(args)}, _, hi[l], ci[l]) {{hidden_size: \"{{{h}}}\"{direction}}}")
    elif kind == "gru":
        lines.append(f"{loop}ys[l], hs[l] = GRU(z[l], {', '.join(args)}, _, hi[l]) {{hidden_size: \"{{{h}}}\", linear_before_reset: 1{direction}}}")
    else:
        act = "Tanh" if kind == "rnn_tanh" else "Relu"
        lines.append(f"{loop}ys[l], hs[l] = RNN(z[l], {', '.join(args)}, _, hi[l]) {{hidden_size: \"{{{h}}}\", activations: [{', '.join([act] * dirs)}]{direction}}}")
    lines.append(f"{loop}t[l] = Transpose(ys[l]) {{perm: [0, 2, 1, 3]}}")
    lines.append(f"{loop}z[l + 1] = Reshape(t[l], {{tensor([0, 0, {dirs} * {h}], 'int64')}})")
    lines[head:] = [f"for l in range({count}): " + "; ".join(lines[head:])]
    lines.append(f"y = Transpose(z[{count}]) {{perm: \"{{if(bf, [1, 0, 2], [0, 1, 2])}}\"}}")
    lines.append("hn = Concat(hs...) {axis: 0}")
    if kind == "lstm":
        lines.append("cn = Concat(cs...) {axis: 0}")
    return "\n".join("          " + x for x in lines)


def rules():
    out = []
    cond = "nl >= 1 and (not tr or dr == 0) and dtype(x) == 'float32' and rank(x) == 3"
    hx_op = "{id: hx, type: prim::ListConstruct, input_ports: [{name: elements.0, ref: h0}, {name: elements.1, ref: c0}]}"
    plist = "{id: pl, type: prim::ListConstruct, input_ports: [{name: elements, ref: ps...}]}"
    for kind in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
        outs = ("[{name: result0, ref: y}, {name: result1, ref: hn}, {name: result2, ref: cn}]" if kind == "lstm"
                else "[{name: result0, ref: y}, {name: result1, ref: hn}]")
        hxport = "hx" if kind == "lstm" else "{name: hx, ref: h0}"
        hxedge = "\n          - {output_port: {op: hx, port: output}, input_port: {op: l, port: hx}}" if kind == "lstm" else ""
        pre = f"\n          - {hx_op}" if kind == "lstm" else ""
        for dirs, bias in ((d, b) for b in (True, False) for d in (1, 2)):
            per_layer = (4 if bias else 2) * dirs
            consts = (f"{{name: has_biases, const: {'true' if bias else 'false'}}}, {{name: num_layers, const: \"{{nl}}\"}}, {{name: dropout, const: \"{{dr}}\"}}, "
                      f"{{name: train, const: \"{{tr}}\"}}, {{name: bidirectional, const: {'true' if dirs == 2 else 'false'}}}, "
                      f"{{name: batch_first, const: \"{{bf}}\"}}")
            name = f"{kind}{'_bi' if dirs == 2 else ''}{'' if bias else '_nobias'}"
            note = f"any layer count, {'both directions' if dirs == 2 else 'one direction'}{'' if bias else ', no biases'}"
            op = f"aten::{kind}.input"
            out.append(f'''    - rule_name: {name}_const_params   # {note}: {NOTE[kind]} (the parameters one constant list: the libtorch reader)
      src:
        ops:{pre}
          - {{id: l, type: {op}, input_ports: [{{name: input, ref: x}}, {hxport}, {{name: params, const: "{{ps}}"}}, {consts}], output_ports: {outs}}}''' +
                       (f"\n        edges:{hxedge}" if hxedge else "") + f'''
      when: "len(ps) == {per_layer} * nl and {cond}"
      dst:
        graph: |
{body(kind, lambda e: "{at(ps, %s)}" % e, "at(shape_of(at(ps, 1)), 1)", dirs, bias)}
    - rule_name: {name}   # the same, the parameters a list the reader makes (constants or not)
      src:
        ops:{pre}
          - {plist}
          - {{id: l, type: {op}, input_ports: [{{name: input, ref: x}}, {hxport}, params, {consts}], output_ports: {outs}}}
        edges:{hxedge}
          - {{output_port: {{op: pl, port: output}}, input_port: {{op: l, port: params}}}}
      when: "len(ps) == {per_layer} * nl and {cond} and has(shape(ps[1]))"
      dst:
        graph: |
{body(kind, lambda e: f"ps[{e}]", "at(shape(ps[1]), 1)", dirs, bias, f"len(ps) / {per_layer}")}''')
            if kind == "lstm":  # no initial state given: the libtorch reader's hx is one constant list of zeros
                out.append(f'''    - rule_name: {name}_const_params_const_state   # the same, the parameters and the initial (h, c) constant lists: the libtorch reader, no state given
      src:
        ops:
          - {{id: l, type: {op}, input_ports: [{{name: input, ref: x}}, {{name: hx, const: "{{hs}}"}}, {{name: params, const: "{{ps}}"}}, {consts}], output_ports: {outs}}}
      when: "len(hs) == 2 and len(ps) == {per_layer} * nl and {cond}"
      dst:
        graph: |
          h0 = Identity({{at(hs, 0)}})
          c0 = Identity({{at(hs, 1)}})
{body(kind, lambda e: "{at(ps, %s)}" % e, "at(shape_of(at(ps, 1)), 1)", dirs, bias)}''')
    # packed sequences (pack_padded_sequence -> lstm/gru/rnn .data -> pad_packed_sequence): the same
    # layers with ONNX's sequence_lens (its outputs past a sequence's length are 0, as torch pads)
    for kind in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
        outs = ("[result0, {name: result1, ref: hn}, {name: result2, ref: cn}]" if kind == "lstm"
                else "[result0, {name: result1, ref: hn}]")
        hxport = "hx" if kind == "lstm" else "{name: hx, ref: h0}"
        pre = f"\n          - {hx_op}" if kind == "lstm" else ""
        hxedge = "\n          - {output_port: {op: hx, port: output}, input_port: {op: l, port: hx}}" if kind == "lstm" else ""
        for dirs, bias in ((d, b) for b in (True, False) for d in (1, 2)):
            per_layer = (4 if bias else 2) * dirs
            name = f"{kind}_packed{'_bi' if dirs == 2 else ''}{'' if bias else '_nobias'}"
            consts = (f"{{name: has_biases, const: {'true' if bias else 'false'}}}, {{name: num_layers, const: \"{{nl}}\"}}, {{name: dropout, const: \"{{dr}}\"}}, "
                      f"{{name: train, const: \"{{tr}}\"}}, {{name: bidirectional, const: {'true' if dirs == 2 else 'false'}}}")
            b = body(kind, lambda e: f"ps[{e}]", "at(shape(ps[1]), 1)", dirs, bias, f"len(ps) / {per_layer}").replace(", _, hi[l]", ", sl, hi[l]")
            b = "          sl = Cast(ln) {to: 6}\n" + b
            b += "\n          lo = Identity(ln)"
            out.append(f'''    - rule_name: {name}   # pack_padded_sequence -> {kind} (any layer count, {'both directions' if dirs == 2 else 'one direction'}{'' if bias else ', no biases'}) -> pad_packed_sequence: sequence_lens
      src:
        ops:
          - {{id: pk, type: aten::_pack_padded_sequence, input_ports: [{{name: input, ref: x}}, {{name: lengths, ref: ln}}, {{name: batch_first, const: "{{bf}}"}}]}}{pre}
          - {plist}
          - {{id: l, type: aten::{kind}.data, input_ports: [data, batch_sizes, {hxport}, params, {consts}], output_ports: {outs}}}
          - {{id: pd, type: aten::_pad_packed_sequence, input_ports: [data, batch_sizes, {{name: batch_first, const: "{{bf2}}"}}, {{name: padding_value, const: "{{pv}}"}}, {{name: total_length, const: "{{tl}}"}}], output_ports: [{{name: result0, ref: y}}, {{name: result1, ref: lo}}]}}
        edges:
          - {{output_port: {{op: pk, port: result0}}, input_port: {{op: l, port: data}}}}
          - {{output_port: {{op: pk, port: result1}}, input_port: {{op: l, port: batch_sizes}}}}
          - {{output_port: {{op: pk, port: result1}}, input_port: {{op: pd, port: batch_sizes}}}}
          - {{output_port: {{op: l, port: result0}}, input_port: {{op: pd, port: data}}}}{hxedge}
          - {{output_port: {{op: pl, port: output}}, input_port: {{op: l, port: params}}}}
      when: "len(ps) == {per_layer} * nl and nl >= 1 and (not tr or dr == 0) and dtype(x) == 'float32' and rank(x) == 3 and all_known(shape(x)) and bf == bf2 and float(pv) == 0.0 and tl == at(shape(x), if(bf, 1, 0)) and has(shape(ps[1]))"
      dst:
        graph: |
{{b}}'''.replace("{b}", b, 1))
    return out


MARK = "    # ---- generated by scripts/gen_torch_rnn_rules.py from here to the end of the file (do not edit by hand)\n"


def main():
    # The file is the rnn family's (tables/pytorch/ is one file per op family): its header and
    # hand-written rules (the cells) stay; the generated rules follow the marker.
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    text = open(out).read()
    if MARK not in text:
        print(f"{out}: no marker line {MARK.strip()!r}", file=sys.stderr)
        return 1
    with open(out, "w") as f:
        f.write(text[:text.index(MARK) + len(MARK)] + "\n".join(rules()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
