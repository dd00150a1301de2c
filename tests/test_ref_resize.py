"""resize against NVIDIA DALI 2.4's CPU resize: every filter, up and down, antialias on and off,
regions of interest, per-axis filters, output sizes.

Expected outputs come from tests/reference/dali_tables.npz (regenerate: `python -m
tests.reference.make_dali_tables` in a DALI venv); the "live" variants run DALI now when it imports.
Tolerance, measured: integer outputs equal DALI's except values that land on a float32 tie, off by 1
(about 1 in 10^4; bound: max 1, at most 0.5% of values); float outputs within 3e-4 of 0..255.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torch_dali import fn, pipeline_def, types
from torch_dali.functional.resize import output_size, resize

from reference import cases as C
from reference.tables import SOURCES, expected, stored

_DT = {"float": torch.float32}


def ours(case: dict) -> np.ndarray:
    kw = {k: case[k] for k in ("min_filter", "mag_filter", "roi") if k in case}
    out = resize(torch.from_numpy(C.RESIZE_IMG), tuple(case["size"]), case["filter"], case["antialias"],
                 dtype=_DT.get(case.get("dtype", "")), **kw)
    return out.numpy()


def assert_close_to_dali(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if got.dtype.kind == "f":
        assert np.abs(got - want).max() <= 3e-4
        return
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1 and (diff > 0).mean() <= 0.005, (diff.max(), (diff > 0).sum())


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", sorted(C.RESIZE_CASES))
def test_resize_matches_dali(name, source):
    case = C.RESIZE_CASES[name]
    assert_close_to_dali(ours(case), expected(source, f"resize/{name}", lambda d: d.resize(case)))


def test_tables_are_mostly_exact():
    """Across all stored cases, DALI and we differ on almost no value (the bound above is loose)."""
    diffs = [np.abs(ours(c).astype(np.float64) - stored()[f"resize/{n}"]) for n, c in C.RESIZE_CASES.items()
             if c.get("dtype") != "float"]
    total = sum(d.size for d in diffs)
    assert sum(int((d > 0).sum()) for d in diffs) <= total * 1e-3


def test_torch_bicubic_would_fail():
    """The comparison is tight enough to catch torch's cubic (Keys a=-0.75, DALI uses -0.5) and
    torch's antialiased bilinear (renormalised at the borders, DALI repeats the edge)."""
    x = torch.from_numpy(C.RESIZE_IMG).permute(2, 0, 1)[None].float()
    cubic = F.interpolate(x, size=(30, 45), mode="bicubic", align_corners=False)[0].permute(1, 2, 0)
    cubic = cubic.round().clamp(0, 255).to(torch.uint8).numpy()
    assert np.abs(cubic.astype(int) - stored()["resize/cubic_aa_up"]).max() > 5
    lin = F.interpolate(x, size=(9, 13), mode="bilinear", antialias=True, align_corners=False)[0].permute(1, 2, 0)
    lin = lin.round().clamp(0, 255).to(torch.uint8).numpy()
    assert np.abs(lin.astype(int) - stored()["resize/linear_aa_down"]).max() > 5


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("i", range(len(C.SIZE_ARGS)), ids=[str(a) for a in C.SIZE_ARGS])
def test_output_size_matches_dali(i, source):
    args = C.SIZE_ARGS[i]
    want = expected(source, f"size/{i}", lambda d: d.output_sizes(args))
    assert [output_size(h, w, **args) for h, w in C.SIZE_SHAPES] == [tuple(s) for s in want.tolist()]


def test_the_op_resizes_as_the_function():
    """fn.resize with DALI's arguments gives the stored DALI output (sizes and pixels)."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: [torch.from_numpy(C.RESIZE_IMG)], layout="HWC")
        return (fn.resize(x, resize_x=45, resize_y=30, interp_type=types.INTERP_CUBIC),
                fn.resize(x, size=(9, 13), interp_type=types.INTERP_LANCZOS3, antialias=False),
                fn.resize(x, resize_x=45, resize_y=11, min_filter=types.INTERP_LINEAR, mag_filter=types.INTERP_NN))
    p = pipe()
    p.build()
    cubic, lanczos, mixed = (np.asarray(o.at(0)) for o in p.run())
    assert_close_to_dali(cubic, stored()["resize/cubic_aa_up"])
    assert_close_to_dali(lanczos, stored()["resize/lanczos3_noaa_down"])
    assert_close_to_dali(mixed, stored()["resize/min_linear_mag_nn"])
