#!/usr/bin/env python3
"""Makes the seed corpus of the torchscript_fuzz target (fuzz/corpus/torchscript/).

    /usr/bin/python3 fuzz/make_torchscript_seeds.py

The first byte of each seed picks the reader (fuzz/torchscript_check.h): 0 the code parser,
1 the unpickler, 2 the whole archive. Small modules with random weights: a traced CNN, and a
scripted module with control flow on shapes, a loop and a tuple output.
"""
import io
import os
import zipfile

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "torchscript")


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.fc(y)


class Scripted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        n = x.size(-1)
        if n > 4:
            x = x[:, :, :, :4]
        for _ in range(2):
            x = x * 2.0
        return x, x.sum()


def save(module, example):
    torch.manual_seed(0)
    m = module.eval()
    t = torch.jit.trace(m, example) if example is not None else torch.jit.script(m)
    buf = io.BytesIO()
    torch.jit.save(t, buf)
    return buf.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    small = save(Small(), torch.randn(1, 3, 8, 8))
    scripted = save(Scripted(), None)
    seeds["archive_traced_cnn"] = b"\x02" + small
    seeds["archive_scripted"] = b"\x02" + scripted
    for tag, data in (("traced_cnn", small), ("scripted", scripted)):
        z = zipfile.ZipFile(io.BytesIO(data))
        for n in z.namelist():
            if n.endswith("data.pkl"):
                seeds[f"pickle_{tag}_data"] = b"\x01" + z.read(n)
            if n.endswith(".py") and "/code/" in n:
                seeds[f"code_{tag}_{os.path.basename(n)[:-3]}"] = b"\x00" + z.read(n)
    for name, data in seeds.items():
        assert len(data) < 64 * 1024, name
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(name, len(data))


if __name__ == "__main__":
    main()
