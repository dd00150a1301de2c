"""The layout of a variable after an `if` on a DataNode is the layout of the branch its samples
took, as DALI 2.4's merge gives it: with every sample in the `else` branch, the `else` value's
layout (measured: `fn.reshape(x, layout="AB")` there gives 'AB'; a reshape to 1-D gives ''). Before,
torch_dali took the `if` value's layout whenever it had one, even for a branch no sample took."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def

X = [np.full((2, 3), k, dtype=np.int32) for k in range(4)]


def _run(flags, true_value, false_value):
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        x = fn.external_source(lambda: X, batch=True, layout="HW")
        p = fn.external_source(lambda: [np.array(v) for v in flags], batch=True)
        if p:
            y = true_value(x)
        else:
            y = false_value(x)
        return y
    (out,) = pipe().run()
    return out


@pytest.mark.parametrize("flags, want", [([True] * 4, "CD"), ([False] * 4, "AB")])
def test_the_taken_branch_gives_the_layout(flags, want):
    out = _run(flags, lambda x: fn.reshape(x, layout="CD"), lambda x: fn.reshape(x, layout="AB"))
    assert out.layout() == want


def test_a_flattening_else_branch_taken_by_every_sample_has_no_layout():
    out = _run([False] * 4, lambda x: x, lambda x: fn.reshape(x, shape=[6]))
    assert out.layout() == "" and [np.asarray(t).shape for t in out] == [(6,)] * 4


@pytest.mark.parametrize("false_layout, want", [("", ""), ("HW", "HW")])
def test_an_empty_layout_of_the_taken_branch_is_kept(false_layout, want):
    out = _run([False] * 4, lambda x: x, lambda x: fn.reshape(x, layout=false_layout))
    assert out.layout() == want


def test_both_branches_taken_with_different_layouts_is_an_error():
    with pytest.raises(RuntimeError, match="different layouts"):
        _run([True, False] * 2, lambda x: fn.reshape(x, layout="AB"), lambda x: x)
