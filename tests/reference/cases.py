"""Inputs and cases shared by the DALI table generator (run in a DALI venv) and the tests.

NumPy only: nothing here imports torch_dali or DALI, so the same generated inputs feed both sides.
Each case is a name and the arguments of one DALI call; `make_dali_tables.py` stores DALI's output
per name, the tests compute ours from the same arguments.
"""
from __future__ import annotations

import numpy as np

TABLES = "dali_tables.npz"  # beside this file

# -- inputs -------------------------------------------------------------------------------------------

def noise(h: int, w: int, c: int, seed: int, dtype=np.uint8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.random((h, w, c)) * 300.0 - 20.0).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -3000), min(info.max, 3000) if info.max > 255 else info.max
    return rng.integers(lo, hi + 1, (h, w, c)).astype(dtype)


def coords(h: int, w: int) -> np.ndarray:
    """uint8 image whose channels are its row and column indices."""
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([y, x], -1).astype(np.uint8)


RESIZE_IMG = noise(23, 31, 2, seed=1)
RAMP = np.broadcast_to(np.arange(256, dtype=np.uint8).reshape(16, 16, 1), (16, 16, 3)).copy()
COLOR_IMG = noise(9, 11, 3, seed=2)
CMN_IMG = noise(20, 24, 3, seed=3)

# -- resize ---------------------------------------------------------------------------------------------

FILTERS = ("nn", "linear", "triangular", "gaussian", "cubic", "lanczos3")
RESIZE_SIZES = {"down": (9, 13), "up": (30, 45), "same_h_up_w": (23, 45), "down_h_up_w": (11, 45)}
RESIZE_CASES = {f"{f}_{'aa' if aa else 'noaa'}_{k}": dict(filter=f, antialias=aa, size=s)
                for f in FILTERS for aa in (True, False) for k, s in RESIZE_SIZES.items()
                if not (f == "nn" and not aa)}
RESIZE_CASES.update({
    f"{f}_float_up": dict(filter=f, antialias=True, size=(30, 45), dtype="float") for f in ("linear", "cubic")})
RESIZE_CASES.update({
    f"{f}_roi_{i}": dict(filter=f, antialias=True, size=s, roi=r)
    for f in FILTERS for i, (r, s) in enumerate([((3, 5, 10, 17), (16, 16)), ((0, 2, 23, 9), (7, 20))])})
RESIZE_CASES.update({
    f"min_{mn}_mag_{mg}": dict(filter="linear", antialias=True, size=(11, 45), min_filter=mn, mag_filter=mg)
    for mn, mg in (("nn", "cubic"), ("linear", "nn"), ("lanczos3", "gaussian"), ("cubic", "triangular"))})

SIZE_SHAPES = [(480, 640), (640, 480), (333, 500), (100, 100), (37, 91), (1, 5)]
SIZE_ARGS = [
    dict(resize_shorter=256), dict(resize_shorter=300.7), dict(resize_longer=256), dict(resize_longer=100.5),
    dict(resize_x=200), dict(resize_y=200), dict(resize_x=200, resize_y=100), dict(resize_x=150.5),
    dict(size=(224, 224)), dict(size=(100, 0)), dict(size=(0, 100)), dict(size=[7]),
    dict(resize_shorter=256, max_size=300), dict(resize_shorter=256, max_size=(300, 280)),
    dict(resize_x=200, resize_y=100, mode="not_larger"), dict(resize_x=200, resize_y=100, mode="not_smaller"),
    dict(resize_x=200, resize_y=100, mode="stretch"), dict(resize_x=200, mode="stretch"),
    dict(size=(100, 200), mode="not_larger"), dict(size=(100, 200), mode="not_smaller", max_size=150),
    dict(resize_x=200, max_size=250), dict(resize_longer=1000, max_size=700),
    dict(resize_y=50, mode="not_smaller"), dict(resize_shorter=2.5), dict(resize_x=0.4, resize_y=3),
]

# -- crop / flip / crop_mirror_normalize ----------------------------------------------------------------

