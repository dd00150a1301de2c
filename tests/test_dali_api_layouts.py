"""Image ops honour their input's layout (as DALI 2.4 does, checked against its outputs) or refuse
it by name; every output carries its layout. NumPy gives the references."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError, PipelineError
from torch_dali.pipeline import Pipeline

RNG = np.random.default_rng(0)
HWC = RNG.integers(0, 255, (6, 8, 3), dtype=np.uint8)
FHWC = RNG.integers(0, 255, (2, 6, 8, 3), dtype=np.uint8)
TO = {"HWC": (0, 1, 2), "CHW": (2, 0, 1), "FHWC": (0, 1, 2, 3), "FCHW": (0, 3, 1, 2), "CFHW": (3, 0, 1, 2)}


def _as(layout):
    base = HWC if len(layout) == 3 else FHWC
    return np.ascontiguousarray(base.transpose(TO[layout]))


def _run(op, data, layout, fed=False):
    """`op` on one sample given `layout` by the external source, or by feed_input (fed=True)."""
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, seed=3)
    with pipe:
        src = fn.external_source(name="src") if fed else fn.external_source(lambda: [data], layout=layout)
        pipe.set_outputs(op(src))
    if fed:
        pipe.feed_input("src", [data], layout=layout)
    (out,) = pipe.run()
    return out.layout(), np.asarray(out.at(0))


@pytest.mark.parametrize("fed", [False, True])
@pytest.mark.parametrize("layout", ["HWC", "CHW", "FHWC", "FCHW", "CFHW"])
def test_flip_crop_resize_cmn_follow_the_layout(layout, fed):
    data = _as(layout)
    w, h = layout.index("W"), layout.index("H")
    if layout == "CFHW":  # flip does not take CFHW, in DALI either (a ValueError, at build when declared)
        with pytest.raises(PipelineError if fed else ArgumentError, match="CFHW"):
            _run(lambda x: fn.flip(x), data, layout, fed)
    else:
        lay, out = _run(lambda x: fn.flip(x, horizontal=1, vertical=1), data, layout, fed)
        assert lay == layout and np.array_equal(out, np.flip(data, (w, h)))
    lay, out = _run(lambda x: fn.crop(x, crop=(4, 5), crop_pos_x=0.3, crop_pos_y=0.7), data, layout, fed)
    y0, x0 = round(0.7 * 2), round(0.3 * 3)  # DALI's anchors for a 6x8 image
    want = np.take(np.take(data, range(y0, y0 + 4), axis=h), range(x0, x0 + 5), axis=w)
    assert lay == layout and np.array_equal(out, want)
    lay, out = _run(lambda x: fn.resize(x, size=(3, 4), interp_type=types.INTERP_NN), data, layout, fed)
    want = np.take(np.take(data, [1, 3, 5], axis=h), [1, 3, 5, 7], axis=w)
    assert lay == layout and np.array_equal(out, want)
    out_layout = layout.replace("HWC", "CHW") if "HWC" in layout else layout
    lay, out = _run(lambda x: fn.crop_mirror_normalize(x, crop=(6, 8), mean=[10.0], std=[2.0], mirror=1,
                                                       output_layout=out_layout), data, layout, fed)
    want = (np.flip(data, w).astype(np.float32) - 10) / 2
    assert lay == out_layout and np.allclose(out, want.transpose([layout.index(a) for a in out_layout]))


def test_the_issues_examples():
    """flip on CHW flipped the wrong axis; CMN turned a CHW (2,3,4) sample into (4,2,3)."""
    chw = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    lay, out = _run(lambda x: fn.flip(x), chw, "CHW")
    assert lay == "CHW" and np.array_equal(out, chw[:, :, ::-1])
    lay, out = _run(lambda x: fn.crop_mirror_normalize(x), chw, "CHW")
    assert lay == "CHW" and out.shape == (2, 3, 4) and np.array_equal(out, chw.astype(np.float32))


def test_no_layout_means_dalis_default():
    lay, out = _run(lambda x: fn.flip(x), HWC, None)
    assert lay == "HWC" and np.array_equal(out, HWC[:, ::-1])
    lay, out = _run(lambda x: fn.flip(x), FHWC, None)
    assert lay == "FHWC" and np.array_equal(out, FHWC[:, :, ::-1])


@pytest.mark.parametrize("op,layout,data,err", [
    # geometry ops refuse a declared layout at build, with a ValueError (as DALI's run() raises)
    (lambda x: fn.flip(x), "XYZ", HWC, ArgumentError), (lambda x: fn.crop(x, crop=(2, 2)), "ABC", HWC, ArgumentError),
    (lambda x: fn.brightness_contrast(x, brightness=2), "CHW", _as("CHW"), PipelineError),
    (lambda x: fn.hsv(x, hue=10), "FCHW", _as("FCHW"), PipelineError),
    (lambda x: fn.crop_mirror_normalize(x, output_layout="CHW"), "FHWC", FHWC, PipelineError),  # not a permutation
])
def test_unsupported_layouts_are_refused_by_name(op, layout, data, err):
    with pytest.raises(err, match=layout):
        _run(op, data, layout)


def test_color_ops_on_sequences():
    lay, out = _run(lambda x: fn.brightness_contrast(x, brightness=0.5), FHWC, "FHWC")
    assert lay == "FHWC" and np.array_equal(out, np.round(FHWC * 0.5 + 1e-9).astype(np.uint8))
    lay, seq = _run(lambda x: fn.hsv(x, hue=30.0, saturation=0.5), FHWC, "FHWC")
    _, one = _run(lambda x: fn.hsv(x, hue=30.0, saturation=0.5), np.ascontiguousarray(FHWC[1]), "HWC")
    assert lay == "FHWC" and np.array_equal(seq[1], one)


def test_volumetric_crop_and_cmn():
    vol = RNG.integers(0, 255, (10, 6, 8, 3), dtype=np.uint8)
    lay, out = _run(lambda x: fn.crop(x, crop=(4, 2, 3), crop_pos_z=0.5, crop_pos_x=0.0, crop_pos_y=1.0), vol, "DHWC")
    assert lay == "DHWC" and np.array_equal(out, vol[3:7, 4:6, 0:3])
    lay, out = _run(lambda x: fn.crop_mirror_normalize(x, crop_d=12, crop_h=6, crop_w=8, out_of_bounds_policy="pad",
                                                       output_layout="CDHW"), vol, "DHWC")
    assert lay == "CDHW" and out.shape == (3, 12, 6, 8) and np.array_equal(out[:, 0], np.zeros((3, 6, 8)))
    assert np.array_equal(out[:, 1:11], vol.transpose(3, 0, 1, 2).astype(np.float32))


@pipeline_def(batch_size=1, num_threads=1, device_id=None)
def _chw_image():
    return fn.flip(fn.external_source(lambda: [_as("CHW")], layout="CHW"), horizontal=1)


def test_static_layout_keeps_the_cpu_chain():
    """A layout known when the pipeline is built (an external source's `layout=`) keeps the op
    sample-wise (the fast CPU chain); a layout that only the data carry runs it per batch."""
    pipe = _chw_image()
    pipe.build()
    flip = [op for op in pipe._exec().plan.ops.values() if type(op).__name__ == "Flip"][0]
    assert flip.sample_wise and flip.in_layout == "CHW"
    (out,) = pipe.run()
    assert np.array_equal(np.asarray(out.at(0)), _as("CHW")[:, :, ::-1])
