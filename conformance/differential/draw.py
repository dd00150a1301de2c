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
    """An extent: 1 one time in six, 2 one in six, else 3..hi."""
    k = r.random()
    return 1 if k < 1 / 6 else 2 if k < 2 / 6 else r.randint(3, hi)


def batch_size(r: random.Random) -> int:
    return r.choice((1, 2, 3, 4))


def image_shape(r: random.Random, layout: str, channels: int) -> list[int]:
    dims = {"H": edge(r), "W": edge(r), "C": channels, "F": r.randint(1, 3), "D": r.randint(1, 4)}
    return [dims[c] for c in layout]


def images(r: random.Random, layouts=IMAGE_LAYOUTS, dtypes=IMG_DTYPES, channels=(3, 3, 1, 4),
           bs: int | None = None, value: str | None = None) -> dict:
    """An input of ragged images: one layout, one dtype, one channel count for the batch."""
    layout, dtype, c = r.choice(layouts), r.choice(dtypes), r.choice(channels)
    n = bs or batch_size(r)
    if value is None and dtype.startswith("float"):
        value = r.choice(("unit", "byte"))
    return {"dtype": dtype, "layout": layout, "shapes": [image_shape(r, layout, c) for _ in range(n)],
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
