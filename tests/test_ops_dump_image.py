"""dump_image against DALI 2.4's CPU backend: the file names and bytes below are what DALI wrote
for these two images (run once in /work/dali-venv); it refuses (RuntimeError) 2-D samples, 2 or 4
channels, non-uint8 data and input_layout other than HWC, as here. The batch passes through."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def

IMAGES = [np.arange(18, dtype=np.uint8).reshape(2, 3, 3) * 13, np.arange(6, dtype=np.uint8).reshape(3, 2, 1) * 50 + 5]
DALI_FILES = {
    "0-dbg-0.ppm": b"P3\n3 2\n255\n0 13 26 39 52 65 78 91 104 \n117 130 143 156 169 182 195 208 221 \n",
    "1-dbg-0.ppm": b"P2\n2 3\n255\n5 55 \n105 155 \n205 255 \n",
}


def run(images, device: str = "cpu", **kw):
    # not pipelined: no batch is made ahead of the one asked for, so the files are this batch's
    @pipeline_def(batch_size=len(images), num_threads=1, device_id=None if device == "cpu" else 0,
                  exec_pipelined=False, exec_async=False)
    def pipe():
        x = fn.external_source(source=lambda: [torch.from_numpy(i) for i in images], batch=True,
                               layout="HWC" if images[0].ndim == 3 else "HW")
        return fn.dump_image(x.gpu() if device == "gpu" else x, **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    return [t.cpu().numpy() for t in out]


def test_writes_what_dali_writes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = run(IMAGES, suffix="dbg")
    assert all(np.array_equal(a, b) for a, b in zip(out, IMAGES))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == DALI_FILES
    run(IMAGES[:1])
    assert (tmp_path / "0--0.ppm").read_bytes() == DALI_FILES["0-dbg-0.ppm"]


@pytest.mark.parametrize("images,kw", [
    ([np.zeros((2, 2), np.uint8)], {}),
    ([np.zeros((2, 2, 2), np.uint8)], {}),
    ([np.zeros((2, 2, 4), np.uint8)], {}),
    ([np.zeros((2, 2, 3), np.float32)], {}),
    ([np.zeros((2, 2, 3), np.uint8)], {"input_layout": "CHW"}),
])
def test_refuses_what_dali_refuses(tmp_path, monkeypatch, images, kw):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError):
        run(images, **kw)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("suffix", ["../escape", "sub/dir", "a\0b"])
def test_a_suffix_with_a_path_separator_is_refused(tmp_path, monkeypatch, suffix):
    """The files go into the working folder: a suffix (from an untrusted config, say) cannot steer
    them into another one."""
    work = tmp_path / "work"
    (work / "0-sub").mkdir(parents=True)  # where "sub/dir" would otherwise lead
    monkeypatch.chdir(work)
    with pytest.raises(RuntimeError, match="path separator"):
        run([np.zeros((2, 2, 3), np.uint8)], suffix=suffix)
    assert not list((work / "0-sub").iterdir()) and sorted(p.name for p in tmp_path.iterdir()) == ["work"]
