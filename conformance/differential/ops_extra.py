"""Case generators for the other CPU ops of DALI 2.4 that torch_dali has: matrices
(transforms.*), perspective warps, histogram ops, Bayer images, tensor_resize, sequence ops,
multi_paste, detection encoders, casts and the audio chain."""
from __future__ import annotations

from .draw import batch_size, images, maybe, per_sample, rf, t, tensors

INTERP = ("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3", "INTERP_TRIANGULAR")


def _transform(name, draw_args):
    def gen(r):
        nd = r.choice((2, 2, 3))
        args, targs = draw_args(r, nd), {}
        n = batch_size(r)
        if maybe(r, 0.3):  # a per-sample argument instead of the constant
            k = r.choice(sorted(args))
            v = args.pop(k)
            targs[k] = per_sample(r, n, lambda: v if not isinstance(v, list) else [x + rf(r, -1, 1) for x in v])
        if maybe(r, 0.3):
            args["reverse_order"] = True
        inputs = []
        if maybe(r, 0.3):  # a transform to compose with: (nd, nd + 1) per sample
            inputs = [{"dtype": "float32", "layout": "", "shapes": [[nd, nd + 1]] * n, "value": "signed"}]
        case = {"op": "transforms." + name, "inputs": inputs, "args": args, "targs": targs, "batch_size": n}
        return case
    return gen


def _center(r, nd, args):
    if maybe(r, 0.4):
        args["center"] = [rf(r, -5, 5) for _ in range(nd)]
    return args


TRANSFORMS = {
    "transforms.rotation": _transform("rotation", lambda r, nd: _center(r, nd, {
        "angle": rf(r, -360, 360), **({"axis": [rf(r, -1, 1), rf(r, -1, 1), 1.0]} if nd == 3 else {})})),
    "transforms.scale": _transform("scale", lambda r, nd: _center(r, nd, {"scale": [rf(r, -3, 3) for _ in range(nd)]})),
    "transforms.translation": _transform("translation", lambda r, nd: {"offset": [rf(r, -9, 9) for _ in range(nd)]}),
    "transforms.shear": _transform("shear", lambda r, nd: _center(r, nd, (
        {"shear": [rf(r, -1, 1) for _ in range(nd * (nd - 1))]} if maybe(r)
        else {"angles": [rf(r, -60, 60) for _ in range(nd * (nd - 1))]}))),
    "transforms.crop": _transform("crop", lambda r, nd: {
        "from_start": [rf(r, -1, 1) for _ in range(nd)], "from_end": [rf(r, 1, 3) for _ in range(nd)],
        "to_start": [rf(r, -2, 0) for _ in range(nd)], "to_end": [rf(r, 1, 5) for _ in range(nd)]}),
}


def warp_perspective(r):
    x = images(r, layouts=("HWC", "HWC", "CHW"), channels=(3, 1), dtypes=("uint8", "int16", "float32"))
    m = [rf(r, 0.7, 1.3), rf(r, -0.3, 0.3), rf(r, -3, 3), rf(r, -0.3, 0.3), rf(r, 0.7, 1.3), rf(r, -3, 3),
         r.choice((0.0, rf(r, -0.02, 0.02))), r.choice((0.0, rf(r, -0.02, 0.02))), 1.0]
    args = {"matrix": m}
    if maybe(r):
        args["size"] = [float(r.randint(1, 14)), float(r.randint(1, 14))]
    if maybe(r):
        args["border_mode"] = r.choice(("constant", "replicate", "reflect", "reflect_101", "wrap"))
    if maybe(r):
        args["fill_value"] = [rf(r, 0, 255)]
    if maybe(r):
        args["interp_type"] = t(r.choice(("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC")))
    if maybe(r, 0.3):
        args["inverse_map"] = False
    if maybe(r, 0.3):
        args["pixel_origin"] = r.choice(("corner", "center"))
    return {"op": "experimental.warp_perspective", "inputs": [x], "args": args}


def equalize(r):
    return {"inputs": [images(r, layouts=("HWC", "HWC", "FHWC"), channels=(1, 3, 4), dtypes=("uint8",))], "args": {}}


def clahe(r):
    x = images(r, layouts=("HWC",), channels=(1, 3), dtypes=("uint8",))
    args = {"tiles_x": r.randint(1, 4), "tiles_y": r.randint(1, 4), "clip_limit": rf(r, 0.5, 4)}
    if maybe(r, 0.3):
        args["bins"] = r.choice((64, 128, 256))
    if maybe(r, 0.3):
        args["luma_only"] = False
    return {"inputs": [x], "args": args}


