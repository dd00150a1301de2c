"""resize's regions of interest (roi_start / roi_end / roi_relative), size rules (every way of
sizing, mode, max_size) and subpixel_scale, and resize_crop_mirror's, against NVIDIA DALI 2.4's CPU
backend: cases in tests/reference/resize_roi_cases.py (random windows: absolute and relative,
flipped, partly outside the image, a point; every interp_type and min/mag pair; antialias on and
off; uint8, int16, uint16 and float inputs; float outputs; per-sample tensor arguments; every
layout). Expected outputs: tests/reference/resize_roi_tables.npz (regenerate: `python -m
tests.reference.resize_roi_make` in a DALI venv); the "live" variants run DALI now when it imports.

Tolerance, measured on the stored table: 158 of the 193 cases are bit-exact; integer outputs differ
from DALI's only by 1, on values that land on a float32 rounding tie (36 of 103,764 values, 0.03%;
bound: 1 per value, 0.1% overall); float outputs within 1.9e-6 of max(255, |largest value|) (bound
1e-5: float32 sums in another order). Output shapes are exact (5,184 sampled size plans too).
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError, PipelineError
from torch_dali.functional import resize_plan as RP

from reference import resize_roi_cases as R
from reference.tables import dali_or_skip

SOURCES = ("table", "live")
PIXELS = [n for n in R.CASES if not n.startswith("error/")]
ERRORS = [n for n in R.CASES if n.startswith("error/")]


@functools.lru_cache(maxsize=1)
def stored() -> dict[str, np.ndarray]:
    with np.load(Path(__file__).parent / "reference" / R.TABLES) as z:
        return {k: z[k] for k in z.files}


def dali(source: str, name: str) -> list[np.ndarray] | str:
    """DALI's output samples of case `name`, or the reason it refused the case."""
    if source == "live":
        dali_or_skip()
        from reference.resize_roi_make import run_dali
        from reference.table_file import dali_error
        try:
            return run_dali(R.CASES[name])
        except Exception as e:
            return dali_error(e)
    t = stored()
    if f"{name}/error" in t:
        return bytes(t[f"{name}/error"]).decode()
    return [t[f"{name}/{i}"] for i in range(len(R.CASES[name].images))]


def ours(case: R.Case) -> list[np.ndarray]:
    return R.run_case(case, fn, pipeline_def, types, to_input=torch.from_numpy)


def assert_close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if got.dtype.kind == "f":
        bound = 1e-5 * max(255.0, float(np.abs(want).max(initial=0)))
        assert np.abs(got.astype(np.float64) - want).max(initial=0) <= bound
    else:
        assert np.abs(got.astype(np.int64) - want.astype(np.int64)).max(initial=0) <= 1


@pytest.mark.filterwarnings("ignore:fast_resize_crop_mirror is deprecated")
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", PIXELS)
def test_matches_dali(name, source):
    want = dali(source, name)
    assert not isinstance(want, str), want
    got = ours(R.CASES[name])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w)


@pytest.mark.filterwarnings("ignore:fast_resize_crop_mirror is deprecated")
def test_integer_outputs_are_almost_all_exact():
    """The per-value bound above is loose: across the table, almost every value equals DALI's."""
    off = total = 0
    for name in PIXELS:
        for g, w in zip(ours(R.CASES[name]), dali("table", name)):
            if g.dtype.kind != "f":
                off += int((g != w).sum())
                total += g.size
    assert total > 50_000 and off <= total * 1e-3, (off, total)


# what each refusal must name (DALI refuses all of them)
_NAMES = {"roi_start_alone": "roi_end", "roi_end_alone": "roi_start", "roi_length": "roi_start",
          "size_and_resize_x": "size", "shorter_and_mode": "mode", "size_length": "size",
          "max_size_length": "max_size", "dtype": "dtype", "int32": "input type",
          "roi_per_sample_length": "roi_start", "rcm_roi_alone": "roi_end"}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", ERRORS)
def test_refused_naming_the_argument(name, source):
    assert isinstance(dali(source, name), str)  # DALI refuses it
    with pytest.raises((ArgumentError, PipelineError)) as e:
        ours(R.CASES[name])
    assert isinstance(e.value, ArgumentError) or "ArgumentError" in str(e.value)
    assert _NAMES[name.split("/")[1]] in str(e.value)


