"""equalize and clahe (against DALI 2.4's CPU backend) and experimental.median_blur / dilate / erode
(DALI has them on the GPU only; against OpenCV, as DALI's own tests check them), from
tests/reference/color_ops_cases.py. All exact, clahe on RGB with luma_only included: both of its
Lab conversions are OpenCV's fixed-point ones, bit for bit (checked here against cv2)."""
from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.errors import PipelineError
from torch_dali.functional import clahe as CL
from torch_dali.functional import morphology as K

try:
    from tests._endless_morph import cases
    from tests._isolate import Died, run_isolated
except ImportError:
    from _endless_morph import cases  # type: ignore[no-redef]
    from _isolate import Died, run_isolated  # type: ignore[no-redef]

from reference import color_ops_cases as C
from reference.color_ops_check import SOURCES, compare, dali, ours

NAMES = [n for n in C.CASES if C.CASES[n]["op"] in ("equalize", "experimental.equalize", "experimental.median_blur",
                                                     "experimental.dilate", "experimental.erode", "clahe")
         and n != "clahe_luma"]


@pytest.mark.parametrize("source", SOURCES)
def test_clahe_luma_against_dali(source):
    want, want_layout = dali(source, "clahe_luma")
    got, layout = ours("clahe_luma")
    assert layout == want_layout
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_rgb_to_lab8_is_opencvs():
    """The 8-bit RGB -> Lab that DALI's CPU clahe runs (OpenCV's cvtColor), over all 2**24 colours."""
    cv2 = pytest.importorskip("cv2")
    from torch_dali.functional.clahe import rgb_to_lab8
    for r0 in range(0, 256, 64):  # 64 reds at a time: 4 Mi colours
        c = np.arange(64 << 16)
        img = np.stack([r0 + (c >> 16), (c >> 8) & 255, c & 255], -1).astype(np.uint8).reshape(1024, -1, 3)
        got = rgb_to_lab8(torch.from_numpy(img)).numpy()
        np.testing.assert_array_equal(got, cv2.cvtColor(img, cv2.COLOR_RGB2Lab), err_msg=f"reds from {r0}")


def test_lab8_to_rgb_is_opencvs():
    """The 8-bit Lab -> RGB that DALI's CPU clahe runs after equalizing L (OpenCV's cvtColor): every
    a, b for the L bytes around the linear part's end (20) and every 8th other."""
    cv2 = pytest.importorskip("cv2")
    from torch_dali.functional.clahe import lab8_to_rgb
    a, b = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    for light in sorted(set(range(0, 256, 8)) | set(range(17, 25)) | {255}):
        lab = np.stack([np.full_like(a, light), a, b], -1).astype(np.uint8)
        np.testing.assert_array_equal(lab8_to_rgb(torch.from_numpy(lab)).numpy(),
                                      cv2.cvtColor(lab, cv2.COLOR_Lab2RGB), err_msg=f"L={light}")


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", NAMES)
def test_against_reference(name, source):
    want, want_layout = dali(source, name)
    got, layout = ours(name)
    assert layout == want_layout
    compare(got, want)


