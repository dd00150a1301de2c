"""Session 35's new DALI modules on a GPU (skipped without CUDA): experimental.torchvision's
Compose with device="gpu" gives what its CPU pipeline gives, and the PyTorch proxy (DALIServer)
feeds a pipeline that runs on the GPU through torch DataLoader workers, with the CPU pipeline's
values."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils import data as td

import torch_dali.experimental.torchvision as tv
from torch_dali import fn, pipeline_def
from torch_dali.plugin.pytorch.experimental import proxy as dali_proxy

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _ten(shape, dtype=torch.uint8):
    return (torch.arange(int(np.prod(shape))) % 251).to(dtype).reshape(shape)


TRANSFORMS = {
    "resize": lambda d: [tv.Resize(10, device=d)],
    "center_crop": lambda d: [tv.CenterCrop([6, 7], device=d)],
    "pad": lambda d: [tv.Pad([1, 2, 3, 1], fill=5, device=d)],
    "flips": lambda d: [tv.RandomHorizontalFlip(1.0, device=d), tv.RandomVerticalFlip(1.0, device=d)],
    "normalize": lambda d: [tv.Normalize([0.5, 1.0, 2.0], [2.0, 3.0, 4.0], device=d)],
    "blur": lambda d: [tv.GaussianBlur(5, 1.5, device=d)],
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_compose_on_the_gpu_matches_the_cpu(name):
    dtype = torch.float32 if name in ("normalize", "blur") else torch.uint8
    x = _ten((2, 3, 19, 23), dtype)
    if dtype == torch.float32:
        x = x / 251.0
    cpu = tv.Compose(TRANSFORMS[name]("cpu"))(x)
    gpu = tv.Compose(TRANSFORMS[name]("gpu"))(x)
    assert gpu.shape == cpu.shape and gpu.dtype == cpu.dtype
    diff = (gpu.cpu().double() - cpu.cpu().double()).abs().max().item()
    assert diff <= (1e-5 if dtype == torch.float32 else 1), diff


@pipeline_def
def _flip_scale(device):
    a = fn.external_source(name="a", layout="HWC", no_copy=True)
    a = a.gpu() if device == "gpu" else a
    return fn.flip(a, horizontal=1) * 2


class _Samples(td.Dataset):
    def __init__(self, proxy):
        self.proxy = proxy

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return self.proxy(a=((np.arange(3 * 5 * 3) * (i + 1)) % 100).astype(np.uint8).reshape(3, 5, 3)), i


@pytest.mark.parametrize("num_workers", [0, 2])
def test_proxy_feeds_a_gpu_pipeline(num_workers):
    got = {}
    for device in ("cpu", "gpu"):
        pipe = _flip_scale(device, batch_size=4, num_threads=1, device_id=0)
        with dali_proxy.DALIServer(pipe, deterministic=True) as server:
            loader = dali_proxy.DataLoader(server, _Samples(server.proxy), batch_size=4, num_workers=num_workers)
            got[device] = [(out, labels.tolist()) for out, labels in loader]
    assert [lab for _, lab in got["gpu"]] == [lab for _, lab in got["cpu"]] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    for (g, _), (c, _) in zip(got["gpu"], got["cpu"]):
        assert g.is_cuda and not c.is_cuda
        assert torch.equal(g.cpu(), c)
