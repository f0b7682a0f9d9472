#!/usr/bin/python3
"""`amanda convert MODULE.pt --check`: the source runs in libtorch (a child process), the converted
ONNX graph in the reference interpreter, on the same inputs; every output is compared.

Cases, each module made here with random weights and saved with torch.jit.save:

1. a small CNN (Conv, BatchNorm, ReLU, pooling, Linear), traced: the check passes, and the
   outputs it compared are torch's own (the test runs the module in torch itself on the input
   it writes, passes it with --check-input, and checks that the written ONNX model's output, run by
   `amanda run` on that input, equals torch's and is not trivially constant);
2. a module returning a tuple (two tensors) and taking two inputs, one of them int64 (an
   embedding's indices), scripted: every result is compared, in order;
3. torchvision's resnet18 and mobilenet_v2 (random weights), traced;
4. a deliberately broken rule (aten::relu mapped to Sigmoid through --tables, at a higher
   priority): the check fails with exit 1, names the differing output, and writes nothing;
5. a check input of the wrong element type (float64 where the module takes float32) is refused,
   naming the input, exit 1, nothing written;
6. an in-place write into a view of a folded tensor (`z = arange(6).reshape(2, 3); z[0].add_(x[0])`)
   is refused by the libtorch-free reader, naming the write (the write would not reach the folded
   tensor: converting would give a model that silently drops it), nothing written; a known tensor
   written as a whole (embedding's max_norm on a copy of the weight) still converts.

  check_torch_test.py AMANDA
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision

BROKEN = """table:
  src: amanda/pytorch/1.13
  dst: amanda/onnx/13
  carry_attrs: false
  rules:
    - rule_name: broken_relu_as_sigmoid
      priority: 5
      src: {type: aten::relu, input_ports: [{name: self, ref: x}], output_ports: [{name: result, ref: y}]}
      dst: {type: Sigmoid, input_ports: [{name: X, ref: x}], output_ports: [{name: Y, ref: y}]}
"""


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.fc(y)


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(20, 6)
        self.fc = torch.nn.Linear(6, 3)

    def forward(self, x, idx):
        e = self.emb(idx)
        return torch.relu(self.fc(x + e)), torch.sigmoid(e).sum(dim=-1)


def randomise_bn(m):
    g = torch.Generator().manual_seed(1)
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.copy_(torch.rand(mod.running_mean.shape, generator=g) - 0.5)
            mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=g) + 0.5)
            mod.weight.data.copy_(torch.rand(mod.weight.shape, generator=g) + 0.5)
            mod.bias.data.copy_(torch.rand(mod.bias.shape, generator=g) - 0.5)
    return m


def check_line(text):
    return next((l for l in text.splitlines() if l.startswith("check: ok")), "?")


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout + p.stderr


def main():
    amanda = sys.argv[1]
    torch.manual_seed(0)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        # 1. a traced CNN; the compared outputs are torch's own
        m = randomise_bn(SmallCnn()).eval()
        x = torch.randn(2, 3, 12, 12)
        pt = os.path.join(d, "cnn.pt")
        torch.jit.save(torch.jit.trace(m, x), pt)
        np.save(os.path.join(d, "x.npy"), x.numpy())
        with torch.no_grad():
            want = m(x).numpy()
        out = os.path.join(d, "cnn.onnx")
        rc, text = run([amanda, "convert", pt, "--input-shape", "2,3,12,12", "-o", out, "--check", "--check-input",
                        "x=" + os.path.join(d, "x.npy")])
        if rc != 0 or "check: ok: 1 outputs match" not in text or "libtorch" not in text or not os.path.exists(out):
            failures.append(f"small CNN: exit {rc}\n{text}")
        else:
            print(check_line(text))
            rc, text2 = run([amanda, "run", out, "--input", "x=" + os.path.join(d, "x.npy"), "-o", os.path.join(d, "o")])
            got = None
            if rc == 0:
                files = [f for f in os.listdir(os.path.join(d, "o")) if f.endswith(".npy")]
                got = np.load(os.path.join(d, "o", files[0])) if len(files) == 1 else None
            if got is None or got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                failures.append(f"small CNN: the written model does not compute torch's output: {text2}")
            elif np.ptp(want) < 1e-3:
                failures.append("small CNN: torch's output is trivially constant; the test proves nothing")

        # 2. scripted, two inputs (float32 and int64), a tuple of two results
        m2 = torch.jit.script(TwoHeads().eval())
        pt2 = os.path.join(d, "heads.pt")
        torch.jit.save(m2, pt2)
        rc, text = run([amanda, "convert", pt2, "--input-shape", "4,6", "--input-shape", "4",
                        "--input-type", "float32", "--input-type", "int64", "-o", os.path.join(d, "heads.onnx"),
                        "--check", "--seed", "3"])
        if rc != 0 or "check: ok: 2 outputs match" not in text:
            failures.append(f"two heads: exit {rc}\n{text}")
        else:
            print(check_line(text))

        # 3. torchvision models, traced with random weights
        for name in ["resnet18", "mobilenet_v2"]:
            net = randomise_bn(getattr(torchvision.models, name)()).eval()
            p = os.path.join(d, name + ".pt")
            torch.jit.save(torch.jit.trace(net, torch.randn(1, 3, 224, 224)), p)
            rc, text = run([amanda, "convert", p, "--input-shape", "1,3,224,224", "-o", os.path.join(d, name + ".onnx"),
                            "--check"])
            if rc != 0 or "check: ok: 1 outputs match" not in text:
                failures.append(f"{name}: exit {rc}\n{text}")
            else:
                print(name + ": " + check_line(text))

        # 4. a broken rule is caught, nothing written
        broken = os.path.join(d, "broken.yaml")
        open(broken, "w").write(BROKEN)
        bad = os.path.join(d, "bad.onnx")
        rc, text = run([amanda, "convert", pt, "--input-shape", "2,3,12,12", "-o", bad, "--check", "--tables", broken])
        if rc != 1 or "FAILED" not in text or "differs" not in text or os.path.exists(bad):
            failures.append(f"broken rule not caught: exit {rc}\n{text}")
        else:
            print("broken rule: " + " / ".join(l for l in text.splitlines() if l.startswith("check:")))

        # 5. a wrongly typed input
        np.save(os.path.join(d, "wrong.npy"), np.zeros((2, 3, 12, 12), np.float64))
        rc, text = run([amanda, "convert", pt, "--input-shape", "2,3,12,12", "-o", os.path.join(d, "x.onnx"), "--check",
                        "--check-input", "x=" + os.path.join(d, "wrong.npy")])
        if rc != 1 or "'x'" not in text or os.path.exists(os.path.join(d, "x.onnx")):
            failures.append(f"a wrongly typed input was not refused: exit {rc}\n{text}")
        # 6. an in-place write into a view of a folded tensor: refused, not silently dropped
        class WriteIntoFoldedView(torch.nn.Module):
            def forward(self, x):
                z = torch.arange(6.0).reshape(2, 3)
                z[0].add_(x[0])
                return z + 1.0
        p6 = os.path.join(d, "view_write.pt")
        torch.jit.save(torch.jit.trace(WriteIntoFoldedView(), torch.randn(2, 3), check_trace=False), p6)
        o6 = os.path.join(d, "view_write.onnx")
        rc, text = run([amanda, "convert", p6, "--reader", "script", "--input-shape", "2,3", "-o", o6])
        if rc == 0 or "writes a view of a folded tensor" not in text or os.path.exists(o6):
            failures.append(f"a write into a view of a folded tensor was not refused: exit {rc}\n{text}")
        else:
            print("write into a folded view: refused")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
