"""Cases for the color, filter and noise ops (tests/test_ops_color_*.py), shared by the DALI table
generator and the tests. NumPy only: the pipeline is built by `graph`, which is handed DALI's or
torch_dali's `fn` and `types` (their APIs are the same), so both sides run the same definition.

A case: the op's `fn` path, the input batch's name and layout, constant arguments (dtypes and image
types as names) and per-sample arguments (one value per sample, fed by an external source).
"""
from __future__ import annotations

from typing import Any

import numpy as np

TABLES = "color_ops_tables.npz"  # beside this file


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _u8(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return _rng(seed).integers(0, 256, shape).astype(np.uint8)


def _f32(shape: tuple[int, ...], seed: int, lo: float = 0.0, hi: float = 1.0) -> np.ndarray:
    return (lo + (hi - lo) * _rng(seed).random(shape)).astype(np.float32)


def _i16(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return _rng(seed).integers(-3000, 30000, shape).astype(np.int16)


def inputs() -> dict[str, list[np.ndarray]]:
    """Named input batches (a list of samples each)."""
    return {
        "u8_hwc": [_u8((9, 11, 3), 1), _u8((9, 11, 3), 2), _u8((9, 11, 3), 3)],
        "u8_hwc_ragged": [_u8((7, 5, 3), 4), _u8((12, 9, 3), 5)],
        "f32_hwc": [_f32((9, 11, 3), 6), _f32((9, 11, 3), 7)],
        "i16_hwc": [_i16((6, 7, 3), 8), _i16((6, 7, 3), 9)],
        "u8_fhwc": [_u8((3, 6, 7, 3), 10), _u8((2, 6, 7, 3), 11)],
        "u8_gray": [_u8((8, 9, 1), 12), _u8((5, 4, 1), 13)],
        "u8_dhwc": [_u8((4, 5, 6, 3), 14)],
        "u8_fdhwc": [_u8((2, 3, 4, 5, 3), 15)],
    }


_COLOR = {
    "brightness_u8": dict(op="brightness", input="u8_hwc", args=dict(brightness=1.7, brightness_shift=0.1)),
    "brightness_u8_float": dict(op="brightness", input="u8_hwc", args=dict(brightness=0.5, dtype="float")),
    "brightness_f32_u8": dict(op="brightness", input="f32_hwc", args=dict(brightness=300.0, dtype="uint8")),
    "brightness_i16": dict(op="brightness", input="i16_hwc", args=dict(brightness=1.3, brightness_shift=-0.2)),
    "brightness_per_sample": dict(op="brightness", input="u8_hwc",
                                  per_sample=dict(brightness=[0.5, 1.0, 2.5], brightness_shift=[0.0, 0.3, -0.1])),
    "brightness_fhwc": dict(op="brightness", input="u8_fhwc", layout="FHWC", args=dict(brightness=1.4)),
    "brightness_no_layout": dict(op="brightness", input="u8_fhwc", layout="", args=dict(brightness=0.8)),
    "contrast_u8": dict(op="contrast", input="u8_hwc", args=dict(contrast=1.9)),
    "contrast_u8_center": dict(op="contrast", input="u8_hwc", args=dict(contrast=0.4, contrast_center=40.0)),
    "contrast_f32": dict(op="contrast", input="f32_hwc", args=dict(contrast=2.5)),
    "contrast_i16_u8": dict(op="contrast", input="i16_hwc", args=dict(contrast=0.5, dtype="uint8")),
    "contrast_per_sample": dict(op="contrast", input="u8_hwc",
                                per_sample=dict(contrast=[0.0, 1.5, 3.0], contrast_center=[10.0, 128.0, 200.0])),
    "contrast_dhwc": dict(op="contrast", input="u8_dhwc", layout="DHWC", args=dict(contrast=1.2)),
    "hue_u8": dict(op="hue", input="u8_hwc", args=dict(hue=33.0)),
    "hue_u8_negative": dict(op="hue", input="u8_hwc", args=dict(hue=-140.0)),
    "hue_f32": dict(op="hue", input="f32_hwc", args=dict(hue=77.0)),
    "hue_u8_float": dict(op="hue", input="u8_hwc", args=dict(hue=200.0, dtype="float")),
    "hue_per_sample": dict(op="hue", input="u8_hwc", per_sample=dict(hue=[0.0, 90.0, 359.0])),
    "hue_fhwc": dict(op="hue", input="u8_fhwc", layout="FHWC", args=dict(hue=45.0)),
    "saturation_u8": dict(op="saturation", input="u8_hwc", args=dict(saturation=0.3)),
    "saturation_u8_up": dict(op="saturation", input="u8_hwc", args=dict(saturation=2.2)),
    "saturation_f32": dict(op="saturation", input="f32_hwc", args=dict(saturation=0.0)),
    "saturation_per_sample": dict(op="saturation", input="u8_hwc", per_sample=dict(saturation=[0.0, 0.5, 1.8])),
}
_CSC = {f"csc_{a}_{b}": dict(op="color_space_conversion", input="u8_gray" if a == "GRAY" else "u8_hwc",
                             args=dict(image_type=a, output_type=b))
        for a in ("RGB", "BGR", "GRAY", "YCbCr") for b in ("RGB", "BGR", "GRAY", "YCbCr") if a != b}
_CSC["csc_fdhwc"] = dict(op="color_space_conversion", input="u8_fdhwc", layout="FDHWC",
                         args=dict(image_type="RGB", output_type="YCbCr"))

CASES: dict[str, dict[str, Any]] = {**_COLOR, **_CSC}


def _feed(batch: list[np.ndarray]) -> Any:
    """A source taking no arguments (DALI passes an iteration index to one that takes any)."""
    return lambda: list(batch)


def graph(fn: Any, types: Any, case: dict[str, Any], batch: list[np.ndarray]) -> Any:
    """The case's pipeline body on DALI's or torch_dali's `fn`/`types`: returns its output node."""
    layout = case.get("layout", "HWC")
    x = fn.external_source(source=_feed(batch), batch=True, layout=layout)
    kw = dict(case.get("args", {}))
    for key in ("dtype",):
        if key in kw:
            kw[key] = getattr(types, {"float": "FLOAT"}.get(kw[key], kw[key].upper()))
    for key in ("image_type", "output_type"):
        if key in kw:
            kw[key] = getattr(types, kw[key])
    for key, values in case.get("per_sample", {}).items():
        kw[key] = fn.external_source(source=_feed([np.array(v, dtype=np.float32) for v in values]), batch=True)
    op = fn
    for part in case["op"].split("."):
        op = getattr(op, part)
    return op(x, **kw)