def _plan_case(case: R.Case) -> np.ndarray:
    """A size case's output shapes from resize_plan, given as the op gives them."""
    shapes = np.array([a.shape[:2] for a in case.images])
    n = len(shapes)
    sizing = {k: (np.stack(v) if k == "size" else np.array(v, dtype=np.float64)) for k, v in case.arg_inputs.items()
              if not k.startswith("roi")}
    req, mode = RP.requested(n, 2, mode=case.kwargs.get("mode", "default"), **sizing)
    start = np.stack(case.arg_inputs["roi_start"]) if "roi_start" in case.arg_inputs else None
    end = np.stack(case.arg_inputs["roi_end"]) if "roi_end" in case.arg_inputs else None
    out, _, _ = RP.plan(shapes, req, mode, case.kwargs.get("max_size"), start, end,
                        bool(case.kwargs.get("roi_relative", False)))
    return out


@pytest.mark.parametrize("source", SOURCES)
def test_sizes_match_dali(source):
    """Every way of sizing x mode x max_size x (no window, absolute, relative window), 24 random
    samples each (sizes 0, negative, fractional; windows flipped, past the edges, points)."""
    if source == "live":
        dali_or_skip()
        from reference.resize_roi_make import run_dali
        want = np.array([a.shape[:2] for c in R.SIZE_CASES.values() for a in run_dali(c)])
    else:
        want = stored()["sizes"]
    got = np.concatenate([_plan_case(c) for c in R.SIZE_CASES.values()])
    assert got.shape == want.shape and (got == want).all(), np.argwhere((got != want).any(1))[:5]


def test_sizes_through_the_op():
    """The op gives what the plan gives (a few size cases run whole, on blank images)."""
    for name in list(R.SIZE_CASES)[::37]:
        case = R.SIZE_CASES[name]
        got = np.array([a.shape[:2] for a in ours(case)])
        assert (got == _plan_case(case)).all(), name


def test_hw_layout_is_hwc_with_one_channel():
    """DALI has no HW resize; torch_dali's HW input resizes as an HWC image of one channel."""
    case = R.CASES["layout/HWC1"]
    hw = R.Case(case.op, [case.images[0][..., 0]], "HW", case.kwargs)
    got = ours(hw)[0]
    assert got.ndim == 2
    np.testing.assert_array_equal(got, dali("table", "layout/HWC1")[0][..., 0])


def test_volumes_are_resized():
    """DALI resizes volumes (DHWC...), and so does torch_dali (test_conf_hid25_resize3d has the
    values): one given axis scales the other two by the same factor, (4, 5, 6) -> (2, 3, 3) in DALI."""
    case = R.Case("resize", [np.zeros((4, 5, 6, 1), np.uint8)], "DHWC", dict(resize_x=3))
    assert ours(case)[0].shape == (2, 3, 3, 1)


def test_a_window_outside_the_image_repeats_its_border():
    """DALI 2.4 reads out of bounds (or crashes) there; torch_dali samples the nearest edge."""
    img = R.image((6, 8, 1), np.uint8, 1)
    got = ours(R.Case("resize", [img], "HWC", dict(size=[3, 4], roi_start=[1.0, 20.0], roi_end=[4.0, 30.0])))[0]
    np.testing.assert_array_equal(got, np.broadcast_to(
        ours(R.Case("resize", [img[:, -1:]], "HWC", dict(size=[3, 1], roi_start=[1.0, 0.0], roi_end=[4.0, 1.0])))[0],
        got.shape))


def test_flipped_window_is_the_mirror_of_the_plain_one():
    """start > end reads that axis backwards: the mirror image, up to rounding ties."""
    img = R.image((11, 13, 3), np.uint8, 2)
    a, b = (ours(R.Case("resize", [img], "HWC", dict(size=[7, 9], roi_start=s, roi_end=e)))[0]
            for s, e in (([1.0, 2.0], [10.0, 12.0]), ([1.0, 12.0], [10.0, 2.0])))
    assert np.abs(a[:, ::-1].astype(int) - b).max() <= 1 and (a[:, ::-1] != b).mean() < 0.02


def _resize_op(**kw):
    """A built Resize op (for its planning methods)."""
    from torch_dali.pipeline import Pipeline
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.resize(fn.external_source(source=lambda: [np.zeros((4, 4, 3), np.uint8)],
                                                      batch=True, layout="HWC"), **kw))
    pipe.build()
    return next(op for op in pipe.executor.plan.ops.values() if type(op).__name__ == "Resize")


