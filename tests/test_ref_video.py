"""decoders.video and experimental.readers.video against DALI 2.4's CPU backend
(tests/reference/video_tables.npz, from the stored videos in video_files.npz; see
tests/reference/video_cases.py): frames bit for bit (VP8, VP9, MJPEG, an odd frame size and a
BT.709-tagged stream), shapes, dtypes, layouts, labels, frame numbers and timestamps, sample order
within and across epochs and shards, and the cases DALI refuses."""
from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("av")

from reference import video_cases as C  # noqa: E402

from torch_dali import fn, pipeline_def  # noqa: E402


@functools.lru_cache(maxsize=1)
def _stored() -> dict[str, np.ndarray]:
    with np.load(Path(C.__file__).with_name(C.TABLES)) as z:
        return {k: z[k] for k in z.files}


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("i", range(len(C.DECODER_CASES)))
def test_decoder(i):
    name, kw = C.DECODER_CASES[i]
    data = np.frombuffer(C.load_files()[name], np.uint8)
    t = _stored()

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.video(fn.external_source(source=lambda: [data], batch=True), **kw)

    p = pipe()
    p.build()
    if f"decoder/{i}/error" in t:
        with pytest.raises(RuntimeError, match=r"(?i)frame"):
            p.run()
        return
    out = p.run()[0]
    assert out.layout() == "FHWC"
    _same(np.array(out.at(0)), t[f"decoder/{i}/video"], f"{name} {kw}")


@pytest.mark.parametrize("case", list(C.READER_CASES))
def test_reader(case, tmp_path):
    C.write_tree(tmp_path)
    kw = C.reader_kwargs(case, tmp_path)
    t = _stored()
    n = int(t[f"reader/{case}/n"])
    want = [{k.rsplit("/", 1)[1]: v for k, v in t.items() if k.startswith(f"reader/{case}/{i}/")} for i in range(n)]
    names = list(want[0])

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=3)
    def pipe():
        outs = fn.experimental.readers.video(name="R", device="cpu", **kw)
        return tuple(outs) if isinstance(outs, (list, tuple)) else (outs,)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = pipe()
        p.build()
    for i in range(n):
        out = p.run()
        assert len(out) == len(names), (case, len(out), names)
        assert out[0].layout() == "FHWC"
        for name, tl in zip(names, out):
            _same(np.array(tl.at(0)), want[i][name], f"{case} sample {i} {name}")
