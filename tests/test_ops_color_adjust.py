"""brightness, contrast, hue, saturation, color_space_conversion against DALI 2.4's CPU backend
(tests/reference/color_ops_cases.py; tables from color_ops_make.py, "live" runs DALI now).

Exact, except hue/saturation: the 3x3 matrix is made in float64 and rounded to float32 (DALI builds
it in float32 in another order), so float outputs differ by a few float32 ulps of the input's
range (bound: 2e-7 of the largest input value, 1e-6 relative) and integer outputs may differ by 1 on a rounding tie (bound: 1% of values)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import PipelineError

from reference import color_ops_cases as C
from reference.color_ops_check import SOURCES, compare, dali, ours

NAMES = [n for n in C.CASES if C.CASES[n]["op"] in ("brightness", "contrast", "hue", "saturation",
                                                     "color_space_conversion")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", NAMES)
def test_against_dali(name, source):
    want, want_layout = dali(source, name)
    got, layout = ours(name)
    assert layout == want_layout
    op = C.CASES[name]["op"]
    if op in ("hue", "saturation"):
        scale = max(float(np.abs(x).max()) for x in C.inputs()[C.CASES[name]["input"]])
        compare(got, want, atol=2e-7 * scale, rtol=1e-6, int_tol=1, max_frac=0.01)
    else:
        compare(got, want, atol=1e-5)


def _run(op, x, layout="HWC", **kw):
    @pipeline_def(batch_size=len(x), num_threads=1, device_id=None)
    def pipe():
        return op(fn.external_source(source=lambda: list(x), batch=True, layout=layout), **kw)

    p = pipe()
    p.build()
    return p.run()[0]


def test_dense_and_ragged_batches_agree():
    """The batched path (dense) and the per-sample path (ragged) give the same values."""
    a = torch.randint(0, 256, (6, 7, 3), dtype=torch.uint8)
    b = torch.randint(0, 256, (6, 7, 3), dtype=torch.uint8)
    c = torch.randint(0, 256, (4, 5, 3), dtype=torch.uint8)
    for op, kw in ((fn.hue, dict(hue=50.0)), (fn.saturation, dict(saturation=0.2)),
                   (fn.brightness, dict(brightness=1.3)), (fn.contrast, dict(contrast=2.0))):
        dense = _run(op, [a, b], **kw)
        ragged = _run(op, [a, c, b], **kw)
        np.testing.assert_array_equal(dense.at(0), ragged.at(0))
        np.testing.assert_array_equal(dense.at(1), ragged.at(2))


@pytest.mark.parametrize("layout", ["CHW", "HW", "FCHW"])
def test_channel_first_layouts_are_refused(layout):
    x = [torch.zeros((3,) * len(layout), dtype=torch.uint8)]
    with pytest.raises(PipelineError, match="allowed layouts"):
        _run(fn.hue, x, layout=layout, hue=10.0)


def test_types_are_checked():
    with pytest.raises(PipelineError, match="input type"):
        _run(fn.brightness, [torch.zeros((2, 2, 3), dtype=torch.float64)])
    with pytest.raises(PipelineError, match="uint8"):
        _run(fn.color_space_conversion, [torch.zeros((2, 2, 3))], image_type=types.RGB, output_type=types.BGR)
    with pytest.raises(PipelineError, match="channel"):
        _run(fn.color_space_conversion, [torch.zeros((2, 2, 3), dtype=torch.uint8)], image_type=types.GRAY,
             output_type=types.RGB)
    with pytest.raises(PipelineError, match="3 channels"):
        _run(fn.hue, [torch.zeros((2, 2, 4), dtype=torch.uint8)], hue=1.0)


def test_hue_keeps_the_input_type():
    for dt in (torch.uint8, torch.int16, torch.int32, torch.float32, torch.float16):
        out = _run(fn.hue, [torch.full((2, 2, 3), 7, dtype=dt)], hue=5.0)
        assert out.at(0).dtype == torch.empty(0, dtype=dt).numpy().dtype


# DALI 2.4's CPU backend on this 2x2 image (found by probing fn.saturation's arguments, 2026-12-05):
# a negative factor is taken and mirrors the chroma about the gray value, as hsv's does
_SAT_IN = [[[10, 200, 30], [255, 0, 128]], [[90, 90, 90], [0, 50, 250]]]
_SAT_DALI = {-0.5: [[[181, 86, 171], [9, 136, 73]], [[90, 90, 90], [87, 62, 0]]],
             -2.0: [[[255, 0, 255], [0, 255, 17]], [[90, 90, 91], [173, 73, 0]]]}
_SAT_DALI_F = {-0.5: [[[0.70844185, 0.33586404, 0.67151874], [0.03415594, 0.53413486, 0.2848576]],
                      [[0.35276347, 0.35274258, 0.35443008], [0.34017989, 0.24212722, -0.14894491]]],
               -2.0: [[[1.37766802, -0.11258569, 1.22539032], [-0.93168819, 1.06826961, 0.06775439]],
                      [[0.35258573, 0.35254395, 0.35591888], [0.68035984, 0.28817600, -1.27828205]]]}


@pytest.mark.parametrize("s", [-0.5, -2.0])
def test_negative_saturation_is_taken(s):
    x = torch.tensor(_SAT_IN, dtype=torch.uint8)
    np.testing.assert_array_equal(np.asarray(_run(fn.saturation, [x], saturation=s).at(0)), _SAT_DALI[s])
    got = np.asarray(_run(fn.saturation, [x.float() / 255], saturation=s).at(0))
    np.testing.assert_allclose(got, _SAT_DALI_F[s], atol=2e-6)
    # and as a per-sample argument input
    got = _run(fn.saturation, [x, x], saturation=fn.constant(fdata=s))
    np.testing.assert_array_equal(np.asarray(got.at(1)), _SAT_DALI[s])