@pytest.mark.parametrize("kw, whole", [
    (dict(resize_x=15, resize_y=10), True),
    (dict(size=[10, 0], subpixel_scale=False), True),
    (dict(resize_shorter=7, subpixel_scale=False), True),
    (dict(resize_shorter=7), False),  # 7 x 10.5 on 20 x 30: the window shrinks about its centre
    (dict(resize_x=-15, resize_y=10), False),  # a flip
    (dict(resize_x=15, resize_y=10, roi_start=[0.0, 0.0], roi_end=[20.0, 30.0]), False),  # any window
])
def test_batched_sizes_only_for_whole_image_plans(kw, whole):
    """What the batched fast kernels get (`Resize.target_sizes`): every sample's size when each maps
    its whole image onto it, else None (the kernels then decline and the spec runs)."""
    op = _resize_op(**kw)
    in_hw = np.array([[20, 30], [21, 30]])
    got = op.target_sizes(in_hw, {})
    if not whole:
        assert got is None
        return
    want = [op.plan(tuple(hw), {})[0][0] for hw in in_hw.tolist()], [op.plan(tuple(hw), {})[1][0] for hw in in_hw.tolist()]
    assert got.tolist() == np.stack(want, 1).tolist()


@pytest.mark.parametrize("kw", [dict(resize_shorter=7), dict(resize_shorter=7.3, max_size=[9, 13]),
                                dict(size=[9.5, 0])])
def test_batched_plans_carry_the_spec_windows(kw):
    """`Resize.target_plan` hands the batched kernels each sample's size and, for a fractional size
    kept by subpixel_scale, the float32 window the spec reads (what `plan` gives per sample)."""
    op = _resize_op(**kw)
    in_hw = np.array([[20, 30], [21, 30], [33, 17]])
    sizes, source = op.target_plan(in_hw, {})
    assert source is not None and source.dtype == np.float32
    for hw, size, src in zip(in_hw.tolist(), sizes.tolist(), source.tolist()):
        (oh, y0, y1), (ow, x0, x1) = op.plan(tuple(hw), {})
        f = np.float32
        assert size == [oh, ow]
        assert src == [float(f(y0)), float(f(x0)), float(f(f(y1) - f(y0))), float(f(f(x1) - f(x0)))]


@pytest.mark.parametrize("layout, shape", [("HWC", (10, 20, 3)), ("CHW", (3, 10, 20)), ("FHWC", (2, 10, 20, 3))])
def test_save_attrs_gives_the_input_size(layout, shape):
    """DALI's `save_attrs` (a testing aid): a second output, each input's (height, width) as int32
    (measured on DALI 2.4: [10 20] for all three layouts, no layout)."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [np.zeros(shape, np.uint8), np.zeros(shape, np.uint8)],
                               batch=True, layout=layout)
        return tuple(fn.resize(x, resize_x=10, save_attrs=True))
    p = pipe()
    p.build()
    out, attrs = p.run()
    assert attrs.layout() == "" and out.layout() == layout
    for i in range(2):
        a = np.asarray(attrs.at(i))
        assert a.dtype == np.int32 and a.tolist() == [10, 20]


def test_a_single_value_window_is_a_window():
    """roi_start=0 is given (DALI repeats one value for both axes), not "unset"."""
    img = R.image((12, 16, 3), np.uint8, 4)
    one = ours(R.Case("resize", [img], "HWC", dict(size=[6, 8], roi_start=0.0, roi_end=0.5, roi_relative=True)))[0]
    two = ours(R.Case("resize", [img], "HWC", dict(size=[6, 8], roi_start=[0.0, 0.0], roi_end=[0.5, 0.5],
                                                    roi_relative=True)))[0]
    np.testing.assert_array_equal(one, two)
    assert not np.array_equal(one, ours(R.Case("resize", [img], "HWC", dict(size=[6, 8])))[0])


@pytest.mark.parametrize("kw, name", [(dict(resize_x=[np.float32("nan")]), "resize_x"),
                                      (dict(roi_start=[np.array([0.0, np.inf], np.float32)],
                                            roi_end=[np.array([3.0, 4.0], np.float32)]), "roi_start")])
def test_non_finite_per_sample_values_are_refused(kw, name):
    case = R.Case("resize", [np.zeros((4, 5, 3), np.uint8)], "HWC", {} if "resize_x" in kw else dict(resize_x=5.0), kw)
    with pytest.raises(PipelineError, match=f"ArgumentError.*{name}.*finite"):
        ours(case)
