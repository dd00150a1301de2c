"""TORCH_DALI_QUEUE_PROBE on a GPU (skipped without CUDA): the probe tells a stream's own queue,
the pipeline's streams it makes keep out of the default stream's queue, and the outputs are the
same bits with it on."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali._native import extension

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture(scope="module")
def ext():
    e = extension.load()
    if e is None or not hasattr(e, "streams_share_queue"):
        pytest.skip(f"extension not built: {extension.load_error()}")
    return e


def test_a_stream_holds_itself_and_the_probe_is_quick(ext):
    s = torch.cuda.Stream()
    assert ext.streams_share_queue(s.cuda_stream, s.cuda_stream)
    # of 8 consecutive pool streams at most a few share the default stream's queue
    pool = [torch.cuda.Stream() for _ in range(8)]
    shared = [ext.streams_share_queue(p.cuda_stream, 0) for p in pool]
    assert sum(shared) < 8


def test_stage_streams_keep_out_of_the_default_queue(ext, monkeypatch):
    from torch_dali.executor.streams import StageStreams
    monkeypatch.setenv("TORCH_DALI_QUEUE_PROBE", "1")
    streams = StageStreams(torch.device("cuda", torch.cuda.current_device()))
    made = [streams.main, *(streams.for_stage(type("S", (), {"kind": "mixed"})(), lane) for lane in range(3))]
    assert 0 in ext.avoided_streams()
    assert not any(ext.streams_share_queue(s.cuda_stream, 0) for s in made)


def test_outputs_the_same_bits_with_the_probe(monkeypatch):
    from torch_dali import fn, pipeline_def
    rng = np.random.default_rng(3)
    from PIL import Image
    import io
    data = []
    for h, w in [(120, 160), (96, 128), (200, 150)] * 3:
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(buf, format="JPEG", quality=90)
        data.append(np.frombuffer(buf.getvalue(), dtype=np.uint8))

    def run():
        @pipeline_def(batch_size=len(data), num_threads=2, device_id=0, seed=5)
        def p():
            enc = fn.external_source(source=lambda: data)
            img = fn.decoders.image_random_crop(enc, device="mixed", hw_decoder_load=1.0)
            return fn.crop_mirror_normalize(fn.resize(img, resize_x=64, resize_y=64), mirror=fn.random.coin_flip())
        pipe = p()
        pipe.build()
        out = [pipe.run()[0].as_tensor().cpu() for _ in range(3)]
        del pipe
        return out

    monkeypatch.setenv("TORCH_DALI_QUEUE_PROBE", "0")
    plain = run()
    monkeypatch.setenv("TORCH_DALI_QUEUE_PROBE", "1")
    probed = run()
    assert all(torch.equal(a, b) for a, b in zip(plain, probed))