def _run(op, xs, layout="HWC", **kw):
    @pipeline_def(batch_size=len(xs), num_threads=1, device_id=None)
    def pipe():
        return op(fn.external_source(source=lambda: list(xs), batch=True, layout=layout), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    return [np.asarray(out.at(i)) for i in range(len(out))]


def test_wrap_border_matches_numpy():
    """OpenCV has no wrap border for morphology; numpy's roll gives the expectation."""
    x = np.random.default_rng(0).integers(0, 256, (7, 9)).astype(np.uint8)
    got = K.morph(torch.from_numpy(x), 0, 1, (3, 3), (1, 1), "wrap", 1, True).numpy()
    want = np.max([np.roll(np.roll(x, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)], axis=0)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["dilate", "erode"])
@pytest.mark.parametrize("border", ["constant", "wrap"])
def test_a_config_asking_for_endless_iterations_ends_with_the_settled_image(name, border, monkeypatch):
    """`iterations` comes from configs: 2**62 of them stop once an iteration changes nothing (the
    values have settled), giving what 200 give (in a child process: a regression is a Died, not a
    hung test run), and a few iterations equal the unchecked loop."""
    (endless,) = run_isolated("tests._endless_morph:endless", [[name, border]], timeout=60)
    assert not isinstance(endless, Died), endless
    op = getattr(fn.experimental, name)
    kw = dict(mask_size=[4, 2], anchor=[0, 1], border_mode=border)
    for x, e in zip(cases(), endless):
        np.testing.assert_array_equal(np.array(e, dtype=x.dtype), _run(op, [x], iterations=200, **kw)[0])
        few = [_run(op, [x], iterations=n, **kw)[0] for n in (3, 9)]
        with monkeypatch.context() as m:  # the unchecked loop, for this comparison only
            m.setattr(K, "SETTLE_AFTER", 10**9)
            assert all(np.array_equal(a, _run(op, [x], iterations=n, **kw)[0], equal_nan=True)
                       for a, n in zip(few, (3, 9)))


def test_constant_border_never_wins():
    x = np.full((4, 4), 50, np.uint8)
    assert (_run(fn.experimental.erode, [x], layout="HW")[0] == 50).all()
    assert (_run(fn.experimental.dilate, [x], layout="HW")[0] == 50).all()


def test_errors():
    with pytest.raises(PipelineError, match="must be uint8"):
        _run(fn.equalize, [np.zeros((4, 4, 3), np.float32)])
    with pytest.raises(PipelineError, match="odd"):
        _run(fn.experimental.median_blur, [np.zeros((6, 6, 3), np.uint8)], window_size=[4, 4])
    with pytest.raises(PipelineError, match="anchor"):
        _run(fn.experimental.dilate, [np.zeros((6, 6, 3), np.uint8)], anchor=[3, 0])
    with pytest.raises(PipelineError, match="allowed layouts"):
        _run(fn.experimental.erode, [np.zeros((2, 6, 6, 3), np.uint8)], layout="DHWC")
    with pytest.raises(PipelineError, match="1 or 3 channels"):
        _run(fn.clahe, [np.zeros((6, 6, 2), np.uint8)], tiles_x=2, tiles_y=2, clip_limit=2.0)


def test_equalize_dense_and_ragged_agree():
    rng = np.random.default_rng(5)
    a, b = (rng.random((2, 20, 21, 3)) ** 2 * 255).astype(np.uint8)
    c = rng.integers(0, 256, (5, 6, 3)).astype(np.uint8)
    dense, ragged = _run(fn.equalize, [a, b]), _run(fn.equalize, [a, c, b])
    np.testing.assert_array_equal(dense[0], ragged[0])
    np.testing.assert_array_equal(dense[1], ragged[2])


def test_lab_tables_made_by_threads_at_once_are_whole():
    """clahe's luma path builds its Lab tables on first use; a pipeline's threads reach that at once
    (the first batch), and one once read a table another was still making (KeyError). A tiny GIL
    switch interval makes the threads interleave often: the old code failed 16 of 160 calls so."""
    img = torch.from_numpy(np.random.default_rng(5).integers(0, 256, (1, 16, 16, 3), dtype=np.uint8))
    want = CL.clahe_rgb_luma(img, 2, 2, 2.0)
    caches = (CL._lab8_tables_cpu, CL._lab8_tables, CL._lab8_inverse_tables_cpu, CL._lab8_inverse_tables)

    def work(start: threading.Barrier) -> torch.Tensor:
        start.wait()
        return CL.clahe_rgb_luma(img, 2, 2, 2.0)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(20):
            for cache in caches:
                cache.cache_clear()
            start = threading.Barrier(8)
            with ThreadPoolExecutor(8) as pool:
                outs = [f.result() for f in [pool.submit(work, start) for _ in range(8)]]
            assert all(torch.equal(o, want) for o in outs)
    finally:
        sys.setswitchinterval(interval)
