"""Per-op cases for the rules of tables/tensorflow/tf_2.2_onnx_13_more.yaml and the IdentityN /
ShapeN rules (issue 28's last TF.js vocabulary ops), made by tf2onnx_ops.py's `Case` builder and
compared against TF.js by its harness: several shapes and attribute values per op."""

F = "DT_FLOAT"
I = "DT_INT32"


def more_cases(case):
    # ---- Conv3D (NDHWC), SAME/VALID, strides, dilations (VALID; SAME with stride 1)
    for pad, st, dl, xs, ws in (("SAME", 1, 1, [1, 5, 6, 4, 2], [3, 3, 2, 2, 3]), ("VALID", 1, 1, [2, 5, 5, 5, 3], [2, 3, 3, 3, 2]),
                                ("SAME", 2, 1, [1, 7, 6, 5, 2], [3, 3, 3, 2, 4]), ("VALID", 2, 1, [1, 8, 7, 6, 1], [3, 2, 3, 1, 2]),
                                ("VALID", 1, 2, [1, 7, 7, 6, 2], [2, 3, 2, 2, 2]), ("SAME", 1, 2, [1, 6, 7, 5, 2], [3, 2, 3, 2, 3])):
        c = case(f"Conv3D_{pad}_s{st}_d{dl}_{'x'.join(map(str, xs))}")
        c.op("y", "Conv3D", [c.placeholder("x", xs), c.weights("w", ws)], T=F, padding=pad, strides=[1, st, st, st, 1],
             dilations=[1, dl, dl, dl, 1], data_format="NDHWC")
    c = case("Conv3D_NCDHW", refuse="Conv3D")
    c.op("y", "Conv3D", [c.placeholder("x", [1, 2, 4, 4, 4]), c.weights("w", [2, 2, 2, 2, 2])], T=F, padding="VALID",
         strides=[1, 1, 1, 1, 1], dilations=[1, 1, 1, 1, 1], data_format="NCDHW")
    # ---- 3-D pools: kernels, strides, SAME (the average leaves the padding out) and VALID
    for op in ("MaxPool3D", "AvgPool3D"):
        for pad, k, st, xs in (("SAME", 2, 2, [1, 5, 6, 7, 2]), ("VALID", 3, 1, [2, 5, 5, 6, 3]), ("SAME", 3, 2, [1, 6, 5, 4, 1]),
                               ("VALID", 2, 2, [1, 6, 6, 6, 2])):
            c = case(f"{op}_{pad}_k{k}_s{st}")
            c.op("y", op, [c.placeholder("x", xs)], T=F, ksize=[1, k, k, k, 1], strides=[1, st, st, st, 1], padding=pad,
                 data_format="NDHWC")
    # ---- MaxPoolWithArgmax: both outputs, with and without the batch in the index
    for pad, k, st, ib, xs in (("VALID", 2, 2, False, [1, 6, 6, 3]), ("SAME", 3, 2, True, [2, 7, 5, 2]),
                               ("SAME", 2, 1, False, [2, 4, 5, 3]), ("VALID", 3, 2, True, [3, 7, 7, 1])):
        c = case(f"MaxPoolWithArgmax_{pad}_k{k}_s{st}_b{int(ib)}")
        c.op("p", "MaxPoolWithArgmax", [c.placeholder("x", xs)], T=F, ksize=[1, k, k, 1], strides=[1, st, st, 1], padding=pad,
             include_batch_in_index=ib, Targmax="DT_INT64")
        c.op("y", "Identity", ["p"], T=F)
        c.op("i", "Cast", ["p:1"], SrcT="DT_INT64", DstT=I)
    # ---- SpaceToBatchND / BatchToSpaceND: square and oblong blocks, paddings and crops
    for b, p, xs in (([2, 2], [0, 0, 0, 0], [1, 4, 4, 3]), ([2, 3], [1, 1, 0, 2], [2, 4, 4, 2]), ([3, 2], [1, 1, 1, 1], [1, 7, 6, 1]),
                     ([1, 2], [0, 0, 1, 1], [3, 3, 4, 2])):
        tag = "_".join(map(str, b + p))
        c = case(f"SpaceToBatchND_{tag}")
        c.op("y", "SpaceToBatchND", [c.placeholder("x", xs), c.const("b", b, [2], "int32"), c.const("p", p, [2, 2], "int32")], T=F,
             Tblock_shape=I, Tpaddings=I)
        c = case(f"BatchToSpaceND_{tag}")
        n = xs[0] * b[0] * b[1]
        c.op("y", "BatchToSpaceND", [c.placeholder("x", [n, xs[1], xs[2], xs[3]]), c.const("b", b, [2], "int32"),
                                     c.const("c", p, [2, 2], "int32")], T=F, Tblock_shape=I, Tcrops=I)
    # rank 3 (no channel axis) and rank 5 (two trailing axes merged and split back)
    for xs in ([2, 4, 6], [1, 4, 2, 3, 2]):
        c = case(f"SpaceToBatchND_rank{len(xs)}")
        c.op("y", "SpaceToBatchND", [c.placeholder("x", xs), c.const("b", [2, 2], [2], "int32"), c.const("p", [0, 2, 1, 1], [2, 2], "int32")],
             T=F, Tblock_shape=I, Tpaddings=I)
        c = case(f"BatchToSpaceND_rank{len(xs)}")
        c.op("y", "BatchToSpaceND", [c.placeholder("x", [xs[0] * 4] + xs[1:]), c.const("b", [2, 2], [2], "int32"),
                                     c.const("c", [0, 1, 1, 0], [2, 2], "int32")], T=F, Tblock_shape=I, Tcrops=I)
    # space -> batch -> a convolution -> batch -> space (TF's dilated convolution as it writes it)
    # (onnx 1.12's inference gives no rank to a Reshape to a shape computed at run time, and the
    # TF graph says no shape between the ops: the output has none, so onnx.checker is skipped;
    # onnxruntime runs it)
    c = case("SpaceToBatchND_conv_BatchToSpaceND")
    c.checker = False
    s = c.op("s", "SpaceToBatchND", [c.placeholder("z", [1, 8, 8, 2]), c.const("b", [2, 2], [2], "int32"),
                                     c.const("p", [2, 2, 2, 2], [2, 2], "int32")], T=F, Tblock_shape=I, Tpaddings=I)
    v = c.op("v", "Conv2D", [s, c.weights("w", [3, 3, 2, 3])], T=F, padding="VALID", strides=[1, 1, 1, 1], dilations=[1, 1, 1, 1],
             data_format="NHWC")
    c.op("y", "BatchToSpaceND", [v, c.const("b2", [2, 2], [2], "int32"), c.const("c", [0, 0, 0, 0], [2, 2], "int32")], T=F,
         Tblock_shape=I, Tcrops=I)
    # ---- Bincount: counts (empty weights) and weights, values outside [0, size) left out
    for name, wshape, size in (("counts", [0], 5), ("weights", [3, 4], 6), ("counts_small", [0], 3)):
        c = case(f"Bincount_{name}")
        x = c.placeholder("x", [3, 4], "int32", low=0, rng=8)
        w = c.const("w", [], [0]) if wshape == [0] else c.placeholder("w", wshape)
        c.op("y", "Bincount", [x, c.const("n", [size], [], "int32"), w], T=F)
    # DenseBincount (TF.js's op list): 1-D and 2-D, counts, weights, binary output (2-D only: TF.js
    # 4.22's CPU kernel ignores binary_output for a 1-D input and counts, TensorFlow's gives 0/1)
    for name, xs, wts, bo in (("1d_counts", [7], False, False), ("2d_weights", [3, 5], True, False), ("2d_binary", [3, 6], False, True),
                              ("1d_weights", [8], True, False), ("2d_binary_weights", [2, 8], True, True)):
        c = case(f"tfjs_DenseBincount_{name}")
        x = c.placeholder("x", xs, "int32", low=0, rng=5)
        w = c.placeholder("w", xs) if wts else c.const("w", [], [0])
        c.op("y", "DenseBincount", [x, c.const("n", [5], [], "int32"), w], T=F, Tidx=I, binary_output=bo)
    # ---- SparseToDense: 2-D indices, 1-D indices of a 1-D output, a scalar index; scalar and vector values
    c = case("SparseToDense_2d")
    c.op("y", "SparseToDense", [c.const("i", [0, 1, 2, 3, 1, 0], [3, 2], "int32"), c.const("s", [3, 4], [2], "int32"),
                                c.placeholder("v", [3]), c.placeholder("d", [])], T=F, Tindices=I, validate_indices=True)
    c = case("SparseToDense_1d_scalar_value")
    c.op("y", "SparseToDense", [c.const("i", [4, 0, 2], [3], "int32"), c.const("s", [6], [1], "int32"),
                                c.placeholder("v", []), c.placeholder("d", [])], T=F, Tindices=I, validate_indices=True)
    c = case("SparseToDense_scalar_index")
    c.op("y", "SparseToDense", [c.const("i", [3], [], "int32"), c.const("s", [5], [1], "int32"),
                                c.placeholder("v", []), c.const("d", [-1.0], [])], T=F, Tindices=I, validate_indices=True)
    c = case("SparseToDense_3d_int")
    c.op("y", "SparseToDense", [c.const("i", [0, 1, 1, 1, 0, 2], [2, 3], "int32"), c.const("s", [2, 2, 3], [3], "int32"),
                                c.placeholder("v", [2], "int32", low=-5, rng=10), c.const("d", [7], [], "int32")], T=I, Tindices=I,
         validate_indices=True)
    # ---- FakeQuantWithMinMaxVars: TF.js's executor returns the input unchanged, so the cases feed
    # values already on the nudged grid inside the range, where TensorFlow's op is the identity too
    # (the rounding and clamping off the grid have no TF.js reference)
    for lo, hi, nb, nr in ((-1.0, 1.0, 8, False), (0.0, 6.0, 8, True), (-3.0, 2.0, 4, False)):
        c = case(f"FakeQuantWithMinMaxVars_{nb}_{int(nr)}_{lo}_{hi}".replace("-", "m").replace(".", "p"))
        qmin, qmax = (1 if nr else 0), 2 ** nb - 1
        import numpy as np
        scale = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(qmax - qmin))
        zp = min(max(qmin - np.float32(lo) / scale, qmin), qmax)
        zp = np.floor(zp + 0.5)
        nmin = np.float32((qmin - zp) * scale)
        k = c.op("k", "Round", [c.placeholder("x", [3, 5], low=0.0, rng=float(qmax - qmin))], T=F)
        g = c.op("g", "AddV2", [c.op("m", "Mul", [k, c.const("sc", [float(scale)], [])], T=F), c.const("nm", [float(nmin)], [])], T=F)
        c.op("y", "FakeQuantWithMinMaxVars", [g, c.const("lo", [lo], []), c.const("hi", [hi], [])], num_bits=nb, narrow_range=nr)
    # ---- Reverse (v1): bools per axis
    for dims in ([True, False, True], [False, True, False], [False, False, False], [True, True, True]):
        c = case("Reverse_" + "".join(str(int(d)) for d in dims))
        c.op("y", "Reverse", [c.placeholder("x", [2, 3, 4]), c.const("d", dims, [3], "bool")], T=F)
    # ---- Print passes its input through
    c = case("Print")
    x = c.placeholder("x", [2, 3])
    c.op("a", "Abs", [x], T=F)
    c.nodes.append('node { name: "y" op: "Print" input: "a" input: "x" attr { key: "T" value { type: DT_FLOAT } } '
                   'attr { key: "U" value { list { type: DT_FLOAT } } } attr { key: "message" value { s: "m" } } '
                   'attr { key: "first_n" value { i: -1 } } attr { key: "summarize" value { i: 3 } } }')
    # ---- IdentityN, ShapeN
    c = case("IdentityN")
    c.nodes.append('node { name: "n" op: "IdentityN" input: "a" input: "b" attr { key: "T" value { list { type: DT_FLOAT type: DT_INT32 } } } }')
    c.placeholder("a", [2, 3])
    c.placeholder("b", [4], "int32", low=-3, rng=9)
    c.op("y", "Mul", ["n", c.const("k", [2.0], [])], T=F)
    c.op("z", "Identity", ["n:1"], T=I)
    for ot in ("DT_INT32", "DT_INT64"):
        c = case(f"ShapeN_{ot[3:].lower()}")
        c.op("s", "ShapeN", [c.placeholder("a", [2, 3, 4]), c.placeholder("b", [5])], T=F, N=2, out_type=ot)
        c.op("y", "Cast", ["s"], SrcT=ot, DstT=F)
        c.op("z", "Cast", ["s:1"], SrcT=ot, DstT=F)
    tensor_list_cases(case)
    sampler_cases(case)
    tensor_array_cases(case)
    tensor_list_resize_cases(case)


