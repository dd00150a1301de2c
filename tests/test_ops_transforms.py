"""transforms.*, coord_transform and coord_flip against DALI 2.4's CPU backend (cases in
tests/reference/geometry_cases.py, tables in geometry_tables.npz; "live" runs DALI now when it
imports). Cases DALI refuses must be refused here too.

Tolerances: transform matrices equal DALI's bit for bit (both build them in float32 with the same
order of roundings), but `combine`'s, composed in float64 and rounded once on purpose, within 2e-6
of DALI's float32 chain; coord_transform float outputs within 1e-6 relative (float32 sums in a possibly
different order), integer outputs exact; coord_flip exact. NaN/inf where DALI gives them (a zero
rotation axis, an empty crop extent).
"""
from __future__ import annotations

import numpy as np
import pytest

from reference import geometry_cases as G
from reference.geometry_tables import SOURCES, check_case

CASES = [k for k in G.CASES if k.split("/")[0] in ("transforms", "coord_transform", "coord_flip")]


def compare(name: str, got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if name.startswith("transforms/combine"):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=2e-6)
    elif name.startswith(("coord_flip", "transforms")) or got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * max(1.0, float(np.abs(want).max(initial=0))))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", CASES)
def test_matches_dali(name, source):
    check_case(name, source, lambda g, w: compare(name, g, w))


def test_layouts_are_dalis():
    """Matrices carry DALI's anonymous 2D layout "**"; coord_transform keeps the input's (as DALI
    2.4). coord_flip keeps it too (DALI 2.4 fails on a laid-out input instead: "Unexpected layout
    of output 0")."""
    from torch_dali import fn, pipeline_def
    import torch

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        pts = fn.external_source(source=lambda: [torch.zeros((2, 2))], batch=True, layout="NX")
        return (fn.transforms.rotation(angle=3.0), fn.transforms.rotation(angle=3.0, axis=[1.0, 0.0, 0.0]),
                fn.coord_transform(pts, M=2.0), fn.coord_flip(pts))
    pipe = p()
    pipe.build()
    assert [o.layout() for o in pipe.run()] == ["**", "**", "NX", "NX"]
