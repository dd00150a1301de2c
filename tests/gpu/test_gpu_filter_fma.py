"""fn.experimental.filter's fused multiply-adds on CUDA (skipped without CUDA): torch's addcmul,
which fma32 uses there, rounds once, as the float64 emulation the CPU spec runs does."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali.functional import filters as K

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_cuda_fma32_equals_the_emulation():
    g = torch.Generator(device="cuda").manual_seed(3)
    acc, x = torch.randn(1 << 20, device="cuda", generator=g) * 100, torch.randn(1 << 20, device="cuda", generator=g)
    for w in (torch.randn(1 << 20, device="cuda", generator=g), torch.tensor(0.1234567, device="cuda")):
        assert torch.equal(K.fma32(acc, x, w), K.fma32_emulated(acc, x, w))
    one_up = 1.0 + 2.0 ** -23  # the tie test_filter_rounding holds on the CPU
    t = torch.tensor([one_up], device="cuda")
    assert K.fma32(t, t, torch.tensor([2.0 ** -24 - 2.0 ** -47], device="cuda")).item() == one_up


def test_filter_to_the_input_type_same_bits_on_cuda():
    from torch_dali import fn, pipeline_def
    rng = np.random.default_rng(5)
    imgs = [rng.random((37, 29, 3), dtype=np.float32) * 255 for _ in range(3)]
    kernel = rng.random((5, 4), dtype=np.float32) - 0.3

    def run(device):
        @pipeline_def(batch_size=3, num_threads=1, device_id=0)
        def p():
            x = fn.external_source(source=lambda: imgs, batch=True, layout="HWC")
            return fn.experimental.filter(x.gpu() if device == "gpu" else x, kernel)
        pipe = p()
        pipe.build()
        out, = pipe.run()
        return [np.asarray(out.as_cpu()[i]) for i in range(3)]

    for a, b in zip(run("cpu"), run("gpu")):
        np.testing.assert_array_equal(a, b)
