"""Behaviours DALI's documentation notebooks rely on (hid-31j's notebook pass: expressions, type
promotions, ...); each fact was measured with DALI 2.4's CPU backend."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, types
from torch_dali.pipeline import Pipeline
from torch_dali.types import Constant


def _run(expr, dtype=np.int32):
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        t = fn.external_source(source=lambda: [np.array([1, 2], dtype)])
        pipe.set_outputs(expr(t))
    pipe.build()
    out = pipe.run()[0].as_array()
    return out.tolist(), str(out.dtype)


# DALI 2.4: each of these is an OverflowError when the pipeline is built or run (the notebook
# expr_type_promotions invites trying constants of other types; torch_dali wrapped them silently)
@pytest.mark.parametrize("expr", [
    lambda t: t + 2**31,  # a Python int is an INT32 constant (it was -2**31)
    lambda t: t + 2**40,  # (it added 0)
    lambda t: t + Constant(300).uint8(),  # (it added 44)
    lambda t: t + Constant(300.0).uint8(),
    lambda t: t + Constant(-1.5).uint8(),  # truncated to -1
    lambda t: t + Constant(65536).uint16(),
    lambda t: t + Constant(-129).int8(),
    lambda t: t * Constant(2**63, types.INT64),
])
def test_integer_constant_out_of_range_is_refused(expr):
    with pytest.raises(OverflowError, match="outside the range"):
        _run(expr)


@pytest.mark.parametrize("expr,dtype,want", [
    # DALI 2.4's outputs at the edges of each type
    (lambda t: t + -2**31, np.int32, ([[-2147483647, -2147483646]], "int32")),
    (lambda t: t + Constant(-2**63, types.INT64), np.int32, ([[-9223372036854775807, -9223372036854775806]], "int64")),
    (lambda t: t + Constant(65535).uint16(), np.int32, ([[65536, 65537]], "int32")),
    (lambda t: t + Constant(-128).int8(), np.int32, ([[-127, -126]], "int32")),
    (lambda t: t + Constant(-0.5).uint8(), np.int32, ([[1, 2]], "int32")),  # truncated to 0
    (lambda t: t + Constant(255.7).uint8(), np.int32, ([[256, 257]], "int32")),
    (lambda t: t + Constant(5).bool(), np.int32, ([[2, 3]], "int32")),
    (lambda t: t + np.int64(2**40), np.int64, ([[1099511627777, 1099511627778]], "int64")),
    (lambda t: t < 300, np.uint8, ([[True, True]], "bool")),
])
def test_integer_constants_in_range(expr, dtype, want):
    assert _run(expr, dtype) == want
