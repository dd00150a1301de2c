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
from torch_dali._native import build, helpers
from torch_dali.functional import warp as W
from torch_dali.ops import _dispatch
from torch_dali.ops.fast import cpu_warp

_TYPES = (torch.uint8, torch.int16, torch.uint16, torch.int32, torch.float32)
_BORDERS = ("constant", "replicate", "reflect", "reflect_101", "wrap")


def _need_helper() -> None:
    why = build.skip_reason(helpers.CPU_WARP)
    if why:
        pytest.skip(why)


def _image(rng: random.Random, n: int, dtype: torch.dtype) -> torch.Tensor:
    h, w, c = rng.randint(1, 24), rng.randint(1, 24), rng.choice([1, 2, 3, 4, 5])
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    if dtype == torch.float32:
        return torch.randn((n, h, w, c), generator=g) * 300
    lo, hi = {torch.uint8: (0, 256), torch.int16: (-32768, 32768), torch.uint16: (0, 65536),
              torch.int32: (-(1 << 31), 1 << 31)}[dtype]
    return torch.randint(lo, hi, (n, h, w, c), generator=g, dtype=torch.int64).to(dtype)


def _args(rng: random.Random, dtype: torch.dtype, c: int) -> dict:
    interp = rng.choice(["nn", "linear", "cubic"])
    return dict(interp=interp, border=rng.choice(_BORDERS),
                fill=rng.choice([None, [rng.uniform(-400, 70000)], [rng.uniform(-10, 300)] * c]),
                out_dtype=rng.choice([dtype, torch.float32]), centred=rng.random() < 0.5,
                weight_bits=5 if interp == "linear" and rng.random() < 0.3 else None)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal bits (NaN where NaN)."""
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.view(-1).view(torch.uint8) if a.dtype == torch.float32
                                                                     else a, b.view(-1).view(torch.uint8) if b.dtype == torch.float32 else b)


def test_sample_matches_the_spec_bit_for_bit_at_any_point() -> None:
    _need_helper()
    rng = random.Random(7)
    for case in range(400):
        dtype = rng.choice(_TYPES)
        n = rng.randint(1, 3)
        img = _image(rng, n, dtype)
        a = _args(rng, dtype, int(img.shape[-1]))
        pts = torch.empty((n, rng.randint(1, 9), rng.randint(1, 9), 2)).uniform_(-8, 32)
        if rng.random() < 0.3:  # what degenerate maps and homographies give
            flat = pts.view(-1)
            for _ in range(rng.randint(1, 6)):
                flat[rng.randrange(flat.numel())] = rng.choice([float("nan"), float("inf"), -float("inf"), 3e9, -5e18, 0.5])
        f = W.fill_values(a["fill"], int(img.shape[-1]), dtype, img.device, a["out_dtype"]) if a["fill"] else None
        want = W.sample(img, pts, a["interp"], f, a["out_dtype"], a["border"], a["centred"], a["weight_bits"])
        got = cpu_warp.sample(img, pts, a["interp"], f, a["out_dtype"], a["border"], a["centred"], a["weight_bits"])
        assert got is not None, case
        assert _same(got, want), (case, dtype, a)


def _matrix(rng: random.Random, n: int, perspective: bool) -> torch.Tensor:
    m = torch.eye(3).repeat(n, 1, 1)
    m[:, :2, :2] += torch.empty((n, 2, 2)).uniform_(-0.6, 0.6)
    m[:, :2, 2] = torch.empty((n, 2)).uniform_(-10, 10)
    if perspective:
        m[:, 2, :2] = torch.empty((n, 2)).uniform_(-0.02, 0.02)
        return m
    return m[:, :2].contiguous()


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
        size = (rng.randint(1, 20), rng.randint(1, 20))
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
    return pipe()


@pytest.mark.parametrize("dtype", [types.UINT8, types.FLOAT])
@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC])
def test_ops_give_the_same_batches_with_and_without_the_helper(dtype, interp, monkeypatch) -> None:
    _need_helper()
    calls = []
    real = helpers.warp_matrix
    monkeypatch.setattr(helpers, "warp_matrix", lambda *a: calls.append(1) or real(*a))
    p = _rotate_pipe(dtype, interp)
    p.build()
    fast = [[t.clone() for t in out] for out in p.run()]
    assert len(calls) >= 12  # every sample of the three ops went through the helper
    monkeypatch.setattr(_dispatch, "_FAST_FN", {})
    q = _rotate_pipe(dtype, interp)
    q.build()
    spec = q.run()
    for a, b in zip(fast, spec):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert torch.equal(torch.as_tensor(x), torch.as_tensor(y))