def tensor_list_cases(case):
    """TensorLists outside loops (ONNX sequences): push/pop/length, from a tensor read and written,
    gathered, split and concatenated, scattered at 0..n-1; each ends in a tensor TF.js returns.
    (TF.js takes no int64 Const: lengths and leading_dims are int32 here, as its converter writes them.)"""
    V = "DT_VARIANT"
    # (onnx 1.12's inference gives no shape to what comes out of a sequence: onnx.checker skipped)
    for pop in (False, True):
        c = case("TensorList_push_length_stack" + ("_pop" if pop else ""))
        c.checker = False
        es = c.const("es", [2, 3], [2], "int32")
        c.op("l0", "EmptyTensorList", [es, c.const("mx", [-1], [], "int32")], element_dtype=F, shape_type=I)
        c.op("l1", "TensorListPushBack", ["l0", c.placeholder("p", [2, 3])], element_dtype=F)
        c.op("l2", "TensorListPushBack", ["l1", c.placeholder("q", [2, 3])], element_dtype=F)
        c.op("l3", "TensorListPushBack", ["l2", c.op("pq", "Mul", ["p", "q"], T=F)], element_dtype=F)
        c.op("n", "TensorListLength", ["l3"])
        if not pop:
            c.op("y", "TensorListStack", ["l3", es], element_dtype=F, num_elements=-1)
            continue
        # TF.js numbers PopBack's outputs otherwise (the tensor first, TF's output 1; no handle) and
        # pops in place: no TF.js reference for TF's graph, converted and run by onnxruntime only
        c.tfjs = False
        c.op("pp", "TensorListPopBack", ["l3", es], element_dtype=F)
        c.op("y", "TensorListStack", ["pp", es], element_dtype=F, num_elements=-1)
        c.op("z", "Identity", ["pp:1"], T=F)
    c = case("TensorList_from_tensor_get_set")
    es = c.const("es", [3], [1], "int32")
    c.op("l", "TensorListFromTensor", [c.placeholder("x", [4, 3]), es], element_dtype=F, shape_type=I)
    c.op("s", "TensorListSetItem", ["l", c.const("i", [2], [], "int32"), c.placeholder("v", [3])], element_dtype=F)
    c.op("y", "TensorListStack", ["s", es], element_dtype=F, num_elements=-1)
    c.op("g", "TensorListGetItem", ["l", c.const("j", [1], [], "int32"), es], element_dtype=F)
    for name, idx in (("perm", [3, 0, 4]), ("repeat", [1, 1, 2, 0])):
        c = case(f"TensorListGather_{name}")
        es = c.const("es", [2], [1], "int32")
        c.op("l", "TensorListFromTensor", [c.placeholder("x", [5, 2]), es], element_dtype=F, shape_type=I)
        c.op("y", "TensorListGather", ["l", c.const("i", idx, [len(idx)], "int32"), es], element_dtype=F)
    for op in ("TensorListConcatV2", "TensorListConcat"):
        c = case(f"TensorListSplit_{op}")
        # TF.js 4.22's TensorListSplit reshapes each piece to the rows' shape (it fails for a length
        # above 1, and gives [2] where TensorFlow's element is [1, 2]): no TF.js reference
        c.tfjs = False
        c.checker = False
        es = c.const("es", [-1], [], "int32")  # unknown rank (TF.js merges it with the rows' shape)
        c.op("l", "TensorListSplit", [c.placeholder("t", [6, 2]), es, c.const("n", [1, 3, 2], [3], "int32")], element_dtype=F,
             shape_type=I)
        c.op("m", "TensorListPushBack", ["l", c.placeholder("w", [2, 2])], element_dtype=F)
        if op == "TensorListConcatV2":
            c.op("cc", op, ["m", es, c.const("ld", [], [0], "int32")], element_dtype=F, shape_type=I)
        else:
            c.op("cc", op, ["m"], element_dtype=F)
        c.op("y", "Identity", ["cc"], T=F)
    for op in ("TensorListScatterV2", "TensorListScatter"):
        c = case(op)
        es = c.const("es", [3], [1], "int32")
        ins = [c.placeholder("x", [4, 3]), c.const("i", [0, 1, 2, 3], [4], "int32"), es]
        if op == "TensorListScatterV2":
            ins.append(c.const("ne", [4], [], "int32"))
        c.op("l", op, ins, element_dtype=F, shape_type=I)
        c.op("y", "TensorListStack", ["l", es], element_dtype=F, num_elements=-1)
    c = case("TensorListScatter_holes", refuse="TensorListScatter")
    es = c.const("es", [3], [1], "int32")
    c.op("l", "TensorListScatter", [c.placeholder("x", [2, 3]), c.const("i", [2, 0], [2], "int32"), es], element_dtype=F, shape_type=I)
    c.op("y", "TensorListGetItem", ["l", c.const("j", [0], [], "int32"), es], element_dtype=F)


