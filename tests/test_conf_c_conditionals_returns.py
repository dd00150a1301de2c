"""`return` in `if` statements on DataNodes (enable_conditionals), as DALI 2.4 takes them: early
returns (`if c: return a` then more code), `if/elif/else` chains that return in every branch,
returns nested in a branch's own `if`, and `continue` in a branch of a loop's `if`. Values
measured with DALI 2.4 (device_id=None) on the indices 0..4; torch_dali refused all seven
patterns before ("`return` other than as the last statement of both branches", "only the `if`
branch returns", "`break` or `continue` in a branch")."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def


def elif_returns(i):
    if i < 2:
        return i * 10
    elif i < 4:
        return i * 100
    else:
        return i - 1000


def early_return(i):
    if i < 2:
        return i * 10
    return i + 1


def early_return_chain(i):
    if i < 2:
        return i * 10
    if i < 4:
        return i * 100
    return i - 1000


def nested_returns(i):
    if i < 2:
        j = i * 10
        if i < 1:
            return j + 1
        else:
            return j + 2
    else:
        return i


def return_then_assign(i):
    if i < 2:
        return i * 10
    else:
        j = i + 1
    return j


def early_return_mid(i):
    out = i
    if i < 2:
        out = i * 10
        return out
    out = out + 1
    return out


def continue_in_loop(i):
    out = i
    for k in range(3):
        if i > k:
            continue
        out = out + 1
    return out


DALI_2_4 = {  # per sample i = 0..4
    elif_returns: [0, 10, 200, 300, -996],
    early_return: [0, 10, 3, 4, 5],
    early_return_chain: [0, 10, 200, 300, -996],
    nested_returns: [1, 12, 2, 3, 4],
    return_then_assign: [0, 10, 3, 4, 5],
    early_return_mid: [0, 10, 3, 4, 5],
    continue_in_loop: [3, 3, 3, 3, 4],
}


@pytest.mark.parametrize("helper", list(DALI_2_4), ids=lambda f: f.__name__)
def test_returns_in_branches_as_dali(helper):
    @pipeline_def(batch_size=5, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        i = fn.external_source(lambda: [np.int32(v) for v in range(5)], batch=True)
        return helper(i)
    (out,) = pipe().run()
    assert [int(np.asarray(x)) for x in out] == DALI_2_4[helper]
    # the rewritten helper with Python numbers: Python's own results
    from torch_dali.conditionals import convert
    assert [convert(helper)(v) for v in range(5)] == [helper(v) for v in range(5)] == DALI_2_4[helper]


def test_a_return_in_one_branch_only_with_nothing_after_is_still_an_error():
    def helper(i):
        if i < 2:
            return i * 10

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        return helper(fn.external_source(lambda: [np.int32(0), np.int32(3)], batch=True))
    with pytest.raises(ValueError, match="only the `if` branch returns") as info:
        pipe()
    assert isinstance(info.value, RuntimeError)  # DALI 2.4 raises a RuntimeError while tracing


def test_break_in_a_branch_is_refused_with_dalis_type():
    """DALI 2.4 refuses `break` in a loop's `if` on a DataNode with a TypeError (it asks the
    DataNode for a truth value); torch_dali's refusal was a ValueError only."""
    def helper(i):
        out = i
        for k in range(3):
            if i > k:
                break
            out = out + 1
        return out

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        return helper(fn.external_source(lambda: [np.int32(0), np.int32(3)], batch=True))
    with pytest.raises(TypeError, match="`break`"):
        pipe()
