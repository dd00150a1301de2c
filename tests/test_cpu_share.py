"""io/cpu_share (TORCH_DALI_NVJPEG_CPU_SHARE): which samples the host decodes, and that its
windows are libjpeg's pixels of those windows (the same as io.jpeg_roi one by one), for a list of
samples and for packed reader batches; a sample it cannot decode is handed back."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from torch_dali.io import cpu_share, jpeg_roi
from torch_dali.packed import PackedSamples

pytestmark = pytest.mark.skipif(not jpeg_roi.available(), reason="libjpeg ROI decoder not built")


def _jpegs(n: int) -> list[torch.Tensor]:
    from PIL import Image
    rng = np.random.default_rng(4)
    out = []
    for i in range(n):
        h, w = int(rng.integers(40, 90)), int(rng.integers(40, 90))
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(
            buf, format="JPEG", quality=90, subsampling=i % 3)
        out.append(torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8))
    return out


def _windows(datas: list[torch.Tensor]) -> torch.Tensor:
    rng = np.random.default_rng(5)
    rows = []
    for d in datas:
        h, w = jpeg_roi.jpeg_header(d)[:2]
        ch, cw = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))
        rows.append((int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1)), ch, cw))
    return torch.tensor(rows, dtype=torch.int64)


def test_picks_spread_a_share_over_the_windowed_samples():
    rois = torch.tensor([[0, 0, 5, 5]] * 10 + [[0, 0, -1, 0]] * 2, dtype=torch.int64)
    assert cpu_share.picks(rois, 0.0).size == 0
    assert cpu_share.picks(rois, 0.5).tolist() == [1, 3, 5, 7, 9]
    assert cpu_share.picks(rois, 0.3).tolist() == [3, 6, 9]
    assert cpu_share.picks(None, 0.5).size == 0  # whole images: never


@pytest.mark.parametrize("packed", [False, True])
def test_windows_equal_libjpeg_one_by_one(packed):
    datas = _jpegs(12)
    rois = _windows(datas)
    rows = cpu_share.picks(rois, 0.5)
    if packed:
        sizes = np.array([d.numel() for d in datas])
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        src = PackedSamples.make(torch.cat(datas), offsets, sizes)
    else:
        src = datas
    out, failed = cpu_share.Pending(src, rows, rois, gray=False).finish(torch.device("cpu"))
    assert failed.size == 0 and len(out) == rows.size
    for i, got in zip(rows.tolist(), out):
        want = jpeg_roi.decode_roi(datas[i], tuple(rois[i].tolist()))
        assert torch.equal(got, want)


def test_a_sample_the_cpu_cannot_decode_is_handed_back():
    datas = _jpegs(4)
    rois = _windows(datas)
    datas[1] = datas[1][: datas[1].numel() // 3].clone()  # truncated
    rows = np.arange(4)
    out, failed = cpu_share.Pending(datas, rows, rois, gray=False).finish(torch.device("cpu"))
    assert failed.tolist() == [1] and out[1] is None and out[0] is not None
