"""CPU/CUDA parity of the tensor ops (skipped without CUDA): every deterministic case of
tests/reference/tensor_cases.py and tensor_cases_more.py (transpose, squeeze, expand_dims,
element_extract, cat, stack, one_hot, get_property, permute_batch, reductions.*, tensor_resize,
fast_resize_crop_mirror) runs with the op on each device (per-sample arguments stay on the CPU).
Both refuse the same cases; shapes, types and layouts agree; integers exactly (tensor_resize: off
by 1 on at most 0.1% of the values, where a CUDA float32 product lands on a rounding tie), floats
within 1e-5 of the value range (CUDA reductions sum in another order). The CPU-only ops
(batch_permutation, random.beta/choice, segmentation.*) are DALI's CPU-only ops too."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def

from reference import tensor_cases as C
from reference import tensor_cases_more as M
from reference.tensor_check import ours

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CASES = [*C.CASES, *M.REDUCTIONS, *M.RESIZE]


@pytest.mark.parametrize("name", CASES)
def test_cpu_and_cuda_agree(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        cpu, gpu = ours(name, "cpu"), ours(name, "gpu")
    assert ("error" in cpu) == ("error" in gpu), (cpu.get("error"), gpu.get("error"))
    if "error" in cpu:
        return
    assert cpu["layouts"] == gpu["layouts"]
    resampled = name in M.RESIZE
    for c_out, g_out in zip(cpu["outputs"], gpu["outputs"]):
        for c, g in zip(c_out, g_out):
            assert c.shape == g.shape and c.dtype == g.dtype, (c.shape, g.shape, c.dtype, g.dtype)
            if c.dtype.kind == "f":
                scale = max(1.0, float(np.abs(c).max(initial=0)))
                np.testing.assert_allclose(g, c, rtol=0, atol=1e-5 * scale)
            elif resampled:
                d = np.abs(c.astype(np.int64) - g.astype(np.int64))
                assert d.max(initial=0) <= 1 and (d > 0).mean() <= 0.001, (d.max(), (d > 0).sum())
            else:
                np.testing.assert_array_equal(g, c)


def _gpu_run(body, xs, layout):
    @pipeline_def(batch_size=len(xs), num_threads=1, device_id=0, seed=1)
    def pipe():
        return body(fn.external_source(source=lambda: list(xs), batch=True, layout=layout).gpu())

    p = pipe()
    p.build()
    out = p.run()
    out = out if isinstance(out, tuple) else (out,)
    assert all(o.is_cuda for o in out)
    return [[np.asarray(o.as_cpu().at(i)) for i in range(len(o))] for o in out]


@pytest.mark.parametrize("op", [
    lambda x: fn.transpose(x, perm=[2, 0, 1]),
    lambda x: fn.reductions.mean(x, axes=[0, 1]),
    lambda x: fn.reductions.std_dev(x, fn.reductions.mean(x, axes=[0, 1]), axes=[0, 1]),
    lambda x: fn.one_hot(fn.reductions.max(x, axes=2), num_classes=256),
    lambda x: fn.stack(x, x, axis=1),
    lambda x: fn.tensor_resize(x, sizes=[20, 9], axes=[0, 1]),
])
def test_dense_gpu_batch_matches_ragged(op):
    """The batched (dense) CUDA path and the per-sample one give the same samples."""
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 256, (2, 12, 15, 3)).astype(np.uint8)
    c = rng.integers(0, 256, (7, 11, 3)).astype(np.uint8)
    dense, ragged = _gpu_run(op, [a, b], "HWC"), _gpu_run(op, [a, c, b], "HWC")
    for d, r in zip(dense, ragged):
        if d[0].dtype.kind == "f":
            np.testing.assert_allclose(d[0], r[0], rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(d[0], r[0])
