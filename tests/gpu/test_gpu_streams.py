"""GPU ops that run sample by sample on the pool's threads launch on the step's stream (skipped
without CUDA). torch's current stream is per thread: launched from a pool thread on its default
stream, a sample's kernel was unordered with the step's stream and read an input still being
written (DALI's `test_pipeline_conditionals` on the GPU: 102 cases off by one branch)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.ops._operator import BatchContext, WorkerPool

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_map_runs_each_sample_on_the_steps_stream():
    stream = torch.cuda.Stream()
    pool = WorkerPool(4, "test-streams")
    try:
        ctx = BatchContext(None, 0, 16, torch.device("cuda"), pool, stream=stream)
        seen = ctx.map(lambda i: torch.cuda.current_stream().cuda_stream, 16)
    finally:
        pool.shutdown()
    assert seen == [stream.cuda_stream] * 16


def test_branches_of_an_if_on_gpu_data_take_each_samples_branch():
    bs, iters = 10, 8
    rng = np.random.default_rng(0)

    @pipeline_def(batch_size=bs, num_threads=4, device_id=0, prefetch_queue_depth=1, enable_conditionals=True)
    def pipe():
        x = fn.external_source(name="x", device="gpu")
        p0 = fn.external_source(name="p0")
        p1 = fn.external_source(name="p1")
        # a large input, so the first op's kernels still run when the per-sample ones start
        if p0:
            out = x + 1
        else:
            out = x + 2
        if p1:
            out2 = out + 3
        else:
            out2 = out + 4
        return out, out2

    p = pipe()
    p.build()
    for it in range(iters):
        xs = [np.full((256, 1024), it * bs + i, np.int32) for i in range(bs)]
        p0 = [np.array(bool(v)) for v in rng.integers(0, 2, bs)]
        p1 = [np.array(bool(v)) for v in rng.integers(0, 2, bs)]
        p.feed_input("x", xs)
        p.feed_input("p0", p0)
        p.feed_input("p1", p1)
        out, out2 = (o.as_cpu() for o in p.run())
        for i in range(bs):
            want = xs[i] + (1 if p0[i] else 2)
            np.testing.assert_array_equal(np.asarray(out.at(i)), want, err_msg=f"iteration {it}, sample {i}")
            np.testing.assert_array_equal(np.asarray(out2.at(i)), want + (3 if p1[i] else 4),
                                          err_msg=f"iteration {it}, sample {i}")


def test_gpu_data_copied_to_the_cpu_is_complete_when_a_cpu_op_reads_it():
    """`.cpu()` in a pipeline (DALI's GPU -> CPU transition): the copy is made on the stream
    that produced the data and waited for, so the CPU op after it reads the values (DALI's
    test_gpu2cpu_arg_input: a shape argument read from GPU data)."""
    @pipeline_def(batch_size=4, num_threads=2, device_id=0)
    def pipe():
        x = fn.external_source(name="x", device="gpu")
        big = x * 1  # a kernel on the step's stream before the copy
        return fn.zeros(shape=fn.reductions.max(big).cpu(), dtype=types.INT32), big.cpu()

    p = pipe()
    p.build()
    for it in range(5):
        xs = [np.full((512, 1024), 7 + it + i, np.int32) for i in range(4)]
        p.feed_input("x", xs)
        z, b = p.run()
        assert [tuple(z.at(i).shape) for i in range(4)] == [(7 + it + i,) for i in range(4)]
        for i in range(4):
            np.testing.assert_array_equal(np.asarray(b.at(i)), xs[i])
