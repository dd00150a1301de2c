"""Case generators for tensor ops (types, shapes, boxes, reductions, arithmetic, math)."""
from __future__ import annotations

from .draw import TYPES, batch_size, images, maybe, per_sample, rf, t, tensors

ALL_DTYPES = ("uint8", "int8", "uint16", "int16", "int32", "int64", "float32", "float64", "bool")
NUM_DTYPES = ("uint8", "int16", "int32", "int64", "float32", "float64")


def _any_tensor(r, dtypes=NUM_DTYPES):
    if maybe(r, 0.4):
        return images(r, dtypes=dtypes)
    dtype = r.choice(dtypes)
    value = r.choice(("wide", "signed", "unit", "special")) if "float" in dtype else None
    return tensors(r, r.randint(0, 4), dtype, value=value)


def cast(r):
    x = _any_tensor(r, ALL_DTYPES)
    return {"inputs": [x], "args": {"dtype": t(r.choice([TYPES[d] for d in ALL_DTYPES] + ["FLOAT16"]))}}


def transpose(r):
    x = _any_tensor(r)
    perm = list(range(len(x["shapes"][0])))
    r.shuffle(perm)
    args = {"perm": perm}
    if x["layout"] and maybe(r, 0.3):
        args["transpose_layout"] = False
    elif maybe(r, 0.2):
        args["output_layout"] = "".join("ABCDEFG"[i] for i in range(len(perm)))
    return {"inputs": [x], "args": args}


def reshape(r):
    x = tensors(r, 2, r.choice(NUM_DTYPES), fixed={0: 4, 1: 6}, layout=r.choice(("", "HW")))
    shape = r.choice(([24], [6, 4], [2, 3, 4], [-1, 2], [3, -1], [1, 24, 1], [2, 2, 6]))
    args = {"rel_shape": r.choice(([1.0, 1.0], [2.0, 0.5], [0.5, 2.0], [4.0, 0.25]))} if maybe(r, 0.3) else {"shape": shape}
    if maybe(r, 0.4):
        args["layout"] = "ABCD"[:len(args.get("shape") or args["rel_shape"])]
    return {"inputs": [x], "args": args}


def normalize(r):
    x = _any_tensor(r, ("uint8", "int16", "float32"))
    nd = len(x["shapes"][0])
    args = {}
    if nd and maybe(r, 0.5):
        args["axes"] = sorted(r.sample(range(nd), r.randint(1, nd)))
    if maybe(r, 0.3):
        args["batch"] = True
    if maybe(r, 0.3):
        args["mean"] = rf(r, -5, 100)
    if maybe(r, 0.3):
        args["stddev"] = rf(r, 0.5, 50)
    if maybe(r, 0.3):
        args["scale"], args["shift"] = rf(r, 0.1, 64), rf(r, -5, 128)
    if maybe(r, 0.2):
        args["epsilon"] = rf(r, 0, 1)
    if maybe(r, 0.2) and "stddev" not in args:
        args["ddof"] = r.randint(0, 1)
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "INT16", "INT32")))
    return {"inputs": [x], "args": args}


def pad(r):
    x = _any_tensor(r, ("uint8", "int16", "float32", "int32"))
    nd = len(x["shapes"][0])
    args = {}
    if maybe(r):
        args["fill_value"] = rf(r, -5, 300)
    if nd and maybe(r, 0.6):
        axes = sorted(r.sample(range(nd), r.randint(1, nd)))
        args["axes"] = [a - nd if maybe(r, 0.2) else a for a in axes]
        if maybe(r, 0.6):
            args["shape"] = [r.choice((-1, r.randint(0, 14))) for _ in axes]
        if maybe(r, 0.4):
            args["align"] = [r.randint(1, 5) for _ in axes] if maybe(r) else [r.randint(1, 5)]
    elif nd and maybe(r, 0.5):
        args["align"] = [r.randint(1, 5)]
    return {"inputs": [x], "args": args}


def coord_transform(r):
    d_in, d_out = r.choice((2, 3)), r.choice((2, 3))
    x = tensors(r, 2, r.choice(("float32", "float32", "int16", "uint8")), fixed={1: d_in}, value="signed")
    args = {}
    if maybe(r, 0.7):
        args["M"] = r.choice(([rf(r, -2, 2) for _ in range(d_in * d_out)], [rf(r, -2, 2)]))
    if maybe(r):
        args["T"] = [rf(r, -10, 10) for _ in range(d_out if "M" in args and len(args["M"]) > 1 else d_in)]
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "INT16", "INT32")))
    return {"inputs": [x], "args": args}


def coord_flip(r):
    d = r.choice((2, 3))
    x = tensors(r, 2, "float32", fixed={1: d})
    args = {"layout": r.choice(("xy", "yx"))} if d == 2 else {"layout": r.choice(("xyz", "zyx", "yzx"))}
    for name in ("flip_x", "flip_y", "flip_z")[:d]:
        if maybe(r):
            args[name] = r.randint(0, 1)
    for name in ("center_x", "center_y", "center_z")[:d]:
        if maybe(r, 0.3):
            args[name] = rf(r, -1, 2)
    return {"inputs": [x], "args": args}


def bb_flip(r):
    x = tensors(r, 2, "float32", fixed={1: 4})
    args, targs = {}, {}
    if maybe(r, 0.4):
        args["ltrb"] = True
    for name in ("horizontal", "vertical"):
        if maybe(r, 0.3):
            targs[name] = per_sample(r, len(x["shapes"]), lambda: r.randint(0, 1), "int32")
        elif maybe(r):
            args[name] = r.randint(0, 1)
    return {"inputs": [x], "args": args, "targs": targs}