def sampler_cases(case):
    """Random ops: compared with TF.js as distributions (Case.samples; tf2onnx_compare.js), many
    draws per case, added to a placeholder so the graph has an input."""
    for op, shape in (("RandomUniform", [200, 100]), ("RandomStandardNormal", [100, 200]), ("RandomUniform", [5000])):
        c = case(f"{op}_{'x'.join(map(str, shape))}")
        c.samples = True
        c.op("r", op, [c.const("s", shape, [len(shape)], "int32")], dtype=F, T=I, seed=0, seed2=0)
        c.op("y", "AddV2", ["r", c.op("z", "Mul", [c.placeholder("x", [1]), c.const("k", [0.0], [])], T=F)], T=F)
    # (non-negative bounds: TF.js 4.22 draws a float and truncates it toward zero, so below 0 its
    # integers are not uniform; TensorFlow's, and the converted Floor, are)
    for lo, hi in ((0, 10), (2, 9)):
        c = case(f"RandomUniformInt_{lo}_{hi}".replace("-", "m"))
        c.samples = True
        c.op("r", "RandomUniformInt", [c.const("s", [100, 100], [2], "int32"), c.const("lo", [lo], [], "int32"),
                                       c.const("hi", [hi], [], "int32")], Tout=I, T=I, seed=0, seed2=0,
             minval=lo, maxval=hi)  # (TF.js 4.22's op list reads minval/maxval as attributes, TF's as inputs: both given)
        c.op("y", "AddV2", ["r", c.op("z", "Mul", [c.placeholder("x", [1], "int32", low=0, rng=1), c.const("k", [0], [], "int32")], T=I)], T=I)
    c = case("Multinomial")
    c.samples = True
    c.op("y", "Multinomial", [c.placeholder("x", [2, 4], low=-1.0, rng=3.0), c.const("n", [20000], [], "int32")], T=F, output_dtype=I,
         seed=0, seed2=0)