def debayer(r):
    n = batch_size(r)
    x = {"dtype": r.choice(("uint8", "uint16")), "layout": "HW",
         "shapes": [[2 * r.randint(1, 6), 2 * r.randint(1, 6)] for _ in range(n)], "value": None}
    pos = [[0, 0], [0, 1], [1, 0], [1, 1]]
    args, targs = {}, {}
    if maybe(r, 0.3):
        targs["blue_position"] = per_sample(r, n, lambda: r.choice(pos), "int32")
    else:
        args["blue_position"] = r.choice(pos)
    if maybe(r, 0.3):
        args["algorithm"] = r.choice(("bilinear_npp", "default"))
    return {"inputs": [x], "args": args, "targs": targs}


def tensor_resize(r):
    nd = r.randint(1, 4)
    x = tensors(r, nd, r.choice(("uint8", "int16", "float32")), hi=10)
    axes = sorted(r.sample(range(nd), r.randint(1, nd)))
    args = {"axes": axes}
    if maybe(r):
        args["sizes"] = [float(r.randint(1, 12)) for _ in axes]
    else:
        args["scales"] = [rf(r, 0.3, 3) for _ in axes]
    if maybe(r, 0.6):
        args["interp_type"] = t(r.choice(INTERP))
    if maybe(r, 0.3):
        args["antialias"] = False
    if maybe(r, 0.3):
        args["size_rounding"] = r.choice(("round", "truncate", "ceil"))
    if maybe(r, 0.3):
        args["alignment"] = [rf(r, 0, 1) for _ in axes]
    if maybe(r, 0.3):
        args["dtype"] = t("FLOAT")
    return {"inputs": [x], "args": args}


def element_extract(r):
    x = images(r, layouts=("FHWC",), dtypes=("uint8", "float32"))
    f = min(s[0] for s in x["shapes"])
    return {"inputs": [x], "args": {"element_map": [r.randrange(f) for _ in range(r.randint(1, 3))]}}


def sequence_rearrange(r):
    x = images(r, layouts=("FHWC", "FHWC", "FCHW"), dtypes=("uint8", "float32"))
    f = min(s[0] for s in x["shapes"])
    return {"inputs": [x], "args": {"new_order": [r.randrange(f) for _ in range(r.randint(1, 4))]}}


def multi_paste(r):
    x = images(r, layouts=("HWC",), dtypes=("uint8", "float32", "int16"))
    n = len(x["shapes"])
    hw = [s[:2] for s in x["shapes"]]
    targs = {}
    ids, outs, shapes = [], [], []
    for _ in range(n):
        k = r.randint(1, 3)
        idx = [r.randrange(n) for _ in range(k)]
        ids.append(idx)
        shapes.append([[r.randint(min(1, hw[i][0]), hw[i][0]), r.randint(min(1, hw[i][1]), hw[i][1])] for i in idx])
        outs.append([[r.randint(0, 6), r.randint(0, 6)] for _ in idx])
    targs["in_ids"] = {"dtype": "int32", "values": ids}
    targs["shapes"] = {"dtype": "int32", "values": shapes}
    targs["out_anchors"] = {"dtype": "int32", "values": outs}
    args = {"output_size": [r.randint(4, 16), r.randint(4, 16)]}
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8")))
    return {"inputs": [x], "args": args, "targs": targs}


def box_encoder(r):
    n = batch_size(r)
    counts = [r.randint(1, 5) for _ in range(n)]
    lt = [[rf(r, 0, 0.6), rf(r, 0, 0.6)] for _ in range(sum(counts))]
    vals = [v for a, b in lt for v in (a, b, a + rf(r, 0.05, 0.4), b + rf(r, 0.05, 0.4))]
    boxes = {"dtype": "float32", "layout": "", "shapes": [[c, 4] for c in counts], "value": None}
    labels = {"dtype": "int32", "layout": "", "shapes": [[c] for c in counts], "value": "small"}
    anchors = [v for _ in range(r.randint(1, 6)) for v in (lambda a, b: [a, b, a + 0.3, b + 0.3])(rf(r, 0, 0.7), rf(r, 0, 0.7))]
    args = {"anchors": anchors, "criteria": rf(r, 0.1, 0.7)}
    if maybe(r, 0.4):
        args["offset"] = True
        args["scale"] = rf(r, 0.5, 2)
        args["means"], args["stds"] = [rf(r, -0.1, 0.1) for _ in range(4)], [rf(r, 0.1, 0.3) for _ in range(4)]
    del vals
    return {"inputs": [boxes, labels], "args": args}


