"""pipe.feed_input refuses data that cannot make a batch at the feed, as DALI 2.4 does (a
RuntimeError from feed_input itself, so the traceback points at the feed, not at a later run()).
Each case was checked with DALI 2.4's CPU pipeline: its feed_input raised RuntimeError."""
from __future__ import annotations

import numpy as np
import pytest

import torch_dali.fn as fn
from torch_dali.pipeline import Pipeline


def _pipe(num_outputs=None) -> Pipeline:
    pipe = Pipeline(batch_size=4, num_threads=1, device_id=None)
    with pipe:
        out = fn.external_source(name="x", num_outputs=num_outputs)
        pipe.set_outputs(*out) if num_outputs else pipe.set_outputs(out)
    pipe.build()
    return pipe


F32 = np.zeros((2, 2), np.float32)
REFUSED = {
    "more samples than batch_size": [F32] * 5,
    "dense, more samples than batch_size": np.zeros((5, 2, 2), np.float32),
    "mixed dimensionality": [F32, np.zeros(2, np.float32)],
    "mixed element types": [F32, np.zeros((2, 2), np.int32)],
    "nested lists": [[[1, 2], [3, 4]], [[1, 2], [3, 4]]],
    "strings as samples": ["abc", "de"],
    "a string as the batch": "abc",
    "NumPy string arrays": [np.array("abc"), np.array("d")],
    "NumPy object arrays": [np.array([1, "a"], dtype=object)],
    "None": None,
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_feed_input_refuses_at_the_feed(case):
    pipe = _pipe()
    with pytest.raises(RuntimeError):
        pipe.feed_input("x", REFUSED[case])


def test_a_refused_feed_queues_nothing():
    pipe = _pipe()
    with pytest.raises(RuntimeError):
        pipe.feed_input("x", [F32] * 5)
    pipe.feed_input("x", [F32 + 1] * 3)
    (out,) = pipe.run()
    assert len(out) == 3 and float(np.asarray(out[0]).sum()) == 4.0


def test_a_multi_output_feed_is_checked_whole_before_queueing():
    pipe = _pipe(num_outputs=2)
    with pytest.raises(RuntimeError):
        pipe.feed_input("x", ([F32] * 2, [F32, np.zeros(3, np.float32)]))
    pipe.feed_input("x", ([F32] * 2, [F32 + 2] * 2))
    a, b = pipe.run()
    assert len(a) == len(b) == 2 and float(np.asarray(b[1]).sum()) == 8.0


def test_an_accepted_feed_still_runs():
    pipe = _pipe()
    pipe.feed_input("x", np.arange(12, dtype=np.int32).reshape(3, 4))
    (out,) = pipe.run()
    assert [np.asarray(s).tolist() for s in out] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def test_feed_input_takes_pil_images():
    """PIL images expose only `__array_interface__`; DALI 2.4's feed_input takes them as HWC uint8
    samples (checked: same shapes, values and an empty layout as np.asarray of them)."""
    from PIL import Image
    arrays = [(np.arange(18) % 256).astype(np.uint8).reshape(2, 3, 3), np.arange(12, dtype=np.uint8).reshape(2, 2, 3)]
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(name="x"))
    pipe.build()
    pipe.feed_input("x", [Image.fromarray(a) for a in arrays])
    (out,) = pipe.run()
    assert out.layout() == ""
    for i, a in enumerate(arrays):
        np.testing.assert_array_equal(np.asarray(out[i]), a)
