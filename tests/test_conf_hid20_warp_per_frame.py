"""warp_affine with its matrices as a per-frame second input (layout "F..", from fn.per_frame or
a per-frame fn.transforms.*), as DALI 2.4's CPU backend runs it (measured; DALI's multiple-crops
notebook takes several crops of one image this way):

* an image without frames (HWC) is warped once per matrix: the output is a sequence (FHWC) with
  as many frames as that sample has matrices (samples may differ);
* a sequence (FHWC) takes matrix f for frame f; a different number of matrices is an error;
* matrices (F, 2, 3) whose layout does not start with "F" are not per frame: an error, as in DALI.
Each frame equals warp_affine of the image with that frame's matrix alone (nearest and linear,
inverse_map either way)."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import PipelineError

RNG = np.random.default_rng(0)
IMG = RNG.integers(0, 256, (20, 30, 3)).astype(np.uint8)
SEQ = RNG.integers(0, 256, (3, 20, 30, 3)).astype(np.uint8)
M3 = np.array([[[1, 0, 2], [0, 1, 3]], [[1, 0, 5], [0, 1, 1]], [[0.5, 0.1, 0], [0, 0.5, 0]]], np.float32)


def _run(graph, bs=2):
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None)
    def pipe():
        return graph()

    p = pipe()
    p.build()
    out = p.run()
    return [(t.layout(), [np.asarray(t.at(i)) for i in range(len(t))]) for t in out]


def _images():
    return fn.external_source(lambda: [IMG, IMG], batch=True, layout="HWC")


def _single(m, **kw):
    """IMG warped by one matrix."""
    return _run(lambda: fn.warp_affine(fn.external_source(lambda: [IMG], batch=True, layout="HWC"),
                                       fn.external_source(lambda: [m], batch=True), **kw), bs=1)[0][1][0]


@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR])
@pytest.mark.parametrize("inverse", [True, False])
def test_an_image_becomes_a_sequence_of_warps(interp, inverse):
    kw = dict(size=(10, 12), interp_type=interp, inverse_map=inverse)
    (layout, outs), = _run(lambda: fn.warp_affine(
        _images(), fn.per_frame(fn.external_source(lambda: [M3, M3[:2]], batch=True)), **kw))
    assert layout == "FHWC"
    assert [o.shape for o in outs] == [(3, 10, 12, 3), (2, 10, 12, 3)]
    for f in range(3):
        np.testing.assert_array_equal(outs[0][f], _single(M3[f], **kw))
    np.testing.assert_array_equal(outs[1], outs[0][:2])


def test_a_layout_starting_with_f_is_per_frame_too():
    (layout, outs), = _run(lambda: fn.warp_affine(
        _images(), fn.external_source(lambda: [M3, M3[:2]], batch=True, layout="F**"), size=(10, 12)))
    assert layout == "FHWC" and outs[0].shape == (3, 10, 12, 3)


def test_a_sequence_takes_one_matrix_per_frame():
    seqs = lambda: fn.external_source(lambda: [SEQ, SEQ], batch=True, layout="FHWC")  # noqa: E731
    (layout, outs), = _run(lambda: fn.warp_affine(
        seqs(), fn.per_frame(fn.external_source(lambda: [M3, M3], batch=True)), interp_type=types.INTERP_NN))
    assert layout == "FHWC" and outs[0].shape == SEQ.shape
    for f in range(3):
        (_, one), = _run(lambda f=f: fn.warp_affine(
            fn.external_source(lambda: [SEQ[f]], batch=True, layout="HWC"),
            fn.external_source(lambda: [M3[f]], batch=True), interp_type=types.INTERP_NN), bs=1)
        np.testing.assert_array_equal(outs[0][f], one[0])
    with pytest.raises(PipelineError, match="frames"):
        _run(lambda: fn.warp_affine(seqs(), fn.per_frame(fn.external_source(lambda: [M3[:1], M3[:1]], batch=True))))


def test_stacked_matrices_without_frames_are_refused():
    with pytest.raises(PipelineError, match="6 values"):
        _run(lambda: fn.warp_affine(_images(), fn.external_source(lambda: [M3, M3], batch=True), size=(10, 12)))


def test_per_frame_crop_matrices():
    """The notebook's pattern: per-frame transforms.crop matrices cut equal-size crops out of one
    image (inverse_map=False, nearest): every frame is a sub-image."""
    starts = np.float32([[0, 0], [5, 2], [11, 7]])

    def graph():
        start = fn.external_source(lambda: [starts, starts[:1]], batch=True)
        size = fn.external_source(lambda: [np.float32([[8, 6]])] * 2, batch=True)
        end = start + size
        m = fn.transforms.crop(from_start=fn.per_frame(start), from_end=fn.per_frame(end), to_start=0.0,
                               to_end=fn.per_frame(size))
        return fn.warp_affine(_images(), m, size=(6, 8), interp_type=types.INTERP_NN, inverse_map=False)

    (layout, outs), = _run(graph)
    assert layout == "FHWC" and [o.shape[0] for o in outs] == [3, 1]
    for (x, y), crop in zip(starts.astype(int), outs[0]):
        np.testing.assert_array_equal(crop, IMG[y:y + 6, x:x + 8])


_SEQ8 = (np.random.default_rng(0).random((3, 10, 12, 3)) * 200).astype(np.uint8)
_M8 = np.array([[[1, 0, 2], [0, 1, 0]], [[1, 0.1, 0], [0, 1, 1]], [[0.9, 0, 0], [0, 1.1, 0]]], np.float32)


@pytest.mark.parametrize("mats, kw, digest", [(_M8, {}, "cfc5cb19304dc04d"), (_M8[:1], {}, "28eeb85f785f14a1"),
                                              (_M8, {"inverse_map": False}, "79cb492a41e1ee46")])
def test_matrix_argument_per_frame(mats, kw, digest):
    """`matrix=fn.per_frame(m)` (a named argument), as DALI 2.4 runs it (digests of its uint8
    output): matrix f for frame f of an FHWC sequence, and a single matrix for every frame."""
    import hashlib

    def graph():
        x = fn.external_source(lambda: [_SEQ8], batch=True, layout="FHWC")
        m = fn.per_frame(fn.external_source(lambda: [mats], batch=True))
        return fn.warp_affine(x, matrix=m, **kw)

    ((layout, (out,)),) = _run(graph, bs=1)
    assert layout == "FHWC" and hashlib.sha256(out.tobytes()).hexdigest()[:16] == digest


@pytest.mark.parametrize("x, layout, mats", [(_SEQ8[0], "HWC", _M8), (_SEQ8, "FHWC", _M8[:2]),
                                             (_SEQ8, "FHWC", _M8.reshape(3, 6))])
def test_matrix_argument_per_frame_refusals(x, layout, mats):
    """DALI 2.4 refuses these when they run: an image without frames (the second-input form warps it
    once per matrix instead), a count that is neither 1 nor the frames', flat (F, 6) matrices."""
    def graph():
        m = fn.per_frame(fn.external_source(lambda: [mats], batch=True))
        return fn.warp_affine(fn.external_source(lambda: [x], batch=True, layout=layout), matrix=m)

    with pytest.raises(PipelineError):
        _run(graph, bs=1)


@pytest.mark.parametrize("inverse_map", [True, False])
def test_a_matrix_argument_sample_may_be_one_2x3_matrix_in_a_leading_1(inverse_map):
    # DALI 2.4 takes a (1, 2, 3) per-sample `matrix` for an image as its (2, 3) matrix (same output,
    # measured); (2, 2, 3), (1, 1, 2, 3), (3, 2) and, for a sequence without fn.per_frame,
    # (1, 2, 3) fail when they run there and here
    def warp(m):
        return lambda: fn.warp_affine(fn.external_source(source=lambda: [IMG], batch=True, layout="HWC"),
                                      matrix=fn.external_source(source=lambda: [m], batch=True),
                                      inverse_map=inverse_map)

    (layout, (got,)), = _run(warp(M3[2:3]), bs=1)
    assert layout == "HWC" and got.shape == IMG.shape
    np.testing.assert_array_equal(got, _run(warp(M3[2]), bs=1)[0][1][0])
    for bad in (M3[:2], M3[None, 2:3], M3[2].T.copy()):
        with pytest.raises(PipelineError, match="2x3"):
            _run(warp(bad), bs=1)
