"""normalize and lookup_table against DALI 2.4's CPU backend (tests/reference/color_ops_cases.py), and
their argument rules. lookup_table is exact; normalize's float outputs are within 4 float32 ulps of
the value (DALI accumulates its statistics in another order), its integer outputs exact here."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, PipelineError

from reference import color_ops_cases as C
from reference.color_ops_check import SOURCES, compare, dali, ours

NAMES = [n for n in C.CASES if C.CASES[n]["op"] in ("normalize", "lookup_table")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", NAMES)
def test_against_dali(name, source):
    want, want_layout = dali(source, name)
    got, layout = ours(name)
    assert layout == want_layout
    if C.CASES[name]["op"] == "normalize":
        compare(got, want, atol=1e-6, rtol=5e-7)
    else:
        compare(got, want)


def _run(op, xs, layout="HWC", **kw):
    @pipeline_def(batch_size=len(xs), num_threads=1, device_id=None)
    def pipe():
        return op(fn.external_source(source=lambda: list(xs), batch=True, layout=layout), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    return [np.asarray(out.at(i)) for i in range(len(out))]


def test_normalize_matches_numpy():
    """The formula with ddof and epsilon, per sample, and a zero deviation giving `shift`."""
    rng = np.random.default_rng(1)
    x = rng.random((6, 7, 3)).astype(np.float32) * 10
    got = _run(fn.normalize, [x], axes=[0, 1], ddof=1, epsilon=0.5, scale=2.0, shift=1.0)[0]
    m = x.astype(np.float64).mean(axis=(0, 1), keepdims=True)
    sd = np.sqrt(((x - m) ** 2).sum(axis=(0, 1), keepdims=True) / (42 - 1) + 0.5)
    np.testing.assert_allclose(got, 2 * (x - m) / sd + 1, rtol=1e-6, atol=1e-6)
    flat = _run(fn.normalize, [np.full((3, 3), 4.0, np.float32)], layout="HW", shift=7.0)[0]
    assert (flat == 7.0).all()


def test_normalize_errors():
    x = [np.zeros((3, 4), np.float32)]
    with pytest.raises(PipelineError, match="out of valid range"):
        _run(fn.normalize, x, layout="HW", axes=[2])
    with pytest.raises(PipelineError, match='axis "C"'):
        _run(fn.normalize, x, layout="HW", axis_names="C")
    with pytest.raises(ArgumentError, match="not both"):
        _run(fn.normalize, x, layout="HW", axes=[0], axis_names="H")
    with pytest.raises(PipelineError, match="non-reduced axes"):
        _run(fn.normalize, [np.zeros((3, 4), np.float32), np.zeros((3, 5), np.float32)], layout="HW",
             batch=True, axes=[0])


def test_lookup_table_errors():
    with pytest.raises(ArgumentError, match="same length"):
        _run(fn.lookup_table, [np.zeros((2, 2), np.uint8)], layout="HW", keys=[1, 2], values=[1.0])
    with pytest.raises(ArgumentError, match=r"\[0, 65535\]"):
        _run(fn.lookup_table, [np.zeros((2, 2), np.uint8)], layout="HW", keys=[70000], values=[1.0])
    with pytest.raises(PipelineError, match="integers"):
        _run(fn.lookup_table, [np.zeros((2, 2), np.float32)], layout="HW", keys=[1], values=[1.0])


def test_lookup_table_uint8_covers_every_value():
    x = np.arange(256, dtype=np.uint8).reshape(16, 16)
    got = _run(fn.lookup_table, [x], layout="HW", keys=list(range(256)), values=[float(v) + 0.25 for v in range(256)])[0]
    np.testing.assert_array_equal(got, x.astype(np.float32) + 0.25)
