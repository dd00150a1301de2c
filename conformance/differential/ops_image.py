"""Case generators for image ops (geometry, color, filters). Each takes a `random.Random` and
returns the op's case: `inputs`, constant `args` and per-sample `targs`."""
from __future__ import annotations

from .draw import IMAGE_LAYOUTS, images, maybe, per_frame, per_sample, rf, t

INTERP = ("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3", "INTERP_TRIANGULAR",
          "INTERP_GAUSSIAN")
OUT_TYPES = ("FLOAT", "UINT8", "FLOAT16", "INT16")


def flip(r):
    x = images(r, layouts=IMAGE_LAYOUTS + ("FCHW", "CFHW"), dtypes=("uint8", "int16", "float32", "int32"))
    args, targs = {}, {}
    for name in ("horizontal", "vertical", "depthwise"):
        if maybe(r, 0.3):
            targs[name] = per_sample(r, len(x["shapes"]), lambda: r.randint(0, 1), "int32")
        elif maybe(r, 0.7):
            args[name] = r.randint(0, 1)
    return {"inputs": [x], "args": args, "targs": targs}


def _crop_window(r, x, args, targs):
    spatial3d = "D" in x["layout"]
    if maybe(r):
        args["crop"] = [rf(r, 1, 14) if maybe(r, 0.8) else float(r.randint(1, 14)) for _ in range(3 if spatial3d else 2)]
    else:
        args["crop_h"], args["crop_w"] = float(r.randint(1, 14)), rf(r, 1, 14)
        if spatial3d:
            args["crop_d"] = float(r.randint(1, 4))
    for name in ("crop_pos_x", "crop_pos_y") + (("crop_pos_z",) if spatial3d else ()):
        if maybe(r, 0.25):
            targs[name] = per_sample(r, len(x["shapes"]), lambda: rf(r, 0, 1))
        elif maybe(r, 0.7):
            args[name] = r.choice((0.0, 1.0, rf(r, 0, 1)))
    args["out_of_bounds_policy"] = r.choice(("pad", "pad", "trim_to_shape", "error"))
    if maybe(r, 0.3):
        args["rounding"] = r.choice(("round", "truncate"))


def crop(r):
    x = images(r)
    args, targs = {}, {}
    _crop_window(r, x, args, targs)
    if maybe(r, 0.3):
        args["fill_values"] = r.choice(([rf(r, 0, 255)], [float(r.randint(0, 255)) for _ in range(x["shapes"][0][-1])]))
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "FLOAT16", "INT16", "INT32")))
    return {"inputs": [x], "args": args, "targs": targs}


def crop_mirror_normalize(r):
    x = images(r)
    c = x["shapes"][0][x["layout"].index("C")]
    args, targs = {}, {}
    if maybe(r, 0.7):
        _crop_window(r, x, args, targs)
    if maybe(r, 0.7):
        args["mean"] = [rf(r, 0, 200) for _ in range(r.choice((1, c)))]
    if maybe(r, 0.7):
        args["std"] = [rf(r, 0.5, 80) for _ in range(r.choice((1, c)))]
    if maybe(r, 0.4):
        targs["mirror"] = per_sample(r, len(x["shapes"]), lambda: r.randint(0, 1), "int32")
    elif maybe(r):
        args["mirror"] = r.randint(0, 1)
    if maybe(r):
        args["output_layout"] = r.choice(("CHW", "HWC")) if len(x["layout"]) == 3 else x["layout"]
    if maybe(r, 0.3):
        args["pad_output"] = True
    if maybe(r, 0.3):
        args["scale"], args["shift"] = rf(r, 0.1, 3), rf(r, -10, 128)
    if maybe(r, 0.4):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "FLOAT16", "INT8")))
    return {"inputs": [x], "args": args, "targs": targs}


