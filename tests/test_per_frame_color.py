"""Per-frame arguments (fn.per_frame) of the colour ops, as DALI 2.4's CPU backend takes them
(measured): each frame of a sequence gets its own value; the input must be a sequence (FHWC, or
a layout-less 4-D sample, read as FHWC); HWC, DHWC and layout-less 3-D inputs fail when they run.
gaussian_blur, laplacian and rotate need a sequence too (rotate reads a layout-less 4-D sample
as FHWC). Digests are of DALI 2.4's uint8 outputs (both samples' bytes)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types

SEQ = (np.random.default_rng(0).random((3, 10, 12, 3)) * 200).astype(np.uint8)
A = [[0.5, 1.0, 1.5], [2.0, 0.1]]
H = [[10, 20, 30], [40, 50]]


def _pf(vals):
    return fn.per_frame(fn.external_source(source=lambda: [np.array(v, np.float32) for v in vals], batch=True))


CASES = {
    "bc_both": (lambda x: fn.brightness_contrast(x, brightness=_pf(A), contrast=_pf([[1.2, 0.7, 1.0], [0.3, 2.0]]),
                                                 contrast_center=_pf([[10, 100, 128], [0, 255]])), "4b60a0785d7c9b37"),
    "bc_shift": (lambda x: fn.brightness_contrast(x, brightness_shift=_pf([[0.1, -0.2, 0.0], [0.3, 0.4]])),
                 "8e067d60350fb9a7"),
    "bc_one": (lambda x: fn.brightness_contrast(x, brightness=_pf([[0.5], [2.0]])), "b2b508172812537f"),
    "brightness": (lambda x: fn.brightness(x, brightness=_pf(A)), "12ed016207724077"),
    "contrast": (lambda x: fn.contrast(x, contrast=_pf(A)), "d429798d4ae942ce"),
    "hue": (lambda x: fn.hue(x, hue=_pf(H)), "cd45e6eeb0b48e42"),
    "saturation": (lambda x: fn.saturation(x, saturation=_pf(A)), "1d9cb4e92e363661"),
    "hsv": (lambda x: fn.hsv(x, hue=_pf(H), saturation=_pf(A), value=_pf(A)), "373ff135e98ef4ae"),
    "color_twist": (lambda x: fn.color_twist(x, saturation=_pf(A), hue=_pf(H), brightness=_pf(A), contrast=_pf(A)),
                    "d5983d14b522570c"),
}


def _run(make, samples, layout):
    @pipeline_def(batch_size=len(samples), num_threads=1, device_id=None)
    def pipe():
        return make(fn.external_source(source=lambda: samples, batch=True, layout=layout))

    p = pipe()
    p.build()
    (out,) = p.run()
    return out


@pytest.mark.parametrize("layout", ["FHWC", None])
@pytest.mark.parametrize("name", list(CASES))
def test_colour_ops_take_per_frame_arguments_as_dali(name, layout):
    make, digest = CASES[name]
    out = _run(make, [SEQ, SEQ[:2].copy()], layout)
    assert out.layout() == "FHWC" and out.shape() == [(3, 10, 12, 3), (2, 10, 12, 3)]
    got = b"".join(np.asarray(out.at(i)).tobytes() for i in range(2))
    assert hashlib.sha256(got).hexdigest()[:16] == digest


def test_a_per_frame_value_matches_the_frame_run_alone():
    out = _run(lambda x: fn.hue(x, hue=_pf(H)), [SEQ, SEQ[:2].copy()], "FHWC")
    for f, h in enumerate(H[0]):
        alone = _run(lambda x, h=h: fn.hue(x, hue=float(h)), [SEQ[f]], "HWC")
        np.testing.assert_array_equal(np.asarray(out.at(0))[f], np.asarray(alone.at(0)))


@pytest.mark.parametrize("op", [lambda x: fn.hue(x, hue=_pf(H)), lambda x: fn.brightness_contrast(x, brightness=_pf(A))])
@pytest.mark.parametrize("samples, layout", [([SEQ[0], SEQ[1]], "HWC"), ([SEQ[0], SEQ[1]], None),
                                             ([SEQ, SEQ[:2].copy()], "DHWC")])
def test_per_frame_arguments_need_a_sequence(op, samples, layout):
    with pytest.raises(RuntimeError, match="not a sequence"):
        _run(op, samples, layout)


def test_float_input_and_output_type():
    out = _run(lambda x: fn.brightness_contrast(fn.cast(x, dtype=types.FLOAT), brightness=_pf(A), dtype=types.UINT8),
               [SEQ, SEQ[:2].copy()], "FHWC")
    assert out.dtype == types.UINT8 and out.layout() == "FHWC"


@pytest.mark.parametrize("op", [lambda x: fn.gaussian_blur(x, sigma=_pf(A)),
                                lambda x: fn.laplacian(fn.cast(x, dtype=types.FLOAT), scale=_pf(A)),
                                lambda x: fn.rotate(x, angle=_pf(H))])
@pytest.mark.parametrize("samples, layout", [([SEQ[0], SEQ[1]], "HWC"), ([SEQ[0], SEQ[1]], None),
                                             ([SEQ, SEQ[:2].copy()], "DHWC")])
def test_filters_and_rotate_need_a_sequence_for_per_frame_arguments(op, samples, layout):
    with pytest.raises(RuntimeError, match="not a sequence"):
        _run(op, samples, layout)


def test_rotate_reads_a_layout_less_4d_input_as_frames():
    out = _run(lambda x: fn.rotate(x, angle=_pf(H)), [SEQ, SEQ[:2].copy()], None)
    assert out.layout() == "FHWC" and out.shape() == [(3, 16, 16, 3), (2, 16, 16, 3)]
    got = b"".join(np.asarray(out.at(i)).tobytes() for i in range(2))
    assert hashlib.sha256(got).hexdigest()[:16] == "225cdd3a13e5663f"
