"""cat leaves out input samples without elements, as DALI 2.4 does (shapes measured under DALI 2.4;
found by conformance/differential, cat:600026): an empty part is not checked against the others
and adds nothing; when every part is empty, the first one is the output (so (2, 0) and (3, 0)
along axis 0 give (2, 0), not (5, 0)). stack still needs equal shapes, as in DALI."""
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


def test_parts_with_elements_still_checked():
    with pytest.raises(Exception, match="concatenation axis"):
        _cat(_arr(1, 3), _arr(1, 2), axis=0)


def test_stack_still_needs_equal_shapes():
    with pytest.raises(Exception, match="equal shapes"):
        _cat(_arr(0, 3), _arr(0, 4), op="stack")
