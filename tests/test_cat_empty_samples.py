"""cat leaves out inputs whose batch holds no element, as DALI 2.4 does (shapes measured under DALI
2.4; found by conformance/differential, cat:600026 and cat:600053): such an input is not checked
against the others and adds nothing; when every input is empty, the first one is the output (so
(2, 0) and (3, 0) along axis 0 give (2, 0), not (5, 0)); an empty sample of an input with elements
in other samples is joined as any other. stack still needs equal shapes, as in DALI."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def


def _source(v):
    return lambda: [v]


def _cat(a, b, op="cat", axis=0):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        xs = [fn.external_source(source=_source(v), batch=True) for v in (a, b)]
        return getattr(fn, op)(*xs, axis=axis)
    p = pipe()
    p.build()
    out, = p.run()
    return np.asarray(out.at(0))


def _arr(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) + 1


CASES = [  # (shape a, shape b, axis, DALI 2.4's output shape; the non-empty part is the output)
    ((0, 5), (2, 3), 0, (2, 3)),
    ((2, 0), (3, 4), 1, (3, 4)),
    ((3, 4), (2, 0), 0, (3, 4)),
    ((0, 4), (0, 5), 0, (0, 4)),
    ((0, 4, 6), (0, 4, 6), 1, (0, 4, 6)),
    ((2, 0), (3, 0), 0, (2, 0)),
]


@pytest.mark.parametrize("sa,sb,axis,want", CASES)
def test_empty_parts_left_out(sa, sb, axis, want):
    a, b = _arr(*sa), _arr(*sb)
    out = _cat(a, b, axis=axis)
    assert out.shape == want
    full = a if a.size else b if b.size else a
    np.testing.assert_array_equal(out, full)


def _cat2(a, b, axis):
    """cat of two inputs, batches of two samples each."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        xs = [fn.external_source(source=_source2(v), batch=True) for v in (a, b)]
        return fn.cat(*xs, axis=axis)
    p = pipe()
    p.build()
    out, = p.run()
    return [np.asarray(out.at(i)).shape for i in range(2)]


def _source2(v):
    return lambda: list(v)


BATCHES = [  # (input a's samples, input b's samples, axis, DALI 2.4's output shapes)
    ([(2, 0), (1, 3)], [(1, 0), (1, 3)], 0, [(3, 0), (2, 3)]),
    ([(5, 2), (0, 2)], [(5, 3), (0, 1)], 1, [(5, 5), (0, 3)]),
    ([(0, 5), (0, 5)], [(2, 3), (1, 3)], 0, [(2, 3), (1, 3)]),
    ([(2, 0), (2, 0)], [(3, 0), (1, 0)], 0, [(2, 0), (2, 0)]),
]


@pytest.mark.parametrize("sa,sb,axis,want", BATCHES)
def test_whole_inputs_left_out(sa, sb, axis, want):
    assert _cat2([_arr(*s) for s in sa], [_arr(*s) for s in sb], axis) == want


def test_parts_with_elements_still_checked():
    with pytest.raises(Exception, match="concatenation axis"):
        _cat(_arr(1, 3), _arr(1, 2), axis=0)


def test_stack_still_needs_equal_shapes():
    with pytest.raises(Exception, match="equal shapes"):
        _cat(_arr(0, 3), _arr(0, 4), op="stack")
