"""A helper decorated with `functools.wraps`, called inside a converted `if`, runs its wrapper:
`inspect` follows `__wrapped__` to the wrapped function (and the wrapper carries its __name__),
so torch_dali rewrote the wrapped function in the wrapper's place and called it with the
wrapper's arguments. Found with DALI's conditionals-autoaugment notebook (its
`@op_magnitude_range` operations rotated by the magnitude index, 2 degrees, instead of -16.7).
Expected values: DALI 2.4 CPU's."""
from __future__ import annotations

import functools

import numpy as np

from torch_dali import fn, pipeline_def


def magnitude(lo, hi):
    def deco(f):
        @functools.wraps(f)
        def wrapper(x, m):
            return f(x, float(np.linspace(lo, hi, 10)[m]))
        return wrapper
    return deco


@magnitude(-30.0, 30.0)
def shift(x, p):
    return x + p


def test_a_wraps_decorated_helper_runs_its_wrapper_inside_an_if():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, enable_conditionals=True)
    def p():
        x = fn.external_source(source=lambda: [np.float32(v) for v in (1.0, -2.0, 3.0, -4.0)], batch=True)
        if x > 0:
            y = shift(x, 2)
        else:
            y = shift(x, 9)
        return y

    pipe = p()
    pipe.build()
    got = [float(np.array(s)) for s in pipe.run()[0]]
    assert got == [-15.666666030883789, 28.0, -13.666666030883789, 26.0]  # DALI 2.4