def _resize_args(r, x, args, targs):
    three_d = "D" in x["layout"]
    how = r.choice(("xy", "xy", "size", "shorter", "longer", "x"))
    if how == "xy":
        args["resize_x"], args["resize_y"] = rf(r, 1, 20), float(r.randint(1, 20))
        if three_d:
            args["resize_z"] = float(r.randint(1, 5))
    elif how == "x":
        targs["resize_x"] = per_sample(r, len(x["shapes"]), lambda: rf(r, 1, 20))
    elif how == "size":
        args["size"] = [float(r.randint(0, 16)) if maybe(r, 0.8) else rf(r, 1, 16) for _ in range(3 if three_d else 2)]
    else:
        args["resize_" + how] = rf(r, 1, 20)
        if maybe(r, 0.3):
            args["max_size"] = float(r.randint(2, 16))
    if how in ("xy", "size") and maybe(r, 0.4):
        args["mode"] = r.choice(("default", "stretch", "not_larger", "not_smaller"))
    if maybe(r, 0.6):
        args["interp_type"] = t(r.choice(INTERP))
    elif maybe(r):
        args["min_filter"], args["mag_filter"] = t(r.choice(INTERP)), t(r.choice(INTERP))
    if maybe(r, 0.25):
        args["antialias"] = False
    if maybe(r, 0.2):
        args["subpixel_scale"] = False


def resize(r):
    x = images(r, layouts=("HWC", "HWC", "CHW", "FHWC", "DHWC"))
    args, targs = {}, {}
    _resize_args(r, x, args, targs)
    if maybe(r, 0.25) and "D" not in x["layout"]:
        rel = maybe(r)
        args["roi_relative"] = rel
        args["roi_start"] = [rf(r, 0, 0.5) if rel else rf(r, 0, 3) for _ in range(2)]
        args["roi_end"] = [rf(r, 0.5, 1) if rel else rf(r, 1, 6) for _ in range(2)]
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "INT16")))
    return {"inputs": [x], "args": args, "targs": targs}


def resize_crop_mirror(r):
    x = images(r, layouts=("HWC", "HWC", "FHWC"))
    args, targs = {}, {}
    _resize_args(r, x, args, targs)
    args["crop"] = [float(r.randint(1, 10)), float(r.randint(1, 10))]
    if maybe(r):
        args["mirror"] = r.randint(0, 1)
    return {"inputs": [x], "args": args, "targs": targs}


