#!/usr/bin/python3
"""Writes the generated part of tables/pytorch/pytorch_1.13_onnx_13_rnn.yaml (after its marker line):
the rules for torch's recurrent layers.

    gen_torch_rnn_rules.py [OUT]

One rule per op (aten::lstm.input, gru.input, rnn_tanh.input, rnn_relu.input), layer count (1, 2),
direction count (1, 2) and the way the reader hands over the parameters (the libtorch reader: one
constant list; the libtorch-free reader: a prim::ListConstruct of values). Each layer becomes one
ONNX LSTM/GRU/RNN (opset 13) whose W, R and B stack the directions; torch's gate blocks are put in
ONNX's order with one Gather per weight; the layers chain through [seq, batch, dirs * hidden].
The rules are mechanical, so they are generated rather than written 32 times by hand.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tables", "pytorch", "pytorch_1.13_onnx_13_rnn.yaml")

U0 = "{tensor([0], 'int64')}"
# Layer counts with rules (torch's nn.LSTM/GRU/RNN num_layers; PyTorch's exporter suite uses 1 and 3).
LAYERS = (1, 2, 3, 4)
# torch's gate blocks -> ONNX's order, as a row permutation of the stacked weights ({H}: hidden size)
PERM = {"lstm": "concat(range(0, {H}), range(3 * {H}, 4 * {H}), range({H}, 2 * {H}), range(2 * {H}, 3 * {H}))",
        "gru": "concat(range({H}, 2 * {H}), range(0, {H}), range(2 * {H}, 3 * {H}))"}
NOTE = {"lstm": "ONNX's LSTM; torch's gate blocks i, f, g, o gathered into ONNX's i, o, f, c",
        "gru": "ONNX's GRU; torch's r, z, n gathered into ONNX's z, r, h; linear_before_reset as torch computes n",
        "rnn_tanh": "ONNX's RNN (Tanh)", "rnn_relu": "ONNX's RNN (Relu)"}


def body(kind, src, h, layers, dirs):
    lines = []
    if kind in PERM:
        lines.append(f"gi = Identity({{tensor({PERM[kind].format(H=h)}, 'int64')}})")
    lines.append("x0 = Transpose(x) {perm: \"{if(bf, [1, 0, 2], [0, 1, 2])}\"}")
    hs, cs = [], []
    for l in range(layers):
        acc = {"W": [], "R": [], "B": []}
        for d in range(dirs):
            k = 4 * (l * dirs + d)
            t = f"{l}{d}"
            if kind in PERM:
                lines += [f"w{t} = Gather({src(k)}, gi) {{axis: 0}}", f"r{t} = Gather({src(k + 1)}, gi) {{axis: 0}}",
                          f"a{t} = Gather({src(k + 2)}, gi) {{axis: 0}}", f"b{t} = Gather({src(k + 3)}, gi) {{axis: 0}}"]
                w, r, a, b = f"w{t}", f"r{t}", f"a{t}", f"b{t}"
            else:
                w, r, a, b = src(k), src(k + 1), src(k + 2), src(k + 3)
            lines += [f"Wu{t} = Unsqueeze({w}, {U0})", f"Ru{t} = Unsqueeze({r}, {U0})", f"Bc{t} = Concat({a}, {b}) {{axis: 0}}",
                      f"Bu{t} = Unsqueeze(Bc{t}, {U0})"]
            acc["W"].append(f"Wu{t}")
            acc["R"].append(f"Ru{t}")
            acc["B"].append(f"Bu{t}")
        args = []
        for nm in ("W", "R", "B"):
            if dirs == 1:
                args.append(acc[nm][0])
            else:
                lines.append(f"{nm}{l} = Concat({', '.join(acc[nm])}) {{axis: 0}}")
                args.append(f"{nm}{l}")
        lines.append(f"hi{l} = Slice(h0, {{tensor([{l * dirs}], 'int64')}}, {{tensor([{(l + 1) * dirs}], 'int64')}}, {U0})")
        direction = "" if dirs == 1 else ", direction: bidirectional"
        if kind == "lstm":
            lines.append(f"ci{l} = Slice(c0, {{tensor([{l * dirs}], 'int64')}}, {{tensor([{(l + 1) * dirs}], 'int64')}}, {U0})")
            lines.append(f"y{l}, hn{l}, cn{l} = LSTM(x{l}, {', '.join(args)}, _, hi{l}, ci{l}) {{hidden_size: \"{{{h}}}\"{direction}}}")
            cs.append(f"cn{l}")
        elif kind == "gru":
            lines.append(f"y{l}, hn{l} = GRU(x{l}, {', '.join(args)}, _, hi{l}) {{hidden_size: \"{{{h}}}\", linear_before_reset: 1{direction}}}")
        else:
            act = "Tanh" if kind == "rnn_tanh" else "Relu"
            lines.append(f"y{l}, hn{l} = RNN(x{l}, {', '.join(args)}, _, hi{l}) {{hidden_size: \"{{{h}}}\", activations: [{', '.join([act] * dirs)}]{direction}}}")
        hs.append(f"hn{l}")
        lines.append(f"t{l} = Transpose(y{l}) {{perm: [0, 2, 1, 3]}}")
        lines.append(f"x{l + 1} = Reshape(t{l}, {{tensor([0, 0, {dirs} * {h}], 'int64')}})")
    lines.append(f"y = Transpose(x{layers}) {{perm: \"{{if(bf, [1, 0, 2], [0, 1, 2])}}\"}}")
    lines.append("hn = " + (f"Concat({', '.join(hs)}) {{axis: 0}}" if layers > 1 else f"Identity({hs[0]})"))
    if kind == "lstm":
        lines.append("cn = " + (f"Concat({', '.join(cs)}) {{axis: 0}}" if layers > 1 else f"Identity({cs[0]})"))
    return "\n".join("          " + x for x in lines)


def rules():
    out = []
    for kind in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
        outs = ("[{name: result0, ref: y}, {name: result1, ref: hn}, {name: result2, ref: cn}]" if kind == "lstm"
                else "[{name: result0, ref: y}, {name: result1, ref: hn}]")
        for layers in LAYERS:
            for dirs in (1, 2):
                n = 4 * layers * dirs
                consts = (f"{{name: has_biases, const: true}}, {{name: num_layers, const: {layers}}}, {{name: dropout, const: \"{{dr}}\"}}, "
                          f"{{name: train, const: \"{{tr}}\"}}, {{name: bidirectional, const: {'true' if dirs == 2 else 'false'}}}, "
                          f"{{name: batch_first, const: \"{{bf}}\"}}")
                name = f"{kind}_l{layers}{'_bi' if dirs == 2 else ''}"
                note = f"{layers} layer{'s' if layers > 1 else ''}, {'both directions' if dirs == 2 else 'one direction'}"
                hx_op = "{id: hx, type: prim::ListConstruct, input_ports: [{name: elements.0, ref: h0}, {name: elements.1, ref: c0}]}"
                plist = ("{id: pl, type: prim::ListConstruct, input_ports: [" +
                         ", ".join(f"{{name: elements.{k}, ref: p{k}}}" for k in range(n)) +
                         f", {{name: elements.{n}, ref: px, optional: true}}]}}")
                cond = "(not tr or dr == 0) and dtype(x) == 'float32' and rank(x) == 3"
                op = f"aten::{kind}.input"
                hxport = "hx" if kind == "lstm" else "{name: hx, ref: h0}"
                hxedge = "\n          - {output_port: {op: hx, port: output}, input_port: {op: l, port: hx}}" if kind == "lstm" else ""
                pre = f"\n          - {hx_op}" if kind == "lstm" else ""
                out.append(f'''    - rule_name: {name}_const_params   # {note}: {NOTE[kind]} (the parameters one constant list: the libtorch reader)
      src:
        ops:{pre}
          - {{id: l, type: {op}, input_ports: [{{name: input, ref: x}}, {hxport}, {{name: params, const: "{{ps}}"}}, {consts}], output_ports: {outs}}}''' +
                           (f"\n        edges:{hxedge}" if hxedge else "") + f'''
      when: "len(ps) == {n} and {cond}"
      dst:
        graph: |
{body(kind, lambda k: "{at(ps, %d)}" % k, "at(shape_of(at(ps, 1)), 1)", layers, dirs)}
    - rule_name: {name}   # the same, the parameters a list the reader makes (constants or not)
      src:
        ops:{pre}
          - {plist}
          - {{id: l, type: {op}, input_ports: [{{name: input, ref: x}}, {hxport}, params, {consts}], output_ports: {outs}}}
        edges:{hxedge}
          - {{output_port: {{op: pl, port: output}}, input_port: {{op: l, port: params}}}}
      when: "not connected(px) and {cond} and has(shape(p1))"
      dst:
        graph: |
{body(kind, lambda k: f"p{k}", "at(shape(p1), 1)", layers, dirs)}''')
    # packed sequences (pack_padded_sequence -> lstm/gru/rnn .data -> pad_packed_sequence): the same
    # layer with ONNX's sequence_lens (its outputs past a sequence's length are 0, as torch pads)
    for kind in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
        outs = ("[result0, {name: result1, ref: hn}, {name: result2, ref: cn}]" if kind == "lstm"
                else "[result0, {name: result1, ref: hn}]")
        for layers, dirs in ((l, d) for l in LAYERS for d in (1, 2)):
            n = 4 * layers * dirs
            name = f"{kind}_packed{'' if layers == 1 else f'_l{layers}'}{'_bi' if dirs == 2 else ''}"
            hx_op = "{id: hx, type: prim::ListConstruct, input_ports: [{name: elements.0, ref: h0}, {name: elements.1, ref: c0}]}"
            plist = ("{id: pl, type: prim::ListConstruct, input_ports: [" + ", ".join(f"{{name: elements.{k}, ref: p{k}}}" for k in range(n)) +
                     f", {{name: elements.{n}, ref: px, optional: true}}]}}")
            consts = (f"{{name: has_biases, const: true}}, {{name: num_layers, const: {layers}}}, {{name: dropout, const: \"{{dr}}\"}}, "
                      f"{{name: train, const: \"{{tr}}\"}}, {{name: bidirectional, const: {'true' if dirs == 2 else 'false'}}}")
            hxport = "hx" if kind == "lstm" else "{name: hx, ref: h0}"
            pre = f"\n          - {hx_op}" if kind == "lstm" else ""
            hxedge = "\n          - {output_port: {op: hx, port: output}, input_port: {op: l, port: hx}}" if kind == "lstm" else ""
            b = body(kind, lambda k: f"p{k}", "at(shape(p1), 1)", layers, dirs).replace(", _, hi", ", sl, hi")
            b = "          sl = Cast(ln) {to: 6}\n" + b
            b += "\n          lo = Identity(ln)"
            out.append(f'''    - rule_name: {name}   # pack_padded_sequence -> {kind} ({layers} layer{'s' if layers > 1 else ''}, {'both directions' if dirs == 2 else 'one direction'}) -> pad_packed_sequence: sequence_lens
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
      when: "not connected(px) and (not tr or dr == 0) and dtype(x) == 'float32' and rank(x) == 3 and all_known(shape(x)) and bf == bf2 and float(pv) == 0.0 and tl == at(shape(x), if(bf, 1, 0)) and has(shape(p1))"
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
