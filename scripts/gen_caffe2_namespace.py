#!/usr/bin/env python3
"""Writes namespaces/caffe2/1.13.yaml, the amanda/caffe2/1.13 namespace, from Caffe2 1.13.1's
operator schemas (docs/caffe2.md, "The namespace").

Sources (../shared/caffe2/reference, see its README): every `OPERATOR_SCHEMA(Name)` of
operators/*.cc with its chained calls (NumInputs, NumOutputs, Input, Output, Arg, AllowInplace,
EnforceInplace, the Fill-using doc generators of the same file), and the argument tables of the
generated catalogue (operators-catalogue.md) for arguments the source declares elsewhere.

What a schema states becomes the namespace: ports named by Input/Output (position >= NumInputs'
minimum: optional; an unbounded count: the last port variadic), arguments typed from the
"(type: int; default: 0)" prefix Caffe2's docs use (protobuf's type system: int64, float, string,
repeated ...; `google.protobuf.Any` when the doc does not say), each optional (Caffe2 has no
required arguments in its schemas), and the in-place allowances in the op's description.

Caffe2 reads some arguments in base classes whose headers hold no schema: ConvPoolOpBase
(conv_pool_op_base.h) for every op built on it, and ConvTransposeUnpoolBase. Their names are
listed below (BASE_ARGS) from those headers, and given to every op whose schema uses the conv or
pool shape functions or doc generators.

  scripts/gen_caffe2_namespace.py [REFERENCE_DIR] [-o namespaces/caffe2/1.13.yaml] [--check]
"""
import json
import os
import re
import sys

INT_MAX = 2**31 - 1

# conv_pool_op_base.h: what ConvPoolOpBase's constructor reads (kernel/stride/pad/dilation in
# every spelling, order, legacy_pad, global_pooling, group, shared_buffer, float16_compute);
# conv_op_cudnn.cc / pool_op_cudnn.cc: the CUDNN engine's (real nets carry them on CPU too).
CONV_POOL_ARGS = {
    "kernel": "int64", "kernel_h": "int64", "kernel_w": "int64", "kernels": "repeated int64",
    "stride": "int64", "stride_h": "int64", "stride_w": "int64", "strides": "repeated int64",
    "pad": "int64", "pad_t": "int64", "pad_l": "int64", "pad_b": "int64", "pad_r": "int64", "pads": "repeated int64",
    "dilation": "int64", "dilation_h": "int64", "dilation_w": "int64", "dilations": "repeated int64",
    "order": "string", "legacy_pad": "int64", "global_pooling": "int64", "group": "int64",
    "shared_buffer": "int64", "float16_compute": "int64",
    "ws_nbytes_limit": "int64", "exhaustive_search": "int64", "deterministic": "int64", "cudnn_exhaustive_search": "int64",
}
# conv_transpose_unpool_op_base.h: the same spellings, plus adj and no_bias, without dilation.
CONV_TRANSPOSE_ARGS = dict({k: v for k, v in CONV_POOL_ARGS.items() if not k.startswith("dilation")},
                           adj="int64", adj_h="int64", adj_w="int64", adjs="repeated int64", no_bias="int64")

