"""Cases for regressions_test.py: op families PyTorch's exporter suite found refused (issue 33,
fourth round), generated per family rather than per test. Each function returns
(name, module, make_inputs, wants[, readers]) tuples as regressions_test.CASES holds them.

CI runs a deterministic sample of each family (sample()); AMANDA_REGRESSIONS=all runs every case
through both readers."""
import os

import torch

ALL = os.environ.get("AMANDA_REGRESSIONS") == "all"


def sample(cases, every):
    """Every `every`-th case (all with AMANDA_REGRESSIONS=all)."""
    return cases if ALL else cases[::every]


class Rnn(torch.nn.Module):  # test_*_no_bias, test_word_language_model_* (5 layers), test_symbolic_shape_inference_time
    def __init__(self, kind, layers, bias, bidirectional, batch_first, nonlinearity):
        super().__init__()
        kw = {"nonlinearity": nonlinearity} if kind == "RNN" else {}
        self.rnn = getattr(torch.nn, kind)(3, 4, layers, bias=bias, bidirectional=bidirectional, batch_first=batch_first, **kw)

    def forward(self, x, *state):
        if len(state) == 2:
            y, (h, c) = self.rnn(x, (state[0], state[1]))
            return y, h, c
        y, h = self.rnn(x, state[0]) if state else self.rnn(x)
        return (y,) + (h if isinstance(h, tuple) else (h,))


def rnn_cases():
    """torch's recurrent layers (LSTM, GRU, RNN tanh/relu) with and without biases, 1 to 6 layers,
    one or both directions, batch first or not, with and without initial states: the table's rules
    take any layer count. Parameters drawn at random (torch's init) and checked against torch."""
    out = []
    i = 0
    for kind, nl in (("LSTM", None), ("GRU", None), ("RNN", "tanh"), ("RNN", "relu")):
        for bias in (True, False):
            for layers in (1, 2, 3, 5, 6):
                bi, bf, with_state = i % 2 == 1, i % 3 == 1, i % 4 != 3
                i += 1
                seq, batch, dirs = 5, 2, 2 if bi else 1

                def make(bf=bf, seq=seq, batch=batch, kind=kind, ws=with_state, n=layers * dirs):
                    x = torch.randn(batch, seq, 3) if bf else torch.randn(seq, batch, 3)
                    if not ws:
                        return (x,)
                    return (x, torch.randn(n, batch, 4), torch.randn(n, batch, 4)) if kind == "LSTM" else (x, torch.randn(n, batch, 4))
                name = f"rnn_{kind.lower()}{'_' + nl if nl else ''}_l{layers}{'' if bias else '_nobias'}{'_bi' if bi else ''}{'_bf' if bf else ''}{'' if with_state else '_nostate'}"
                out.append((name, Rnn(kind, layers, bias, bi, bf, nl or "tanh").eval(), make, "pass"))
    return sample(out, 5)


class FakeQuantTensorParams(torch.nn.Module):  # test_fake_quantize_per_tensor_dynamic_scale_zeropoint, test_fake_quantize_activation
    def __init__(self, lo, hi):
        super().__init__()
        self.lo, self.hi = lo, hi

    def forward(self, x, scale, zero_point):
        return torch.fake_quantize_per_tensor_affine(x, scale, zero_point, self.lo, self.hi)


def fake_quant_cases():
    """fake_quantize_per_tensor_affine with the scale and zero point tensors: several ranges (the
    activation range 0..127 too), scales, zero points and element types of the zero point; inputs
    spread over the range and past both ends, and exact ties (k + 0.5 steps)."""
    out = []
    for i, (lo, hi, scale, zp, zdtype) in enumerate([(-128, 127, 1.0 / 127, 0, torch.int32), (0, 255, 0.05, 128, torch.int64),
                                                     (0, 127, 0.1, 3, torch.int32), (-8, 7, 0.25, -2, torch.int64),
                                                     (0, 15, 0.3, 0, torch.int32)]):
        def make(lo=lo, hi=hi, scale=scale, zp=zp, zdtype=zdtype):
            x = torch.randn(6, 4, 3) * (hi - lo) * scale * 0.7
            x[0, 0, :] = torch.tensor([0.5, 1.5, -2.5]) * scale  # ties: round half to even
            return x, torch.tensor([scale]) if lo < -1 else torch.tensor(scale), torch.tensor(zp, dtype=zdtype)
        out.append((f"fake_quant_tensor_qparams_{i}_{lo}_{hi}", FakeQuantTensorParams(lo, hi), make, "pass"))
    return out