def tensor_array_cases(case):
    """TF1 TensorArrays outside loops: split then concat (with a read, a gather and the size),
    scattered at 0..n-1 then gathered; a write outside a loop is refused by name."""
    R = "DT_RESOURCE"
    for lens in ([2, 1, 3], [1, 1, 1, 1, 1, 1]):
        c = case("TensorArraySplitV3_" + "_".join(map(str, lens)))
        c.op("ta", "TensorArrayV3", [c.const("n", [len(lens)], [], "int32")], dtype=F, dynamic_size=False, clear_after_read=False,
             identical_element_shapes=False, tensor_array_name="ta")
        # (TF.js reshapes each piece to element_shape: [-1, 2])
        c.nodes[-1] = c.nodes[-1][:-2] + ' attr { key: "element_shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }'
        c.op("sp", "TensorArraySplitV3", ["ta", c.placeholder("x", [6, 2]), c.const("l", lens, [len(lens)], "int32"), "ta:1"], T=F)
        c.op("cc", "TensorArrayConcatV3", ["ta", "sp"], dtype=F)
        c.op("y", "Identity", ["cc"], T=F)
        c.op("r", "TensorArrayReadV3", ["ta", c.const("i", [1], [], "int32"), "sp"], dtype=F)
        c.op("sz", "TensorArraySizeV3", ["ta", "sp"])
        c.op("cl", "TensorArrayCloseV3", ["ta"])
    c = case("TensorArrayScatterV3_gather")
    c.op("ta", "TensorArrayV3", [c.const("n", [4], [], "int32")], dtype=F, dynamic_size=False, clear_after_read=False,
         identical_element_shapes=True, tensor_array_name="ta")
    c.op("sc", "TensorArrayScatterV3", ["ta", c.const("ix", [0, 1, 2, 3], [4], "int32"), c.placeholder("x", [4, 3]), "ta:1"], T=F)
    c.op("y", "TensorArrayGatherV3", ["ta", c.const("g", [3, 1, 1], [3], "int32"), "sc"], dtype=F)
    c = case("TensorArrayWriteV3_outside_loop", refuse="TensorArrayWriteV3")
    c.op("ta", "TensorArrayV3", [c.const("n", [2], [], "int32")], dtype=F, dynamic_size=False, clear_after_read=False,
         identical_element_shapes=True, tensor_array_name="ta")
    c.op("w", "TensorArrayWriteV3", ["ta", c.const("i", [0], [], "int32"), c.placeholder("x", [3]), "ta:1"], T=F)
    c.op("y", "TensorArrayReadV3", ["ta", c.const("j", [0], [], "int32"), "w"], dtype=F)


def tensor_list_resize_cases(case):
    """TensorListResize: shrinking compared with TF.js; growing (new elements read as zeros in
    TensorFlow) has no TF.js reference (TF.js's grown list holds undefined elements its Stack
    cannot reshape): converted and run in onnxruntime only."""
    for n in (2, 4, 6):
        c = case(f"TensorListResize_{n}")
        c.checker = False  # (onnx 1.12's inference gives no shape to what comes out of a sequence)
        es = c.const("es", [3], [1], "int32")
        c.op("l", "TensorListFromTensor", [c.placeholder("t", [4, 3]), es], element_dtype=F, shape_type=I)
        c.op("r", "TensorListResize", ["l", c.const("n", [n], [], "int32")])
        c.op("y", "TensorListStack", ["r", es], element_dtype=F, num_elements=-1)
        c.tfjs = n <= 4
