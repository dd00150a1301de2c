"""transforms.* on sequences of matrices (fn.per_frame inputs) and with per-frame arguments, as
DALI 2.4 runs them: one (frames, ndim, ndim + 1) matrix sequence per sample, layout "F**"; a
sample's frame count comes from its first sequence input, else its first per-frame argument
(an argument may hold one value for every frame); mismatched frame counts are refused."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn
from torch_dali.errors import PipelineError
from torch_dali.pipeline import Pipeline

RNG = np.random.default_rng(3)


def _run(make: Callable[..., Any], *feeds: tuple[list[np.ndarray], bool]) -> tuple[str, list[np.ndarray]]:
    """`make(*sources)` on one batch; a feed marked True goes through fn.per_frame."""
    pipe = Pipeline(batch_size=len(feeds[0][0]), num_threads=1, device_id=None, seed=1)
    with pipe:
        srcs = []
        for data, frames in feeds:
            s = fn.external_source(functools.partial(lambda d: d, data))
            srcs.append(fn.per_frame(s) if frames else s)
        pipe.set_outputs(make(*srcs))
    (out,) = pipe.run()
    return out.layout(), [np.asarray(out.at(i)) for i in range(len(out))]


def _rot(deg: float) -> np.ndarray:
    a = np.deg2rad(deg)
    return np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])


def _h(m: np.ndarray) -> np.ndarray:
    return np.vstack([m.astype(np.float64), [0.0, 0.0, 1.0]])


def test_per_frame_angle_without_input_gives_a_matrix_per_frame() -> None:
    angles = [np.float32([10, 20, 30]), np.float32([45])]  # the second: one frame
    lay, out = _run(lambda a: fn.transforms.rotation(angle=a), (angles, True))
    assert lay == "F**"
    assert [o.shape for o in out] == [(3, 2, 3), (1, 2, 3)]
    for seq, a in zip(out, angles):
        for m, deg in zip(seq, a):
            np.testing.assert_allclose(m, _rot(float(deg))[:2], atol=1e-6)


def test_sequence_input_is_composed_frame_by_frame() -> None:
    mts = [RNG.uniform(-2, 2, (4, 2, 3)).astype(np.float32), RNG.uniform(-2, 2, (2, 2, 3)).astype(np.float32)]
    center = [np.float32([[1, 2]]), np.float32([[3, 4], [5, 6]])]  # one center for all frames / one each
    lay, out = _run(lambda m, c: fn.transforms.translation(m, offset=c), (mts, True), (center, True))
    assert lay == "F**" and [o.shape for o in out] == [(4, 2, 3), (2, 2, 3)]
    for seq, src, off in zip(out, mts, center):
        for f, m in enumerate(seq):
            t = np.eye(3)
            t[:2, 2] = off[f if len(off) > 1 else 0]
            np.testing.assert_allclose(m, (t @ _h(src[f]))[:2], rtol=1e-5, atol=1e-5)


def test_combine_mixes_sequences_and_single_matrices() -> None:
    seq0 = [RNG.uniform(-2, 2, (3, 2, 3)).astype(np.float32)]
    one = [RNG.uniform(-2, 2, (2, 3)).astype(np.float32)]
    seq2 = [RNG.uniform(-2, 2, (3, 2, 3)).astype(np.float32)]
    lay, out = _run(lambda a, b, c: fn.transforms.combine(a, b, c), (seq0, True), (one, False), (seq2, True))
    assert lay == "F**" and out[0].shape == (3, 2, 3)
    for f in range(3):
        want = _h(seq2[0][f]) @ _h(one[0]) @ _h(seq0[0][f])  # the first input is applied first
        np.testing.assert_allclose(out[0][f], want[:2], rtol=1e-5, atol=1e-4)


def test_single_matrices_stay_single() -> None:
    lay, out = _run(lambda m: fn.transforms.rotation(m, angle=90.0), ([np.float32([[1, 0, 0], [0, 1, 0]])], False))
    assert lay == "**" and out[0].shape == (2, 3)


@pytest.mark.parametrize("make,feeds,pattern", [
    # sequence inputs must agree exactly (one frame is not broadcast)
    (lambda a, b: fn.transforms.combine(a, b),
     ([np.zeros((3, 2, 3), np.float32)], [np.zeros((1, 2, 3), np.float32)]), "1 frames in input 1 but 3"),
    # a per-frame argument: one value per frame of input 0, or one
    (lambda m, a: fn.transforms.rotation(m, angle=a),
     ([np.zeros((3, 2, 3), np.float32)], [np.float32([1, 2])]),
     "`angle` has 2 values, but sample 0 of input 0 has 3 frames"),
    # without a sequence input the first per-frame argument sets the count, even when it is one
    (lambda a, c: fn.transforms.rotation(angle=a, center=c),
     ([np.float32([1])], [np.zeros((3, 2), np.float32)]),
     "`center` has 3 values, but sample 0 of argument `angle` has 1 frames"),
])
def test_frame_count_mismatches_are_refused(make: Callable[..., Any], feeds: tuple, pattern: str) -> None:
    with pytest.raises(PipelineError, match=pattern):
        _run(make, *[(d, True) for d in feeds])


def test_unmarked_stack_of_matrices_is_refused() -> None:
    with pytest.raises(PipelineError, match="ndim, ndim \\+ 1"):
        _run(lambda m: fn.transforms.rotation(m, angle=3.0), ([np.zeros((3, 2, 3), np.float32)], False))
