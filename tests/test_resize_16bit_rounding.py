"""DALI 2.4's CPU resize rounds int16 / uint16 results as its kernel stores them: half to even in
its vector stores (8 values), half away from zero in the values it stores one by one (a row's
last row % 8 after a last pass down the columns; after one along the rows, the last columns of
each of its four runs: taps before the input, past both ends, inside, past its end), and int16's
vector store turns [-0.5, 0) into -1. Its second pass reads a window that ends at ceil, not
floor, of the first's reach (which decides those runs under a fractional roi), and an exact x.5
is decided on the value itself (0.49999997 rounds to 0). The older code rounded 16-bit results
half to even everywhere: in 600 random resizes (filters, sizes, 1-5 channels, antialias, rois),
53,897 of 2.38M int16 values differed from DALI's (163 of 240 configurations) and 240 of 2.73M
uint16 values (54 of 240); now none (three uint16 and one uint8 configuration mixing nn with a
filter under a flipped roi still differ, for another reason). Digests: DALI 2.4's CPU outputs."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.functional import resize_plan
from torch_dali.functional.resize import resize

# name -> ((h, w, c), dtype, [lo, hi) of the values, seed, fn.resize arguments)
CASES = {
    "i16_linear_up_1ch": ((37, 53, 1), "int16", (-20, 20), 1, dict(resize_x=81, resize_y=90, interp_type="linear")),
    "i16_triangular_down_3ch": ((40, 45, 3), "int16", (-20, 20), 2,
                                dict(resize_x=60, resize_y=20, interp_type="triangular")),
    "i16_lanczos_noaa_3ch": ((64, 70, 3), "int16", (-20, 20), 3,
                             dict(resize_x=23, resize_y=31, interp_type="lanczos3", antialias=False)),
    "u16_linear_noaa_ties": ((40, 45, 1), "uint16", (0, 65536), 4,
                             dict(resize_x=60, resize_y=20, interp_type="linear", antialias=False)),
    "u16_halving_ties_3ch": ((38, 50, 3), "uint16", (0, 65536), 5,
                             dict(resize_x=25, resize_y=19, interp_type="linear", antialias=False)),
    "i16_halving_ties_1ch": ((38, 50, 1), "int16", (-300, 300), 6,
                             dict(resize_x=25, resize_y=19, interp_type="linear", antialias=False)),
    "i16_cubic_edge_runs": ((5, 3, 1), "int16", (-3, 4), 7, dict(resize_x=80, resize_y=7, interp_type="cubic")),
    "i16_cubic_edge_runs_3ch": ((4, 3, 3), "int16", (-3, 4), 8, dict(resize_x=100, resize_y=6, interp_type="cubic")),
    "i16_roi_lanczos": ((79, 84, 2), "int16", (-6, 7), 9,
                        dict(resize_x=33, resize_y=11, interp_type="lanczos3",
                             roi_start=[5.135325, 68.118131], roi_end=[48.321391, 69.625854])),
    "i16_roi_gaussian": ((59, 41, 1), "int16", (-6, 7), 10,
                         dict(resize_x=73, resize_y=22, interp_type="gaussian", antialias=False,
                              roi_start=[32.435393, 16.180439], roi_end=[51.598220, 17.571786])),
    "u16_nearly_half": ((39, 2, 1), "uint16", (0, 7), 5588,
                        dict(resize_x=5, resize_y=63, min_filter="nn", mag_filter="linear")),
    "i16_gaussian_5ch": ((33, 29, 5), "int16", (-4, 5), 12, dict(resize_x=47, resize_y=18, interp_type="gaussian")),
    "u8_nearly_half": ((39, 2, 1), "uint8", (0, 7), 5588,
                       dict(resize_x=5, resize_y=63, min_filter="nn", mag_filter="linear")),
    # uint8 too: 16-column vector stores in the runs before and after the inner one (2 values off)
    "u8_cubic_edge_runs": ((3, 2, 1), "uint8", (0, 4), 4, dict(resize_x=255, resize_y=5, interp_type="cubic")),
}

# name -> (out_h, out_w, first 16 hex digits of sha256(DALI 2.4's output))
DALI = {
    "i16_linear_up_1ch": (90, 81, "be2f56b415b83d5e"),
    "i16_triangular_down_3ch": (20, 60, "8c5a4b88ef36beee"),
    "i16_lanczos_noaa_3ch": (31, 23, "65d9a653249de3c5"),
    "u16_linear_noaa_ties": (20, 60, "452835198ed0cfd0"),
    "u16_halving_ties_3ch": (19, 25, "39f63d62af1e58bc"),
    "i16_halving_ties_1ch": (19, 25, "13bd7f6d1059a34b"),
    "i16_cubic_edge_runs": (7, 80, "c47dbc3a8a7bf615"),
    "i16_cubic_edge_runs_3ch": (6, 100, "46bb093f1117f795"),
    "i16_roi_lanczos": (11, 33, "f9ab580b5e931e78"),
    "i16_roi_gaussian": (22, 73, "6f516d70c386424f"),
    "u16_nearly_half": (63, 5, "df9d44a28be4d2e0"),
    "i16_gaussian_5ch": (18, 47, "80256f3a3f17cd68"),
    "u8_nearly_half": (63, 5, "628a165d160828c3"),
    "u8_cubic_edge_runs": (5, 255, "74c8b457e17e603f"),
}

_FILTERS = ("interp_type", "min_filter", "mag_filter")


def _image(name: str) -> np.ndarray:
    shape, dtype, (lo, hi), seed, _ = CASES[name]
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("name", list(CASES))
def test_pipeline_matches_dali(name: str) -> None:
    img, args = _image(name), CASES[name][4]
    kw = {k: getattr(types, "INTERP_" + v.upper()) if k in _FILTERS else v for k, v in args.items()}
    kw.update(resize_x=float(args["resize_x"]), resize_y=float(args["resize_y"]))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.resize(fn.external_source(source=[[img]], layout="HWC", cycle=True), **kw)

    p = pipe()
    p.build()
    out = np.array(p.run()[0].at(0))
    oh, ow, want = DALI[name]
    assert out.dtype == img.dtype and out.shape == (oh, ow, img.shape[2]) and _digest(out) == want


@pytest.mark.parametrize("name", list(CASES))
def test_spec_matches_dali(name: str) -> None:
    """functional.resize alone (on resize_plan's window) gives the same bits."""
    img, args = _image(name), CASES[name][4]
    sizing = {k: float(args[k]) for k in ("resize_x", "resize_y")}
    roi = (args["roi_start"], args["roi_end"]) if "roi_start" in args else None
    (oh, ly, hy), (ow, lx, hx) = resize_plan.one(img.shape[:2], sizing, roi=roi)
    out = resize(torch.from_numpy(img), (oh, ow), args.get("interp_type", "linear"), args.get("antialias", True),
                 args.get("min_filter"), args.get("mag_filter"), window=((ly, hy), (lx, hx))).numpy()
    assert (oh, ow, _digest(out)) == DALI[name]
