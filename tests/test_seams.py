"""The public seams other modules use instead of private state: per-op timing of a plan (what
`torch-dali bench` prints), a TensorList's dense tensor, the executor's failure and on-demand mode."""
from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.executor.plan import Plan
from torch_dali.tensor_list import TensorList

SLEEP_S = 0.02


def slow(x: np.ndarray) -> np.ndarray:
    time.sleep(SLEEP_S)
    return x


@pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=5)
def _timed_pipe():
    x = fn.random.uniform(range=(0, 1), shape=(8, 8, 3), name="Noise")
    x = fn.cast(x, dtype=types.FLOAT16, name="Cast")  # a per-sample chain with the next op
    x = fn.cast(x, dtype=types.FLOAT, name="Back")
    return fn.python_function(x, function=slow, name="Slow")


def test_plan_time_ops_times_each_op_and_resets() -> None:
    pipe = _timed_pipe()
    plan = Plan(pipe.graph, pipe.batch_size, pipe.num_threads, None)
    try:
        times = plan.time_ops()
        assert plan.time_ops() is times  # one record per plan
        plan.run(0)
        assert times.seconds["Slow"] >= SLEEP_S
        times.reset()
        assert set(times.seconds.values()) == {0.0}
        for it in range(1, 4):
            plan.run(it)
        s = times.seconds
        assert s["Slow"] >= 3 * SLEEP_S
        assert s["Cast"] > 0 and s["Back"] > 0 and s["Noise"] > 0  # the chain's time is split, not lost
        assert s["Cast"] + s["Back"] < s["Slow"]
    finally:
        plan.close()


def test_a_plan_without_time_ops_records_nothing() -> None:
    pipe = _timed_pipe()
    plan = Plan(pipe.graph, pipe.batch_size, pipe.num_threads, None)
    try:
        plan.run(0)
        assert plan.op_times is None
    finally:
        plan.close()


def test_tensorlist_dense_is_the_backing_tensor_or_none() -> None:
    t = torch.zeros(3, 2, 2)
    assert TensorList(t).dense is t
    tl = TensorList([torch.zeros(2, 2), torch.zeros(3, 2)])
    assert tl.dense is None
    assert TensorList([torch.zeros(2), torch.zeros(2)]).dense is None  # a list stays a list until stacked


def _source_pipe(n: int):
    batches = iter([[np.full((2,), i, dtype=np.float32)] * 2 for i in range(n)])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(source=batches)
    return pipe()


def test_executor_failure_is_what_ended_prefetching() -> None:
    p = _source_pipe(2)
    ex = p.executor
    assert ex.failure is None
    p.run()
    p.run()
    with pytest.raises(StopIteration):
        p.run()
    assert isinstance(ex.failure, StopIteration)
    p.shutdown()


def test_executor_produce_on_demand_only_before_prefetching() -> None:
    p = _source_pipe(3)
    ex = p.executor
    assert ex.exec_async
    ex.produce_on_demand()
    assert not ex.exec_async  # nothing was prefetched yet: batches are made when asked
    p.run()
    p.shutdown()
    q = _source_pipe(3)
    q.run()  # prefetching started: on-demand can no longer apply
    q.executor.produce_on_demand()
    assert q.executor.exec_async
    q.shutdown()


def test_importing_torch_dali_leaves_torchvision_unimported() -> None:
    """torchvision imports torch._dynamo (~2.3 s on the dev VM): `import torch_dali` and DALI's
    usual imports must not pay it; the CPU decoders import it when they first decode."""
    import subprocess
    import sys
    code = ("import sys, torch_dali, torch_dali.fn, torch_dali.types, torch_dali.plugin.pytorch; "
            "print(sorted(m for m in ('torchvision', 'torch._dynamo') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "TORCH_DALI_PRELOAD_EXT": "0"})
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "[]", res.stdout
