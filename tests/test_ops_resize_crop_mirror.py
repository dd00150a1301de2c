"""resize_crop_mirror against DALI 2.4's CPU backend (cases in tests/reference/geometry_cases.py):
shapes and types exact; uint8 within 1 on at most 1% of values (measured: <= 0.75%, float32 ties
of the resampling, as functional.resize documents), float within 1e-3 on 0..255 data. The window
is resampled as one region (DALI's subpixel scale, the canvas centred), so a fractional resized
size (resize_shorter=20 on 23x31 gives 26.96 -> 27) matches DALI; fn.resize, which keeps the
fractional scale the same way, matches DALI on the same sizes (the `plain_*` cases). The mirror
reads the window backwards, as DALI does: a flip of the unmirrored result up to rounding ties.
Regions of interest and subpixel_scale=False: tests/test_ref_resize_roi.py."""
from __future__ import annotations

import numpy as np
import pytest

from reference import geometry_cases as G
from reference.geometry_tables import SOURCES, dali, ours

CASES = [k for k in G.CASES if k.startswith("resize_crop_mirror/")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", CASES)
def test_matches_dali(name, source):
    want = dali(source, name)
    got = ours(name)
    for g, w in zip(got[0], want[0]):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, atol=1e-3, rtol=0)
        else:
            d = np.abs(g.astype(np.int64) - w.astype(np.int64))
            assert d.max() <= 1 and (d > 0).mean() <= 0.01, (d.max(), (d > 0).mean())


@pytest.mark.parametrize("k", range(7))
def test_mirror_is_a_flip_up_to_rounding(k):
    a, b = ours(f"resize_crop_mirror/{k}_m0")[0][0], ours(f"resize_crop_mirror/{k}_m1")[0][0]
    np.testing.assert_allclose(a[:, ::-1].astype(np.float64), b.astype(np.float64), atol=1, rtol=0)


def test_legacy_class_name():
    import torch_dali.ops as ops
    # DALI 2.4 registers FastResizeCropMirror as its own deprecated schema (ops/tensor_resize.py) with
    # resize_crop_mirror's arguments and kernel
    old, new = ops.FastResizeCropMirror._schema, ops.ResizeCropMirror._schema
    assert [a.name for a in old.args] == [a.name for a in new.args] and issubclass(old.impl, new.impl)
    # the one difference: no antialiasing by default (DALI 2.4: fast_resize_crop_mirror equals
    # resize_crop_mirror(antialias=False), measured)
    assert [(a.name, a.default) for a in old.args if a != new.args[[b.name for b in new.args].index(a.name)]] \
        == [("antialias", False)]


def _rcm(img, **kw):
    from torch_dali import fn, pipeline_def

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.resize_crop_mirror(fn.external_source(source=lambda: [img], batch=True, layout="HWC"),
                                     size=[40, 40], **kw)
    p = pipe()
    p.build()
    return np.asarray(p.run()[0].at(0))


IMG = (np.arange(37 * 53 * 3) % 251).astype(np.uint8).reshape(37, 53, 3)


@pytest.mark.parametrize("kw", [dict(crop=20.0), dict(crop=[20.0]), dict(crop_w=20.0), dict(crop_h=20.0)])
def test_crop_arguments_dali_refuses(kw):
    """DALI 2.4 (measured): `crop` needs 2 or 3 values; crop_h and crop_w come together."""
    with pytest.raises(RuntimeError, match="crop"):
        _rcm(IMG, **kw)


def test_crop_arguments_dali_takes():
    """DALI 2.4 (measured): a 3-value crop on an image crops with its last two values; a crop
    size of 0 or below keeps the whole axis (shapes (20, 20, 3) and (40, 20, 3) there)."""
    np.testing.assert_array_equal(_rcm(IMG, crop=(5, 20, 20)), _rcm(IMG, crop=(20, 20)))
    assert _rcm(IMG, crop=(-5, 20)).shape == (40, 20, 3)
    np.testing.assert_array_equal(_rcm(IMG, crop=(-5, 20)), _rcm(IMG, crop=(0, 20)))
