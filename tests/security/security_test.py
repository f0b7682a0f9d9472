#!/usr/bin/python3
"""Hostile inputs, one class at a time (issue 15, SECURITY.md): every input is made here (the big
ones by generator functions, in a temporary folder), then the tool runs on it and must
  - exit 1 with a clear message (the case names words the message must contain),
  - within 10 s of CPU time (user + system) and 60 s of wall time (CI machines are shared: on a
    quiet one wall time is CPU time; a blocked open or a sleep would hit the wall limit), under
    1 GB peak memory (the child's rusage from os.wait4; it includes what the forked Python process
    held before exec, so it is an upper bound),
  - read nothing outside the model's folder (each run is repeated under strace -f -y where strace
    exists: no file below the "outside" folder, which holds a secret, may be opened successfully),
  - and leave no output file (the folder's listing is the same before and after, but for files
    the case expects).
The valid model of 70,000 external tensors in one data file must convert.

usage: security_test.py AMANDA [--only NAME] [--keep]
Needs Debian's python3-onnx, python3-numpy and (for the TorchScript cases) python3-torch.
"""
import argparse
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

LIMIT_S = 10.0       # CPU seconds
LIMIT_WALL_S = 60.0
LIMIT_RSS_KB = 1024 * 1024  # 1 GB
HAVE_STRACE = shutil.which("strace") is not None


# ---------------------------------------------------------------- running the tool

def run(amanda, args, cwd, timeout=60, env=None):
    """Runs amanda (with `env` added to the environment); returns (exit code, stdout, stderr, wall
    seconds, peak RSS in KB, CPU seconds: its own and its children's)."""
    out_path = os.path.join(cwd, "..", "stdout.txt")
    err_path = os.path.join(cwd, "..", "stderr.txt")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.monotonic()
        p = subprocess.Popen([amanda] + args, cwd=cwd, stdout=out, stderr=err, env=dict(os.environ, **(env or {})))
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        secs = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return code, open(out_path, errors="replace").read(), open(err_path, errors="replace").read(), secs, usage.ru_maxrss, cpu


def opened_outside(amanda, args, cwd, outside, env=None):
    """Paths below `outside` that the tool opened successfully (strace -f -y)."""
    log = os.path.join(cwd, "..", "strace.txt")
    subprocess.run(["strace", "-f", "-y", "-qq", "-e", "trace=open,openat,openat2,creat", "-o", log, amanda] + args,
                   cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, env=dict(os.environ, **(env or {})))
    bad = []
    for line in open(log, errors="replace"):
        m = re.search(r"= (\d+)<([^>]*)>", line)
        if m and "O_PATH" not in line and os.path.realpath(m.group(2)).startswith(os.path.realpath(outside) + os.sep):
            bad.append(line.strip())
    os.remove(log)
    return bad


# ---------------------------------------------------------------- inputs

def onnx_model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def relu_model(opset=13):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    return onnx_model([helper.make_node("Relu", ["x"], ["y"], name="r")], [x], [y], opset=opset)


