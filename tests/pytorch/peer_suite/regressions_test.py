#!/usr/bin/python3
"""Regression tests for what PyTorch's exporter suite (run_suite.py) found: wrong numbers and
invalid models. Each module is traced, saved, converted by both readers (`--reader script`, the
libtorch-free one, and `--reader libtorch`), checked with onnx.checker (full) and run in
onnxruntime-node against torch's outputs (rtol 1e-3, atol 1e-5, same dtype and shape).

    regressions_test.py AMANDA

A case marked "pass" must convert and match with both readers; a case marked "refuse" may not
convert yet, but must then be refused with a message naming the op (never a wrong number or an
invalid model); if it converts, it must match. A dict ({"libtorch": "pass", "script": "refuse"}) says it per reader.

CI runs a deterministic sample of the generated families (every 5th write through a view; the op
families through the libtorch-free reader); AMANDA_REGRESSIONS=all runs every case through both
readers; AMANDA_REGRESSIONS_ONLY=REGEX runs the cases whose name matches.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torchvision  # noqa: F401  (registers torch.ops.torchvision: RoiAlign)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refusal_families  # noqa: E402  (the fourth round's families: recurrent layers without biases, ...)
import run_time_cases  # noqa: E402  (the fourth round's families: sizes from values, indexing, norms, ...)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


class IntDiv(torch.nn.Module):  # test_div: int / int is float (the libtorch reader gave Div(int32) -> float)
    def forward(self, x, y):
        return x / y, torch.true_divide(x, y)


class IntDivFloat0d(torch.nn.Module):  # a float64 0-d tensor does not lift an int tensor past float32
    def forward(self, x, y):
        return x / y


class IndexSelect0d(torch.nn.Module):  # test_index_select_scaler_index: a 0-d index keeps the dimension
    def forward(self, x):
        return torch.index_select(x, 1, torch.tensor(2))


class NumpyT(torch.nn.Module):  # test_numpy_T: x.T was a Reshape
    def forward(self, x):
        return x.T


class CopyIntoSlice(torch.nn.Module):  # test_copy_: the write through the view was lost
    def forward(self, x, data):
        x[1:3] = data
        return x


class CopyIntoEllipsis(torch.nn.Module):  # test_copy_ellipsis
    def forward(self, x, update):
        x[..., 1] = update
        return x


class WriteAtInputIndex(torch.nn.Module):  # test_copy_ (CopyModel4): x[ind] = data, ind an input: the write was lost
    def forward(self, x, ind, data):
        x[ind] = data
        return x


class ZerosFromValues(torch.nn.Module):  # test_squeeze_runtime_dim: a size read from an input's values
    def forward(self, d1, d2):
        return torch.zeros(d1[0], d2[0]).squeeze(0)


class InPlaceAdd(torch.nn.Module):  # an in-place write that is not through a view stays right
    def forward(self, x):
        y = x * 2
        y.add_(1)
        return y * 3


class InterpolateScale(torch.nn.Module):  # test_interpolate_upsample: coordinates use the given scale, not out/in
    def forward(self, x):
        return torch.nn.functional.interpolate(x, scale_factor=2.3, mode="nearest")


class InterpolateToOne(torch.nn.Module):  # test_interpolate_half_pixel: an output length of 1 (half_pixel)
    def forward(self, x):
        return torch.nn.functional.interpolate(x, size=1, mode="linear")


class TopkInputK(torch.nn.Module):  # test_topk_smallest_unsorted: k is an input (a size from data)
    def forward(self, x, k):
        return torch.sort(torch.topk(x, k, largest=False, sorted=False).values).values


class PadFromTensors(torch.nn.Module):  # test_pad_types_scalar_tensor_list: pad sizes read from tensors
    def forward(self, x, a, b):
        return torch.nn.functional.pad(x, [a, b])


class PadInt(torch.nn.Module):  # test_pad_int: the pad value in the input's type
    def forward(self, x):
        return torch.nn.functional.pad(x, [1, 2]) + 1


class NormAll(torch.nn.Module):  # torch.norm over every dimension (an empty axes attribute)
    def forward(self, x):
        return torch.norm(x)


class ArangeFromShape(torch.nn.Module):  # test_symbolic_shape_inference_arange_2: arange(x.size(0), 8.5, 1.5, dtype=int64)
    def __init__(self, end, step, dtype):
        super().__init__()
        self.end, self.step, self.dtype = end, step, dtype

    def forward(self, x):
        return torch.arange(x.size(0), self.end, self.step, dtype=self.dtype), x + 1


def arange_cases():
    """torch's arange with an integer dtype truncates start, end and step first (the count too for
    int64): several bounds, steps and dtypes, the start read from a shape as the suite's test does.
    Combinations torch refuses (a step that truncates to 0) are left out."""
    out = []
    for end, step in ((8.5, 1.5), (9.9, 0.7), (-3.5, -1.5), (6.2, 1), (11, 2.5)):
        for dtype in (torch.int64, torch.int32, torch.float32):
            m = ArangeFromShape(end, step, dtype)
            try:
                m(torch.zeros(2, 3))
            except RuntimeError:
                continue
            out.append((f"arange_from_shape_{end}_{step}_{str(dtype)[6:]}", m, lambda: (torch.randn(2, 3),), "pass"))
    return out


class PackedRnn(torch.nn.Module):  # test_rnn_*_trilayer_*_packed: pack_padded_sequence -> several layers -> pad_packed_sequence
    def __init__(self, kind, layers, bidirectional, batch_first):
        super().__init__()
        self.bf = batch_first
        self.rnn = getattr(torch.nn, kind)(3, 4, layers, bidirectional=bidirectional, batch_first=batch_first)

    def forward(self, x, lengths):
        out = self.rnn(torch.nn.utils.rnn.pack_padded_sequence(x, lengths, self.bf))
        y, _ = torch.nn.utils.rnn.pad_packed_sequence(out[0], self.bf)
        states = out[1] if isinstance(out[1], tuple) else (out[1],)
        return (y,) + states


def packed_rnn_cases():
    """Packed sequences through 2..4 layers of each recurrent kind, one and both directions, batch
    first or not: ONNX's LSTM/GRU/RNN with sequence_lens per layer (the libtorch-free reader only:
    the libtorch reader types by a run on zeros, where pack_padded_sequence refuses lengths of 0)."""
    out = []
    for i, (kind, layers) in enumerate([(k, l) for k in ("LSTM", "GRU", "RNN") for l in (2, 3, 4)]):
        bi, bf = i % 2 == 1, i % 4 in (1, 2)  # each kind and layer count once; both flags in all four combinations
        seq, batch = 5, 3

        def make(bf=bf, seq=seq, batch=batch):
            x = torch.randn(batch, seq, 3) if bf else torch.randn(seq, batch, 3)
            return x, torch.tensor([seq, 3, 2], dtype=torch.int32)
        out.append((f"packed_{kind.lower()}_l{layers}{'_bi' if bi else ''}{'_bf' if bf else ''}",
                    PackedRnn(kind, layers, bi, bf).eval(), make, "pass", ("script",)))
    return out


VIEWS = [  # (name, the view of a (3, 4, 5) tensor): chains of slices, selects, layout views
    ("rows", lambda y: y[1:3]),
    ("ellipsis", lambda y: y[..., 1]),
    ("step", lambda y: y[:, ::2]),
    ("select", lambda y: y[1]),
    ("neg_select_slice", lambda y: y[-1, 1:]),
    ("transpose_slice_select", lambda y: y.transpose(0, 2)[1:3, 0]),
    ("flat_view_slice", lambda y: y.view(-1)[2:9]),
    ("narrow", lambda y: y.narrow(2, 1, 3)),
    ("diagonal", lambda y: y[0].diagonal()),
    ("slice_chain", lambda y: y[1:, :, 2:][:, 1]),
    ("unsqueeze", lambda y: y[:, 1:3].unsqueeze(0)),
    ("permute_select", lambda y: y.permute(2, 0, 1)[0]),
]
WRITES = ["copy", "copy_broadcast", "fill", "add", "mul", "zero"]


class ViewWrite(torch.nn.Module):
    """An in-place write through a view (test_copy_*, test_index_put_slice_*, ...): the base is read
    afterwards, and so is a view of it taken before the write."""

    def __init__(self, view, write, base_is_input):
        super().__init__()
        self.view, self.write, self.base_is_input = view, write, base_is_input

    def forward(self, x, *u):
        y = x if self.base_is_input else x * 1.5
        before = y[0]
        v = self.view(y)
        if self.write in ("copy", "copy_broadcast"):
            v.copy_(u[0])
        elif self.write == "fill":
            v.fill_(2.5)
        elif self.write == "add":
            v.add_(u[0])
        elif self.write == "mul":
            v.mul_(3.0)
        else:
            v.zero_()
        return y + 0, before * 2


def view_write_cases():
    """Every view of VIEWS with every write of WRITES, the base an input or computed (alternating):
    the libtorch reader lowers them to a scatter into the base (ScatterElements); the libtorch-free
    reader may refuse them (then naming the op). AMANDA_REGRESSIONS=all runs all 72; otherwise every
    5th (a deterministic sample of 15)."""
    out = []
    k = 0
    for vname, view in VIEWS:
        for write in WRITES:
            shape = tuple(view(torch.zeros(3, 4, 5)).shape)
            ushape = shape[-1:] if write == "copy_broadcast" else shape

            def make(write=write, ushape=ushape):
                return (torch.randn(3, 4, 5),) + ((torch.randn(*ushape),) if write in ("copy", "copy_broadcast", "add") else ())
            m = ViewWrite(view, write, k % 2 == 0)
            if os.environ.get("AMANDA_REGRESSIONS") == "all" or k % 5 == 0:
                out.append((f"view_write_{vname}_{write}", m, make, {"libtorch": "pass", "script": "refuse"}))
            k += 1
    return out


class BatchNormTraining(torch.nn.Module):  # test_batchnorm_training*: batch statistics, not the running ones
    def __init__(self, dims, affine, track):
        super().__init__()
        cls = {1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm2d, 3: torch.nn.BatchNorm3d}[dims]
        self.bn = cls(3, affine=affine, track_running_stats=track)
        if track:  # statistics a run would have left (eval mode reads them)
            with torch.no_grad():
                self.bn.running_mean.uniform_(-1, 1)
                self.bn.running_var.uniform_(0.5, 2)
        if affine:
            with torch.no_grad():
                self.bn.weight.uniform_(0.5, 1.5)
                self.bn.bias.uniform_(-1, 1)

    def forward(self, x):
        return self.bn(x) * 2


def batch_norm_training_cases():
    """BatchNorm1d/2d/3d in training mode (traced in train()), with and without the affine
    parameters and the running statistics (without them eval mode normalises by the batch too).
    The libtorch reader does not read modules traced in training mode (freezing keeps the mutated
    running statistics as attributes): the libtorch-free reader only."""
    out = []
    shapes = {1: (6, 3, 5), 2: (4, 3, 5, 6), 3: (2, 3, 3, 4, 5)}
    for dims in (1, 2, 3):
        for affine, track, train in ((True, True, True), (False, True, True), (True, False, False), (False, False, True),
                                     (False, True, False)):
            m = BatchNormTraining(dims, affine, track)
            m.train(train)
            out.append((f"batch_norm_training_{dims}d{'_affine' if affine else ''}{'' if track else '_no_stats'}"
                        f"{'' if train else '_eval'}", m, lambda s=shapes[dims]: (torch.randn(*s) * 2 + 1,), "pass", ("script",)))
    return out


class ReturnTwice(torch.nn.Module):  # test_and_or_xor, test_tuple_with_none_outputs: one value, two outputs
    def forward(self, x):
        y = x * 2
        return y, y, y + 1


class FillWhole(torch.nn.Module):  # test_inplace_fill / test_inplace_zero: x.fill_(v) of a whole tensor
    def __init__(self, zero):
        super().__init__()
        self.zero = zero

    def forward(self, x):
        y = x * 2
        (y.zero_() if self.zero else y.fill_(2.5))
        return y + 3, y + 3, x + 1


class InstanceNormRunning(torch.nn.Module):  # test_instancenorm*_runningstats: eval uses the running statistics
    def __init__(self, dims, affine):
        super().__init__()
        cls = {1: torch.nn.InstanceNorm1d, 2: torch.nn.InstanceNorm2d, 3: torch.nn.InstanceNorm3d}[dims]
        self.n = cls(3, affine=affine, track_running_stats=True)
        with torch.no_grad():  # statistics a run would have left (not the initial 0 and 1)
            self.n.running_mean.uniform_(-1, 1)
            self.n.running_var.uniform_(0.5, 2)
            if affine:
                self.n.weight.uniform_(0.5, 1.5)
                self.n.bias.uniform_(-1, 1)

    def forward(self, x):
        return self.n(x)


def instance_norm_running_cases():
    shapes = {1: (2, 3, 7), 2: (2, 3, 4, 5), 3: (2, 3, 2, 3, 4)}
    return [(f"instance_norm_running_{d}d{'_affine' if a else ''}", InstanceNormRunning(d, a).eval(),
             lambda s=shapes[d]: (torch.randn(*s),), "pass") for d in (1, 2, 3) for a in (True, False)]


class Expr(torch.nn.Module):  # one expression of the inputs (the op families the suite found refused)
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *xs):
        return self.f(*xs)


def op_family_cases():
    """argmin/argmax over the whole tensor (keepdim or not), clamp with tensor bounds, pow of a
    number by a tensor, integer remainder and division with each rounding mode: several shapes
    and element types each, through both readers."""
    f = lambda *s: torch.randn(*s)
    i = lambda *s: torch.randint(-20, 20, s)
    i32 = lambda *s: torch.randint(-20, 20, s, dtype=torch.int32)
    pos = lambda *s: torch.randint(1, 7, s, dtype=torch.int32)
    cases = [
        # (+ 1: an index of 0 would make the all-zero check fail on a correct result)
        ("argmax_flat", lambda x: (torch.argmax(x) + 1, torch.argmin(x) + 1), lambda: (f(7, 3, 5),)),
        ("argmax_flat_keepdim", lambda x: (torch.argmax(x, keepdim=True) + 1, torch.argmin(x, keepdim=True) + 1), lambda: (f(4, 6),)),
        ("argmax_flat_ties", lambda x: (torch.argmax(x, keepdim=True), torch.argmin(x)), lambda: (torch.tensor([[1.0, 3.0, 3.0], [1.0, 0.5, 3.0]]),)),
        ("argmax_flat_int", lambda x: (torch.argmax(x) + 1, torch.argmin(x, keepdim=True) + 1), lambda: (i(3, 4, 2),)),
        ("clamp_tensor", lambda x, a, b: x.clamp(a, b), lambda: (f(3, 4), f(3, 4) - 0.5, f(3, 4) + 0.5)),
        ("clamp_tensor_min_broadcast", lambda x, a: x.clamp(min=a), lambda: (f(3, 4), f(4))),
        ("clamp_tensor_max", lambda x, b: x.clamp(max=b), lambda: (f(2, 3, 4), f(3, 1))),
        ("clamp_tensor_int_bound", lambda x, m: x.clamp(min=m), lambda: (f(3, 4), torch.tensor(0))),
        ("clamp_tensor_float_int_bounds", lambda x, a, b: x.clamp(a, b), lambda: (f(4, 3) * 5, i(4, 3) // 5, i(3) // 3 + 1)),
        ("clamp_tensor_int", lambda x, a, b: torch.clamp(x, a, b), lambda: (i(5, 3), i(5, 3) - 5, i(5, 3) + 5)),
        ("pow_scalar_base", lambda x: torch.pow(2, x), lambda: (f(1, 10),)),
        ("pow_scalar_base_int", lambda x: torch.pow(3, x), lambda: (torch.randint(0, 9, (2, 3, 4)),)),
        ("pow_scalar_base_float_int_exp", lambda x: torch.pow(1.5, x), lambda: (torch.randint(0, 9, (5,)),)),
        ("pow_scalar_base_double", lambda x: torch.pow(2, x), lambda: (f(3, 2).double(),)),
        ("remainder_int_scalar", lambda x: torch.remainder(x, 3), lambda: (i(4, 5),)),
        ("remainder_int_scalar_neg", lambda x: torch.remainder(x, -4), lambda: (i32(6),)),
        ("div_trunc_int", lambda x, y: torch.div(x, y, rounding_mode="trunc"), lambda: (i32(2, 3, 4) * 5, pos(2, 3, 4))),
        ("div_floor_int", lambda x, y: torch.div(x, y, rounding_mode="floor"), lambda: (i32(2, 3, 4) * 5, pos(2, 3, 4))),
        ("div_floor_int64_neg_divisor", lambda x, y: torch.div(x, y, rounding_mode="floor"), lambda: (i(3, 4) * 3, -pos(3, 4).long())),
        ("bool_dunder_ops", lambda x, y: (x ^ y, x | y, x & y, ~x), lambda: (f(5, 5) > 0, f(5, 5) > 0)),
        ("int_dunder_shifts", lambda x: (x << 2, x >> 1), lambda: (torch.randint(0, 50, (3, 4)),)),
        ("div_none_int", lambda x, y: torch.div(x, y, rounding_mode=None), lambda: (i32(2, 3, 4), pos(2, 3, 4))),
        ("log_softmax_dtype", lambda x: torch.nn.functional.log_softmax(x, dim=1, dtype=torch.float64), lambda: (f(3, 4, 5),)),
        ("softmax_dtype", lambda x: torch.softmax(x, -1, dtype=torch.float64), lambda: (f(2, 6),)),
        ("cumsum_dtype_int", lambda x: torch.cumsum(x, dim=0, dtype=torch.float32), lambda: (i32(4, 3),)),
        ("full_tensor_value", lambda x: torch.full((3, 4), x, dtype=torch.long), lambda: (torch.tensor(12),)),
        ("full_tensor_value_float", lambda x: torch.full((2, 5), x), lambda: (torch.tensor(1.75),)),
        ("full_like_tensor_value", lambda x, y: torch.full_like(x, y + 2), lambda: (torch.tensor(12), torch.tensor(2))),
        ("full_like_tensor_value_shape", lambda x, y: torch.full_like(x, y * 2), lambda: (f(2, 3), torch.tensor(0.5))),
        ("cumsum_dtype_bool", lambda x: torch.cumsum(x > 0, dim=1, dtype=torch.int64), lambda: (f(3, 5),)),
    ]
    # The libtorch-free reader does not take a tensor where full's value is a number (it refuses,
    # naming the op): those through the libtorch reader. The others through both readers with
    # AMANDA_REGRESSIONS=all, else through the libtorch-free one (1 s less a case in CI).
    both = ("script", "libtorch") if os.environ.get("AMANDA_REGRESSIONS") == "all" else ("script",)
    return [(name, Expr(fn), make, "pass", ("libtorch",) if name.startswith("full") else both) for name, fn, make in cases]


class OneHotRunTimeCount(torch.nn.Module):  # test_one_hot: the count from the input's values (both readers refuse)
    def forward(self, x, n):
        return torch.nn.functional.one_hot(x, n.to(torch.int32)[0])


class RoiAlign(torch.nn.Module):  # test_multi_scale_roi_align: an op of torchvision's library (libtorch does not load it)
    def forward(self, x, boxes):
        return torch.ops.torchvision.roi_align(x, boxes, 1.0, 2, 2, 0, False)


def ints(*shape, lo=1, hi=9):
    return torch.randint(lo, hi, shape, dtype=torch.int32)


CASES = [
    ("int_div", IntDiv(), lambda: (ints(2, 3, 4, lo=-9), ints(2, 3, 4)), "pass"),
    ("int_div_float64_0d", IntDivFloat0d(), lambda: (ints(2, 3), torch.tensor(2.5, dtype=torch.float64)), "pass"),
    ("index_select_0d", IndexSelect0d(), lambda: (torch.randn(3, 4),), "pass"),
    ("numpy_T_2d", NumpyT(), lambda: (torch.randn(4, 7),), "pass"),
    ("numpy_T_3d", NumpyT(), lambda: (torch.randn(2, 3, 4),), "pass"),
    ("copy_into_slice", CopyIntoSlice(), lambda: (torch.randn(3, 4), torch.randn(2, 4)), {"libtorch": "pass", "script": "refuse"}),
    ("copy_into_ellipsis", CopyIntoEllipsis(), lambda: (torch.randn(2, 3, 4), torch.randn(2, 3)), {"libtorch": "pass", "script": "refuse"}),
    ("write_at_input_index", WriteAtInputIndex(), lambda: (torch.randn(3, 4), torch.tensor(2), torch.randn(4)), "refuse"),
    ("zeros_from_values", ZerosFromValues(), lambda: (torch.tensor([1]), torch.tensor([4])), "refuse"),
    ("in_place_add", InPlaceAdd(), lambda: (torch.randn(3, 4),), "pass"),
    ("interpolate_scale", InterpolateScale(), lambda: (torch.randn(1, 2, 6),), "pass"),
    ("interpolate_to_one", InterpolateToOne(), lambda: (torch.randn(1, 2, 6),), "pass"),
    ("topk_input_k", TopkInputK(), lambda: (torch.arange(1.0, 6.0), torch.tensor(3)), {"libtorch": "refuse", "script": "pass"}),
    ("pad_from_tensors", PadFromTensors(), lambda: (torch.randn(2, 2, 4, 4), torch.tensor(2), torch.tensor(4)), "refuse"),
    ("pad_int", PadInt(), lambda: (ints(2, 3),), "pass"),
    ("norm_all", NormAll(), lambda: (torch.randn(2, 3, 4),), "pass"),
    ("return_twice", ReturnTwice(), lambda: (torch.randn(2, 3),), "pass"),
    ("fill_whole", FillWhole(False), lambda: (torch.randn(2, 3, 4),), "pass"),
    ("zero_whole_int", FillWhole(True), lambda: (ints(2, 3),), "pass"),
    # refused by both readers (`--reader auto`): the refusal's error line names the op and both reasons
    ("one_hot_run_time_count", OneHotRunTimeCount(), lambda: (torch.arange(10), 15 * torch.ones(1)), "refuse", ("auto",)),
    ("roi_align_torchvision", RoiAlign(), lambda: (torch.randn(1, 2, 8, 8), torch.tensor([[0.0, 1.0, 1.0, 6.0, 5.0]])), "refuse", ("auto",)),
] + arange_cases() + packed_rnn_cases() + view_write_cases() + batch_norm_training_cases() + instance_norm_running_cases() + op_family_cases()
CASES += refusal_families.rnn_cases() + refusal_families.fake_quant_cases() + refusal_families.type_cases()
CASES += refusal_families.quant_chain_cases()
CASES += run_time_cases.cases()


def names_op(msg):
    """A refusal names the op: in the list of ops without a rule, or on its error line (the first
    line of amanda's error: the line a user and run_suite.py read)."""
    lines = msg.splitlines()
    if any(re.match(r"^\s+\S+::\S+\s+x\d+", l) for l in lines):
        return True
    err = next((l for l in lines if l.startswith("amanda: error:")), "")
    return re.search(r"\b\w+::\w+", err) is not None


def main():
    amanda = sys.argv[1]
    torch.manual_seed(0)
    failures = []
    jobs = []
    pending = []
    with tempfile.TemporaryDirectory() as tmp:
        only = os.environ.get("AMANDA_REGRESSIONS_ONLY")  # a regex of case names (for a quick rerun)
        for name, m, make, wants, *readers in CASES:
            if only and not re.search(only, name):
                continue
            xs = make()
            pt = os.path.join(tmp, name + ".pt")
            torch.jit.save(torch.jit.trace(m, tuple(x.clone() for x in xs), check_trace=False), pt)
            # the traced inputs, then any other sets the module gives (run_time_cases: other values)
            sets = []
            for j, s in enumerate([xs] + (m.extra() if hasattr(m, "extra") else [])):
                with torch.no_grad():
                    refs = m(*[x.clone() for x in s])
                refs = [r.numpy() for r in (refs if isinstance(refs, tuple) else (refs,))]
                set_ins = []
                for k, x in enumerate(s):
                    f = os.path.join(tmp, f"{name}.s{j}.in{k}.bin")
                    x.numpy().tofile(f)
                    set_ins.append({"file": f, "shape": list(x.shape), "type": str(x.numpy().dtype)})
                sets.append((set_ins, refs))
            ins = sets[0][0]
            for reader in (readers[0] if readers else ("script", "libtorch")):
                want = wants[reader] if isinstance(wants, dict) else wants
                out = os.path.join(tmp, f"{name}.{reader}.onnx")
                cmd = [amanda, "convert", pt, "--reader", reader, "-o", out]
                for x in ins:
                    cmd += ["--input-shape", ",".join(map(str, x["shape"]))]
                for x in ins:
                    cmd += ["--input-type", x["type"]]
                r = subprocess.run(cmd, capture_output=True, text=True)
                tag = f"{name} ({reader})"
                if r.returncode != 0:
                    msg = (r.stdout + r.stderr).strip()
                    if want == "pass":
                        failures.append(f"{tag}: refused: {msg[-300:]}")
                    elif not names_op(msg):
                        failures.append(f"{tag}: refused without naming the op: {msg[-300:]}")
                    else:
                        print(f"  {tag}: refused (allowed): {msg.splitlines()[-1][:160]}")
                    continue
                try:
                    onnx.checker.check_model(onnx.load(out), full_check=True)
                except Exception as e:
                    failures.append(f"{tag}: invalid model: {str(e).splitlines()[0][:300]}")
                    continue
                g = onnx.load(out).graph
                inits = {t.name for t in g.initializer}
                names = [v.name for v in g.input if v.name not in inits]
                if len(names) != len(ins):
                    failures.append(f"{tag}: {len(names)} graph inputs for {len(ins)}")
                    continue
                for j, (set_ins, refs) in enumerate(sets):
                    jobs.append({"model": out, "inputs": dict(zip(names, set_ins)), "out": f"{out}.{j}.ort"})
                    pending.append((tag if j == 0 else f"{tag} set {j}", f"{out}.{j}.ort", refs))
        jf = os.path.join(tmp, "jobs.json")
        with open(jf, "w") as f:
            json.dump(jobs, f)
        subprocess.run(["node", os.path.join(ROOT, "tests", "js", "ort_run_typed.js"), jf], check=True)
        types = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32, "bool": np.bool_,
                 "uint8": np.uint8, "int8": np.int8, "int16": np.int16}
        for tag, base, refs in pending:
            res = json.load(open(base + ".json"))
            if "error" in res:
                failures.append(f"{tag}: onnxruntime: {res['error'][:300]}")
                continue
            outs = res["outputs"]
            if len(outs) != len(refs):
                failures.append(f"{tag}: {len(outs)} outputs, torch {len(refs)}")
                continue
            for k, (o, want) in enumerate(zip(outs, refs)):
                got = np.fromfile(f"{base}.{k}.bin", dtype=types.get(o["type"], np.float32)).reshape(o["shape"])
                if got.dtype != want.dtype or got.shape != want.shape:
                    failures.append(f"{tag}: output {k}: {got.dtype} {list(got.shape)}, torch {want.dtype} {list(want.shape)}")
                elif not np.allclose(got, want, rtol=1e-3, atol=1e-5, equal_nan=True):
                    failures.append(f"{tag}: output {k}: max abs diff {float(np.max(np.abs(got.astype(np.float64) - want))):.3g}")
                elif not np.any(want != 0):
                    failures.append(f"{tag}: output {k}: torch's output is all zero (the case checks nothing)")
            print(f"  {tag}: checked")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"peer-suite regressions: {len(CASES)} cases, both readers: no wrong number, no invalid model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
