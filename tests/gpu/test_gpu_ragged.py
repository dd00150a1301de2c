"""On CUDA, batches of variable-size images run through the per-step ops as one batched call
(`ops.batching`): the same samples as the per-sample path on the same device (skipped without
CUDA). Both run the same elementwise float32 operations, so they agree bit for bit, except
jpeg_compression_distortion, whose 8x8 DCTs are batched matrix products (cuBLAS may pick another
kernel for another batch count: a last-bit change can move a rounding tie by 1), and against the
CPU's per-sample values within the tolerance tests/gpu/test_gpu_color_ops.py states (CUDA's sin,
cos, exp and log differ from the CPU's by an ulp or two).

Run on the GPU machine: `python3 -m pytest -q tests/gpu/test_gpu_ragged.py`.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali.functional import ragged

from ragged_cases import CASES, HW_CASES, images, run

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

DATA = images(9, 6, 90, seed=5)
MATMUL = ("jpeg_compression_distortion",)
FAST_KERNELS = ("crop_mirror_normalize",)  # the CUDA extension's kernel may run instead, both ways
# sin/cos on the device pick source pixels: an ulp can move a nearest sample to the next pixel
DEVICE_TRANSCENDENTAL_SAMPLING = ("water",)


def _close(a: np.ndarray, b: np.ndarray, exact: bool) -> None:
    assert a.shape == b.shape and a.dtype == b.dtype
    if exact:
        np.testing.assert_array_equal(a, b)
    elif a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-6 * max(1.0, float(np.abs(a).max(initial=0))))
    else:
        d = np.abs(a.astype(np.int64) - b.astype(np.int64))
        assert d.max(initial=0) <= 1 and (d > 0).mean() <= 0.001, (d.max(), (d > 0).sum())


@pytest.mark.parametrize("name", list(CASES) + list(HW_CASES))
def test_batched_cuda_path_matches_per_sample(name, monkeypatch):
    build = CASES.get(name) or HW_CASES[name]
    layout = "HWC" if name in CASES else "HW"
    data = DATA if layout == "HWC" else images(7, 1, 60, seed=6, channels=None)
    made = []
    init = ragged.Flat.__init__

    def counting(self, *a, **k):
        made.append(1)
        init(self, *a, **k)

    per_sample = run(build, data, False, monkeypatch, device="gpu", layout=layout)
    monkeypatch.setattr(ragged.Flat, "__init__", counting)
    batched = run(build, data, True, monkeypatch, device="gpu", layout=layout)
    assert made or name.startswith(FAST_KERNELS), "the batched path did not run"
    cpu = run(build, data, False, monkeypatch, device="cpu", layout=layout)
    for outs_g, outs_b, outs_c in zip(per_sample, batched, cpu):
        for g, b, c in zip(outs_g, outs_b, outs_c):
            _close(g, b, exact=not name.startswith(MATMUL))
            if not name.startswith(DEVICE_TRANSCENDENTAL_SAMPLING):
                _close(c, b, exact=False)
