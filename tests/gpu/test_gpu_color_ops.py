"""CPU/CUDA parity of the color, filter, noise, normalize, histogram and distortion ops (skipped
without CUDA): every case of tests/reference/color_ops_cases.py runs on both devices.

Both devices run the same torch calls, so integer outputs agree exactly except where a float
transcendental (sin, cos, exp, pow, log: CUDA's differ from the CPU's by an ulp or two) lands on a
rounding tie (bound: off by 1 on 0.1% of the values); float outputs within 2e-6 of the value
range. Noise draws come from the same integer hash on both devices."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def

from reference import color_ops_cases as C
from reference.color_ops_check import ours

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.parametrize("name", list(C.CASES))
def test_cpu_and_cuda_agree(name, monkeypatch):
    if C.CASES[name]["op"] == "jpeg_compression_distortion":
        # the CPU runs libjpeg (DALI's CPU bits); CUDA the torch steps, held here to the same steps
        # on the CPU (tests/test_ops_distort.py holds those to DALI by mean difference)
        from torch_dali.io import decode
        monkeypatch.setattr(decode, "jpeg_round_trip", lambda image, quality: None)
    cpu, cpu_layout = ours(name, "cpu")
    gpu, gpu_layout = ours(name, "gpu")
    assert cpu_layout == gpu_layout and len(cpu) == len(gpu)
    for c, g in zip(cpu, gpu):
        assert c.shape == g.shape and c.dtype == g.dtype
        if c.dtype.kind == "f":
            scale = max(1.0, float(np.abs(c).max()))
            np.testing.assert_allclose(g, c, rtol=0, atol=2e-6 * scale)
        else:
            d = np.abs(c.astype(np.int64) - g.astype(np.int64))
            assert d.max(initial=0) <= 1 and (d > 0).mean() <= 0.001, (d.max(), (d > 0).sum())


@pytest.mark.parametrize("op,kw", [(fn.gaussian_blur, dict(sigma=1.5)), (fn.hue, dict(hue=30.0)),
                                   (fn.noise.gaussian, dict(stddev=5.0)), (fn.water, dict()),
                                   (fn.equalize, dict())])
def test_dense_gpu_batch_matches_ragged(op, kw):
    """The batched (dense) CUDA path and the per-sample one give the same samples."""
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 256, (2, 32, 40, 3)).astype(np.uint8)
    c = rng.integers(0, 256, (9, 11, 3)).astype(np.uint8)

    def run(batch):
        @pipeline_def(batch_size=len(batch), num_threads=1, device_id=0, seed=2)
        def pipe():
            x = fn.external_source(source=lambda: list(batch), batch=True, layout="HWC")
            return op(x.gpu(), **kw)

        p = pipe()
        p.build()
        out = p.run()[0]
        return [np.asarray(out.as_cpu().at(i)) for i in range(len(out))]

    dense, ragged = run([a, b]), run([a, c, b])
    np.testing.assert_array_equal(dense[0], ragged[0])
