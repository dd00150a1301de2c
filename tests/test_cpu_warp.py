"""The C helper cpu_warp.c (the warp family's resampling on the CPU, `ops/fast/cpu_warp.py`) gives
the spec's bits: `functional.warp.sample` at any points (NaN, infinities and huge values included:
remap's maps are data) and `functional.warp.warp_matrix` for affine matrices and homographies,
every input type, interpolation and border mode; the ops give the same batches with and without
it."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import helpers
from torch_dali.functional import distort as D
from torch_dali.functional import warp as W
from torch_dali.ops.fast import cpu_warp

try:
    from tests._fuzz_inputs import (WARP_TYPES as _TYPES, warp_args as _args, warp_image as _image,
                                    warp_matrices as _matrix, warp_points)
except ImportError:
    from _fuzz_inputs import (WARP_TYPES as _TYPES, warp_args as _args, warp_image as _image,  # type: ignore[no-redef]
                              warp_matrices as _matrix, warp_points)
try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]


def _need_helper() -> None:
    need(helpers.CPU_WARP)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal bits, every NaN made one (a NaN's sign depends on the order of the operations)."""
    def bits(t: torch.Tensor) -> torch.Tensor:
        if t.dtype != torch.float32:
            return t
        return t.reshape(-1).view(torch.int32).masked_fill(t.reshape(-1).isnan(), 0x7FC00000)
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


def test_sample_matches_the_spec_bit_for_bit_at_any_point() -> None:
    _need_helper()
    rng = random.Random(7)
    for case in range(400):
        dtype = rng.choice(_TYPES)
        n = rng.randint(1, 3)
        img = _image(rng, n, dtype)
        a = _args(rng, dtype, int(img.shape[-1]))
        pts = warp_points(rng, n)  # 30% with NaN, infinities or huge values: what degenerate maps give
        f = W.fill_values(a["fill"], int(img.shape[-1]), dtype, img.device, a["out_dtype"]) if a["fill"] else None
        want = W.sample(img, pts, a["interp"], f, a["out_dtype"], a["border"], a["centred"], a["weight_bits"])
        got = cpu_warp.sample(img, pts, a["interp"], f, a["out_dtype"], a["border"], a["centred"], a["weight_bits"])
        assert got is not None, case
        assert _same(got, want), (case, dtype, a)


def test_warp_matrix_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(11)
    for case in range(300):
        dtype = rng.choice(_TYPES)
        n = rng.randint(1, 3)
        img = _image(rng, n, dtype)
        a = _args(rng, dtype, int(img.shape[-1]))
        perspective = rng.random() < 0.5
        if not perspective:
            a["centred"] = False  # affine matrices map corner-origin coordinates only
        mats = _matrix(rng, rng.choice([1, n]), perspective)
        # rows of several blocks, and of several 256-pixel tiles of the affine walk
        size = (rng.randint(1, 20), rng.choice([rng.randint(1, 20), rng.randint(60, 150), rng.randint(250, 530)]))
        args = (img, mats, size, a["interp"], a["fill"], a["out_dtype"], a["border"], a["centred"], a["weight_bits"])
        want = W.warp_matrix(*args)
        got = cpu_warp.warp_matrix(*args)
        assert got is not None, case
        assert _same(got, want), (case, dtype, perspective, a)


def test_declines_what_it_does_not_take() -> None:
    _need_helper()
    img = torch.zeros((1, 4, 4, 3), dtype=torch.uint8)
    pts = torch.zeros((1, 2, 2, 2))
    assert cpu_warp.sample(img, pts, "linear", None, torch.int16) is None  # another integer type
    assert cpu_warp.sample(torch.zeros((1, 2, 4, 4, 3), dtype=torch.uint8), torch.zeros((1, 2, 2, 2, 3)), "linear") is None
    assert cpu_warp.sample(img[:, :0], pts, "linear") is None  # empty image: the spec decides
    assert cpu_warp.warp_matrix(img, torch.eye(3)[None], (0, 3), "linear", None) is None


def _rotate_pipe(dtype: types.DALIDataType, interp: types.DALIInterpType):
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 255, (int(rng.integers(20, 60)), int(rng.integers(20, 60)), 3), dtype=np.uint8)
            for _ in range(4)]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=5)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        x = fn.cast(x, dtype=dtype) if dtype != types.UINT8 else x
        a = fn.random.uniform(range=(-40.0, 40.0))
        affine_interp = types.INTERP_LINEAR if interp == types.INTERP_CUBIC else interp  # nn or linear only
        r = fn.rotate(x, angle=a, interp_type=affine_interp, fill_value=7)
        m = fn.transforms.rotation(angle=a, center=(20.0, 20.0))
        wa = fn.warp_affine(x, matrix=m, size=(33, 37), interp_type=affine_interp)
        wp = fn.experimental.warp_perspective(x, matrix=[1.0, 0.1, 2.0, -0.05, 0.9, 3.0, 0.001, 0.0005, 1.0],
                                              interp_type=interp, border_mode="reflect_101")
        return r, wa, wp
    p = pipe()
    p.build()
    return p


@pytest.mark.parametrize("dtype", [types.UINT8, types.FLOAT])
@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC])
def test_ops_give_the_same_batches_with_and_without_the_helper(dtype, interp, monkeypatch) -> None:
    _need_helper()
    # every sample of the three ops goes through the helper: 12 calls
    same_with_and_without(monkeypatch, lambda: _rotate_pipe(dtype, interp), ["warp_matrix"], 12)


def test_distort_sample_matches_the_spec_bit_for_bit() -> None:
    """water, sphere and jitter's sampling (`functional.distort.sample`) at any points."""
    _need_helper()
    rng = random.Random(13)
    for case in range(300):
        dtype = rng.choice([torch.uint8, torch.float32])
        n = rng.randint(1, 3)
        img = _image(rng, n, dtype)
        pts = warp_points(rng, rng.choice([1, n]), odd=0.3, spread=rng.choice([8.0, 40.0]))
        px, py = pts[..., 0].contiguous(), pts[..., 1].contiguous()
        linear, fill = rng.random() < 0.6, rng.choice([0.0, rng.uniform(-50, 300)])
        want = D.sample(img, px, py, linear, fill)
        got = cpu_warp.distort_sample(img, px, py, linear, fill)
        assert got is not None and _same(got, want), (case, dtype, tuple(img.shape), linear, fill)


@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR])
def test_distort_ops_give_the_same_batches_with_and_without_the_helper(interp, monkeypatch) -> None:
    _need_helper()
    rng = np.random.default_rng(8)
    imgs = [rng.integers(0, 255, (int(rng.integers(20, 60)), int(rng.integers(20, 60)), 3), dtype=np.uint8)
            for _ in range(3)]

    def make():
        @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=2)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            return (fn.water(x, interp_type=interp, fill_value=33), fn.sphere(x, interp_type=interp),
                    fn.water(fn.cast(x, dtype=types.FLOAT), interp_type=interp))
        p = pipe()
        p.build()
        return p
    same_with_and_without(monkeypatch, make, ["distort_sample"], 9, _same)
