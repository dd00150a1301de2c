"""Errors of the ops an `if` on a DataNode adds are reported at the `if` line, as DALI 2.4 reports
its `_conditional.merge` / `split` errors (`File "...", line N ... if pred:`). Before, the rewrite
gave the merge call the whole `if` statement's span and CPython put it on the span's last line
(the end of the `else` branch)."""
from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types


def _line_of(func, text: str) -> str:
    lines, start = inspect.getsourcelines(func)
    hit = next(i for i, line in enumerate(lines) if text in line)
    return f"{os.path.basename(__file__)}:{start + hit}"


def _raises_at(body, where: str) -> None:
    pipe = pipeline_def(body, batch_size=4, num_threads=1, device_id=None, seed=1, enable_conditionals=True)
    with pytest.raises(RuntimeError) as info:  # DALI: RuntimeError, naming the `if` line
        pipe().run()
    assert f"(defined at {where})" in str(info.value), str(info.value)


def test_divergent_branch_types_point_at_the_if():
    def body():
        pred = fn.random.coin_flip(dtype=types.BOOL, seed=42)
        if pred:
            out = types.Constant([1])
        else:
            extra = fn.random.uniform()  # noqa: F841 - more lines in the branch
            out = types.Constant([1.0])
        return out
    _raises_at(body, _line_of(body, "if pred:"))


def test_non_scalar_condition_points_at_the_if():
    def body():
        pred = fn.random.coin_flip(dtype=types.BOOL)
        stacked = fn.stack(pred, pred)
        if stacked:
            out = types.Constant([1])
        else:
            out = types.Constant([0])
        return out
    _raises_at(body, _line_of(body, "if stacked:"))


def test_conditional_expression_points_at_its_first_line():
    def body():
        pred = fn.stack(fn.random.coin_flip(dtype=types.BOOL), fn.random.coin_flip(dtype=types.BOOL))
        out = (types.Constant(np.int32(1))
               if pred else
               types.Constant(np.int32(0)))
        return out
    _raises_at(body, _line_of(body, "out = (types.Constant"))
