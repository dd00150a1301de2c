"""erase, pad, slice and paste against DALI 2.4's CPU backend (cases in
tests/reference/geometry_cases.py, tables in geometry_tables.npz; "live" runs DALI now when it
imports): exact outputs (shapes, types, values, layouts), and the cases DALI refuses are refused.
Fill values convert as DALI's do (a C cast for erase/pad/slice/paste: 300 -> 44 in uint8)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from reference import geometry_cases as G
from reference.geometry_tables import SOURCES, check_case

CASES = [k for k in G.CASES if k.split("/")[0] in ("erase", "pad", "slice", "paste")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", CASES)
def test_matches_dali(name, source):
    def exact(g, w):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w)
    check_case(name, source, exact)


def test_c_cast_matches_x86():
    """The fill conversion DALI's erase/pad/slice use (measured there: 300 -> 44, -1.7 -> 255,
    2.5 -> 2 in uint8; 1e10 -> INT32_MIN in int32)."""
    from torch_dali.functional.regions import c_cast
    assert c_cast([300.0, -1.7, 2.5, 255.9], torch.uint8).tolist() == [44, 255, 2, 255]
    assert c_cast([1e10, -3.9], torch.int32).tolist() == [-2147483648, -3]
    assert c_cast([300.7], torch.float32).tolist() == [pytest.approx(300.7)]


def test_slice_policies_on_a_line():
    """Each out-of-bounds policy's index pattern on 0..6, written out (DALI 2.4's, measured)."""
    from torch_dali.functional.regions import slice_window
    x = torch.arange(7)
    want = {
        "edge": [0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 6, 6, 6, 6, 6],
        "reflect_1001": [3, 2, 1, 0, 0, 1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2],
        "reflect_101": [4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1],
        "wrap": [3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4],
        "pad": [9, 9, 9, 9, 0, 1, 2, 3, 4, 5, 6, 9, 9, 9, 9, 9],
    }
    for policy, w in want.items():
        got = slice_window(x, [-4], [16], policy, torch.tensor([9]))
        assert got.tolist() == w, policy


@pytest.mark.parametrize("canvas,shape", [(-0.5, (8, 10, 3)), (-0.999, (8, 10, 3)), (7.5, (8, 10, 3)),
                                          (12.0, (12, 12, 3)), (-1.0, None), (-1.5, None)])
def test_paste_negative_min_canvas_size(canvas, shape):
    """DALI 2.4 truncates min_canvas_size to an integer and refuses it below 0 (-1.0 and -1.5 fail
    at run time; -0.999 passes), as test_paste's test_min_canvas_size checks with -1."""
    from torch_dali import fn, pipeline_def, types
    from torch_dali.errors import PipelineError

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.paste(types.Constant(np.zeros((4, 5, 3), np.uint8)), ratio=2.0, fill_value=0,
                        min_canvas_size=canvas)

    p = pipe()
    p.build()
    if shape is None:
        with pytest.raises(PipelineError, match="min_canvas_size"):
            p.run()
    else:
        assert np.asarray(p.run()[0][0]).shape == shape


def test_slice_erase_and_paste_copy_on_the_pools_single_threaded_workers(monkeypatch):
    """slice's, erase's and paste's per-sample copies run on the executor's pool (torch single-threaded
    there): on the calling thread torch's intra-op team stalled them for milliseconds a sample on a
    busy machine (slice 0.8 -> 96 ms a batch with 2 OpenMP threads, bench/cpu_ops_vs_dali.py)."""
    import threading

    from torch_dali import fn, pipeline_def
    from torch_dali.functional import regions as R
    seen = []
    for name in ("slice_window", "erase", "paste"):
        def spy(*a, run=getattr(R, name), **k):
            seen.append((threading.current_thread() is threading.main_thread(), torch.get_num_threads()))
            return run(*a, **k)
        monkeypatch.setattr(R, name, spy)
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (int(rng.integers(20, 40)), int(rng.integers(20, 40)), 3), dtype=np.uint8)
            for _ in range(6)]

    @pipeline_def(batch_size=6, num_threads=2, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return (fn.slice(x, rel_start=(0.25, 0.5), rel_shape=(0.5, 0.25), axis_names="HW"),
                fn.erase(x, anchor=[3, 4], shape=[5, 6], axis_names="HW", fill_value=7),
                fn.paste(x, ratio=1.5, fill_value=9, paste_x=0.3, paste_y=0.4))
    p = pipe()
    p.build()
    sliced, erased, pasted = p.run()
    assert len(seen) >= 18 and not any(main for main, _ in seen) and {n for _, n in seen} == {1}
    for i, img in enumerate(imgs):
        h, w = img.shape[:2]
        y0, x0 = int(np.floor(0.25 * h + 0.5)), int(np.floor(0.5 * w + 0.5))
        y1, x1 = int(np.floor(0.75 * h + 0.5)), int(np.floor(0.75 * w + 0.5))
        np.testing.assert_array_equal(np.asarray(sliced[i]), img[y0:y1, x0:x1])
        want = img.copy()
        want[3:8, 4:10] = 7
        np.testing.assert_array_equal(np.asarray(erased[i]), want)
        ph, pw = int(np.float32(h) * np.float32(1.5)), int(np.float32(w) * np.float32(1.5))
        py, px = int(np.float32(0.4) * (ph - h)), int(np.float32(0.3) * (pw - w))
        want = np.full((ph, pw, 3), 9, np.uint8)
        want[py:py + h, px:px + w] = img
        np.testing.assert_array_equal(np.asarray(pasted[i]), want)
