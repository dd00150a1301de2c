"""The fuzzed ops: name -> case generator (`ops_image`, `ops_tensor`)."""
from __future__ import annotations

import json
import random

from . import ops_extra as ex
from . import ops_image as im
from . import ops_more as mo
from . import ops_tensor as te

OPS = {name: getattr(im, name) for name in (
    "flip", "crop", "crop_mirror_normalize", "resize", "resize_crop_mirror", "rotate", "warp_affine",
    "paste", "color_twist", "hsv", "brightness_contrast", "brightness", "contrast", "saturation", "hue",
    "color_space_conversion", "gaussian_blur", "laplacian", "water", "sphere", "erase", "grid_mask",
    "filter", "jpeg_compression_distortion")}
OPS.update({name: getattr(te, name) for name in (
    "cast", "transpose", "reshape", "normalize", "pad", "coord_transform", "coord_flip", "bb_flip",
    "one_hot", "lookup_table", "expand_dims", "squeeze", "cat", "stack", "arith", "math", "shapes",
    "per_frame")})
OPS.update(te.REDUCTIONS)
OPS.update({name: getattr(mo, name) for name in ("slice", "subscript", "bbox_paste", "reinterpret")})
OPS.update(mo.STD)
OPS.update({("experimental." if n == "warp_perspective" else "") + n: getattr(ex, n) for n in ex.NAMES})
OPS.update(ex.TRANSFORMS)
# Ops whose outputs are random draws: only types, layouts and shapes are compared.
RANDOM: set[str] = set()


def make_case(op: str, seed: int) -> dict:
    """Case `seed` of `op`: the generator's draw from Random(f"{op}:{seed}"), the inputs' seed."""
    r = random.Random(f"{op}:{seed}")
    case = {"op": op, **OPS[op](r)}
    case["family"], case["id"] = op, f"{op}:{seed}"
    case["seed"] = r.randrange(2**31)
    json.dumps(case)  # a case must be plain JSON
    return case
