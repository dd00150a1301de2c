"""`if` on a DataNode with tuples, lists and dicts as branch values (`return node, 3`): merged
element by element, as DALI's conditionals do; a different nesting per branch is a ValueError."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def


def _idx():
    return fn.external_source(lambda si: np.array(si.idx_in_batch, dtype=np.int32), batch=False)


def test_nested_branch_values_merge_per_element():
    @pipeline_def(batch_size=6, num_threads=1, device_id=None, seed=3, enable_conditionals=True)
    def p():
        idx = _idx()

        def helper(x):
            if x < 3:
                return x * 10, 1, {"k": x}, [x]
            else:
                return x, 2, {"k": x + 100}, [x - 1]
        a, g, d, lst = helper(idx)
        return a, g, d["k"], lst[0]
    a, g, k, first = p().run()
    as_list = lambda tl: [np.asarray(t).item() for t in tl]  # noqa: E731
    assert as_list(a) == [0, 10, 20, 3, 4, 5]
    assert as_list(g) == [1, 1, 1, 2, 2, 2]
    assert as_list(k) == [0, 1, 2, 103, 104, 105]
    assert as_list(first) == [0, 1, 2, 2, 3, 4]


def test_different_nesting_is_a_value_error():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3, enable_conditionals=True)
    def p():
        idx = _idx()
        if idx < 1:
            r = (idx, idx)
        else:
            r = idx
        return r
    with pytest.raises(ValueError, match="different structure"):
        p()


def test_variable_set_in_one_branch_is_a_runtime_error():
    """DALI raises a RuntimeError; torch_dali's error is also a GraphError."""
    from torch_dali.errors import GraphError

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3, enable_conditionals=True)
    def p():
        idx = _idx()
        if idx < 1:
            out = idx + 1
        return out  # noqa: F821 - set in one branch only
    with pytest.raises(RuntimeError, match="'out'.*initialized in the `else` branch") as info:
        p()
    assert isinstance(info.value, GraphError)


def test_none_in_one_branch_is_a_structure_error():
    """DALI 2.4 (optree) takes None as an empty nest: `r = None` in one branch and a DataNode in the
    other is its nesting-structure ValueError; torch_dali raised a TypeError (not a constant)."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3, enable_conditionals=True)
    def p():
        idx = _idx()
        if idx < 1:
            r = None
        else:
            r = idx
        return r
    with pytest.raises(ValueError, match="different structure .*None and a DataNode"):
        p()
