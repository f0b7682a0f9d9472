"""A small evaluator of Caffe2 NetDefs with torch: each op computed from its documented semantics
(Caffe2 1.13's operator docs and ConvPoolOpBase's argument rules), written here, in the tests, so
that a wrong mapping table cannot hide behind the same table run backwards. It reads NetDefs
through Google's protobuf (c2common.caffe2_pb2), never through Amanda.

make_weights: when a net comes without its init net, the weights an op needs are made on the
fly, random, of the shapes the op and its inputs imply; the channel counts a predict net does not
state (a Conv's output channels live in its weight blob) are chosen small."""
import numpy as np
import torch
import torch.nn.functional as F


class Unsupported(Exception):
    pass


def args_of(op):
    out = {}
    for a in op.arg:
        if a.HasField("f"):
            out[a.name] = a.f
        elif a.HasField("i"):
            out[a.name] = a.i
        elif a.HasField("s"):
            out[a.name] = a.s.decode()
        elif len(a.floats):
            out[a.name] = list(a.floats)
        elif len(a.ints):
            out[a.name] = list(a.ints)
        elif len(a.strings):
            out[a.name] = [s.decode() for s in a.strings]
        else:
            out[a.name] = None
    return out


def conv_args(a, sp):
    """ConvPoolOpBase: kernel / kernel_h+kernel_w / kernels (and the same for stride, pad, dilation)."""
    def pick(lst, h, w, one, d):
        if lst in a:
            return list(a[lst])
        if h in a or w in a:
            return [a.get(h, d), a.get(w, d)]
        return [a.get(one, d)] * sp
    k = pick("kernels", "kernel_h", "kernel_w", "kernel", 0)
    s = pick("strides", "stride_h", "stride_w", "stride", 1)
    d = pick("dilations", "dilation_h", "dilation_w", "dilation", 1)
    if "pads" in a:
        p = list(a["pads"])
    elif any(x in a for x in ("pad_t", "pad_l", "pad_b", "pad_r")):
        p = [a.get("pad_t", 0), a.get("pad_l", 0), a.get("pad_b", 0), a.get("pad_r", 0)]
    else:
        p = [a.get("pad", 0)] * (2 * sp)
    return k, s, d, p


def pad_input(x, p, sp, value=0.0):
    """pads [b0, b1, ..., e0, e1, ...] -> F.pad's last-dimension-first pairs."""
    pairs = []
    for i in reversed(range(sp)):
        pairs += [p[i], p[sp + i]]
    return F.pad(x, pairs, value=value)


