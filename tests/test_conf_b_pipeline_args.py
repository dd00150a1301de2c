"""DALI's Pipeline arguments beyond running a graph: `output_layout` and the executor flags
(`stream_policy`, `concurrency`), as DALI 2.4 takes them."""
from __future__ import annotations

import numpy as np
import pytest

import torch_dali as td
from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentTypeError, PipelineError
from torch_dali.pipeline import Pipeline


@pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=5)
def _xy_pipe():
    return fn.reshape(np.arange(6, dtype=np.int32), shape=[2, 3], layout="XY")


def test_output_layout_checked_per_output():
    (o,) = _xy_pipe(output_layout="XY").run()
    assert o.layout() == "XY"
    for ok in (["XY"], None, [None], ""):  # None or an empty layout: any layout
        _xy_pipe(output_layout=ok).run()
    with pytest.raises(PipelineError, match="output_layout 'AB'"):
        _xy_pipe(output_layout="AB").run()
    with pytest.raises(ArgumentTypeError, match="output_layout"):
        _xy_pipe(output_layout=5)


def test_executor_flags_kept_and_serialized():
    assert _xy_pipe().stream_policy is None and _xy_pipe().concurrency is None
    for policy, conc in [(td.StreamPolicy.PER_BACKEND, td.OperatorConcurrency.BACKEND),
                         (td.StreamPolicy.SINGLE, td.OperatorConcurrency.FULL)]:
        p = _xy_pipe(stream_policy=policy, concurrency=conc, output_layout="XY")
        assert p.stream_policy is policy and p.concurrency is conc
        p2 = Pipeline.deserialize(p.serialize())
        assert p2.stream_policy is policy and p2.concurrency is conc
        assert p2.output_layout() == ["XY"]
    with pytest.raises(ArgumentTypeError, match="stream_policy"):
        _xy_pipe(stream_policy="single")
    from torch_dali.pipeline import OperatorConcurrency, StreamPolicy
    assert StreamPolicy is td.StreamPolicy and OperatorConcurrency is td.OperatorConcurrency
