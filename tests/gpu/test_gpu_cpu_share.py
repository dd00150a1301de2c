"""TORCH_DALI_NVJPEG_CPU_SHARE on a GPU (skipped without CUDA): part of each batch's windows
decoded by libjpeg on the host beside the GPU decoder gives the same crops within the decoders'
rounding, the same bits on a rerun, and libjpeg's own pixels for the samples it took."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from torch_dali.io import jpeg_roi

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or not jpeg_roi.available(),
                                reason="needs a CUDA device and the libjpeg ROI decoder")


@pytest.fixture(scope="module")
def jpegs():
    from PIL import Image
    rng = np.random.default_rng(8)
    out = []
    for i, (h, w) in enumerate([(240, 320), (333, 250), (416, 438), (120, 160)] * 4):
        low = rng.integers(0, 256, (h // 16 + 2, w // 16 + 2, 3)).astype(np.uint8)
        img = Image.fromarray(low).resize((w, h), Image.BICUBIC)
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=95, subsampling=0 if i % 2 else 2)
        out.append(np.frombuffer(buf.getvalue(), dtype=np.uint8))
    return out


def _run(data, share, monkeypatch, kind="fused"):
    from torch_dali import fn, pipeline_def
    monkeypatch.setenv("TORCH_DALI_NVJPEG_CPU_SHARE", str(share))

    @pipeline_def(batch_size=len(data), num_threads=2, device_id=0, seed=11)
    def p():
        enc = fn.external_source(source=lambda: data)
        if kind == "fused":
            img = fn.decoders.image_random_crop(enc, device="mixed", hw_decoder_load=1.0)
            return fn.resize(img, resize_x=64, resize_y=64), img
        img = fn.decoders.image(enc, device="mixed", hw_decoder_load=0.65)  # windows: its one reader's
        return (fn.random_resized_crop(img, size=[64, 64]),)
    pipe = p()
    pipe.build()
    outs = [[o.as_tensor().cpu() if o.is_dense_tensor() else [t.cpu() for t in o] for o in pipe.run()] for _ in range(2)]
    del pipe
    return outs


@pytest.mark.parametrize("kind", ["fused", "unfused"])
def test_share_matches_the_gpu_decoder_within_rounding_and_reruns(jpegs, monkeypatch, kind):
    gpu = _run(jpegs, 0.0, monkeypatch, kind)
    mixed = _run(jpegs, 0.5, monkeypatch, kind)
    again = _run(jpegs, 0.5, monkeypatch, kind)
    for g_it, m_it, a_it in zip(gpu, mixed, again):
        for g, m, a in zip(g_it, m_it, a_it):
            g, m, a = ([g], [m], [a]) if isinstance(g, torch.Tensor) else (g, m, a)
            for gs, ms, as_ in zip(g, m, a):
                assert gs.shape == ms.shape  # the same windows
                assert torch.equal(ms, as_)  # the same samples on the CPU every run
                assert (gs.int() - ms.int()).abs().max() <= 8  # the two IDCTs' rounding


def test_cpu_samples_are_libjpegs_pixels(jpegs, monkeypatch):
    from torch_dali.io import nvjpeg
    monkeypatch.setenv("TORCH_DALI_NVJPEG_CPU_SHARE", "0.5")
    datas = [torch.from_numpy(d.copy()) for d in jpegs]
    rois = torch.tensor([[8, 16, 64, 48]] * len(datas), dtype=torch.int64)
    out = nvjpeg.decode_jpeg_batch_cuda(datas, torch.device("cuda"), rois=rois, hw_load=1.0,
                                        orientations=[1] * len(datas))
    for i in (1, 3, 5):  # picks(share 0.5): the odd positions
        assert torch.equal(out[i].cpu(), jpeg_roi.decode_roi(datas[i], (8, 16, 64, 48)))