def rotate(r):
    x = images(r, layouts=("HWC", "HWC", "FHWC", "DHWC"), channels=(3, 1))
    n = len(x["shapes"])
    args, targs = {}, {}
    angle = lambda: r.choice((0.0, 90.0, 180.0, -90.0, 45.0, rf(r, -360, 360)))
    if x["layout"][0] == "F" and maybe(r, 0.3):
        targs["angle"] = per_frame(r, x, angle)
    elif maybe(r, 0.3):
        targs["angle"] = per_sample(r, n, angle)
    else:
        args["angle"] = angle()
    if "D" in x["layout"]:
        args["axis"] = r.choice(([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [rf(r, -1, 1), rf(r, -1, 1), 1.0]))
    if maybe(r, 0.3):
        args["keep_size"] = True
    elif maybe(r, 0.3):
        args["size"] = [float(r.randint(1, 12)) for _ in range(3 if "D" in x["layout"] else 2)]
    if maybe(r):
        args["fill_value"] = rf(r, 0, 255)
    if maybe(r):
        args["interp_type"] = t(r.choice(("INTERP_NN", "INTERP_LINEAR")))
    if maybe(r, 0.2):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8")))
    return {"inputs": [x], "args": args, "targs": targs}


def warp_affine(r):
    x = images(r, layouts=("HWC", "HWC", "FHWC"), channels=(3, 1))
    m = [rf(r, 0.5, 1.5), rf(r, -0.5, 0.5), rf(r, -3, 3), rf(r, -0.5, 0.5), rf(r, 0.5, 1.5), rf(r, -3, 3)]
    args, targs = {"matrix": r.choice((m, [1.0, 0.0, 0.5, 0.0, 1.0, -0.5], [0.0, 1.0, 0.0, 1.0, 0.0, 0.0]))}, {}
    mat = lambda: [[rf(r, 0.5, 1.5), rf(r, -0.5, 0.5), rf(r, -3, 3)], [rf(r, -0.5, 0.5), rf(r, 0.5, 1.5), rf(r, -3, 3)]]
    if x["layout"][0] == "F" and maybe(r, 0.3):
        targs["matrix"] = per_frame(r, x, mat)
        del args["matrix"]
    elif maybe(r, 0.3):
        targs["matrix"] = per_sample(r, len(x["shapes"]), mat)
        del args["matrix"]
    if maybe(r):
        args["size"] = [float(r.randint(1, 12)), float(r.randint(1, 12))]
    if maybe(r):
        args["fill_value"] = rf(r, 0, 255)
    if maybe(r):
        args["interp_type"] = t(r.choice(("INTERP_NN", "INTERP_LINEAR")))
    if maybe(r, 0.3):
        args["inverse_map"] = False
    if maybe(r, 0.2):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8")))
    return {"inputs": [x], "args": args, "targs": targs}


def paste(r):
    x = images(r, layouts=("HWC",), channels=(3,), dtypes=("uint8",))
    args = {"ratio": rf(r, 1, 3), "fill_value": [r.randint(0, 255) for _ in range(3)], "n_channels": 3}
    for name in ("paste_x", "paste_y"):
        if maybe(r):
            args[name] = rf(r, 0, 1)
    if maybe(r, 0.3):
        args["min_canvas_size"] = float(r.randint(1, 30))
    return {"inputs": [x], "args": args}


def _color_input(r):
    return images(r, layouts=("HWC", "HWC", "FHWC"), channels=(3,), dtypes=("uint8", "uint8", "int16", "float32"))


def _color_args(r, x, names, ranges, args, targs):
    n = len(x["shapes"])
    for name, (lo, hi) in zip(names, ranges):
        if x["layout"][0] == "F" and maybe(r, 0.2):
            targs[name] = per_frame(r, x, lambda: rf(r, lo, hi))
        elif maybe(r, 0.25):
            targs[name] = per_sample(r, n, lambda: rf(r, lo, hi))
        elif maybe(r, 0.75):
            args[name] = rf(r, lo, hi)
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "INT16")))


def _color(names, ranges):
    def gen(r):
        x = _color_input(r)
        args, targs = {}, {}
        _color_args(r, x, names, ranges, args, targs)
        return {"inputs": [x], "args": args, "targs": targs}
    return gen


color_twist = _color(("brightness", "contrast", "saturation", "hue"), ((0, 2), (0, 2), (0, 2), (-180, 180)))
hsv = _color(("hue", "saturation", "value"), ((-180, 180), (0, 2), (0, 2)))
brightness_contrast = _color(("brightness", "brightness_shift", "contrast", "contrast_center"),
                             ((0, 2), (-0.5, 0.5), (0, 2), (0, 255)))
brightness = _color(("brightness", "brightness_shift"), ((0, 2), (-0.5, 0.5)))
contrast = _color(("contrast", "contrast_center"), ((0, 2), (0, 255)))
saturation = _color(("saturation",), ((0, 2),))
hue = _color(("hue",), ((-180, 180),))


def color_space_conversion(r):
    spaces = {"RGB": 3, "BGR": 3, "GRAY": 1, "YCbCr": 3}
    src, dst = r.choice(list(spaces)), r.choice(list(spaces))
    x = images(r, layouts=("HWC", "HWC", "FHWC"), channels=(spaces[src],), dtypes=("uint8", "uint8", "float32"))
    return {"inputs": [x], "args": {"image_type": t(src), "output_type": t(dst)}}


def gaussian_blur(r):
    x = images(r, layouts=("HWC", "HWC", "CHW", "FHWC", "DHWC"), dtypes=("uint8", "int16", "float32"))
    args, targs = {}, {}
    if maybe(r, 0.8):
        args["sigma"] = rf(r, 0.1, 3) if maybe(r) else [rf(r, 0.1, 3) for _ in range(3 if "D" in x["layout"] else 2)]
    if maybe(r, 0.5) or "sigma" not in args:
        args["window_size"] = r.choice((1, 3, 5, 7, 9))
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8")))
    return {"inputs": [x], "args": args, "targs": targs}