def bbox_rotate(r):
    boxes = tensors(r, 2, "float32", fixed={1: 4})
    n = len(boxes["shapes"])
    args = {"angle": rf(r, -180, 180), "input_shape": [r.randint(4, 40), r.randint(4, 40)]}
    if maybe(r):
        args["keep_size"] = True
    if maybe(r, 0.4):
        args["mode"] = r.choice(("expand", "halfway", "fixed"))
    if maybe(r, 0.3):
        args["bbox_layout"] = "xyWH"
    del n
    return {"inputs": [boxes], "args": args}


def cast_like(r):
    a = tensors(r, r.randint(0, 3), r.choice(("uint8", "int16", "int32", "float32", "float64")), value="wide")
    b = {**a, "dtype": r.choice(("uint8", "int8", "int16", "int32", "float32", "float64", "bool")), "value": None}
    return {"inputs": [a, b], "args": {}}


def _signal(r, value="signed"):
    n = batch_size(r)
    return {"dtype": "float32", "layout": "", "shapes": [[r.randint(1, 120)] for _ in range(n)], "value": value}


def preemphasis_filter(r):
    args = {}
    if maybe(r):
        args["preemph_coeff"] = rf(r, 0, 1)
    if maybe(r):
        args["border"] = r.choice(("zero", "clamp", "reflect"))
    return {"inputs": [_signal(r)], "args": args}


def power_spectrum(r):
    x = _signal(r)
    args = {}
    if maybe(r):
        args["nfft"] = r.choice((4, 8, 16, 64, 128))
    if maybe(r):
        args["power"] = r.choice((1, 2))
    return {"inputs": [x], "args": args}


def spectrogram(r):
    x = _signal(r)
    for s in x["shapes"]:
        s[0] += 30
    args = {"window_length": r.choice((8, 16, 20)), "window_step": r.choice((4, 8, 10))}
    if maybe(r):
        args["nfft"] = r.choice((32, 64))
    if maybe(r, 0.3):
        args["center_windows"] = False
    if maybe(r, 0.3):
        args["reflect_padding"] = False
    if maybe(r, 0.3):
        args["power"] = 1
    if maybe(r, 0.3):
        args["layout"] = "tf"
    return {"inputs": [x], "args": args}


def mel_filter_bank(r):
    n = batch_size(r)
    x = {"dtype": "float32", "layout": "ft", "shapes": [[33, r.randint(1, 12)] for _ in range(n)], "value": "unit"}
    args = {"nfilter": r.randint(2, 20), "sample_rate": r.choice((8000.0, 16000.0, 44100.0))}
    if maybe(r, 0.3):
        args["freq_low"] = rf(r, 0, 300)
    if maybe(r, 0.3):
        args["mel_formula"] = r.choice(("slaney", "htk"))
    if maybe(r, 0.3):
        args["normalize"] = False
    return {"inputs": [x], "args": args}


def mfcc(r):
    n = batch_size(r)
    x = {"dtype": "float32", "layout": "", "shapes": [[r.randint(2, 20), r.randint(1, 10)] for _ in range(n)], "value": "signed"}
    args = {"n_mfcc": r.randint(1, 12)}
    if maybe(r, 0.4):
        args["dct_type"] = r.choice((1, 2, 3))
    if maybe(r, 0.3):
        args["lifter"] = rf(r, 0, 30)
    if maybe(r, 0.3):
        args["normalize"] = True
    return {"inputs": [x], "args": args}


def to_decibels(r):
    args = {}
    if maybe(r):
        args["multiplier"] = r.choice((10.0, 20.0))
    if maybe(r, 0.3):
        args["reference"] = rf(r, 0.1, 2)
    if maybe(r, 0.3):
        args["cutoff_db"] = rf(r, -120, -20)
    return {"inputs": [_signal(r, "unit")], "args": args}


NAMES = ("warp_perspective", "equalize", "clahe", "debayer", "tensor_resize", "element_extract", "sequence_rearrange",
         "multi_paste", "box_encoder", "bbox_rotate", "cast_like", "preemphasis_filter", "power_spectrum",
         "spectrogram", "mel_filter_bank", "mfcc", "to_decibels")
