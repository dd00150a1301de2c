"""fn.per_frame: a layout-only mark, and per-frame argument inputs of frame-wise ops (checked
against DALI 2.4: coord_transform / gaussian_blur with per-frame arguments, broadcasts, errors)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn
from torch_dali.errors import ArgumentError, PipelineError
from torch_dali.pipeline import Pipeline

RNG = np.random.default_rng(7)


def _run(make: Callable[..., Any], *feeds: tuple[list[np.ndarray], str | None]) -> tuple[str, list[np.ndarray]]:
    pipe = Pipeline(batch_size=len(feeds[0][0]), num_threads=1, device_id=None, seed=1)
    with pipe:
        # partial, not `lambda d=d: d`: a source's defaulted parameter receives the iteration, as in DALI
        srcs = [fn.external_source(functools.partial(lambda d: d, d), layout=lay) for d, lay in feeds]
        pipe.set_outputs(make(*srcs))
    (out,) = pipe.run()
    return out.layout(), [np.asarray(out.at(i)) for i in range(len(out))]


def _affine(pts: np.ndarray, mt: np.ndarray) -> np.ndarray:
    return pts @ mt[:, :2].T + mt[:, 2]


@pytest.mark.parametrize("layout,replace,expected", [(None, False, "F**"), ("FAB", False, "FAB"),
                                                     ("ABC", True, "FBC")])
def test_per_frame_sets_the_layout_only(layout: str | None, replace: bool, expected: str) -> None:
    x = [np.arange(24, dtype=np.float32).reshape(2, 3, 4)]
    lay, out = _run(lambda s: fn.per_frame(s, replace=replace), (x, layout))
    assert lay == expected and np.array_equal(out[0], x[0])


@pytest.mark.parametrize("data,layout,pattern", [([np.zeros((2, 3), np.float32)], "AB", "'AB' does not start with 'F'"),
                                                 ([np.float32(1)], None, "zero-dimensional")])
def test_per_frame_refusals(data: list, layout: str | None, pattern: str) -> None:
    with pytest.raises(PipelineError, match=pattern):
        _run(lambda s: fn.per_frame(s), (data, layout))


def test_coord_transform_takes_a_matrix_per_frame() -> None:
    seqs = [RNG.random((3, 5, 2), dtype=np.float32), RNG.random((2, 4, 2), dtype=np.float32)]
    mts = [RNG.random((3, 2, 3), dtype=np.float32), RNG.random((1, 2, 3), dtype=np.float32)]  # 1: all frames
    lay, out = _run(lambda x, m: fn.coord_transform(x, MT=fn.per_frame(m)), (seqs, "F**"), (mts, None))
    assert lay == "F**"
    for s, m, o in zip(seqs, mts, out):
        want = np.stack([_affine(s[f], m[f if len(m) > 1 else 0]) for f in range(len(s))])
        np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout,expected", [(None, ""), ("ab", "Fab")])
def test_input_without_frames_is_used_for_every_frame(layout: str | None, expected: str) -> None:
    pts = [RNG.random((5, 2), dtype=np.float32)]
    mts = [RNG.random((4, 2, 3), dtype=np.float32)]
    lay, out = _run(lambda x, m: fn.coord_transform(x, MT=fn.per_frame(m)), (pts, layout), (mts, None))
    assert lay == expected and out[0].shape == (4, 5, 2)
    np.testing.assert_allclose(out[0][3], _affine(pts[0], mts[0][3]), rtol=1e-5, atol=1e-5)


def test_gaussian_blur_window_per_frame_equals_frame_by_frame() -> None:
    seq = [RNG.random((3, 12, 9), dtype=np.float32)]
    lay, out = _run(lambda x, w: fn.gaussian_blur(x, window_size=fn.per_frame(w)), (seq, "FHW"),
                    ([np.int32([3, 5, 7])], None))
    assert lay == "FHW"
    for f, w in enumerate((3, 5, 7)):
        _, one = _run(lambda x, w=w: fn.gaussian_blur(x, window_size=w), ([seq[0][f]], "HW"))
        np.testing.assert_allclose(out[0][f], one[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("data,layout,arg,pattern", [
    ([np.zeros((3, 8, 8), np.float32)], "CHW", [np.int32([3, 5, 7])], "`window_size` is given per frame.*`CHW`.*channels"),
    ([np.zeros((3, 8, 8), np.float32)], "FHW", [np.int32([3, 5])], "sample 0 of the per-frame argument `window_size` "
                                                                     "has 2 values.*3 frames"),
])
def test_per_frame_argument_errors(data: list, layout: str, arg: list, pattern: str) -> None:
    with pytest.raises(PipelineError, match=pattern):
        _run(lambda x, w: fn.gaussian_blur(x, window_size=fn.per_frame(w)), (data, layout), (arg, None))


def test_op_without_per_frame_support_refuses_a_per_frame_argument() -> None:
    with pytest.raises(ArgumentError, match="does not take per-frame arguments"):
        _run(lambda x, a: fn.flip(x, horizontal=fn.per_frame(a)), ([np.zeros((2, 4, 4, 3), np.uint8)], "FHWC"),
             ([np.int32([1, 0])], None))


def test_a_sequence_of_no_frames_is_refused() -> None:  # as in DALI
    seqs = [np.zeros((0, 5, 2), np.float32), RNG.random((2, 5, 2), dtype=np.float32)]
    mts = [np.zeros((1, 2, 3), np.float32), RNG.random((2, 2, 3), dtype=np.float32)]
    with pytest.raises(PipelineError, match="no frames"):
        _run(lambda x, m: fn.coord_transform(x, MT=fn.per_frame(m)), (seqs, "F**"), (mts, None))


def test_rotate_takes_an_angle_per_frame() -> None:
    seq = [RNG.integers(0, 255, (2, 6, 8, 3), dtype=np.uint8)]
    lay, out = _run(lambda x, a: fn.rotate(x, angle=fn.per_frame(a), size=(9, 9)), (seq, "FHWC"),
                    ([np.float32([30, -60])], None))
    assert lay == "FHWC" and out[0].shape == (2, 9, 9, 3)
    for f, a in enumerate((30.0, -60.0)):
        _, one = _run(lambda x, a=a: fn.rotate(x, angle=a, size=(9, 9)), ([seq[0][f]], "HWC"))
        np.testing.assert_array_equal(out[0][f], one[0])


def test_rotate_per_frame_canvas_is_the_sequences_largest() -> None:
    # DALI 2.4 (measured): without `size`, a sequence's frames share one canvas, each extent the
    # largest of its frames' fitted canvases, every frame turned about its centre
    seqs = [RNG.integers(0, 255, (2, 6, 8, 3), dtype=np.uint8), RNG.integers(0, 255, (3, 7, 4, 3), dtype=np.uint8)]
    angles = [np.float32([0, 90]), np.float32([10, 45, -20])]
    lay, out = _run(lambda x, a: fn.rotate(x, angle=fn.per_frame(a)), (seqs, "FHWC"), (angles, None))
    assert lay == "FHWC" and [o.shape for o in out] == [(2, 8, 8, 3), (3, 9, 8, 3)]  # DALI's shapes
    for s, (seq, angs) in enumerate(zip(seqs, angles)):
        size = tuple(float(v) for v in out[s].shape[1:3])
        for f, a in enumerate(angs):
            _, one = _run(lambda x, a=float(a): fn.rotate(x, angle=a, size=size), ([seq[f]], "HWC"))
            np.testing.assert_array_equal(out[s][f], one[0])


def test_rotate_per_frame_volume_canvas() -> None:
    # the same rule for volumes (DALI 2.4, measured: this sequence comes out 3 x 11 x 9 x 11)
    vol = [RNG.integers(0, 255, (3, 5, 7, 4, 1), dtype=np.uint8)]
    angles, axes = [np.float32([30, -70, 100])], [np.float32([[1, 0, 0], [0, 1, 1], [1, 2, 3]])]
    lay, out = _run(lambda x, a, ax: fn.rotate(x, angle=fn.per_frame(a), axis=fn.per_frame(ax)),
                    (vol, "FDHWC"), (angles, None), (axes, None))
    assert lay == "FDHWC" and out[0].shape == (3, 11, 9, 11, 1)
    for f in range(3):
        _, one = _run(lambda x, f=f: fn.rotate(x, angle=float(angles[0][f]), axis=axes[0][f].tolist(),
                                               size=(11.0, 9.0, 11.0)), ([vol[0][f]], "DHWC"))
        np.testing.assert_array_equal(out[0][f], one[0])