def legacy_pads(a, x, k, s, d, p, sp):
    """legacy_pad VALID (1): no padding; SAME (2): the padding that keeps ceil(in / stride), the odd
    pixel at the end (ConvPoolOpBase's ComputeSizeAndPad)."""
    lp = a.get("legacy_pad", 0)
    if lp == 1:
        return [0] * (2 * sp)
    if lp == 2:
        out = []
        for i in range(sp):
            n = x.shape[2 + i]
            o = (n + s[i] - 1) // s[i]
            total = max((o - 1) * s[i] + d[i] * (k[i] - 1) + 1 - n, 0)
            out.append((total // 2, total - total // 2))
        return [b for b, _ in out] + [e for _, e in out]
    return p


def legacy_broadcast(a, b, axis):
    """Caffe2's broadcast=1: B's dims match A's from `axis` (-1: the trailing ones)."""
    if axis == -1 or axis is None:
        axis = a.dim() - b.dim()
    shape = list(b.shape) + [1] * (a.dim() - axis - b.dim())
    return b.reshape(shape)


class Evaluator:
    def __init__(self, make_weights=False, channels=8, seed=0, last_conv_channels=None):
        self.ws = {}
        # A net that reshapes its last conv's output to [1, 1000] (SqueezeNet's classifier) needs that
        # conv's channels to be the classes.
        self.last_conv_channels = last_conv_channels
        self.last_conv = None
        self.make = make_weights
        self.channels = channels
        self.gen = torch.Generator().manual_seed(seed)
        self.made = {}  # blob -> array, the weights made

    def weight(self, name, shape):
        if name not in self.ws:
            if not self.make:
                raise KeyError(f"blob '{name}' has no value")
            t = torch.randn(shape, generator=self.gen) * 0.1
            self.ws[name] = t
            self.made[name] = t.numpy()
        return self.ws[name]

    def run(self, net, feeds):
        convs = [op for op in net.op if op.type == "Conv"]
        self.last_conv = convs[-1] if convs else None
        for k, v in feeds.items():
            self.ws[k] = torch.from_numpy(np.asarray(v))
        for op in net.op:
            outs = self.op(op)
            for name, v in zip(op.output, outs):
                if v is not None:
                    self.ws[name] = v
        return [self.ws[o].numpy() for o in net.external_output]

    def op(self, op):
        a = args_of(op)
        t = op.type
        x = self.ws.get(op.input[0]) if op.input else None
        if t in ("Conv", "ConvTranspose"):
            if a.get("order", "NCHW") != "NCHW":
                raise Unsupported("NHWC")
            sp = x.dim() - 2
            k, s, d, p = conv_args(a, sp)
            p = legacy_pads(a, x, k, s, d, p, sp)
            g = a.get("group", 1)
            if t == "Conv":
                m = self.last_conv_channels if op is self.last_conv and self.last_conv_channels else self.channels * g
                w = self.weight(op.input[1], [m, x.shape[1] // g] + k)
                b = self.weight(op.input[2], [w.shape[0]]) if len(op.input) > 2 else None
                xp = pad_input(x, p, sp)
                f = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[sp]
                return [f(xp, w, b, stride=s, dilation=d, groups=g)]
            w = self.weight(op.input[1], [x.shape[1], self.channels] + k)
            b = self.weight(op.input[2], [w.shape[1] * g]) if len(op.input) > 2 else None
            y = F.conv_transpose2d(x, w, b, stride=s, groups=g)
            return [y[:, :, p[0]:y.shape[2] - p[2], p[1]:y.shape[3] - p[3]]]
        if t in ("MaxPool", "AveragePool"):
            if a.get("order", "NCHW") != "NCHW":
                raise Unsupported("NHWC")
            sp = x.dim() - 2
            if a.get("global_pooling", 0):
                dims = list(range(2, x.dim()))
                return [x.amax(dim=dims, keepdim=True) if t == "MaxPool" else x.mean(dim=dims, keepdim=True)]
            k, s, d, p = conv_args(a, sp)
            legacy = a.get("legacy_pad", 0)
            ceil = legacy == 3
            if t == "MaxPool":
                xp = pad_input(x, p, sp, value=float("-inf"))
                f = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[sp]
                return [f(xp, k, s, dilation=d, ceil_mode=ceil)]
            # AveragePool divides by the window's pixels inside the image (count_include_pad false)
            ones = torch.ones_like(x[:, :1])
            f = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[sp]
            num = f(pad_input(x, p, sp), k, s, ceil_mode=ceil)
            den = f(pad_input(ones, p, sp), k, s, ceil_mode=ceil)
            return [num / den]
        if t == "Relu":
            return [F.relu(x)]
        if t in ("Copy", "Alias", "StopGradient"):
            return [x]
        if t == "Erf":
            return [torch.erf(x)]
        if t == "Sqrt":
            return [torch.sqrt(x)]
        if t == "Exp":
            return [torch.exp(x)]
        if t == "Negative":
            return [-x]
        if t == "Pow":
            if len(op.input) > 1:
                return [torch.pow(x, self.ws[op.input[1]])]
            return [torch.pow(x, a["exponent"])]
        if t == "ReduceMean":
            axes = a.get("axes") or list(range(x.dim()))
            return [x.mean(dim=axes, keepdim=bool(a.get("keepdims", 1)))]
        if t == "MatMul":  # 2-D after flattening at axis_a / axis_b, with transposes
            A = x.reshape(int(np.prod(x.shape[:a.get("axis_a", 1)])), -1)
            b = self.ws[op.input[1]]
            B = b.reshape(int(np.prod(b.shape[:a.get("axis_b", 1)])), -1)
            A = A.T if a.get("trans_a", 0) else A
            B = B.T if a.get("trans_b", 0) else B
            return [A @ B]
        if t == "BatchMatMul":
            A, B = x, self.ws[op.input[1]]
            if a.get("trans_a", 0):
                A = A.transpose(-1, -2)
            if a.get("trans_b", 0):
                B = B.transpose(-1, -2)
            if not a.get("broadcast", 0) and A.shape[:-2] != B.shape[:-2]:
                raise Unsupported("BatchMatMul of different batch shapes without broadcast")
            return [torch.matmul(A, B)]
        if t == "PadImage":
            if a.get("mode", "constant") != "constant":
                raise Unsupported("PadImage mode")
            _, _, _, p = conv_args(a, 2)
            return [pad_input(x, p, 2, value=a.get("value", 0.0))]
        if t == "ResizeNearest":  # source pixel floor(dst / scale)
            hs, ws = a.get("height_scale", 1.0), a.get("width_scale", 1.0)
            H, W = x.shape[2], x.shape[3]
            oh, ow = int(H * hs), int(W * ws)
            iy = torch.clamp((torch.arange(oh) / hs).floor().long(), max=H - 1)
            ix = torch.clamp((torch.arange(ow) / ws).floor().long(), max=W - 1)
            return [x[:, :, iy][:, :, :, ix]]
        if t == "ChannelShuffle":
            g = a.get("group", 1)
            n, c, h, w = x.shape
            return [x.reshape(n, g, c // g, h, w).transpose(1, 2).reshape(n, c, h, w)]
        if t == "Elu":
            return [F.elu(x, a.get("alpha", 1.0))]
        if t == "Softplus":
            return [F.softplus(x)]
        if t == "Abs":
            return [x.abs()]
        if t == "Log":
            return [torch.log(x)]
        if t == "Scale":
            return [x * a.get("scale", 1.0)]
        if t == "Swish":
            return [x * torch.sigmoid(x)]
        if t == "HardSigmoid":
            return [torch.clamp(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0, 1)]
        if t in ("Mean", "Max", "Min"):
            xs = torch.stack([self.ws[n] for n in op.input])
            return [{"Mean": xs.mean(0), "Max": xs.amax(0), "Min": xs.amin(0)}[t]]
        if t == "RoIAlign":  # torchvision's roi_align is Caffe2's (RoIs [R, 5]: batch index, x1, y1, x2, y2)
            import torchvision
            r = self.ws[op.input[1]]
            return [torchvision.ops.roi_align(x, r, (a.get("pooled_h", 1), a.get("pooled_w", 1)), a.get("spatial_scale", 1.0),
                                              a.get("sampling_ratio", -1), bool(a.get("aligned", 0)))]
        if t == "Slice":  # a start and an end per dimension; a negative one counts from dim + 1
            st = a["starts"] if "starts" in a else self.ws[op.input[1]].tolist()
            en = a["ends"] if "ends" in a else self.ws[op.input[2]].tolist()
            idx = []
            for d, (b, e) in enumerate(zip(st, en)):
                n = x.shape[d]
                b = n + 1 + b if b < 0 else b
                e = n + 1 + e if e < 0 else e
                idx.append(slice(b, e))
            return [x[tuple(idx)]]
        if t == "Gather":  # gather_op.cc: DATA's dims before axis, INDICES' dims, DATA's dims after
            if a.get("match_outer", 0):
                raise Unsupported("Gather with match_outer")
            ax = a.get("axis", 0) % x.dim()
            i = self.ws[op.input[1]].long()
            if (i < 0).any() or (i >= x.shape[ax]).any():
                raise ValueError("Gather: index out of range (Caffe2 does not wrap negative indices)")
            out = torch.index_select(x, ax, i.reshape(-1))
            return [out.reshape(list(x.shape[:ax]) + list(i.shape) + list(x.shape[ax + 1:]))]
        if t == "Floor":
            return [torch.floor(x)]
        if t == "Ceil":
            return [torch.ceil(x)]
        if t == "Reciprocal":
            return [1.0 / x]
        if t == "Sqr":
            return [x * x]
        if t == "PRelu":  # a slope per channel (or one)
            sl = self.ws[op.input[1]]
            sl = sl.reshape([1, -1] + [1] * (x.dim() - 2)) if sl.numel() > 1 else sl
            return [torch.where(x >= 0, x, x * sl)]
        if t == "Cast":  # TensorProto.DataType numbers
            dt = {1: torch.float32, 2: torch.int32, 10: torch.int64, 13: torch.float64, 5: torch.bool}[a["to"]]
            return [x.to(dt)]
        if t == "FlattenToVec":
            return [x.reshape(-1)]
        if t == "Sigmoid":
            return [torch.sigmoid(x)]
        if t == "Tanh":
            return [torch.tanh(x)]
        if t == "LeakyRelu":
            return [F.leaky_relu(x, a.get("alpha", 0.01))]
        if t == "Clip":
            return [x.clamp(a.get("min", -3.4028234663852886e38), a.get("max", 3.4028234663852886e38))]
        if t == "LRN":
            # b_c = a_c (bias + alpha/size * sum_{window} a^2)^-beta
            return [F.local_response_norm(x, a["size"], a.get("alpha", 0), a.get("beta", 0), a.get("bias", 1.0)), None]
        if t == "Dropout":
            if not a.get("is_test", 0):
                raise Unsupported("training dropout")
            return [x, None]
        if t == "SpatialBN":
            if not a.get("is_test", 0):
                raise Unsupported("training SpatialBN")
            c = x.shape[1]
            sc, b, m, v = (self.weight(n, [c]) for n in op.input[1:5])
            if self.make and op.input[4] in self.made:  # a variance must be positive
                v = self.ws[op.input[4]] = v.abs() + 0.5
                self.made[op.input[4]] = v.numpy()
            shape = [1, c] + [1] * (x.dim() - 2)
            y = (x - m.reshape(shape)) / torch.sqrt(v.reshape(shape) + a.get("epsilon", 1e-5)) * sc.reshape(shape) + b.reshape(shape)
            return [y]
        if t in ("Add", "Sub", "Mul", "Div"):
            y = self.ws.get(op.input[1])
            if y is None:  # a weight: per-channel with the legacy broadcast, else the shape of A
                y = self.weight(op.input[1], [x.shape[a.get("axis", 1)]] if a.get("broadcast", 0) else list(x.shape))
            if a.get("broadcast", 0):
                y = legacy_broadcast(x, y, a.get("axis", -1))
            return [{"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div}[t](x, y)]
        if t == "Sum":
            r = x
            for n in op.input[1:]:
                r = r + self.ws[n]
            return [r]
        if t == "FCTransposed":  # W is [K, N]
            axis = a.get("axis", 1)
            x2 = x.reshape(int(np.prod(x.shape[:axis])), -1)
            w = self.ws[op.input[1]]
            w2 = w.reshape(x2.shape[1], -1)
            return [(x2 @ w2 + self.ws[op.input[2]]).reshape(list(x.shape[:axis]) + [w2.shape[1]])]
        if t == "FC":
            axis, axis_w = a.get("axis", 1), a.get("axis_w", 1)
            x2 = x.reshape(int(np.prod(x.shape[:axis])), -1)
            # W flattens at axis_w: [1, ..., 1, N, K] (old Caffe's 4-D [1, 1, N, K] has axis_w 3)
            w = self.weight(op.input[1], [1] * (axis_w - 1) + [2 * self.channels, x2.shape[1]])
            w2 = w.reshape(int(np.prod(w.shape[:axis_w])), -1)
            b = self.weight(op.input[2], [w2.shape[0]])
            return [(x2 @ w2.T + b).reshape(list(x.shape[:axis]) + [w2.shape[0]])]
        if t == "Softmax":
            axis = a.get("axis", 1)
            x2 = x.reshape(int(np.prod(x.shape[:axis])), -1)
            return [torch.softmax(x2, dim=1).reshape(x.shape)]
        if t == "Concat":
            axis = a.get("axis", 3 if a.get("order", "NCHW") == "NHWC" else 1)
            xs = [self.ws[n] for n in op.input]
            return [torch.cat(xs, dim=axis), torch.tensor([v.shape[axis] for v in xs], dtype=torch.int32)]
        if t == "Reshape":
            shape = list(a["shape"]) if "shape" in a else self.ws[op.input[1]].tolist()
            out = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
            return [x.reshape(out), torch.tensor(list(x.shape), dtype=torch.int64)]
        if t == "Flatten":
            axis = a.get("axis", 1)
            return [x.reshape(int(np.prod(x.shape[:axis])), -1)]
        if t == "Transpose":
            axes = a.get("axes") or list(reversed(range(x.dim())))
            return [x.permute(*axes)]
        if t == "Squeeze":
            for d in sorted(a["dims"], reverse=True):
                x = x.squeeze(d)
            return [x]
        if t == "ExpandDims":
            for d in sorted(a["dims"]):
                x = x.unsqueeze(d)
            return [x]
        if t in ("GivenTensorFill", "GivenTensorIntFill", "GivenTensorInt64Fill"):
            dt = {"GivenTensorFill": np.float32, "GivenTensorIntFill": np.int32, "GivenTensorInt64Fill": np.int64}[t]
            return [torch.from_numpy(np.array(a.get("values") or [], dtype=dt).reshape(a["shape"]))]
        raise Unsupported(f"op {t}")
