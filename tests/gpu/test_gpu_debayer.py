"""debayer on CUDA tensors: the kernel gives the CPU's values bit for bit, and fn.debayer with
device='gpu' (algorithm default_npp: here the bilinear kernel) gives the CPU's bilinear_ocv output.
Run on the GPU machine."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali.ops.debayer import demosaic

try:
    from tests.reference import debayer_ref as R
    from tests.test_ops_debayer import run
except ImportError:
    from reference import debayer_ref as R  # type: ignore[no-redef]
    from test_ops_debayer import run  # type: ignore[no-redef]

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.parametrize("gray", [False, True])
@pytest.mark.parametrize("pos", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_kernel_cuda_matches_cpu(pos, gray):
    for x in (torch.from_numpy(R.U16[1])[None], torch.from_numpy(R.FHW[0])):
        cpu = demosaic(x, *pos, gray)
        gpu = demosaic(x.cuda(), *pos, gray)
        assert torch.equal(gpu.cpu(), cpu)


@pytest.mark.parametrize("name", ["u8_01", "u16_10", "sequences", "per_sample", "hwc"])
def test_pipeline_gpu_matches_cpu(name):
    samples, layout, args, positions = R.CASES[name]
    cpu, lay_c = run(samples, layout, args, positions)
    gpu, lay_g = run(samples, layout, args, positions, device="gpu")
    assert lay_c == lay_g
    for c, g in zip(cpu, gpu):
        np.testing.assert_array_equal(g, c)
    with pytest.raises(RuntimeError):  # the GPU has default_npp only, as in DALI
        run(samples, layout, {**args, "algorithm": "bilinear_ocv"}, positions, device="gpu")