CROP_IMG = coords(10, 13)
CROP_CASES = [
    dict(crop=(4, 4)), dict(crop=(5, 6)), dict(crop=(4, 4), crop_pos_x=0.25, crop_pos_y=0.25),
    dict(crop=(4, 4), crop_pos_x=1.0, crop_pos_y=1.0), dict(crop=(4, 4), crop_pos_x=0.0, crop_pos_y=0.0),
    dict(crop_h=3, crop_w=5, crop_pos_x=0.3, crop_pos_y=0.7), dict(crop=(4.5, 4.4)), dict(crop=(4.6, 4.5)),
    dict(crop=(3, 3), crop_pos_x=1 / 6, crop_pos_y=1 / 14), dict(crop=(3, 3), crop_pos_x=0.05, crop_pos_y=0.5 / 7),
    dict(crop=(3, 3), crop_pos_x=0.15), dict(crop=(3, 4), crop_pos_x=0.0625, crop_pos_y=0.0714285),
    dict(crop=(12, 15), out_of_bounds_policy="trim_to_shape"),
    dict(crop=(7, 6), out_of_bounds_policy="pad", crop_pos_x=0.3, crop_pos_y=0.25, fill_values=(1, 2)),
    dict(crop=(14, 16), out_of_bounds_policy="pad"), dict(crop=(4, 4), crop_pos_x=0.5, rounding="truncate"),
    dict(crop=(6, 5), dtype="float"),
]
FLIP_CASES = [dict(horizontal=1), dict(horizontal=0, vertical=1), dict(horizontal=1, vertical=1), dict(horizontal=0)]
CMN_CASES = [
    dict(crop=(12, 16), crop_pos_x=0.3, crop_pos_y=0.25, mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
         std=[0.229 * 255, 0.224 * 255, 0.225 * 255]),
    dict(crop=(12, 16), mirror=1, mean=[128.0], std=[64.0], output_layout="HWC"),
    dict(crop=(12, 16), crop_pos_x=1.0, mean=[10.0, 20.0, 30.0], std=[3.0, 7.0, 11.0], scale=0.7, shift=-1.25),
    dict(mean=[0.0], std=[255.0]),
    dict(crop=(8, 8), mean=[0.5], dtype="uint8", output_layout="HWC"),
    dict(crop=(8, 8), mean=[10.5], dtype="int8", scale=3.0, output_layout="HWC"),
    dict(crop=(8, 8), mean=[100.0], std=[0.5], dtype="int8", output_layout="HWC"),
    dict(crop=(8, 8), mean=[3.0], dtype="float16"),
    # (DALI 2.4 zeroes channels 1 and 2 here when mean/std have one value and fill_values three: a
    # quirk not followed, so the case gives one value per channel)
    dict(crop=(24, 30), out_of_bounds_policy="pad", fill_values=[100.0, 200.0, 50.0], mean=[1.0, 1.0, 1.0],
         std=[2.0, 2.0, 2.0], output_layout="HWC"),
    dict(crop=(6, 6), pad_output=True), dict(crop=(6, 6), pad_output=True, mirror=1, output_layout="HWC"),
    dict(crop=(22, 26), pad_output=True, out_of_bounds_policy="pad", fill_values=[7.0, 8.0, 9.0, 3.0],
         output_layout="HWC"),
]

# -- color --------------------------------------------------------------------------------------------------

BC_CASES = [
    dict(contrast=1.5), dict(contrast=0.3), dict(brightness=1.3, brightness_shift=0.1),
    dict(contrast=0.5, contrast_center=0.0), dict(contrast=0.5, brightness=0.7, brightness_shift=-0.05,
                                                  contrast_center=100.0),
    dict(contrast=2.0, dtype="float"), dict(contrast=2.0, brightness_shift=0.1, dtype="float"), dict(contrast=-1.0),
]
BC_TYPED_IMGS = {"int16": np.array([[[-12000], [-11900], [-11800], [20000], [32000]]], np.int16),
                 "float": (RAMP.astype(np.float32) / 255.0)}
BC_TYPED_CASES = [("int16", dict(contrast=0.5)), ("int16", dict(brightness_shift=0.01)),
                  ("int16", dict(contrast=1.5)), ("float", dict(brightness_shift=0.1, dtype="uint8")),
                  ("float", dict(contrast=2.0, brightness_shift=0.1))]
HSV_CASES = [dict(hue=30.0), dict(hue=-90.0, saturation=0.5), dict(saturation=1.8, value=0.8),
             dict(hue=200.0, saturation=1.3, value=1.1), dict(hue=30.0, saturation=1.5, value=0.9, dtype="float")]
TWIST_CASES = [dict(brightness=1.2, contrast=0.6), dict(hue=45.0, saturation=1.5, contrast=1.4),
               dict(brightness=0.7, contrast=2.0, hue=-120.0, saturation=0.2)]
COLOR_FLOAT_IMG = (COLOR_IMG.astype(np.float32) / 255.0)

# -- cast --------------------------------------------------------------------------------------------------

CAST_VALUES = np.array([-300.5, -129.5, -128.5, -2.5, -1.5, -0.5, -0.49, 0.0, 0.5, 1.5, 2.5, 126.5, 127.5,
                        254.5, 255.5, 256.0, 32767.5, 1e10, -1e10], dtype=np.float32)
CAST_TYPES = ("uint8", "int8", "int16", "int32", "uint16")

# -- random ops: DALI's draws, compared as distributions ---------------------------------------------------

RANDOM_DRAWS = 2000
RANDOM_CASES = {
    "uniform_2_5": ("uniform", dict(range=(2.0, 5.0))),
    "uniform_int_0_3": ("uniform", dict(range=(0, 3), dtype="int32")),
    "uniform_int_-2.5_1.7": ("uniform", dict(range=(-2.5, 1.7), dtype="int32")),
    "uniform_values": ("uniform", dict(values=[1.0, 2.5, 7.0])),
    "normal_3_2": ("normal", dict(mean=3.0, stddev=2.0)),
    "coin_0.3": ("coin_flip", dict(probability=0.3)),
}

# -- random crop windows: DALI's (y, x, h, w), recovered from coordinate images ---------------------------

