"""bbox_rotate's kernel on CUDA tensors gives the CPU's boxes and keeps the same boxes (DALI offers
the op on the CPU only, so does the schema; the kernel is device-agnostic). Run on the GPU machine."""
from __future__ import annotations

import pytest
import torch

from torch_dali.ops.bbox_rotate import rotate_boxes

try:
    from tests.reference import bbox_rotate_ref as R
except ImportError:
    from reference import bbox_rotate_ref as R  # type: ignore[no-redef]

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.parametrize("mode", ["expand", "halfway", "fixed"])
@pytest.mark.parametrize("ltrb", [True, False])
def test_kernel_cuda_matches_cpu(mode, ltrb):
    boxes = torch.from_numpy(R.LTRB[0] if ltrb else R.XYWH_PX[0])
    m = boxes.shape[0]
    rad = torch.linspace(-3.0, 3.0, m)
    in_wh = torch.tensor([[200.0, 100.0]]).repeat(m, 1)
    out_wh = torch.tensor([[230.0, 180.0]]).repeat(m, 1)
    args = (ltrb, ltrb, mode, 0.3)
    cpu = rotate_boxes(boxes, args[0], args[1], rad, in_wh, out_wh, args[2], args[3])
    gpu = rotate_boxes(boxes.cuda(), args[0], args[1], rad.cuda(), in_wh.cuda(), out_wh.cuda(), args[2], args[3])
    torch.testing.assert_close(gpu[0].cpu(), cpu[0], rtol=0, atol=1e-4)
    assert torch.equal(gpu[1].cpu(), cpu[1])
