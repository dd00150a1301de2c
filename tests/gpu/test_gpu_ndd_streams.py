"""The dynamic mode's CUDA streams on a GPU (skipped without CUDA): ndd.stream() wraps torch
streams, raw handles and `__cuda_stream__` objects; ops in a context with a stream run on it and
give the results they give on torch's current stream; the default and current streams."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import torch_dali.experimental.dynamic as ndd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


class _Foreign:
    def __init__(self, s: torch.cuda.Stream) -> None:
        self._s = s

    def __cuda_stream__(self):
        return (0, self._s.cuda_stream)


def test_wrapping_and_equality():
    t = torch.cuda.Stream()
    a, b, c = ndd.stream(stream=t), ndd.stream(stream=t.cuda_stream), ndd.stream(stream=_Foreign(t))
    assert a.handle == b.handle == c.handle == t.cuda_stream
    assert a == b == c and a == t and a.device_id == torch.cuda.current_device()
    assert a.__cuda_stream__() == (0, t.cuda_stream)
    n = ndd.stream()
    assert n != a and n.handle != 0
    assert ndd.stream(stream=n) is n
    with pytest.raises(ValueError):
        ndd.stream(stream=n, device_id=n.device_id + 1)


def test_ops_on_a_context_stream_give_the_same_values():
    img = ndd.as_tensor(torch.arange(48 * 64 * 3, dtype=torch.uint8).reshape(48, 64, 3).cuda(), layout="HWC")
    want = ndd.resize(img, size=[24, 30]).torch().cpu()
    s = ndd.stream()
    with ndd.EvalContext(cuda_stream=s) as ctx:
        assert ctx.cuda_stream == s and ctx.op_stream() is s
        got = ndd.resize(img, size=[24, 30])
        doubled = got * 2
    assert torch.equal(got.torch().cpu(), want)
    assert torch.equal(doubled.torch().cpu(), (want.int() * 2).to(doubled.torch().dtype))


def test_default_and_current_streams():
    s, t = ndd.stream(), ndd.stream()
    try:
        ndd.set_default_stream(s)
        assert ndd.get_default_stream() == s and ndd.EvalContext().cuda_stream == s
        ndd.set_current_stream(t)
        assert ndd.get_current_stream() == t
        seen = {}
        th = threading.Thread(target=lambda: seen.update(other=ndd.get_current_stream()))
        th.start(); th.join()
        assert seen["other"] == s  # the current stream is per thread; the default is global
        x = ndd.as_tensor(torch.ones(4, device="cuda"))
        assert (x + 1).torch().cpu().tolist() == [2.0] * 4
    finally:
        ndd.set_current_stream(None)
        ndd.set_default_stream(None)
    assert ndd.get_default_stream() is None
    assert ndd.EvalContext().cuda_stream == torch.cuda.current_stream()
    np.testing.assert_array_equal(np.asarray((ndd.tensor([1, 2]) + 1)), [2, 3])
