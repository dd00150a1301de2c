"""Case generators for slice, subscripts, std_dev/variance, bbox_paste, reinterpret and
multi_paste (ops whose cases need positional inputs or a helper node)."""
from __future__ import annotations

from .draw import images, maybe, rf, t, tensors


def slice(r):  # noqa: A001 (DALI's op name)
    x = images(r, layouts=("HWC", "HWC", "CHW", "FHWC"), dtypes=("uint8", "int16", "float32"))
    lay = x["layout"]
    names = r.choice(("HW", "WH", "H", "W") + (("F",) if "F" in lay else ()))
    k = len(names)
    args = {"axis_names": names}
    if maybe(r, 0.3):  # positional anchor and shape inputs
        norm = maybe(r)
        draw = (lambda: rf(r, -0.2, 1.0)) if norm else (lambda: float(r.randint(-2, 8)))
        size = (lambda: rf(r, 0.0, 1.2)) if norm else (lambda: float(r.randint(0, 10)))
        n = len(x["shapes"])  # one anchor and one shape for all samples (a list `value` is a sample's values)
        anchor = {"dtype": "float32", "layout": "", "shapes": [[k]] * n, "value": [draw() for _ in range(k)]}
        shape = {"dtype": "float32", "layout": "", "shapes": [[k]] * n, "value": [size() for _ in range(k)]}
        args.update(normalized_anchor=norm, normalized_shape=norm)
        inputs = [x, anchor, shape]
    else:
        inputs = [x]
        how = r.choice(("start_shape", "rel", "start_end", "rel_start_shape"))
        if how == "start_shape":
            args["start"], args["shape"] = [r.randint(-2, 8) for _ in names], [r.randint(0, 10) for _ in names]
        elif how == "rel":
            args["rel_start"], args["rel_end"] = [rf(r, -0.1, 0.6) for _ in names], [rf(r, 0.4, 1.2) for _ in names]
        elif how == "start_end":
            args["start"], args["end"] = [r.randint(0, 4) for _ in names], [r.randint(1, 12) for _ in names]
        else:
            args["rel_start"], args["rel_shape"] = [rf(r, 0, 0.8) for _ in names], [rf(r, 0, 1.1) for _ in names]
    args["out_of_bounds_policy"] = r.choice(("pad", "trim_to_shape", "error", "pad"))
    if maybe(r, 0.4):
        c = x["shapes"][0][lay.index("C")]
        args["fill_values"] = [rf(r, -5, 300)] if maybe(r) else [rf(r, 0, 255) for _ in range(c)]
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "FLOAT16")))
    return {"inputs": inputs, "args": args}


def subscript(r):
    x = tensors(r, r.randint(1, 3), r.choice(("uint8", "int32", "float32")), hi=8)
    index = []
    for _ in range(r.randint(1, len(x["shapes"][0]))):
        if maybe(r, 0.3):
            index.append(r.randint(-1, 0))
        else:
            index.append([r.choice((None, r.randint(-3, 3))), r.choice((None, r.randint(-3, 6))),
                          r.choice((None, None, 1, 2, -1, -2))])
    return {"kind": "subscript", "op": "subscript", "inputs": [x], "index": index}


def _std(name):
    def gen(r):
        x = tensors(r, r.randint(1, 3), r.choice(("uint8", "int16", "float32")), value="wide", hi=8)
        nd = len(x["shapes"][0])
        args = {}
        if maybe(r, 0.7):
            args["axes"] = sorted(r.sample(range(nd), r.randint(1, nd)))
        if maybe(r, 0.4):
            args["keep_dims"] = True
        if maybe(r, 0.3):
            args["ddof"] = r.randint(0, 1)
        return {"kind": "std", "op": "reductions." + name, "inputs": [x], "args": args}
    return gen


STD = {"reductions.std_dev": _std("std_dev"), "reductions.variance": _std("variance")}


def bbox_paste(r):
    x = tensors(r, 2, "float32", fixed={1: 4})
    args = {"ratio": rf(r, 1, 3), "ltrb": maybe(r)}
    for name in ("paste_x", "paste_y"):
        if maybe(r):
            args[name] = rf(r, 0, 1)
    return {"inputs": [x], "args": args}


def reinterpret(r):
    x = tensors(r, 2, r.choice(("uint8", "int16", "int32", "float32")), fixed={0: 4, 1: 4})
    args = {}
    if maybe(r, 0.6):
        args["dtype"] = t(r.choice(("UINT8", "INT16", "INT32", "FLOAT", "UINT16", "INT8")))
    if maybe(r, 0.5):
        args["shape"] = r.choice(([16], [2, 8], [-1], [4, -1]))
    if maybe(r, 0.3):
        args["layout"] = "AB"
    return {"inputs": [x], "args": args}
