"""Drawing helpers for case generators: inputs (dtype, layout, ragged sample shapes) and arguments.

`r` is a `random.Random` seeded per case, so a case is a pure function of (op, seed). Sizes stay
small (most edges 1..12 pixels, a 1-pixel edge one time in six) so thousands of cases run in minutes.
"""
from __future__ import annotations

import random

IMG_DTYPES = ("uint8", "uint8", "int16", "float32", "float32")
IMAGE_LAYOUTS = ("HWC", "HWC", "HWC", "CHW", "FHWC", "DHWC")
TYPES = {"uint8": "UINT8", "int8": "INT8", "uint16": "UINT16", "int16": "INT16", "int32": "INT32",
         "uint32": "UINT32", "int64": "INT64", "float32": "FLOAT", "float16": "FLOAT16",
         "float64": "FLOAT64", "bool": "BOOL"}


def t(name: str) -> dict:
    """A `types.NAME` value (DALIDataType, interpolation or image type) in a case's JSON."""
    return {"$t": name}


def edge(r: random.Random, hi: int = 12) -> int:
    """An extent: 0 one time in 40, 1 one in six, 2 one in six, else 3..hi."""
    k = r.random()
    return 0 if k < 1 / 40 else 1 if k < 1 / 6 else 2 if k < 2 / 6 else r.randint(3, hi)


def batch_size(r: random.Random) -> int:
    return r.choice((1, 2, 3, 4))


def image_shape(r: random.Random, layout: str, channels: int, hi: int = 12) -> list[int]:
    dims = {"H": edge(r, hi), "W": edge(r, hi), "C": channels, "F": r.randint(1, 3), "D": r.randint(1, 4)}
    return [dims[c] for c in layout]


def images(r: random.Random, layouts=IMAGE_LAYOUTS, dtypes=IMG_DTYPES, channels=(3, 3, 1, 4),
           bs: int | None = None, value: str | None = None, hi: int = 12) -> dict:
    """An input of ragged images: one layout, one dtype, one channel count for the batch; edges
    up to `hi` (up to 40 one time in four)."""
    layout, dtype, c = r.choice(layouts), r.choice(dtypes), r.choice(channels)
    if maybe(r, 0.05):  # now and then a type the op may not list
        dtype = r.choice(("uint16", "int32", "float16", "int8", "float64"))
    n = bs or batch_size(r)
    if value is None and dtype.startswith("float"):
        value = r.choice(("unit", "byte"))
    hi = 40 if maybe(r, 0.25) else hi
    return {"dtype": dtype, "layout": layout, "shapes": [image_shape(r, layout, c, hi) for _ in range(n)],
            "value": value}


def tensors(r: random.Random, ndim: int, dtype: str, bs: int | None = None, layout: str = "",
            value: str | None = None, hi: int = 6, fixed: dict | None = None) -> dict:
    """Ragged plain tensors; `fixed` pins some dims ({axis: extent})."""
    n = bs or batch_size(r)
    shapes = [[(fixed or {}).get(d, edge(r, hi)) for d in range(ndim)] for _ in range(n)]
    return {"dtype": dtype, "layout": layout, "shapes": shapes, "value": value}


def per_sample(r: random.Random, n: int, draw, dtype: str = "float32") -> dict:
    """A tensor argument: one value per sample (given to the op as an external-source DataNode)."""
    return {"dtype": dtype, "values": [draw() for _ in range(n)]}


def maybe(r: random.Random, p: float = 0.5) -> bool:
    return r.random() < p


def rf(r: random.Random, lo: float, hi: float) -> float:
    return round(r.uniform(lo, hi), 3)


def per_frame(r: random.Random, x: dict, draw, dtype: str = "float32", item: int = 0) -> dict:
    """A per-frame tensor argument for an F-led sequence input: (frames,) values per sample, or
    (frames, item) when `item`; one value for all frames now and then (DALI broadcasts a 1-frame one)."""
    def sample(shape):
        frames = 1 if maybe(r, 0.15) else shape[0]
        return [[draw() for _ in range(item)] if item else draw() for _ in range(frames)]
    return {"dtype": dtype, "values": [sample(s) for s in x["shapes"]], "per_frame": True}