# Arguments operator constructors read that their schemas do not declare (from the op headers of
# Caffe2 1.13, caffe2/operators/*.h, which are not in the reference folder): the binary
# elementwise ops' legacy broadcast (elementwise_ops.h), FCTransposed (fully_connected_op.h), and
# the `order` of the image ops.
BROADCAST_ARGS = {"broadcast": "int64", "axis": "int64", "axis_str": "string", "order": "string"}
CONSTRUCTOR_ARGS = {
    **{op: BROADCAST_ARGS for op in ("Add", "Sub", "Mul", "Div", "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Xor",
                                     "BitwiseAnd", "BitwiseOr", "BitwiseXor")},
    "FCTransposed": {"axis": "int64", "axis_w": "int64", "float16_compute": "int64"},
    "FC": {"float16_compute": "int64"},
    "PRelu": {"order": "string"},
    "ResizeNearest": {"order": "string", "width_scale": "float", "height_scale": "float"},
    "ChannelShuffle": {"order": "string", "group": "int64"},
    "RoIAlign": {"order": "string", "spatial_scale": "float", "pooled_h": "int64", "pooled_w": "int64",
                 "sampling_ratio": "int64", "aligned": "int64"},
    "SpatialBN": {"order": "string", "epsilon": "float", "momentum": "float", "is_test": "int64", "num_batches": "int64"},
    "Softmax": {"axis": "int64"},
    "Dropout": {"ratio": "float", "is_test": "int64"},
    "PadImage": dict(CONV_POOL_ARGS, mode="string", value="float"),  # pad_op.h: a ConvPoolOpBase
    "BatchMatMul": {"trans_a": "int64", "trans_b": "int64", "broadcast": "int64"},
    "Gather": {"axis": "int64", "match_outer": "int64"},  # gather_op.cc: its TensorInferenceFunction reads them
}

TYPE_WORDS = [
    (r"^(list|tuple|\[)\s*[\[(]?\s*(int|long|int64|int32|int64_t|int32_t|bool)", "repeated int64"),
    (r"^(list|tuple|\[)\s*[\[(]?\s*(float|double)", "repeated float"),
    (r"^(list|tuple|\[)\s*[\[(]?\s*(string|str)", "repeated string"),
    (r"^(int|long|int64|int32|int64_t|int32_t|bool|size_t)\b", "int64"),
    (r"^(float|double)\b", "float"),
    (r"^(string|str|std::string)\b", "string"),
]


