"""tensor_resize (and experimental.tensor_resize) and fast_resize_crop_mirror against DALI 2.4's
CPU backend (RESIZE cases of tests/reference/tensor_cases_more.py; "live" runs DALI now when it
imports). Output sizes, types and layouts exact (DALI's size rules: modes, max_size, scales with
size_rounding, fractional sizes, regions of interest, flips); values within the resampling
tolerance of functional.resize: integers off by at most 1 on at most 2% of the values (float32 ties;
measured: at most 5 values of a sample, 1.9% of the smallest images), floats within 1e-5 of the
value range (measured: 9e-7)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from torch_dali import fn, ops, pipeline_def

from reference import tensor_cases_more as M
from reference.tensor_check import SOURCES, dali, ours


def _close(got, want):
    if "error" in want:
        assert "error" in got, f"DALI refuses this case ({want['error']}); torch_dali returned a result"
        return
    assert "error" not in got, got["error"]
    assert got["layouts"] == want["layouts"]
    for g, w in zip(got["outputs"][0], want["outputs"][0]):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if g.dtype.kind == "f":
            scale = max(1.0, float(np.abs(w).max()))
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-5 * scale)
        else:
            d = np.abs(g.astype(np.int64) - w.astype(np.int64))
            assert d.max(initial=0) <= 1 and (d > 0).mean() <= 0.02, (d.max(), (d > 0).mean())


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", list(M.RESIZE))
def test_matches_dali(name, source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _close(ours(name), dali(source, name))


def _run(body, xs, layout=None):
    @pipeline_def(batch_size=len(xs), num_threads=2, device_id=None, seed=1)
    def pipe():
        return body(fn.external_source(source=lambda: list(xs), batch=True, layout=layout))

    p = pipe()
    p.build()
    out = p.run()[0]
    return [np.asarray(out.at(i)) for i in range(len(out))]


def test_dense_batch_matches_sample_by_sample():
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 256, (2, 9, 13, 3)).astype(np.uint8)
    c = rng.integers(0, 256, (5, 4, 3)).astype(np.uint8)
    dense = _run(lambda x: fn.tensor_resize(x, sizes=[14, 6], axes=[0, 1]), [a, b], "HWC")
    ragged = _run(lambda x: fn.tensor_resize(x, sizes=[14, 6], axes=[0, 1]), [a, c], "HWC")
    np.testing.assert_array_equal(dense[0], ragged[0])


def test_identity_sizes_return_the_input():
    x = np.random.default_rng(3).random((5, 7, 2)).astype(np.float32)
    (out,) = _run(lambda d: fn.tensor_resize(d, sizes=[5, 7, 2]), [x])
    np.testing.assert_array_equal(out, x)


def test_deprecated_names_warn_and_match():
    import torch_dali.ops as o
    old_args, new_args = o.FastResizeCropMirror._schema.args, o.ResizeCropMirror._schema.args
    assert [a.name for a in old_args] == [a.name for a in new_args]
    assert {a.name: a.default for a in old_args}["antialias"] is False  # DALI's fast variant: no antialias
    x = np.random.default_rng(4).integers(0, 256, (9, 13, 3)).astype(np.uint8)
    with pytest.warns(DeprecationWarning, match="resize_crop_mirror"):
        (old,) = _run(lambda d: fn.fast_resize_crop_mirror(d, resize_shorter=10, crop=[6, 7]), [x], "HWC")
    (new,) = _run(lambda d: fn.resize_crop_mirror(d, resize_shorter=10, crop=[6, 7]), [x], "HWC")
    np.testing.assert_array_equal(old, new)
    assert hasattr(ops, "TensorResize") and hasattr(ops.experimental, "TensorResize")


def _shapes(data, op, **kw):
    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None)
    def p():
        return op(fn.external_source(source=lambda: data, batch=True, layout="HWC" if data[0].ndim == 3 else None), **kw)

    pipe = p()
    pipe.build()
    out = pipe.run()[0]
    return [tuple(np.asarray(out.at(i)).shape) for i in range(len(out))]


@pytest.mark.parametrize("data,kw,want", [
    ([np.arange(10, dtype=np.uint8)], dict(sizes=[0.0]), (10,)),
    ([np.arange(10, dtype=np.uint8)], dict(scales=[0.0]), (10,)),
    ([np.arange(10, dtype=np.uint8)], dict(sizes=[0.0], max_size=[7.0]), (10,)),
    ([np.arange(20, dtype=np.uint8).reshape(4, 5)], dict(sizes=[0.0, 0.0]), (4, 5)),
    ([np.arange(20, dtype=np.uint8).reshape(4, 5)], dict(axes=[1], sizes=[0.0]), (4, 5)),
    ([np.arange(20, dtype=np.uint8).reshape(4, 5)], dict(sizes=[0.0, 8.0]), (6, 8)),
])
def test_sizes_and_scales_of_zero_as_dali(data, kw, want):
    """DALI 2.4 (measured): a size or scale of 0 is none given for that axis; with none given at
    all the sample keeps its shape (max_size too is left alone)."""
    assert _shapes(data, fn.tensor_resize, **kw) == [want]


@pytest.mark.parametrize("kw", [dict(resize_x=0), dict(resize_x=0, resize_y=0), dict(resize_shorter=0), dict(size=[0, 0])])
def test_resize_sizes_of_zero_keep_the_image(kw):
    """DALI 2.4: fn.resize with its sizing arguments 0 leaves the image's size; none at all is refused."""
    assert _shapes([np.zeros((4, 6, 3), np.uint8)], fn.resize, **kw) == [(4, 6, 3)]


def test_a_gaussian_filter_works_on_axes_kept_at_scale_1():
    """DALI 2.4 (measured): with INTERP_GAUSSIAN an axis kept at scale 1, listed or not, is still
    filtered (1-D [63.70, 26.98, 4.10, ...] at scale 1 gives [63.04, 26.57, 4.05, ...]), and
    axes=[2] equals scales=[1, 1, 2]."""
    from torch_dali import types
    rng = np.random.default_rng(0)
    x1 = (rng.random(10) * 100).astype(np.float32)
    x3 = (rng.random((5, 6, 7)) * 100).astype(np.float32)

    def tr(data, **kw):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            return fn.tensor_resize(fn.external_source(source=lambda: [data], batch=True),
                                    interp_type=types.INTERP_GAUSSIAN, **kw)
        pipe = p()
        pipe.build()
        return np.asarray(pipe.run()[0].at(0))

    np.testing.assert_allclose(tr(x1, scales=[1.0])[:4], [63.04, 26.57, 4.05, 1.70], atol=0.006)
    np.testing.assert_allclose(tr(x3, axes=[2], scales=[2.0]), tr(x3, scales=[1.0, 1.0, 2.0]), atol=1e-4)