WINDOW_DRAWS = 1500
WINDOW_CASES = {  # name: (image (h, w), random_area, random_aspect_ratio)
    "default_200x300": ((200, 300), (0.08, 1.0), (3 / 4, 4 / 3)),
    "wide_2_3": ((200, 300), (0.08, 1.0), (2.0, 3.0)),
    "tall_0.2_0.5": ((300, 200), (0.08, 1.0), (0.2, 0.5)),
    "area_0.5_0.6": ((200, 300), (0.5, 0.6), (3 / 4, 4 / 3)),
    "edges_20x30": ((20, 30), (0.5, 0.6), (1.3, 1.7)),
    "fallback_400x40": ((400, 40), (0.9, 1.0), (3 / 4, 4 / 3)),
}
DECODER_WINDOW_CASE = ((120, 250), (0.08, 1.0), (2.0, 3.0))  # decoders.image_random_crop on a PNG


def window_probe(h: int, w: int) -> np.ndarray:
    """float32 image whose channels are row and column coordinates: a window can be read back
    from a linear (not antialiased) resize of it."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    return np.stack([y, x], -1)


def windows_from_probe(out: np.ndarray) -> tuple[int, int, int, int]:
    """(y, x, h, w) of the window a linear, non-antialiased resize of `window_probe` read:
    interior samples lie on origin + (i + 0.5) * extent / n - 0.5."""
    n_h, n_w = out.shape[:2]
    r0, r1 = 2, n_h - 3
    c0, c1 = 2, n_w - 3
    step_y = (float(out[r1, c0, 0]) - float(out[r0, c0, 0])) / (r1 - r0)
    step_x = (float(out[r0, c1, 1]) - float(out[r0, c0, 1])) / (c1 - c0)
    hh, ww = step_y * n_h, step_x * n_w
    y0 = float(out[r0, c0, 0]) - (r0 + 0.5) * step_y + 0.5
    x0 = float(out[r0, c0, 1]) - (c0 + 0.5) * step_x + 0.5
    return int(round(y0)), int(round(x0)), int(round(hh)), int(round(ww))

# -- arithmetic ---------------------------------------------------------------------------------------------

ARITH_A = noise(3, 4, 1, seed=5)  # uint8
ARITH_B = (noise(3, 4, 1, seed=6) // 16 + 1).astype(np.uint8)  # uint8, no zeros
ARITH_I = noise(3, 4, 1, seed=7, dtype=np.int32)
ARITH_F = noise(3, 4, 1, seed=8, dtype=np.float32)
# name: expression over a, b (uint8), i (int32), f (float32), as Python source
ARITH_CASES = {
    "u8_add": "a + b", "u8_sub": "a - b", "u8_mul": "a * b", "u8_truediv": "a / b", "u8_floordiv": "a // b",
    "u8_add_int": "a + 300", "u8_mul_2": "a * 2", "u8_div_255": "a / 255", "u8_neg": "-a",
    "u8_add_float": "a + 0.5", "i32_sub_1": "i - 1", "i32_abs": "abs(i)", "i32_mul_u8": "i * a",
    "i32_floordiv_3": "i // 3", "i32_mod_7": "i % 7", "f_mul_u8": "f * a", "f_floordiv": "f // 7",
    "f_neg": "-f", "f_pow_2": "f ** 2", "rsub_u8": "10 - a", "rdiv_i32": "1000 / (a + 1)",
}

# -- decoders.image: encoded files are made once by the generator and stored with DALI's output -----------

DECODE_TYPES = ("RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA")
DECODE_SKIP = {("jpeg_gray", "ANY_DATA")}  # DALI 2.4's CPU decoder crashes (SIGSEGV) on this one


def decode_inputs() -> dict[str, bytes]:
    """Small encoded images (made with Pillow; the tables keep the exact bytes DALI decoded)."""
    import io

    from PIL import Image
    y, x = np.mgrid[0:24, 0:32]
    rgb = np.stack([(x * 8) % 256, (y * 10) % 256, ((x + y) * 5) % 256], -1).astype(np.uint8)
    rgb = np.clip(rgb.astype(int) + noise(24, 32, 3, seed=9) // 8, 0, 255).astype(np.uint8)
    out = {}
    for name, img, fmt, kw in [
            ("jpeg_420", Image.fromarray(rgb), "JPEG", dict(quality=90, subsampling=2)),
            ("jpeg_444", Image.fromarray(rgb), "JPEG", dict(quality=95, subsampling=0)),
            ("jpeg_gray", Image.fromarray(rgb[:, :, 1]), "JPEG", dict(quality=90)),
            ("png_rgba", Image.fromarray(np.dstack([rgb, rgb[:, :, :1]])), "PNG", {}),
            ("png_palette", Image.fromarray(rgb).quantize(16), "PNG", {}),
            ("png_gray16", Image.fromarray((rgb[:, :, 0].astype(np.uint16) * 257 + 3)), "PNG", {}),
            ("bmp", Image.fromarray(rgb), "BMP", {})]:
        buf = io.BytesIO()
        img.save(buf, format=fmt, **kw)
        out[name] = buf.getvalue()
    return out
