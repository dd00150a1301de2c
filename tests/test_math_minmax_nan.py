"""math.min / math.max pick as DALI 2.4's CPU kernels do (`a < b ? a : b`, `a > b ? a : b`;
outputs measured under DALI 2.4; found by conformance/differential, math:2100058): a NaN on the
left gives the right operand, a NaN on the right stays; of -0.0 and 0.0 the right one. Before,
torch.minimum / maximum gave NaN for any NaN operand and kept -0.0."""
from __future__ import annotations

import math

import numpy as np

import torch_dali.math as dmath
from torch_dali import fn, pipeline_def

NAN = float("nan")
A = np.array([NAN, 1.0, NAN, -0.0, 0.0], np.float32)
B = np.array([1.0, NAN, NAN, 0.0, -0.0], np.float32)


def _run(f, a, b):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [a], batch=True)
        y = fn.external_source(source=lambda: [b], batch=True)
        return f(x, y)
    p = pipe()
    p.build()
    out, = p.run()
    return np.asarray(out.at(0))


def _same(got, want):  # NaN where NaN, and the sign of zeros
    assert [("nan" if math.isnan(g) else (g, math.copysign(1, g))) for g in got.tolist()] == \
        [("nan" if math.isnan(w) else (w, math.copysign(1, w))) for w in want]


def test_max_min_nan_and_signed_zero():
    for f in (dmath.max, dmath.min):  # DALI 2.4: [1, nan, nan, 0, -0] for both
        _same(_run(f, A, B), [1.0, NAN, NAN, 0.0, -0.0])


def test_mixed_types():
    ints = np.array([5, 7, 0], np.int32)
    floats = np.array([NAN, 1.0, -0.0], np.float32)
    _same(_run(dmath.max, floats, ints), [5.0, 7.0, 0.0])  # DALI 2.4
    _same(_run(dmath.min, ints, floats), [NAN, 1.0, -0.0])
