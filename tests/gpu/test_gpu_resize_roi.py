"""resize / resize_crop_mirror with regions of interest, flips and subpixel_scale on CUDA against
the same cases on the CPU (tests/reference/resize_roi_cases.py; skipped without CUDA), and the
CUDA extension's resize kernel: it reads the whole image or the window a fractional size kept by
subpixel_scale reads, and declines regions of interest and flips.

Run on the GPU machine: `python3 -m pytest -q tests/gpu/test_gpu_resize_roi.py`.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types

from reference import resize_roi_cases as R

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CASES = [n for n in R.CASES if not n.startswith("error/")]


def run(case: R.Case, device: str) -> list[np.ndarray]:
    return R.run_case(case, fn, pipeline_def, types, to_input=torch.from_numpy, device=device)


@pytest.mark.parametrize("name", CASES)
def test_cuda_equals_cpu(name):
    """Separable float32 sums: the reduction order may differ by device (last bit: ties off by 1)."""
    case = R.CASES[name]
    for c, g in zip(run(case, "cpu"), run(case, "gpu")):
        assert c.shape == g.shape and c.dtype == g.dtype
        d = np.abs(c.astype(np.float64) - g.astype(np.float64))
        bound = 1e-5 * max(255.0, float(np.abs(c).max(initial=0))) if c.dtype.kind == "f" else 1
        assert d.max(initial=0) <= bound, (name, d.max())


def _kernel_runs(monkeypatch: pytest.MonkeyPatch, case: R.Case) -> bool:
    """Whether the CUDA extension's resize kernel produced the batch (it may decline in `run`)."""
    from torch_dali.ops.fast import image_kernels as K
    used = []
    orig = K.ResizeKernel.run

    def spy(self, *a, **kw):
        out = orig(self, *a, **kw)
        used.append(out is not None)
        return out
    monkeypatch.setattr(K.ResizeKernel, "run", spy)
    run(case, "gpu")
    return any(used)


def test_kernel_takes_whole_image_plans_and_declines_windows(monkeypatch):
    from torch_dali._native import extension
    if extension.kernels() is None:
        pytest.skip("the CUDA extension is not built")
    img = [R.image((20, 30, 3), np.uint8, 1)]
    whole = R.Case("resize", img, "HWC", dict(resize_x=15, resize_y=10))  # integral: whole image
    assert _kernel_runs(monkeypatch, whole)
    for kw in (dict(resize_x=15, resize_y=10, roi_start=[1.0, 2.0], roi_end=[15.0, 20.0]),
               dict(resize_x=-15, resize_y=10),  # a flip
               dict(resize_shorter=7, interp_type=types.INTERP_NN)):  # nearest-neighbour windows
        assert not _kernel_runs(monkeypatch, R.Case("resize", img, "HWC", kw)), kw
    # 7 x 10.5: subpixel_scale keeps 10.5's scale, the window shrinks about its centre: the kernel
    # reads that window (float origin and span); without subpixel_scale the whole image
    for kw in (dict(resize_shorter=7), dict(resize_shorter=7, subpixel_scale=False)):
        assert _kernel_runs(monkeypatch, R.Case("resize", img, "HWC", kw)), kw


@pytest.mark.parametrize("seed", range(6))
def test_kernel_windows_equal_the_spec(seed):
    """resize_shorter with a random size per sample (the Serialization example's Resize) and the
    validation recipe's fixed one, on ragged batches: the kernel reading subpixel windows gives the
    CPU spec's pixels (ties off by 1), alone and fused with crop_mirror_normalize."""
    rng = np.random.default_rng(seed)
    imgs = [rng.integers(0, 256, (int(rng.integers(40, 120)), int(rng.integers(40, 120)), 3), dtype=np.uint8)
            for _ in range(8)]

    def pipe(device: str, fused: bool):
        @pipeline_def(batch_size=len(imgs), num_threads=1, device_id=0, seed=seed)
        def p():
            x = fn.external_source(source=lambda: imgs, batch=True, layout="HWC")
            x = x.gpu() if device == "gpu" else x
            size = fn.random.uniform(range=(33.0, 71.0)) if seed % 2 else 37.0
            y = fn.resize(x, resize_shorter=size)
            if fused:
                return fn.crop_mirror_normalize(y, crop=(32, 32), dtype=types.FLOAT, output_layout="CHW",
                                                mean=[0.0], std=[1.0])
            return y
        q = p()
        q.build()
        out = q.run()[0]
        return [np.asarray(t.cpu() if hasattr(t, "cpu") else t) for t in (out.as_cpu() if hasattr(out, "as_cpu") else out)]
    for fused in (False, True):
        for c, g in zip(pipe("cpu", fused), pipe("gpu", fused)):
            assert c.shape == g.shape
            d = np.abs(c.astype(np.float64) - g.astype(np.float64))
            assert d.max(initial=0) <= 1, (fused, d.max())
            assert (d > 0).mean() <= 0.01, (fused, (d > 0).mean())
