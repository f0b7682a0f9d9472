"""Cases for regressions_test.py: op families PyTorch's exporter suite found refused (issue 33,
fourth round), generated per family rather than per test. Each function returns
(name, module, make_inputs, wants[, readers]) tuples as regressions_test.CASES holds them.

CI runs a deterministic sample of each family (sample()) through the libtorch-free reader (about
15 s); AMANDA_REGRESSIONS=all runs every case through both readers."""
import os

import torch

ALL = os.environ.get("AMANDA_REGRESSIONS") == "all"


def sample(cases, every):
    """Every `every`-th case through the libtorch-free reader (all, through both, with
    AMANDA_REGRESSIONS=all)."""
    if ALL:
        return cases
    return [c[:4] + (("script",),) for c in cases[::every]]


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
    return sample(out, 8)


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
    return sample(out, 1)


class Expr(torch.nn.Module):  # one expression of the inputs
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *xs):
        return self.f(*xs)


U8 = lambda *s: torch.randint(0, 256, s, dtype=torch.uint8)
I8 = lambda *s: torch.randint(-128, 128, s, dtype=torch.int8)
I16 = lambda *s: torch.randint(-32768, 32768, s, dtype=torch.int16)
I32 = lambda *s: torch.randint(-1000, 1000, s, dtype=torch.int32)
B = lambda *s: torch.rand(*s) > 0.5


def type_cases():
    """Element types an ONNX op refuses (test_arithmeticOps_with_low_precision, test_mul_bool,
    test_relu_int, test_where_with_byte_tensor, test_masked_fill, test_einsum, test_where_condition,
    test_reduced_prod, test_celu_cast, test_reciprocal, test_outer): computed in a type the op takes
    and cast back, where that is exact (integers that wrap as torch's do: uint8 255 + 1 is 0), or
    the op's function body (Celu), or torch's promotion (reciprocal of an integer is float)."""
    cases = [
        ("uint8_add_sub_mul_wrap", lambda x, y: (x + y, x - y, x * y), lambda: (U8(3, 5), U8(3, 5))),
        ("uint8_add_scalar", lambda x: x + 200, lambda: (U8(4, 4),)),
        ("int8_arith_wrap", lambda x, y: (x + y, x * y, -x, torch.abs(x)), lambda: (I8(6, 3), I8(6, 3))),
        ("int16_mul_wrap", lambda x, y: x * y, lambda: (I16(5), I16(5))),
        ("uint8_div_true", lambda x, y: x / (y + 1), lambda: (U8(3, 4), U8(3, 4) // 2)),
        ("bool_mul", lambda x, y: torch.mul(x, y), lambda: (B(4, 3), B(4, 3))),
        ("bool_add", lambda x, y: x + y, lambda: (B(5), B(5))),
        ("bool_mul_float", lambda x, y: torch.mul(x, y), lambda: (B(4), torch.randn(4))),
        ("relu_int32", lambda x: torch.relu(x), lambda: (I32(3, 3),)),
        ("relu_uint8_int8", lambda x, y: (torch.relu(x), torch.relu(y)), lambda: (U8(4), I8(4))),
        ("max_min_uint8", lambda x, y: (torch.maximum(x, y), torch.minimum(x, y)), lambda: (U8(2, 6), U8(2, 6))),
        ("where_uint8_condition", lambda c, a, b: torch.where(c.bool(), a, b) + torch.where(c > 0, a, b), lambda: (U8(2, 3) % 2, torch.randn(2, 3), torch.randn(2, 3))),
        ("masked_fill_uint8_mask", lambda x: x.masked_fill(torch.tensor([[0, 0, 1], [1, 1, 0]], dtype=torch.uint8), 2), lambda: (torch.randn(4, 2, 3),)),
        ("greater_bool", lambda x, y: (x > y, x >= y, x < y), lambda: (B(2, 3, 4), B(2, 3, 4))),
        ("einsum_bool_diagonal", lambda x: torch.einsum("...ii->...i", x), lambda: (B(3, 5, 5),)),
        ("reduce_prod_small_ints", lambda x, y, z: (torch.prod(x, dim=-1), torch.prod(y, dim=0), torch.prod(z, dim=1)), lambda: (U8(4, 4) % 10, I8(4, 4) % 10, I16(3, 4) % 10)),
        ("reduce_sum_uint8", lambda x: (torch.sum(x, dim=-1), torch.sum(x)), lambda: (U8(4, 6),)),
        ("celu_float64", lambda x: torch.nn.functional.celu(x, alpha=1.5), lambda: (torch.randn(2, 5, 7, dtype=torch.float64),)),
        ("reciprocal_int64", lambda x: torch.reciprocal(x), lambda: (torch.tensor([2, 4, -5, 7]),)),
        ("sqrt_int32", lambda x: torch.sqrt(x), lambda: (torch.randint(1, 100, (5,), dtype=torch.int32),)),
        ("outer_int32_int64", lambda x, y: torch.outer(x, y), lambda: (torch.arange(3, 6).to(torch.int32), torch.arange(4, 7))),
        ("outer_float_int64", lambda x, y: torch.outer(x, y), lambda: (torch.arange(1, 6).float(), torch.arange(1, 4))),
    ]
    return sample([(name, Expr(fn), make, "pass") for name, fn, make in cases], 4)


class QuantChain(torch.nn.Module):  # test_qat_relu, test_qat_maxpool2d, test_qat_avg_pool2d, test_qat_upsample_nearest2d
    def __init__(self, scale, zero_point, dtype, op):
        super().__init__()
        self.scale, self.zero_point, self.dtype, self.op = scale, zero_point, dtype, op

    def forward(self, x):
        return torch.dequantize(self.op(torch.quantize_per_tensor(x, self.scale, self.zero_point, self.dtype)))


def quant_chain_cases():
    """quantize_per_tensor -> an op on the quantized tensor -> dequantize (what QuantStub/DeQuantStub
    make), for quint8 and qint8 with several scales and zero points; inputs past the range too."""
    ops = [("relu", torch.nn.ReLU()),
           ("max_pool2d", torch.nn.MaxPool2d(3, stride=2, padding=1)),
           ("max_pool2d_ceil", torch.nn.MaxPool2d(2, stride=2, ceil_mode=True)),
           ("avg_pool2d", torch.nn.AvgPool2d(kernel_size=3, stride=2, padding=1)),
           ("avg_pool2d_1x3", torch.nn.AvgPool2d(kernel_size=(1, 3), stride=1)),
           ("upsample_nearest", torch.nn.UpsamplingNearest2d(scale_factor=1.5)),
           ("upsample_nearest_2", torch.nn.UpsamplingNearest2d(scale_factor=2))]
    params = [(0.1, 0, torch.quint8), (0.05, 128, torch.quint8), (0.07, 0, torch.qint8), (0.2, -20, torch.qint8)]
    out = []
    for i, (name, op) in enumerate(ops):
        for j, (s, z, t) in enumerate(params):
            if (i + j) % 2:
                continue  # half of the combinations; each op with both types
            out.append((f"quant_{name}_{str(t)[6:]}_{j}", QuantChain(s, z, t, op).eval(), lambda: (torch.randn(2, 3, 7, 6) * 8,), "pass"))
    return sample(out, 3)
