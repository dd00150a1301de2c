"""experimental.inputs.video against DALI 2.4's CPU backend (tests/reference/video_input_tables.npz,
made by make_video_input_tables.py from the stored videos), and what it adds or refuses."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, DataError, PipelineError

pytest.importorskip("av")

try:
    from tests.reference import video_cases as C
    from tests.reference import video_input_cases as M
except ImportError:  # pytest puts tests/ itself on sys.path
    from reference import video_cases as C  # type: ignore[no-redef]
    from reference import video_input_cases as M  # type: ignore[no-redef]

TABLES = np.load(C.HERE / M.TABLES)
FILES = C.load_files()


def _pipe(bs: int, length: int, policy: str = "partial", **kw):
    # DALI's own test (test_video_input.py) runs its pipelines synchronously, as here
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, exec_async=False, exec_pipelined=False)
    def pipe():
        return fn.experimental.inputs.video(name="V", sequence_length=length,
                                            last_sequence_policy=policy, **kw)
    p = pipe()
    p.build()
    return p


def _video(name: str) -> np.ndarray:
    return np.frombuffer(FILES[name], np.uint8)


@pytest.mark.parametrize("c", range(len(M.CASES)))
def test_matches_dali(c):
    videos, bs, length, policy = M.CASES[c]
    p = _pipe(bs, length, policy)
    for v in videos:
        p.feed_input("V", np.array([[_video(v)]]))
    for i in range(int(TABLES[f"{c}/n"])):
        (out,) = p.run()
        assert out.layout() == "FHWC"
        assert len(out) == int(TABLES[f"{c}/{i}/n"])
        for s in range(len(out)):
            np.testing.assert_array_equal(np.array(out[s]), TABLES[f"{c}/{i}/{s}"])
    with pytest.raises(PipelineError) as e:  # no video left: an error, as DALI's
        p.run()
    assert isinstance(e.value.__cause__, DataError) and TABLES[f"{c}/end_error"].size


def test_blocking_waits_for_a_feed():
    p = _pipe(2, 3, blocking=True)
    t = threading.Timer(0.3, lambda: p.feed_input("V", [_video("a/mjpeg.avi")]))
    t.start()
    (out,) = p.run()  # waits for the timer's feed
    t.join()
    assert [np.array(s).shape[0] for s in out] == [3, 2]


def test_refusals():
    p = _pipe(2, 3)
    with pytest.raises(DataError, match="one video"):
        p.feed_input("V", [_video("a/vp8.webm"), _video("b/vp9.webm")])
    with pytest.raises(DataError, match="uint8"):
        p.feed_input("V", [_video("a/vp8.webm").astype(np.float32)])
    p.feed_input("V", [np.arange(100, dtype=np.uint8)])
    with pytest.raises(PipelineError, match="video 1"):
        p.run()
    with pytest.raises(ArgumentError):
        _pipe(2, 0)
    with pytest.raises(ArgumentError):
        _pipe(2, 3, "repeat")
