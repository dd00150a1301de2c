"""Item assignments (`d["a"] = ...`, `lst[1] = ...`, `d["x"][k] = ...`, `d["a"] += ...`) in the
branches of an `if` on a DataNode merge per sample as variables do, as DALI 2.4 takes them
(values measured with DALI 2.4, device_id=None, on the indices 0..4). torch_dali refused them
("assignments to d['a'] (subscripts) in a branch is not supported")."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def


def existing_key(i):
    d = {"a": i, "b": i}
    if i < 2:
        d["a"] = i * 10
    return d["a"], d["b"]


def new_key_in_both(i):
    d = {}
    if i < 2:
        d["a"] = i * 10
    else:
        d["a"] = i
    return d["a"]


def list_item(i):
    lst = [i, i + 1]
    if i < 2:
        lst[1] = i * 10
    return lst[0], lst[1]


def nested_item(i):
    d = {"x": {"y": i}}
    k = "y"
    if i < 3:
        d["x"][k] = i + 7
    return d["x"]["y"]


def augmented_item(i):
    d = {"a": i}
    if i < 2:
        d["a"] += 100
    return d["a"]


DALI_2_4 = {  # per output, per sample i = 0..4
    existing_key: [[0, 10, 2, 3, 4], [0, 1, 2, 3, 4]],
    new_key_in_both: [[0, 10, 2, 3, 4]],
    list_item: [[0, 1, 2, 3, 4], [0, 10, 3, 4, 5]],
    nested_item: [[7, 8, 9, 3, 4]],
    augmented_item: [[100, 101, 2, 3, 4]],
}


@pytest.mark.parametrize("helper", list(DALI_2_4), ids=lambda f: f.__name__)
def test_item_assignments_in_branches_as_dali(helper):
    @pipeline_def(batch_size=5, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        i = fn.external_source(lambda: [np.int32(v) for v in range(5)], batch=True)
        return helper(i)
    outs = pipe().run()
    assert [[int(np.asarray(x)) for x in out] for out in outs] == DALI_2_4[helper]


def test_a_computed_subscript_in_a_branch_is_still_refused():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        i = fn.external_source(lambda: [np.int32(0), np.int32(3)], batch=True)
        lst = [i, i]
        if i < 2:
            lst[len(lst) - 1] = i * 10
        return lst[1]
    with pytest.raises(ValueError, match="subscripts"):
        pipe()


class _Box:
    pass


@pytest.mark.parametrize("body", ["item", "attribute"])
def test_an_item_or_attribute_set_in_one_branch_only_is_refused_at_the_if(body):
    """DALI 2.4 refuses `d["a"] = ...` / `o.a = ...` in one branch only (not set before) at the `if`,
    used afterwards or not (RuntimeError, measured); a plain variable is refused only where used."""
    def helper(i):
        d, o = {}, _Box()
        if i < 2:
            if body == "item":
                d["a"] = i
            else:
                o.a = i
        return i

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        return helper(fn.external_source(lambda: [np.int32(0), np.int32(3)], batch=True))
    with pytest.raises(RuntimeError, match="set in the `if` branch only"):
        pipe()
