"""reductions.max / min of float data as DALI 2.4 computes them (outputs measured under DALI 2.4;
found by conformance/differential, reductions.max:2100074): NaNs never win, and the result is
bounded by the type's finite extreme DALI starts from, so a NaN-only or -inf-only max is
-3.4028235e38 (min: +3.4028235e38). Before, NaN spread and -inf came out."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def

NAN, INF = float("nan"), float("inf")
LOW = float(np.finfo(np.float32).min)


def _run(op, x, **kw):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return getattr(fn.reductions, op)(fn.external_source(source=lambda: [x], batch=True), **kw)
    p = pipe()
    p.build()
    out, = p.run()
    return np.asarray(out.at(0))


CASES = [  # (op, values, shape, args, DALI 2.4's output)
    ("max", [NAN, 1.0, 2.0], (3,), {}, [2.0]),
    ("max", [1.0, 2.0, NAN], (3,), {}, [2.0]),
    ("min", [1.0, NAN, 2.0], (3,), {}, [1.0]),
    ("max", [NAN], (1,), {}, [LOW]),
    ("min", [NAN], (1,), {}, [-LOW]),
    ("max", [-INF, -INF], (2,), {}, [LOW]),
    ("min", [INF, NAN, INF], (3,), {}, [-LOW]),
    ("max", [INF, NAN], (2,), {}, [INF]),
    ("max", [NAN, 1.0, NAN, NAN], (2, 2), dict(axes=[1]), [1.0, LOW]),
    ("max", [NAN, 1.0, NAN, NAN, 2.0, 5.0], (2, 3), dict(axes=[0]), [LOW, 2.0, 5.0]),
]


@pytest.mark.parametrize("op,vals,shape,kw,want", CASES)
def test_matches_dali(op, vals, shape, kw, want):
    got = _run(op, np.array(vals, np.float32).reshape(shape), **kw)
    np.testing.assert_array_equal(got.ravel(), np.array(want, np.float32))