def laplacian(r):
    x = images(r, layouts=("HWC", "HWC", "CHW", "FHWC"), dtypes=("uint8", "int16", "float32"))
    args = {}
    if maybe(r):
        args["window_size"] = r.choice((1, 3, 5, 7))
    if maybe(r, 0.3):
        args["smoothing_size"] = r.choice((1, 3, 5))
    if maybe(r, 0.4):
        args["scale"] = rf(r, 0.1, 2)
    if maybe(r, 0.3):
        args["normalized_kernel"] = True
    if maybe(r, 0.4):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8", "INT16")))
    return {"inputs": [x], "args": args}


def _warp_fx(extra):
    def gen(r):
        x = images(r, layouts=("HWC",), channels=(3, 1), dtypes=("uint8",))
        args = extra(r)
        if maybe(r):
            args["interp_type"] = t(r.choice(("INTERP_NN", "INTERP_LINEAR")))
        if maybe(r):
            args["fill_value"] = rf(r, 0, 255)
        return {"inputs": [x], "args": args}
    return gen


water = _warp_fx(lambda r: {k: rf(r, lo, hi) for k, (lo, hi) in
                            {"ampl_x": (0, 5), "ampl_y": (0, 5), "freq_x": (0, 1), "freq_y": (0, 1),
                             "phase_x": (0, 6), "phase_y": (0, 6)}.items() if maybe(r, 0.7)})
sphere = _warp_fx(lambda r: {})


def erase(r):
    x = images(r, layouts=("HWC", "HWC", "CHW"), dtypes=("uint8", "float32", "int16"))
    norm = maybe(r, 0.3)
    k = r.randint(1, 2)
    args = {"anchor": [rf(r, 0, 1) if norm else float(r.randint(0, 8)) for _ in range(2 * k)],
            "shape": [rf(r, 0, 1) if norm else float(r.randint(0, 6)) for _ in range(2 * k)],
            "axis_names": "HW"}
    if norm:
        args["normalized"] = True
    if maybe(r, 0.3):
        args["centered_anchor"] = True
    if maybe(r):
        args["fill_value"] = rf(r, 0, 255) if maybe(r) else [rf(r, 0, 255) for _ in range(x["shapes"][0][x["layout"].index("C")])]
    return {"inputs": [x], "args": args}


def grid_mask(r):
    x = images(r, layouts=("HWC",), dtypes=("uint8", "float32"))
    args = {}
    if maybe(r):
        args["tile"] = r.randint(1, 8)
    if maybe(r):
        args["ratio"] = rf(r, 0, 1)
    if maybe(r):
        args["angle"] = rf(r, -3.2, 3.2)
    if maybe(r):
        args["shift_x"], args["shift_y"] = rf(r, -5, 5), rf(r, -5, 5)
    return {"inputs": [x], "args": args}


def filter(r):  # noqa: A001 (DALI's op name)
    x = images(r, layouts=("HWC", "HWC", "CHW", "FHWC"), dtypes=("uint8", "int16", "float32"))
    kh, kw = r.randint(1, 4), r.randint(1, 4)
    k = {"dtype": "float32", "layout": "", "shapes": [[kh, kw]] * len(x["shapes"]), "value": "signed"}
    args = {}
    if maybe(r):
        args["border"] = r.choice(("reflect_101", "reflect_1001", "wrap", "clamp", "constant"))
    if maybe(r, 0.3):
        args["mode"] = r.choice(("same", "valid"))
    if maybe(r, 0.3):
        args["dtype"] = t(r.choice(("FLOAT", "UINT8")))
    return {"inputs": [x, k], "args": args}


def jpeg_compression_distortion(r):
    x = images(r, layouts=("HWC", "FHWC"), channels=(3,), dtypes=("uint8",))
    return {"inputs": [x], "args": {"quality": r.randint(1, 100)} if maybe(r, 0.8) else {}}
