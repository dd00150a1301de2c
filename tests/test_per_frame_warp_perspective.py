"""experimental.warp_perspective with `matrix=fn.per_frame(m)`, as DALI 2.4's CPU backend runs it
(measured): matrix f for frame f of an FHWC / FCHW sequence (a layout-less 4-D sample is read as
FHWC), one matrix for every frame, `size` and `inverse_map` as for a single image; an input
without frames, a matrix count that is neither 1 nor the frames' and matrices not shaped 3x3
(flat (F, 9) ones too) fail when they run.
Digests are of DALI 2.4's uint8 outputs where its float64 point mapping and torch_dali's float32
one agree on every pixel (conformance/on_purpose.md)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import PipelineError

SEQ = (np.random.default_rng(0).random((3, 10, 12, 3)) * 200).astype(np.uint8)
P = np.array([[[1, 0, 2], [0, 1, 0], [0, 0, 1]], [[1, 0.1, 0], [0, 1, 1], [0, 0.001, 1]],
              [[0.9, 0, 0], [0, 1.1, 0], [0.002, 0, 1]]], np.float32)


def _run(x, layout, mats, **kw):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        m = fn.per_frame(fn.external_source(source=lambda: [mats], batch=True))
        return fn.experimental.warp_perspective(fn.external_source(source=lambda: [x], batch=True, layout=layout),
                                                matrix=m, **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    return out.layout(), np.asarray(out.at(0))


@pytest.mark.parametrize("mats, kw, digest", [(P[:1], {}, "bcce359a54c69a18"),
                                              (P, {"inverse_map": False}, "70c149b6ac7b8a8c")])
def test_per_frame_matrices_match_dali(mats, kw, digest):
    layout, out = _run(SEQ, "FHWC", mats, **kw)
    assert layout == "FHWC" and hashlib.sha256(out.tobytes()).hexdigest()[:16] == digest


@pytest.mark.parametrize("layout, kw, shape", [("FHWC", {}, (3, 10, 12, 3)), (None, {}, (3, 10, 12, 3)),
                                               ("FHWC", {"size": [7, 9]}, (3, 7, 9, 3))])
def test_each_frame_is_warped_by_its_matrix(layout, kw, shape):
    got_layout, out = _run(SEQ, layout, P, **kw)
    assert got_layout == "FHWC" and out.shape == shape
    for f in range(3):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def alone():
            x = fn.external_source(source=lambda: [SEQ[f]], batch=True, layout="HWC")
            return fn.experimental.warp_perspective(x, matrix=P[f].reshape(-1).tolist(), **kw)

        p = alone()
        p.build()
        np.testing.assert_array_equal(out[f], np.asarray(p.run()[0].at(0)))


@pytest.mark.parametrize("x, layout, mats", [(SEQ[0], "HWC", P), (SEQ, "FHWC", P[:2])])
def test_per_frame_matrix_refusals(x, layout, mats):
    with pytest.raises(PipelineError):
        _run(x, layout, mats)


@pytest.mark.parametrize("x, layout, mats, per_frame", [
    (SEQ, "FHWC", P.reshape(3, 9), True), (SEQ, "FHWC", P[:1].reshape(1, 9), True),
    (SEQ, "FHWC", P.reshape(3, 1, 9), True), (SEQ, "FHWC", P[0].reshape(9), False),
    (SEQ[0], "HWC", P[0].reshape(9), False), (SEQ[0], "HWC", P[:1], False),
    (SEQ[0], "HWC", P[0].reshape(3, 3, 1), False)])
def test_a_matrix_argument_input_must_be_3x3(x, layout, mats, per_frame):
    # DALI 2.4 fails each of these when it runs (its per-sample `matrix` must be a 3x3 tensor); the
    # nine values in another shape were taken here before
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        m = fn.external_source(source=lambda: [mats], batch=True)
        return fn.experimental.warp_perspective(fn.external_source(source=lambda: [x], batch=True, layout=layout),
                                                matrix=fn.per_frame(m) if per_frame else m)

    p = pipe()
    p.build()
    with pytest.raises(PipelineError, match="3x3"):
        p.run()
