"""The geometry ops (warps, coord ops, regions) on CUDA against the same reference cases on the
CPU (skipped without CUDA). The kernels use elementwise float32 ops in one fixed order (no matmul
reductions, no TF32), so both devices give the same bits. Also the batched warp path (one call for
a dense batch) against per-sample results.

Run on the GPU machine: `python3 -m pytest -q tests/gpu/test_gpu_geometry_ops.py`.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def

from reference import geometry_cases as G
from reference.geometry_tables import dali, ours

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _on_gpu(name: str) -> bool:
    from torch_dali.ops import lookup
    return "gpu" in lookup(G.CASES[name].op).devices and not isinstance(dali("table", name), str)


CASES = [k for k in G.CASES if _on_gpu(k)]
DECODER_CASES = [k for k in G.CASES if k.startswith("decoders/") and G.CASES[k].op != "peek_image_shape"
                 and not isinstance(dali("table", k), str)]


@pytest.mark.parametrize("name", DECODER_CASES)
def test_mixed_decoders_equal_cpu(name):
    """device='mixed' (nvJPEG, the window cut on the GPU) against the CPU decoders: the same
    windows; JPEG pixels within nvJPEG's distance from libjpeg-turbo (another IDCT: the bound of
    tests/gpu/test_extension.py, mean < 0.5 and peak <= 8); PNG and BMP decode on the CPU either way."""
    cpu, gpu = ours(name, "cpu"), ours(name, "mixed")
    for c, g in zip(cpu[0], gpu[0]):
        assert c.shape == g.shape and c.dtype == g.dtype
        scale = 255.0 if c.dtype.kind == "f" else 1.0
        d = np.abs(c.astype(np.float64) - g.astype(np.float64)) * scale
        assert d.mean() < 0.5 and d.max() <= 8, (d.mean(), d.max())


@pytest.mark.parametrize("name", CASES)
def test_cuda_equals_cpu(name):
    cpu, gpu = ours(name, "cpu"), ours(name, "gpu")
    for c_out, g_out in zip(cpu, gpu):
        for c, g in zip(c_out, g_out):
            assert c.shape == g.shape and c.dtype == g.dtype
            if name.startswith("resize_crop_mirror/"):  # separable sums: the reduction order may differ
                d = np.abs(c.astype(np.float64) - g.astype(np.float64))
                assert d.max() <= (1e-3 if c.dtype.kind == "f" else 1), d.max()
            elif name.startswith(("rotate/", "warp_affine/")):
                # the CPU walks each row's points as DALI's CPU backend does, CUDA maps each pixel
                # (DALI's GPU backend; test_cuda_affine_points_are_the_unstepped_ones holds its
                # bits): ties on a pixel edge go either way (measured on the CPU: nn 5.6% of
                # pixels at most, linear 1 on 2.5%, floats within 1e-3 relative)
                if c.dtype.kind == "f":
                    np.testing.assert_allclose(g, c, rtol=1e-3, atol=1e-3)
                else:
                    d = np.abs(c.astype(np.float64) - g.astype(np.float64))
                    assert (d > 0).mean() <= (0.06 if "/nn_" in name else 0.03), (d > 0).mean()
                    assert "/nn_" in name or d.max() <= 1, d.max()
            else:
                np.testing.assert_array_equal(g, c)


@pytest.mark.parametrize("op", ["rotate", "warp_affine", "warp_perspective"])
def test_dense_batch_in_one_call_equals_per_sample(op):
    """Same-size samples with per-sample angles / matrices go through the batched path on CUDA."""
    imgs = [torch.from_numpy(G.noise((40, 52, 3), seed=s)) for s in range(6)]
    angles = [torch.tensor(a, dtype=torch.float32) for a in (0.0, 12.5, -33.0, 90.0, 181.0, 7.0)]
    mats = [torch.tensor([[1.0, 0.1 * k, -1.0], [-0.05 * k, 0.9, 2.0]], dtype=torch.float32) for k in range(6)]

    def run(device_id, one_by_one):
        outs = []
        for i in (range(6) if one_by_one else [None]):
            batch = imgs if i is None else [imgs[i]]
            a = angles if i is None else [angles[i]]
            m = mats if i is None else [mats[i]]

            @pipeline_def(batch_size=len(batch), num_threads=1, device_id=device_id, seed=3)
            def q():
                x = fn.external_source(source=lambda: batch, batch=True, layout="HWC").gpu()
                if op == "rotate":
                    ang = fn.external_source(source=lambda: a, batch=True)
                    return fn.rotate(x, angle=ang, keep_size=True, fill_value=5.0)
                mat = fn.external_source(source=lambda: m, batch=True)
                if op == "warp_perspective":
                    hom = fn.external_source(source=lambda: [torch.cat([t, torch.tensor([[0.0, 1e-3, 1.0]])])
                                                             for t in m], batch=True)
                    return fn.experimental.warp_perspective(x, matrix=hom, border_mode="reflect_101")
                return fn.warp_affine(x, matrix=mat, interp_type="nn")
            pipe = q()
            pipe.build()
            out, = pipe.run()
            outs += [out.as_cpu().at(k) for k in range(len(batch))]
        return outs

    batched, single = run(0, False), run(0, True)
    for b, s in zip(batched, single):
        np.testing.assert_array_equal(b, s)


@pytest.mark.parametrize("origin", ["corner", "center"])
@pytest.mark.parametrize("interp", ["nn", "linear"])
def test_remap_cuda_equals_cpu(interp, origin):
    from torch_dali import types
    img = torch.from_numpy(G.noise((23, 31, 3), seed=41))
    rng = np.random.default_rng(42)
    mx = torch.from_numpy((rng.random((19, 27)) * 35 - 2).astype(np.float32))
    my = torch.from_numpy((rng.random((19, 27)) * 27 - 2).astype(np.float32))

    def run(device_id):
        @pipeline_def(batch_size=1, num_threads=1, device_id=device_id)
        def p():
            x = fn.external_source(source=lambda: [img], batch=True, layout="HWC")
            u = fn.external_source(source=lambda: [mx], batch=True)
            v = fn.external_source(source=lambda: [my], batch=True)
            if device_id is not None:
                x, u, v = x.gpu(), u.gpu(), v.gpu()
            return fn.experimental.remap(x, u, v, interp=getattr(types, "INTERP_" + interp.upper()),
                                         pixel_origin=origin)
        pipe = p()
        pipe.build()
        out, = pipe.run()
        return np.asarray(out.as_cpu().at(0))
    np.testing.assert_array_equal(run(0), run(None))


def test_cuda_affine_points_are_the_unstepped_ones():
    """On CUDA each output pixel's source point is mapped directly (`affine_coords` unstepped, as
    DALI's GPU backend maps them): the same bits as that spec on the CPU, rows past one 256-pixel
    tile of the CPU walk included."""
    from torch_dali.functional import warp as W
    g = torch.Generator().manual_seed(0)
    img = torch.randint(0, 256, (3, 40, 300, 3), dtype=torch.uint8, generator=g)
    mats = torch.tensor([[[0.8, 0, 0], [0, 0.8, 0]], [[0.9, 0.2, 3.0], [-0.1, 1.1, -2.0]],
                         [[0.7, -0.3, 5], [0.3, 0.7, 1]]], dtype=torch.float32)
    for interp in ("nn", "linear"):
        want = W.warp(img, W.affine_coords(mats, (37, 290)), interp, None)
        got = W.warp_matrix(img.cuda(), mats.cuda(), (37, 290), interp, None).cpu()
        assert torch.equal(got, want), interp
