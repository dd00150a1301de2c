"""Eager ops on CUDA tensors run on that GPU and give the CPU's results (skipped without CUDA)."""
from __future__ import annotations

import pytest
import torch

from torch_dali import eager

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_eager_on_cuda_tensors_matches_cpu():
    g = torch.Generator().manual_seed(1)
    imgs = [torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=g) for h, w in [(60, 80), (45, 70)]]
    cpu = eager.crop_mirror_normalize(imgs, crop=(32, 32), mean=[100.0], std=[50.0], mirror=torch.tensor([0, 1]))
    gpu = eager.crop_mirror_normalize([i.cuda() for i in imgs], crop=(32, 32), mean=[100.0], std=[50.0],
                                      mirror=torch.tensor([0, 1]))
    assert all(o.is_cuda for o in gpu)
    for a, b in zip(cpu, gpu):
        torch.testing.assert_close(a, b.cpu(), atol=1e-5, rtol=0)
    rc, rg = eager.random_resized_crop(imgs, size=(24, 24), seed=4), \
        eager.random_resized_crop([i.cuda() for i in imgs], size=(24, 24), seed=4)
    for a, b in zip(rc, rg):  # same windows; the kernel and the spec agree within a rounding tie
        assert (a.int() - b.cpu().int()).abs().max() <= 1
