"""GPU pipelines rerun bit for bit (skipped without CUDA): two pipelines of one process with the same
seed give the same batches, with other images through the decoder's buffers between them. In
session 12 the hardware engines left the last row or column of a window ending on an image's bottom
or right edge unwritten where that side is a multiple of 8 (new values each run); the crops here sit
on those edges on purpose, next to sizes that are not multiples of 8 and a 4:4:4 JPEG."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

SIZES = [(432, 432, 2), (400, 464, 2), (336, 504, 0), (437, 413, 2), (352, 480, 1)]  # (h, w, subsampling)
CROP = (200, 176)


def _jpeg(rng: np.random.Generator, h: int, w: int, subsampling: int) -> np.ndarray:
    from PIL import Image
    low = rng.integers(0, 256, (h // 16 + 2, w // 16 + 2, 3)).astype(np.uint8)
    img = Image.fromarray(low).resize((w, h), Image.BICUBIC)
    arr = np.clip(np.asarray(img, dtype=np.int16) + rng.integers(-6, 7, (h, w, 1)), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="JPEG", quality=90, subsampling=subsampling)
    return np.frombuffer(buf.getvalue(), dtype=np.uint8)


@pytest.fixture(scope="module")
def jpegs():
    rng = np.random.default_rng(12)
    return [_jpeg(rng, h, w, s) for h, w, s in SIZES * 4]


def _pipe(data: list[np.ndarray], seed: int = 9):
    @pipeline_def(batch_size=len(data), num_threads=2, device_id=0, seed=seed)
    def p():
        encoded = fn.external_source(source=lambda: data)
        edge = fn.decoders.image_crop(encoded, device="mixed", crop=CROP, crop_pos_x=1.0, crop_pos_y=1.0,
                                      hw_decoder_load=1.0)
        whole = fn.decoders.image(encoded, device="mixed", hw_decoder_load=1.0)
        random = fn.decoders.image_random_crop(encoded, device="mixed", hw_decoder_load=1.0)
        # a decoder whose only reader is random_resized_crop decodes just the parts the crop reads,
        # grown to the 16-pixel grid and so often out to an edge (another load: not merged with `whole`)
        parts = fn.random_resized_crop(fn.decoders.image(encoded, device="mixed", hw_decoder_load=0.65), size=[64, 64])
        return edge, whole, fn.resize(random, resize_x=64, resize_y=64), parts
    return p()


def _run(pipe, iterations: int = 3) -> list[list[list[torch.Tensor]]]:
    pipe.build()
    out = [[[t.cpu().clone() for t in batch] for batch in pipe.run()] for _ in range(iterations)]
    pipe.shutdown()
    return out


def test_mixed_decoders_rerun_bit_for_bit_with_windows_on_image_edges(jpegs):
    first = _run(_pipe(jpegs))
    rng = np.random.default_rng(3)  # other images through the same decoder between the two runs
    _run(_pipe([_jpeg(rng, 512, 512, 2) for _ in range(len(jpegs))], seed=1), iterations=2)
    again = _run(_pipe(jpegs))
    for it, (a, b) in enumerate(zip(first, again)):
        for k, name in enumerate(("image_crop", "image", "image_random_crop", "image -> random_resized_crop")):
            bad = [i for i, (x, y) in enumerate(zip(a[k], b[k])) if not torch.equal(x, y)]
            assert not bad, (it, name, bad)
    for it, (edge, whole, *_) in enumerate(first):
        for i, (crop, img) in enumerate(zip(edge, whole)):
            h, w = img.shape[:2]
            ref = img[h - CROP[0]:, w - CROP[1]:]
            if h % 8 == 0 or w % 8 == 0:  # cut from a whole decode: its pixels, exactly
                assert torch.equal(crop, ref), (it, i, (h, w))
            else:  # decoded as a window: the engines' chroma differs near a window's inner edges
                assert (crop.int() - ref.int()).abs().max() <= 16, (it, i, (h, w))


def test_host_waits_give_the_same_batches(jpegs, monkeypatch):
    """TORCH_DALI_HOST_WAITS (the default: stages and decoder states wait on the host instead of
    queuing GPU waits; the consumer's stream skips a wait for a batch already done) changes no bit of
    any output against 0: the hardware, hybrid and windowed decodes and a GPU op after them, over
    several iterations."""
    from torch_dali.io import nvjpeg
    monkeypatch.setenv("TORCH_DALI_HOST_WAITS", "0")
    plain = _run(_pipe(jpegs), iterations=4)
    monkeypatch.setenv("TORCH_DALI_HOST_WAITS", "1")
    waited = _run(_pipe(jpegs), iterations=4)
    assert any(getattr(d, "host_waits", False) for d in nvjpeg._NVJPEG.values() if d is not None)
    for it, (a, b) in enumerate(zip(plain, waited)):
        for k, name in enumerate(("image_crop", "image", "image_random_crop", "image -> random_resized_crop")):
            bad = [i for i, (x, y) in enumerate(zip(a[k], b[k])) if not torch.equal(x, y)]
            assert not bad, (it, name, bad)