def strip_comments(s):
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if s.startswith("//", i):
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif s.startswith("/*", i):
            j = s.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif s.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', s[i:])
            end = s.find(")" + m.group(1) + '"', i)
            out.append(s[i:end + len(m.group(1)) + 2])
            i = end + len(m.group(1)) + 2
        elif c in "\"'":
            j = i + 1
            while j < n and s[j] != c:
                j += 2 if s[j] == "\\" else 1
            out.append(s[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_string(s, i):
    """Index past the string literal starting at s[i]."""
    if s.startswith('R"', i):
        m = re.match(r'R"([^(]*)\(', s[i:])
        return s.find(")" + m.group(1) + '"', i) + len(m.group(1)) + 2
    q = s[i]
    j = i + 1
    while s[j] != q:
        j += 2 if s[j] == "\\" else 1
    return j + 1


def balanced(s, i):
    """s[i] is an opening bracket: the index past its match."""
    depth = 0
    while i < len(s):
        c = s[i]
        if s.startswith('R"', i) or c in "\"'":
            i = skip_string(s, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced")


def split_args(s):
    args, depth, start, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if s.startswith('R"', i) or c in "\"'":
            i = skip_string(s, i)
            continue
        if c in "([{<" and not (c == "<" and depth == 0 and False):
            depth += c in "([{"
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(s[start:i].strip())
            start = i + 1
        i += 1
    if s[start:].strip():
        args.append(s[start:].strip())
    return args


def string_value(a):
    """The value of a C++ string literal expression (adjacent literals joined), or None."""
    a = a.strip()
    parts, i = [], 0
    while i < len(a):
        if a[i].isspace():
            i += 1
            continue
        if a.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', a[i:])
            end = a.find(")" + m.group(1) + '"', i)
            parts.append(a[i + len(m.group(0)):end])
            i = end + len(m.group(1)) + 2
        elif a[i] == '"':
            j = skip_string(a, i)
            parts.append(bytes(a[i + 1:j - 1], "utf-8").decode("unicode_escape"))
            i = j
        else:
            return None
    return "".join(parts) if parts else None


def calls(s, i):
    """The chained `.Method(args)` calls from s[i] to the `;` that ends them."""
    out = []
    while True:
        m = re.compile(r"\s*\.\s*(\w+)\s*(<[^>]*>)?\s*\(").match(s, i)
        if not m:
            return out
        open_ = m.end() - 1
        close = balanced(s, open_)
        out.append((m.group(1), split_args(s[open_ + 1:close - 1])))
        i = close


def schema_calls(body):
    """`schema.Method(args)` statements inside a doc generator's body."""
    out = []
    for m in re.finditer(r"\b(\w+)\s*\.\s*(Input|Output|Arg|NumInputs|NumOutputs|AllowInplace|EnforceInplace)\s*\(", body):
        open_ = m.end() - 1
        close = balanced(body, open_)
        out.append((m.group(2), split_args(body[open_ + 1:close - 1])))
    return out


def generator_body(text, name):
    """The body of the doc generator `name` defined in the same file (a function or a lambda)."""
    for m in re.finditer(r"\b" + re.escape(name) + r"\s*\(", text):
        # A definition: its parameter list is followed by a body that calls schema.X(...).
        close = balanced(text, m.end() - 1)
        rest = text[close:close + 200]
        b = re.match(r"\s*(const\s*)?(->\s*[\w:<>()&\s]+)?\{", rest)
        if not b:
            continue
        start = close + b.end() - 1
        body = text[start:balanced(text, start)]
        if ".Input(" in body or ".Arg(" in body or ".Output(" in body:
            return body
    return ""


def count(args):
    """NumInputs / NumOutputs arguments -> (min, max)."""
    if len(args) == 1:
        a = args[0]
        if re.fullmatch(r"\d+", a):
            return int(a), int(a)
        if a.startswith("{"):
            vals = [int(x) for x in re.findall(r"\d+", a)]
            return min(vals), max(vals)
        return 0, INT_MAX  # a function
    if len(args) == 2:
        lo = int(args[0]) if re.fullmatch(r"\d+", args[0]) else 0
        hi = int(args[1]) if re.fullmatch(r"\d+", args[1]) else INT_MAX
        return lo, hi
    return 0, INT_MAX


def arg_type(doc):
    # A quoted default is a string whatever the stated type (LRN's order says "type: float;
    # default: 'NCHW'": the default is what Caffe2 reads).
    if re.search(r"default\s*:\s*['\"]", doc or ""):
        return "string"
    m = re.search(r"\(\s*type\s*:\s*`?([^;)`]*)", doc or "")
    if m:
        t = m.group(1).strip().lower()
        for pat, ty in TYPE_WORDS:
            if re.match(pat, t):
                return ty
    m = re.match(r"\s*\(\s*(\w+)", doc or "")  # "(int32_t) ..."
    if m:
        for pat, ty in TYPE_WORDS:
            if re.match(pat, m.group(1).lower()):
                return ty
    return "google.protobuf.Any"


def catalogue(path):
    """op -> {arg: doc} from the catalogue's *Arguments* tables."""
    out, op, section = {}, None, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                op, section = line[3:].strip(), None
                continue
            if line.startswith("*Arguments*"):
                section = "args"
                continue
            if line.startswith("*Inputs*") or line.startswith("*Outputs*") or line.startswith("###"):
                section = None
                continue
            m = re.match(r"`([^`]+)` \| (.*)", line)
            if section == "args" and m and op:
                out.setdefault(op, {})[m.group(1)] = m.group(2)
    return out


def expand_macros(text):
    """The file's function-like macros expanded where it invokes them (the comparison, logical and
    bitwise ops and the segment reductions are declared through macros)."""
    defs = {}

    def take(m):
        params = [p.replace("\\", "").strip() for p in m.group(2).split(",") if p.replace("\\", "").strip()]
        defs[m.group(1)] = (params, m.group(3).replace("\\\n", "\n"))
        return ""

    text = re.sub(r"^[ \t]*#\s*define\s+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)", take, text, flags=re.M)
    text = re.sub(r"^[ \t]*#[^\n]*", "", text, flags=re.M)
    for _ in range(4):
        changed = False
        for name, (params, body) in defs.items():
            out, i = [], 0
            for m in re.finditer(r"(?<![\w#])" + name + r"\s*\(", text):
                if m.start() < i:
                    continue
                close = balanced(text, m.end() - 1)
                args = split_args(text[m.end():close - 1])
                b = body
                named = params[:-1] if params and params[-1] == "..." else params
                for k, prm in enumerate(named):
                    a = args[k] if k < len(args) else ""
                    b = re.sub(r"#\s*" + prm + r"\b", '"' + a + '"', b)
                    b = re.sub(r"\b" + prm + r"\b", a, b)
                if params and params[-1] == "...":
                    b = b.replace("__VA_ARGS__", ", ".join(args[len(named):]))
                b = re.sub(r"\s*##\s*", "", b)
                out.append(text[i:m.start()])
                out.append(b)
                i = close
                changed = True
            out.append(text[i:])
            text = "".join(out)
        if not changed:
            break
    return text


def parse_file(path):
    text = expand_macros(strip_comments(open(path, encoding="utf-8", errors="replace").read()))
    ops = []
    for m in re.finditer(r"\b(?:GRADIENT_)?OPERATOR_SCHEMA\s*\(\s*(\w+)\s*\)", text):
        op = {"type": m.group(1), "file": os.path.basename(path), "inputs": {}, "outputs": {}, "args": {},
              "nin": (0, INT_MAX), "nout": (0, INT_MAX), "inplace": [], "base": set()}
        chain = calls(text, m.end())
        expanded = []
        for name, args in chain:
            if name == "FillUsing" and args:
                g = re.match(r"(\w+)", args[0])
                body = args[0] if "schema" in args[0] and "{" in args[0] else generator_body(text, g.group(1)) if g else ""
                if g and re.search(r"Conv|Pool", g.group(1)):
                    op["base"].add("ConvTranspose" if "Transpose" in g.group(1) else "ConvPool")
                expanded += schema_calls(body)
            else:
                expanded.append((name, args))
            if name == "TensorInferenceFunction" and args and re.search(r"ConvPoolOpBase|TensorInferenceForConv|TensorInferenceForPool", args[0]):
                op["base"].add("ConvPool")
        for name, args in expanded:
            if name in ("Input", "Output") and len(args) >= 2 and re.fullmatch(r"\d+", args[0]):
                s = string_value(args[1])
                if s is not None:
                    op["inputs" if name == "Input" else "outputs"].setdefault(int(args[0]), s)
            elif name == "Arg" and args:
                s = string_value(args[0])
                if s is not None:
                    op["args"].setdefault(s, string_value(args[1]) if len(args) > 1 else "")
            elif name == "NumInputs":
                op["nin"] = count(args)
            elif name == "NumOutputs":
                op["nout"] = count(args)
            elif name == "NumInputsOutputs":
                op["nin"], op["nout"] = (0, INT_MAX), (0, INT_MAX)
            elif name in ("AllowInplace", "EnforceInplace"):
                kind = "allowed" if name == "AllowInplace" else "enforced"
                pairs = re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}", args[0]) if args else []
                op["inplace"].append(kind + ": " + (", ".join(f"input {a} -> output {b}" for a, b in pairs) if pairs else "by a rule"))
            elif name in ("AllowOneToOneInplace", "EnforceOneToOneInplace"):
                op["inplace"].append(("allowed" if name.startswith("Allow") else "enforced") + ": input k -> output k")
        if "ConvTranspose" in op["type"]:
            op["base"].discard("ConvPool")
            op["base"].add("ConvTranspose")
        ops.append(op)
    return ops


def port_name(name, variadic):
    """A name a port (and a table) can use: Caffe2 documents a variadic input as "X1, X2, ..." or
    "[output_0, output_1, ...]"; its ports are then X.0, X.1, ... (output.0, ...)."""
    if name is None or (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and not variadic):
        return name
    m = re.search(r"[A-Za-z_][A-Za-z0-9_]*", name)
    if not m:
        return None
    return re.sub(r"_?\d+$", "", m.group(0)) or m.group(0) if variadic else m.group(0)


def ports(named, lo, hi):
    """Port schemas: declared names in order; positions past the minimum optional; an unbounded count
    makes the last port variadic."""
    n = 0
    while n in named:
        n += 1
    out = []
    if hi >= 1000:  # unbounded (INT_MAX, or a function of the other count)
        fixed = max(n - 1, 0)
        for i in range(fixed):
            out.append({"name": port_name(named[i], False), "arity": "single" if i < lo else "optional"})
        out.append({"name": port_name(named[fixed], True) if fixed < n else "input" if not out else "rest",
                    "arity": "variadic", "min_arity": max(lo - fixed, 0)})
        return out
    for i in range(max(hi, n)):
        out.append({"name": port_name(named.get(i), False), "arity": "single" if i < lo else "optional"})
    return out


def q(s):
    return json.dumps(s)


def render(ops):
    lines = ["# Generated by scripts/gen_caffe2_namespace.py from Caffe2 1.13.1's operator schemas",
             "# (../shared/caffe2/reference); do not edit. docs/caffe2.md, \"The namespace\".",
             "namespace:", "  name: amanda/caffe2/1.13", "  type_system: protobuf", "  op_schemas:"]
    for op in ops:
        lines.append(f"    - type: {op['type']}")
        desc = f"{op['file']}; inputs {fmt_count(op['nin'])}, outputs {fmt_count(op['nout'])}"
        if op["inplace"]:
            desc += "; in place " + "; ".join(op["inplace"])
        lines.append(f"      description: {q(desc)}")
        if op["args"]:
            lines.append("      attrs:")
            for a in sorted(op["args"]):
                lines.append(f"        {q(a)}: {{type: {q(op['args'][a])}, optional: true}}")
        for key, named, c in (("input_ports", op["inputs"], op["nin"]), ("output_ports", op["outputs"], op["nout"])):
            ps = ports(named, *c)
            if not ps:
                continue
            lines.append(f"      {key}:")
            for p in ps:
                name = "{type: string, constant: %s}" % q(p["name"]) if p["name"] is not None else "string"
                extra = f", min_arity: {p['min_arity']}" if "min_arity" in p else ""
                lines.append(f"        - {{attrs: {{name: {name}}}, arity: {p['arity']}{extra}}}")
    return "\n".join(lines) + "\n"


def fmt_count(c):
    lo, hi = c
    if hi >= 1000:
        return f"{lo} or more"
    return str(lo) if lo == hi else f"{lo} to {hi}"


def build(ref):
    opdir = os.path.join(ref, "operators")
    ops = []
    for f in sorted(os.listdir(opdir)):
        if f.endswith(".cc"):
            ops += parse_file(os.path.join(opdir, f))
    cat = catalogue(os.path.join(ref, "operators-catalogue.md"))
    seen, out = set(), []
    for op in ops:
        if op["type"] in seen:
            continue
        seen.add(op["type"])
        args = {}
        for a, doc in cat.get(op["type"], {}).items():
            args[a] = arg_type(doc)
        for a, doc in op["args"].items():
            t = arg_type(doc)
            if t != "google.protobuf.Any" or a not in args:
                args[a] = t
        for a, t in CONSTRUCTOR_ARGS.get(op["type"], {}).items():
            args.setdefault(a, t)
        for b in op["base"]:
            for a, t in (CONV_TRANSPOSE_ARGS if b == "ConvTranspose" else CONV_POOL_ARGS).items():
                args.setdefault(a, t)
        op["args"] = args
        out.append(op)
    return sorted(out, key=lambda o: o["type"])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ref = os.path.join(here, "..", "..", "shared", "caffe2", "reference")
    if not os.path.isdir(ref):
        ref = os.path.join(here, "..", "..", "..", "shared", "caffe2", "reference")
    out = os.path.join(here, "..", "namespaces", "caffe2", "1.13.yaml")
    check = False
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "-o":
            out = args.pop(0)
        elif a == "--check":
            check = True
        else:
            ref = a
    text = render(build(ref))
    if check:
        old = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
        if old != text:
            sys.exit(f"{out} is not what scripts/gen_caffe2_namespace.py makes from {ref}: run it again")
        return
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{out}: {text.count('    - type: ')} ops")


if __name__ == "__main__":
    main()
