"""`if` on a DataNode: a variable nothing reads after the `if` may hold values that do not merge
(a string, a function, another nesting per branch), as in DALI 2.4, whose conversion merges only
the variables read afterwards; one read afterwards (later in the function, in a later loop
iteration, by a nested function) must still merge. Values and exception types below were measured
with DALI 2.4 on the same pipelines (conditionals/test_nests.py's pattern)."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types


def _run(body):
    @pipeline_def(enable_conditionals=True, num_threads=1, batch_size=4, device_id=None)
    def pipe():
        pred = fn.external_source(source=lambda x: np.array(x.idx_in_batch % 2), batch=False)
        data = types.Constant(np.array(42), device="cpu")
        return body(pred, data)
    return [[np.asarray(o[i]).item() for i in range(4)] for o in pipe().run()]


def _str(pred, data):
    if pred:
        s = "abc"
        out = data
    else:
        s = "xyz"
        out = data + 1
    return out


def _function(pred, data):
    if pred:
        tmp = fn.flip
        out = data + 1
    else:
        tmp = fn.rotate
        out = data - 1
    return out


def _nesting(pred, data):
    if pred:
        tmp = (data, data)
        out = tmp[0] + 1
    else:
        tmp = data
        out = data - 1
    return out


def _none(pred, data):
    if pred:
        tmp = None
        out = data + 1
    else:
        tmp = data
        out = data - 1
    return out


def _keys(pred, data):
    if pred:
        d = {"a": data}
        out = d["a"]
    else:
        d = {"b": data}
        out = d["b"] + 1
    return out


def _nested_if(pred, data):
    if pred:
        if data > 40:
            tmp = "x"
        else:
            tmp = (data,)
        out = data + 1
    else:
        tmp = data
        out = data - 1
    return out


def _in_try(pred, data):
    try:
        if pred:
            tmp = "x"
            out = data + 1
        else:
            tmp = data
            out = data - 1
    finally:
        pass
    return out


@pytest.mark.parametrize("body, expected", [
    (_str, [43, 42, 43, 42]), (_function, [41, 43, 41, 43]), (_nesting, [41, 43, 41, 43]),
    (_none, [41, 43, 41, 43]), (_keys, [43, 42, 43, 42]), (_nested_if, [41, 43, 41, 43]),
    (_in_try, [41, 43, 41, 43])])
def test_unread_variables_need_not_merge(body, expected):
    assert _run(body) == [expected]  # each was refused at the `if` before


def _str_read(pred, data):
    if pred:
        s = "abc"
    else:
        s = "xyz"
    return fn.cast(data, dtype=types.FLOAT) if s == "abc" else data


def _keys_read(pred, data):
    if pred:
        d = {"a": data}
    else:
        d = {"b": data}
    return d["a"]


def _read_next_iteration(pred, data):
    s = out = data
    for i in range(2):
        if i == 1:
            out = s[0] if isinstance(s, tuple) else s
        if pred:
            s = (data, data)
        else:
            s = data
    return out


def _read_by_closure(pred, data):
    def get():
        return s
    if pred:
        s = (data, data)
    else:
        s = data
    return data + 1


@pytest.mark.parametrize("body, error", [
    (_str_read, TypeError), (_keys_read, ValueError), (_read_next_iteration, ValueError),
    (_read_by_closure, ValueError)])
def test_variables_read_afterwards_still_must_merge(body, error):
    with pytest.raises(error):  # DALI 2.4 raises these types at the `if`
        _run(body)


def _del_outer_read_in_else(pred, data):
    t = data
    if pred:
        del t
        out = data + 1
    else:
        out = t - 1
    return out


def _del_outer_in_both(pred, data):
    t = data
    if pred:
        del t
        out = data + 1
    else:
        del t
        out = data - 1
    return out


@pytest.mark.parametrize("body", [_del_outer_read_in_else, _del_outer_in_both])
def test_del_of_a_variable_from_before_the_if_is_refused(body):
    with pytest.raises(RuntimeError, match="del t"):  # DALI 2.4: RuntimeError at the `if`
        _run(body)  # was an UnboundLocalError: the `else` branch, traced second, lost `t`


def test_del_of_a_branch_temporary_is_fine():
    def body(pred, data):
        if pred:
            tmp = data * 2
            out = tmp + 1
            del tmp
        else:
            out = data
        return out
    assert _run(body) == [[42, 85, 42, 85]]  # DALI 2.4's values
