"""experimental.remap. DALI 2.4 runs it on the GPU only, so its CPU backend cannot be the reference
here: the op is checked against a NumPy evaluation of DALI's documented formula
output(x, y) = input(mapx(x, y), mapy(x, y)) (bilinear or nearest, 0 outside, "corner" = pixel i
spans [i, i + 1), "center" = OpenCV's), against warp_affine given the same coordinates, and
identity maps must return the input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types

from reference import geometry_cases as G


def numpy_remap(img: np.ndarray, mx: np.ndarray, my: np.ndarray, interp: str, centred: bool) -> np.ndarray:
    h, w, c = img.shape
    src = img.astype(np.float64)

    def at(yy, xx):
        ok = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        v = src[np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
        return np.where(ok[..., None], v, 0.0)
    x, y = mx.astype(np.float64), my.astype(np.float64)
    if interp == "nn":
        off = 0.5 if centred else 0.0
        out = at(np.floor(y + off).astype(int), np.floor(x + off).astype(int))
    else:
        if not centred:
            x, y = x - 0.5, y - 0.5
        x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
        qx, qy = (x - x0)[..., None], (y - y0)[..., None]
        top = at(y0, x0) * (1 - qx) + at(y0, x0 + 1) * qx
        bot = at(y0 + 1, x0) * (1 - qx) + at(y0 + 1, x0 + 1) * qx
        out = top * (1 - qy) + bot * qy
    if img.dtype == np.float32:
        return out.astype(np.float32)
    info = np.iinfo(img.dtype)
    return np.clip(np.sign(out) * np.floor(np.abs(out) + 0.5), info.min, info.max).astype(img.dtype)


def run_remap(img, mx, my, layout="HWC", **kw):
    t, a, b = (torch.from_numpy(np.ascontiguousarray(v)) for v in (img, mx, my))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        x = fn.external_source(source=lambda: [t], batch=True, layout=layout)
        u = fn.external_source(source=lambda: [a], batch=True)
        v = fn.external_source(source=lambda: [b], batch=True)
        return fn.experimental.remap(x, u, v, **kw)
    pipe = p()
    pipe.build()
    out, = pipe.run()
    return np.asarray(out.at(0)), out.layout()


def maps(h: int, w: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    return (x * 1.1 - 2 + rng.random((h, w), np.float32) * 3).astype(np.float32), \
        (y * 0.9 + 1 + rng.random((h, w), np.float32) * 3).astype(np.float32)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
@pytest.mark.parametrize("origin", ["corner", "center"])
@pytest.mark.parametrize("interp", ["nn", "linear"])
def test_matches_the_formula(interp, origin, dtype):
    img = G.noise((23, 31, 3), seed=31, dtype=dtype)
    mx, my = maps(17, 29, seed=32)
    got, layout = run_remap(img, mx, my, interp=getattr(types, "INTERP_" + interp.upper()), pixel_origin=origin)
    want = numpy_remap(img, mx, my, interp, origin == "center")
    assert layout == "HWC" and got.shape == want.shape and got.dtype == want.dtype
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
    else:  # float32 weights: a tie may round the other way
        d = np.abs(got.astype(np.int64) - want.astype(np.int64))
        assert d.max() <= 1 and (d > 0).mean() < 0.01


def test_identity_maps_return_the_input():
    img = G.noise((9, 12, 1), seed=33)
    y, x = np.mgrid[0:9, 0:12].astype(np.float32)
    got, _ = run_remap(img, x + 0.5, y + 0.5)
    np.testing.assert_array_equal(got, img)
    got, _ = run_remap(img, x, y, pixel_origin="center")
    np.testing.assert_array_equal(got, img)


def test_equals_warp_affine_on_its_coordinates():
    """remap fed warp_affine's source coordinates gives warp_affine's output (fill 0)."""
    from torch_dali.functional.warp import affine_coords
    img = G.IMG
    m = torch.tensor(G.AFFINE, dtype=torch.float32).reshape(1, 2, 3)
    c = affine_coords(m, (17, 40), stepped=True)[0].numpy()  # the points the CPU warp_affine reads
    got, _ = run_remap(img, c[..., 0].copy(), c[..., 1].copy())
    t = torch.from_numpy(img)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        x = fn.external_source(source=lambda: [t], batch=True, layout="HWC")
        return fn.warp_affine(x, matrix=G.AFFINE, size=(17, 40), fill_value=0.0)
    pipe = p()
    pipe.build()
    want, = pipe.run()
    np.testing.assert_array_equal(got, want.at(0))


def test_sequences_and_refusals():
    seq = G.SEQ  # (3, 10, 14, 3)
    mx, my = maps(10, 14, seed=34)
    got, layout = run_remap(seq, np.stack([mx] * 3), np.stack([my] * 3), layout="FHWC")
    assert layout == "FHWC" and got.shape == seq.shape
    np.testing.assert_array_equal(got[1], run_remap(seq[1], mx, my)[0])
    from torch_dali.errors import TorchDaliError
    with pytest.raises(TorchDaliError):
        run_remap(G.noise((5, 6, 2), seed=1), mx[:5, :6].copy(), my[:5, :6].copy())  # 2 channels
    with pytest.raises(TorchDaliError):
        run_remap(G.IMG, mx, my[:5].copy())  # maps differ
    with pytest.raises((TorchDaliError, ValueError)):
        run_remap(G.IMG, mx, my, interp=types.INTERP_CUBIC)
