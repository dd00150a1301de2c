"""Arithmetic on DataNodes against DALI 2.4's: values and result types of the expressions in
tests/reference/cases.py (uint8, int32 and float32 operands, constants on either side)."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def

from reference import cases as C
from reference.tables import SOURCES, expected

# ops/arithmetic.py follows DALI 2.4's type promotion and integer `//`/`%` (the six expressions that
# were strict xfails here pass since the DALI-semantics work): every case must match.


def ours(expr: str) -> np.ndarray:
    vals = [torch.from_numpy(v) for v in (C.ARITH_A, C.ARITH_B, C.ARITH_I, C.ARITH_F)]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        a, b, i, f = (fn.external_source(source=functools.partial(lambda v: [v], v), layout="HWC") for v in vals)
        return eval(expr, {}, {"a": a, "b": b, "i": i, "f": f})  # the test's own expressions

    p = pipe()
    p.build()
    return np.asarray(p.run()[0].at(0))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", sorted(C.ARITH_CASES))
def test_expression_matches_dali(name, source):
    expr = C.ARITH_CASES[name]
    want = expected(source, f"arith/{name}", lambda d: d.arithmetic(expr))
    got = ours(expr)
    assert got.shape == want.shape
    assert got.dtype == want.dtype, f"{expr}: {got.dtype} (ours) vs {want.dtype} (DALI)"
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(got, want)
