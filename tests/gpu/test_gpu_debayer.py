"""debayer on CUDA tensors: the kernels give the CPU's values bit for bit, and fn.debayer with
device='gpu' (algorithm default_npp, NPP's bilinear) gives the NPP kernel's output computed on the
CPU (tests/test_ops_debayer.py holds that kernel to a per-pixel reference). Run on the GPU machine."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali.ops.debayer import demosaic, demosaic_npp

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
        if not gray:
            assert torch.equal(demosaic_npp(x.cuda(), *pos).cpu(), demosaic_npp(x, *pos))


@pytest.mark.parametrize("name", ["u8_01", "u16_10", "sequences", "per_sample", "hwc"])
def test_pipeline_gpu_is_npp(name):
    samples, layout, args, positions = R.CASES[name]
    gpu, lay = run(samples, layout, args, positions, device="gpu")
    assert lay == ("FHWC" if layout.startswith("F") else "HWC")
    for i, (s, g) in enumerate(zip(samples, gpu)):
        pos = positions[i] if positions is not None else args["blue_position"]
        planes = torch.from_numpy(s[..., 0] if layout.endswith("C") else s)
        want = demosaic_npp(planes if layout.startswith("F") else planes[None], *pos)
        np.testing.assert_array_equal(g, want.numpy() if layout.startswith("F") else want[0].numpy())
    with pytest.raises(RuntimeError):  # the GPU has default_npp only, as in DALI
        run(samples, layout, {**args, "algorithm": "bilinear_ocv"}, positions, device="gpu")