def one_hot(r):
    x = tensors(r, r.randint(0, 2), r.choice(("int32", "int64", "uint8", "float32")), value="small")
    args = {"num_classes": r.randint(1, 8)}
    if maybe(r, 0.4):
        args["axis"] = r.randint(-1, len(x["shapes"][0]))
    if maybe(r):
        args["on_value"], args["off_value"] = rf(r, -2, 5), rf(r, -2, 2)
    if maybe(r, 0.4):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "INT32", "INT64", "FLOAT64")))
    return {"inputs": [x], "args": args}


def lookup_table(r):
    x = tensors(r, r.randint(0, 3), r.choice(("uint8", "int16", "int32", "int64", "uint16")), value="small")
    keys = sorted(r.sample(range(0, 10), r.randint(1, 6)))
    args = {"keys": keys, "values": [rf(r, -100, 300) for _ in keys]}
    if maybe(r):
        args["default_value"] = rf(r, -50, 50)
    if maybe(r, 0.6):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "INT16", "INT32", "FLOAT64", "INT64")))
    return {"inputs": [x], "args": args}


def expand_dims(r):
    x = _any_tensor(r)
    nd = len(x["shapes"][0])
    k = r.randint(1, 2)
    axes = sorted(r.sample(range(nd + k), k))
    args = {"axes": axes}
    if maybe(r, 0.4):
        args["new_axis_names"] = "XY"[:k]
    return {"inputs": [x], "args": args}


def squeeze(r):
    x = tensors(r, r.randint(1, 4), r.choice(NUM_DTYPES), hi=3)
    nd = len(x["shapes"][0])
    ones = [d for d in range(nd) if maybe(r, 0.5)]
    for s in x["shapes"]:
        for d in ones:
            s[d] = 1
    if maybe(r, 0.5):
        x["layout"] = "ABCD"[:nd]
    return {"inputs": [x], "args": {"axes": ones} if ones else {"axes": [r.randrange(nd)]}}


def _joined(stack):
    def gen(r):
        n, nd, dtype = batch_size(r), r.randint(1, 3), r.choice(NUM_DTYPES)
        base = tensors(r, nd, dtype, bs=n)
        axis = r.randrange(nd + (1 if stack else 0))
        xs = []
        for _ in range(r.randint(1, 3)):
            x = {**base, "shapes": [list(s) for s in base["shapes"]]}
            if not stack and axis < nd:
                for s in x["shapes"]:
                    s[axis] = r.randint(0, 4)
            xs.append(x)
        args = {"axis": axis - (nd + stack) if maybe(r, 0.2) else axis}
        return {"inputs": xs, "args": args}
    return gen


cat, stack = _joined(False), _joined(True)


def _reduction(name):
    def gen(r):
        x = _any_tensor(r, ("uint8", "int16", "int32", "float32", "int64"))
        nd = len(x["shapes"][0])
        args = {}
        if nd and maybe(r, 0.7):
            args["axes"] = sorted(r.sample(range(nd), r.randint(1, nd)))
        if maybe(r, 0.4):
            args["keep_dims"] = True
        if name in ("sum", "mean", "mean_square", "rms") and maybe(r, 0.3):
            args["dtype"] = t(r.choice(("FLOAT", "INT64", "INT32", "FLOAT64")))
        return {"op": "reductions." + name, "inputs": [x], "args": args}
    return gen


REDUCTIONS = {f"reductions.{n}": _reduction(n) for n in ("sum", "mean", "max", "min", "mean_square", "rms")}
ARITH_OPS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lt", "eq", "ge", "and_", "or_", "xor", "neg")
ARITH_DTYPES = ("uint8", "int8", "int16", "int32", "int64", "uint16", "float32", "float64", "bool")


def arith(r):
    op = r.choice(ARITH_OPS)
    arity = 1 if op == "neg" else 2
    base = tensors(r, r.randint(0, 3), r.choice(ARITH_DTYPES))
    xs, consts = [], {}
    for i in range(arity):
        if i and maybe(r, 0.3):
            consts[str(i)] = r.choice((r.randint(-3, 5), rf(r, -3, 5), True))
            continue
        x = {**base, "dtype": r.choice(ARITH_DTYPES) if i else base["dtype"],
             "value": "special" if maybe(r, 0.2) else None}
        if i and maybe(r, 0.3):
            x["shapes"] = [[] for _ in base["shapes"]]  # a per-sample scalar broadcast against the other
        xs.append(x)
    return {"kind": "arith", "op": op, "arity": arity, "inputs": xs, "consts": consts}


MATH_UNARY = ("abs", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "sin", "cos", "tan",
              "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "floor", "ceil", "fabs")
MATH_BINARY = ("min", "max", "pow", "fpow", "atan2")


def math(r):
    op = r.choice(MATH_UNARY + MATH_BINARY + ("clamp",))
    x = tensors(r, r.randint(0, 3), r.choice(("uint8", "int16", "int32", "float32", "float64")),
                value=r.choice(("signed", "wide", "unit", "special")))
    inputs, args = [x], {}
    if op in MATH_BINARY:
        inputs.append({**x, "dtype": r.choice(("uint8", "int32", "float32")), "value": "signed"})
    if op == "clamp":
        return {"kind": "math", "op": op, "inputs": inputs, "args": {}, "extra": sorted([rf(r, -5, 5), rf(r, -5, 5)])}
    return {"kind": "math", "op": op, "inputs": inputs, "args": args}


def shapes(r):
    x = _any_tensor(r)
    return {"inputs": [x], "args": {"dtype": t(r.choice(("INT32", "INT64", "FLOAT", "UINT32", "FLOAT64")))} if maybe(r) else {}}


def per_frame(r):
    x = images(r, layouts=("FHWC", "HWC", "CFHW"))
    return {"inputs": [x], "args": {"replace": True} if maybe(r, 0.3) else {}}
