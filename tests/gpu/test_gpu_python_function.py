"""TorchPythonFunction on CUDA: a per-sample function over a batch whose samples share a shape is
called once through torch.vmap (made once per op); a function vmap cannot take (randomness, data-
dependent Python) runs per sample, as DALI calls it. Both give the per-sample values. Skipped
without CUDA; run on the GPU machine: `python3 -m pytest -q tests/gpu/test_gpu_python_function.py`.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.plugin.pytorch import TorchPythonFunction

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

BATCH = [np.random.default_rng(i).integers(0, 256, (12, 10, 3), dtype=np.uint8) for i in range(5)]


def _run(function, iters=2, **kw):
    @pipeline_def(batch_size=len(BATCH), num_threads=2, device_id=0, seed=3, prefetch_queue_depth=1)
    def p():
        x = fn.external_source(source=lambda: BATCH, layout="HWC", device="gpu")
        return TorchPythonFunction(function=function, device="gpu", **kw)(x)
    pipe = p()
    pipe.build()
    outs = []
    for _ in range(iters):
        (o,) = pipe.run()
        outs.append([np.asarray(o.as_cpu().at(i)) for i in range(len(BATCH))])
    return pipe, outs


def _op(pipe):
    return next(op for op in pipe.executor.plan.ops.values() if getattr(op, "kind", "") == "torch_python_function")


def test_vmapped_once_and_equal_to_the_samples():
    pipe, outs = _run(lambda t: (t.flip(1).float() * 0.5 + t.float().mean()).to(torch.uint8))
    op = _op(pipe)
    assert op._vmap_ok is True and op._vmapped is not None
    for out in outs:
        for o, x in zip(out, BATCH):
            t = torch.from_numpy(x).cuda()
            ref = (t.flip(1).float() * 0.5 + t.float().mean()).to(torch.uint8).cpu().numpy()
            np.testing.assert_array_equal(o, ref)


def test_random_function_runs_per_sample_and_reruns_alike():
    f = lambda t: t + torch.randint(0, 3, t.shape, device=t.device, dtype=t.dtype)  # noqa: E731
    pipe, a = _run(f)
    assert _op(pipe)._vmap_ok is False
    _, b = _run(f)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)


def test_timeout_keeps_the_per_sample_watched_calls():
    pipe, outs = _run(lambda t: t.flip(0), timeout=30)
    assert _op(pipe)._vmapped is None
    np.testing.assert_array_equal(outs[0][2], BATCH[2][::-1])