def save_raw(model, path):
    # onnx.save checks nothing, which is what hostile files need.
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def big_weight_model(path, n=4096):
    """A model with one initializer of n floats (over the text writer's inline limit)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])
    w = helper.make_tensor("w", TensorProto.FLOAT, [n], np.arange(n, dtype=np.float32).tobytes(), raw=True)
    save_raw(onnx_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [x], [y], [w]), path)


def external_model(path, location, n=16):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])
    w = TensorProto()
    w.name, w.data_type = "w", TensorProto.FLOAT
    w.dims.append(n)
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(4 * n))):
        e = w.external_data.add()
        e.key, e.value = k, v
    save_raw(onnx_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [x], [y], [w]), path)


def to_yaml(amanda, onnx_path, yaml_path, cwd):
    r = subprocess.run([amanda, "fmt", onnx_path, "--to", "yaml", "--inline-limit", "64", "-o", yaml_path], cwd=cwd,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def write_zip(path, entries):
    """A zip of (name, bytes, deflated bytes or None) entries; deflated ones are written as given
    (so that one compressed stream may serve several entries)."""
    out, central = bytearray(), bytearray()
    for name, data_len, crc, payload, method in entries:
        off = len(out)
        nb = name.encode()
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(payload), data_len, len(nb), 0) + nb
        out += payload
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, len(payload), data_len,
                               len(nb), 0, 0, 0, 0, 0, off) + nb
    cd_off = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), cd_off, 0)
    with open(path, "wb") as f:
        f.write(out)


def stored(name, data):
    return (name, len(data), zlib.crc32(data), data, 0)


def deflated(name, data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = c.compress(data) + c.flush()
    return (name, len(data), zlib.crc32(data), payload, 8)


DATA_PKL = (b"\x80\x02c__torch__\nM\nq\x00)\x81}(X\x08\x00\x00\x00trainingq\x01\x88X\x16\x00\x00\x00"
            b"_is_full_backward_hookq\x02Nubq\x03.")
HEADER = """class M(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
"""


def torchscript(path, code, data_pkl=DATA_PKL, extra=()):
    """A TorchScript archive of module M whose code/__torch__.py is HEADER + code (as torch.jit.save
    lays it out: m/data.pkl, m/code/__torch__.py, m/constants.pkl, m/version)."""
    entries = [stored("m/data.pkl", data_pkl) if isinstance(data_pkl, bytes) else data_pkl,
               stored("m/code/__torch__.py", (HEADER + code).encode()),
               stored("m/constants.pkl", b"\x80\x02)."), stored("m/version", b"3")]
    write_zip(path, entries + list(extra))


def forward(body):
    return "  def forward(self: __torch__.M,\n    x: Tensor) -> Tensor:\n" + "".join("    " + l + "\n" for l in body)


def table(path, rule):
    with open(path, "w") as f:
        f.write("table:\n  src: amanda/onnx/13\n  dst: amanda/onnx/12\n  rules:\n" + rule)


# ---------------------------------------------------------------- the cases
# Each case: (name, make(folder, amanda) -> args, words the message must contain, expected exit).

def case_yaml_side_file_symlink_folder(d, amanda, outside):
    big_weight_model(os.path.join(d, "m.onnx"))
    to_yaml(amanda, "m.onnx", "m.yaml", d)
    os.remove(os.path.join(d, "m.onnx"))
    shutil.copy(os.path.join(d, "m.yaml.data"), os.path.join(outside, "secret.data"))
    os.remove(os.path.join(d, "m.yaml.data"))
    os.symlink(outside, os.path.join(d, "sub"))
    text = open(os.path.join(d, "m.yaml")).read().replace("file: m.yaml.data", "file: sub/secret.data")
    open(os.path.join(d, "m.yaml"), "w").write(text)
    return ["verify", "m.yaml"], ["sub/secret.data", "symbolic link"]


def case_onnx_external_symlink_folder(d, amanda, outside):
    open(os.path.join(outside, "secret.bin"), "wb").write(b"\x01" * 64)
    os.symlink(outside, os.path.join(d, "sub"))
    external_model(os.path.join(d, "m.onnx"), "sub/secret.bin")
    return ["inspect", "m.onnx"], ["sub/secret.bin", "symbolic link"]


def case_onnx_external_dotdot(d, amanda, outside):
    open(os.path.join(outside, "secret.bin"), "wb").write(b"\x01" * 64)
    external_model(os.path.join(d, "m.onnx"), "../outside/secret.bin")
    return ["inspect", "m.onnx"], ["'..'"]


def case_onnx_external_fifo(d, amanda, outside):
    os.mkfifo(os.path.join(d, "w.bin"))
    external_model(os.path.join(d, "m.onnx"), "w.bin")
    return ["inspect", "m.onnx"], ["w.bin", "FIFO"]


def case_yaml_side_file_fifo(d, amanda, outside):
    big_weight_model(os.path.join(d, "m.onnx"))
    to_yaml(amanda, "m.onnx", "m.yaml", d)
    os.remove(os.path.join(d, "m.onnx"))
    os.remove(os.path.join(d, "m.yaml.data"))
    os.mkfifo(os.path.join(d, "m.yaml.data"))
    return ["verify", "m.yaml"], ["m.yaml.data", "FIFO"]


def case_expr_int64_min_div(d, amanda, outside):
    save_raw(relu_model(), os.path.join(d, "m.onnx"))
    table(os.path.join(d, "t.yaml"), "  - rule_name: evil\n    priority: 100\n    src: {type: Relu}\n"
          "    dst: {type: Relu, attrs: {a: \"{(-9223372036854775807 - 1) / -1}\"}}\n")
    return ["convert", "m.onnx", "--to", "onnx/12", "--tables", "t.yaml", "-o", "out.onnx"], ["overflows int64"]


def case_expr_int64_min_mod(d, amanda, outside):
    save_raw(relu_model(), os.path.join(d, "m.onnx"))
    # % -1 is 0 (not SIGFPE): the rule applies, and its made-up attribute is then refused.
    table(os.path.join(d, "t.yaml"), "  - rule_name: evil\n    priority: 100\n    src: {type: Relu}\n"
          "    when: \"(-9223372036854775807 - 1) % -1 == 0\"\n    dst: {type: Relu, attrs: {a: 1}}\n")
    return ["convert", "m.onnx", "--to", "onnx/12", "--tables", "t.yaml", "-o", "out.onnx"], ["'a'"]


def nested_case(opening, closing):
    def make(d, amanda, outside):
        save_raw(relu_model(), os.path.join(d, "m.onnx"))
        expr = opening * 20000 + "1" + closing * 20000
        table(os.path.join(d, "t.yaml"), "  - rule_name: evil\n    src: {type: Relu}\n    when: \"" + expr +
              " == 1\"\n    dst: {type: Relu}\n")
        return ["convert", "m.onnx", "--to", "onnx/12", "--tables", "t.yaml", "-o", "out.onnx"], ["nested deeper than", "--max-depth"]
    return make


def case_expr_chain(d, amanda, outside):
    save_raw(relu_model(), os.path.join(d, "m.onnx"))
    table(os.path.join(d, "t.yaml"), "  - rule_name: evil\n    src: {type: Relu}\n    when: \"" + " + ".join(["1"] * 200000) +
          " > 0\"\n    dst: {type: Relu}\n")
    return ["convert", "m.onnx", "--to", "onnx/12", "--tables", "t.yaml", "-o", "out.onnx"], ["nested deeper than"]


def case_expr_range(d, amanda, outside):
    save_raw(relu_model(), os.path.join(d, "m.onnx"))
    table(os.path.join(d, "t.yaml"), "  - rule_name: evil\n    priority: 100\n    src: {type: Relu}\n"
          "    when: \"len(range(-9223372036854775807 - 1, 9223372036854775807)) > 0\"\n    dst: {type: Relu}\n")
    return ["convert", "m.onnx", "--to", "onnx/12", "--tables", "t.yaml", "-o", "out.onnx"], ["range()", "--max-expr-steps"]


def case_expr_repeat(d, amanda, outside):
    save_raw(relu_model(), os.path.join(d, "m.onnx"))
    table(os.path.join(d, "t.yaml"), "  - rule_name: evil\n    priority: 100\n    src: {type: Relu}\n"
          "    when: \"len(repeat(repeat(1, 1048576), 1048576)) > 0\"\n    dst: {type: Relu}\n")
    return ["convert", "m.onnx", "--to", "onnx/12", "--tables", "t.yaml", "-o", "out.onnx"], ["repeat()", "--max-expr-steps"]


def ts_case(body, words, extra_args=(), reader="script", shape="1,3"):
    def make(d, amanda, outside):
        torchscript(os.path.join(d, "m.pt"), body if body.startswith("  def") else forward(body.split("\n")))
        return ["convert", "m.pt", "--input-shape", shape, "--reader", reader, "-o", "out.onnx"] + list(extra_args), words
    return make


def case_ts_deep_nesting_inspect(d, amanda, outside):
    torchscript(os.path.join(d, "m.pt"), forward(["return " + "(" * 200000 + "x" + ")" * 200000]))
    return ["inspect", "m.pt"], ["m.pt"]


def case_ts_deep_nesting_libtorch(d, amanda, outside):
    torchscript(os.path.join(d, "m.pt"), forward(["return " + "torch.relu(" * 200000 + "x" + ")" * 200000]))
    return ["convert", "m.pt", "--input-shape", "1,3", "--reader", "libtorch", "-o", "out.onnx"], ["m.pt", "refused"]


def case_ts_none_flood(d, amanda, outside):
    pkl = b"\x80\x02" + b"N" * 20_000_000 + b"."
    torchscript(os.path.join(d, "m.pt"), forward(["return x"]), data_pkl=deflated("m/data.pkl", pkl))
    return ["convert", "m.pt", "--input-shape", "1,3", "--reader", "script", "-o", "out.onnx"], ["data.pkl"]


def case_ts_deflated_storages(d, amanda, outside):
    zeros = bytes(1 << 30)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = c.compress(zeros) + c.flush()
    crc = zlib.crc32(zeros)
    del zeros
    extra = [("m/data/%d" % k, 1 << 30, crc, payload, 8) for k in range(4)]
    torchscript(os.path.join(d, "m.pt"), forward(["return x"]), extra=extra)
    return ["convert", "m.pt", "--input-shape", "1,3", "-o", "out.onnx"], ["decompressed budget", "--max-decompressed"]


def case_onnx_opset_2_32(d, amanda, outside):
    save_raw(relu_model(opset=2**32 + 13), os.path.join(d, "m.onnx"))
    return ["convert", "m.onnx", "-o", "out.onnx"], ["4294967309", "outside"]


def case_onnx_opset_2_62_fmt(d, amanda, outside):
    save_raw(relu_model(opset=2**62), os.path.join(d, "m.onnx"))
    return ["fmt", "m.onnx", "-o", "out.onnx"], ["4611686018427387904"]


def cycle_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    save_raw(onnx_model([helper.make_node("Add", ["x", "y"], ["y"], name="add")], [x], [y]), path)


def case_onnx_cycle_verify(d, amanda, outside):
    cycle_model(os.path.join(d, "m.onnx"))
    return ["verify", "m.onnx"], ["cycle"]


def case_onnx_cycle_convert(d, amanda, outside):
    cycle_model(os.path.join(d, "m.onnx"))
    return ["convert", "m.onnx", "--to", "onnx/12", "-o", "out.onnx"], ["cycle"]


def case_onnx_two_node_cycle(d, amanda, outside):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])
    save_raw(onnx_model([helper.make_node("Add", ["x", "b"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2"),
                         helper.make_node("Identity", ["a"], ["z"], name="n3")], [x], [z]), os.path.join(d, "m.onnx"))
    return ["verify", "m.onnx"], ["cycle"]


def case_yaml_edge_cycle(d, amanda, outside):
    open(os.path.join(d, "m.yaml"), "w").write("""graph:
  name: g
  input_ports: [x]
  output_ports: [z]
  ops:
    - {type: Relu, name: n1, input_ports: [X], output_ports: [Y]}
    - {type: Relu, name: n2, input_ports: [X], output_ports: [Y]}
  edges:
    - {output_port: {op: n2, port: Y}, input_port: {op: n1, port: X}}
    - {output_port: {op: n1, port: Y}, input_port: {op: n2, port: X}}
    - {output_port: {op: n2, port: Y}, input_port: {op: g, port: z}}
""")
    return ["verify", "m.yaml"], ["cycle"]


def case_onnx_duplicate_initializers(d, amanda, outside):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    w1 = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    w2 = helper.make_tensor("w", TensorProto.FLOAT, [2], [3.0, 4.0])
    save_raw(onnx_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [x], [y], [w1, w2]), os.path.join(d, "m.onnx"))
    return ["verify", "m.onnx"], ["'w' is defined twice"]


def case_fmt_output_is_folder(d, amanda, outside):
    big_weight_model(os.path.join(d, "big.onnx"))
    os.mkdir(os.path.join(d, "existing_dir"))
    return ["fmt", "big.onnx", "--to", "yaml", "--inline-limit", "64", "-o", "existing_dir"], ["existing_dir", "folder"]


CASES = [
    ("escape.yaml_side_file_through_symlinked_folder", case_yaml_side_file_symlink_folder),
    ("escape.onnx_external_data_through_symlinked_folder", case_onnx_external_symlink_folder),
    ("escape.onnx_external_data_dotdot", case_onnx_external_dotdot),
    ("hang.onnx_external_data_fifo", case_onnx_external_fifo),
    ("hang.yaml_side_file_fifo", case_yaml_side_file_fifo),
    ("crash.expr_int64_min_div_minus_one", case_expr_int64_min_div),
    ("crash.expr_int64_min_mod_minus_one", case_expr_int64_min_mod),
    ("crash.expr_nested_parentheses", nested_case("(", ")")),
    ("crash.expr_nested_not", nested_case("not ", "")),
    ("crash.expr_nested_unary_minus", nested_case("- (", ")")),
    ("crash.expr_nested_brackets", nested_case("[", "]")),
    ("crash.expr_chain_200000", case_expr_chain),
    ("memory.expr_range_overflow", case_expr_range),
    ("memory.expr_repeat_of_repeat", case_expr_repeat),
    ("crash.torchscript_nesting_200000_inspect", case_ts_deep_nesting_inspect),
    ("crash.torchscript_nesting_200000_libtorch", case_ts_deep_nesting_libtorch),
    ("hang.torchscript_nested_loops", ts_case("z = 0\nfor i in range(100000):\n  for j in range(100000):\n    z = z + 1\nreturn x",
                                              ["interpreter steps budget", "--max-steps"])),
    ("hang.torchscript_recursion_twice_60_deep", ts_case(
        forward(["return (self).f(x, 60)"]) +
        "  def f(self: __torch__.M,\n    x: Tensor,\n    n: int) -> Tensor:\n    if n == 0:\n      return x\n"
        "    y = (self).f(x, n - 1)\n    return (self).f(y, n - 1)\n", ["interpreter steps budget", "--max-steps"])),
    ("memory.torchscript_none_flood", case_ts_none_flood),
    ("memory.torchscript_four_deflated_1GiB_storages", case_ts_deflated_storages),
    ("memory.torchscript_list_doubled_34_times", ts_case("l = [1]\nfor i in range(34):\n  l = l + l\nreturn x", ["list grown past"])),
    ("memory.torchscript_new_zeros", ts_case("y = torch.new_zeros(x, [1048576, 1048576])\nreturn x", ["constant computation"])),
    ("memory.torchscript_zeros_like", ts_case("y = torch.zeros_like(x)\nreturn x", ["constant computation"], shape="100000,100000")),
    ("memory.torchscript_cat", ts_case("a = torch.new_zeros(x, [4096, 8192])\nb = torch.cat([a, a, a])\nreturn x",
                                       ["constant computation"])),
    ("memory.torchscript_index", ts_case("a = torch.new_zeros(x, [2, 16777216])\ni = torch.new_zeros(x, [100], dtype=4)\n"
                                         "b = torch.index(a, [i])\nreturn x", ["constant computation"])),
    ("memory.torchscript_relu_loop_10_7", ts_case("y = x\nfor i in range(10000):\n  for j in range(1000):\n    y = torch.relu(y)\nreturn y",
                                                  ["ops created budget", "--max-ops"])),
    ("wrong.onnx_opset_2_32_plus_13", case_onnx_opset_2_32),
    ("wrong.onnx_opset_2_62_fmt", case_onnx_opset_2_62_fmt),
    ("wrong.onnx_add_cycle_verify", case_onnx_cycle_verify),
    ("wrong.onnx_add_cycle_convert", case_onnx_cycle_convert),
    ("wrong.onnx_two_node_cycle", case_onnx_two_node_cycle),
    ("wrong.yaml_edge_cycle", case_yaml_edge_cycle),
    ("wrong.onnx_duplicate_initializers", case_onnx_duplicate_initializers),
    ("partial.fmt_output_is_a_folder", case_fmt_output_is_folder),
]


# ---------------------------------------------------------------- checks that are not refusals

def check_mode_kept(amanda, root):
    """An existing output keeps its permission bits (0600 stays 0600)."""
    d = os.path.join(root, "mode", "model")
    os.makedirs(d)
    save_raw(relu_model(), os.path.join(d, "m.onnx"))
    out = os.path.join(d, "out.yaml")
    open(out, "w").write("old\n")
    os.chmod(out, 0o600)
    code, _, err, _, _, _ = run(amanda, ["fmt", "m.onnx", "--to", "yaml", "-o", "out.yaml"], d)
    mode = stat.S_IMODE(os.stat(out).st_mode)
    if code != 0 or mode != 0o600 or open(out).read() == "old\n":
        return "fmt over an existing 0600 output: exit %d, mode %o (want 0600, rewritten)\n%s" % (code, mode, err)
    return None


def check_70000_external_tensors(amanda, root):
    """70,000 initializers in one external data file: valid, and it converts (one mapping)."""
    d = os.path.join(root, "ext70k", "model")
    os.makedirs(d)
    n = 70000
    data = np.arange(n, dtype=np.float32)
    data.tofile(os.path.join(d, "w.bin"))
    inits = []
    for i in range(n):
        t = TensorProto()
        t.name, t.data_type = "w%d" % i, TensorProto.FLOAT
        t.dims.append(1)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "w.bin"), ("offset", str(4 * i)), ("length", "4")):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    save_raw(onnx_model([helper.make_node("Add", ["x", "w69999"], ["y"], name="add")], [x], [y], inits), os.path.join(d, "m.onnx"))
    code, out, err, secs, rss, cpu = run(amanda, ["convert", "m.onnx", "--to", "onnx/12", "-o", "out.onnx", "-q"], d, timeout=120)
    if code != 0:
        return "the 70,000-tensor model did not convert: exit %d\n%s" % (code, err[-2000:])
    m = onnx.load(os.path.join(d, "out.onnx"))
    got = {t.name: t for t in m.graph.initializer}
    w = numpy_helper.to_array(got["w69999"]) if "w69999" in got else None
    if len(got) != n or w is None or float(w[0]) != 69999.0:
        return "the converted 70,000-tensor model lost tensors (%d) or bytes" % len(got)
    print("  ok   valid.onnx_70000_external_tensors_convert  %.2f s (CPU %.2f s)  %d MB" % (secs, cpu, rss // 1024))
    return None


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("amanda")
    ap.add_argument("--only")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    amanda = os.path.abspath(a.amanda)
    root = tempfile.mkdtemp(prefix="amanda-security-")
    failures = []
    try:
        for name, make in CASES:
            if a.only and a.only not in name:
                continue
            if "libtorch" in name and not has_libtorch(amanda):
                print("  skip %s (no PyTorch plugin in this build)" % name)
                continue
            base = os.path.join(root, name)
            d, outside = os.path.join(base, "model"), os.path.join(base, "outside")
            os.makedirs(d)
            os.makedirs(outside)
            open(os.path.join(outside, "secret"), "w").write("secret\n")
            args, words = make(d, amanda, outside)
            before = set(os.listdir(d))
            code, out, err, secs, rss, cpu = run(amanda, args, d, timeout=LIMIT_WALL_S + 5)
            after = set(os.listdir(d))
            problems = []
            if code != 1:
                problems.append("exit %d, not 1" % code)
            missing = [w for w in words if w not in err + out]  # convert's report goes to stdout
            if missing:
                problems.append("the message lacks %s" % missing)
            if cpu > LIMIT_S:
                problems.append("took %.1f s of CPU (limit %.0f s)" % (cpu, LIMIT_S))
            if secs > LIMIT_WALL_S:
                problems.append("took %.1f s of wall time (limit %.0f s)" % (secs, LIMIT_WALL_S))
            if rss > LIMIT_RSS_KB:
                problems.append("peak memory %d MB (limit 1024 MB)" % (rss // 1024))
            if after != before:
                problems.append("files left: %s" % sorted(after ^ before))
            if HAVE_STRACE and not problems:
                bad = opened_outside(amanda, args, d, outside)
                if bad:
                    problems.append("opened outside the model's folder: %s" % bad[:3])
            first = err.strip().splitlines()[0] if err.strip() else ""
            if problems:
                failures.append(name)
                print("  FAIL %s: %s\n       stderr: %s" % (name, "; ".join(problems), err.strip()[-1500:]))
            else:
                print("  ok   %-55s %5.2f s (CPU %5.2f s) %5d MB  %s" % (name, secs, cpu, rss // 1024, first[:150]))
        if not a.only or "mode" in a.only:
            p = check_mode_kept(amanda, root)
            if p:
                failures.append("partial.existing_output_mode")
                print("  FAIL partial.existing_output_mode: " + p)
            else:
                print("  ok   partial.existing_output_mode_kept")
        if not a.only or "70000" in a.only:
            p = check_70000_external_tensors(amanda, root)
            if p:
                failures.append("valid.onnx_70000_external_tensors")
                print("  FAIL valid.onnx_70000_external_tensors: " + p)
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print("inputs kept in", root)
    if failures:
        print("%d failures: %s" % (len(failures), ", ".join(failures)))
        return 1
    print("all cases hold")
    return 0


def has_libtorch(amanda):
    d = os.path.dirname(amanda)
    return os.path.exists(os.path.join(d, "libamanda_torch.so")) or bool(os.environ.get("AMANDA_TORCH_PLUGIN"))


if __name__ == "__main__":
    sys.exit(main())
