"""gaussian_blur, laplacian and filter against DALI 2.4's CPU backend (tests/reference/color_ops_cases.py;
tables from color_ops_make.py, "live" runs DALI now), and their layout and argument rules.

Integer outputs are DALI's bit for bit. Float outputs: gaussian_blur and laplacian with windows up
to 7 are exact; they, and filter, may differ in the last float32 bits where DALI sums in another
order (OpenCV's filter2D on the CPU; long Laplacian windows; float64 data, which DALI computes in
float32 in an order we do not reproduce): bound 2e-6 of the largest output value."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError, PipelineError
from torch_dali.functional import filters as K

from reference import color_ops_cases as C
from reference.color_ops_check import SOURCES, compare, dali, ours

NAMES = [n for n in C.CASES if C.CASES[n]["op"] in ("gaussian_blur", "laplacian", "filter")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", NAMES)
def test_against_dali(name, source):
    want, want_layout = dali(source, name)
    got, layout = ours(name)
    assert layout == want_layout
    scale = max(float(np.abs(w).max()) for w in want)
    compare(got, want, atol=2e-6 * scale)


def _run(op, x, layout="HWC", extra=(), **kw):
    @pipeline_def(batch_size=len(x), num_threads=1, device_id=None)
    def pipe():
        ins = [fn.external_source(source=lambda: list(x), batch=True, layout=layout)]
        ins += [fn.external_source(source=functools.partial(list, e), batch=True) for e in extra]
        return op(*ins, **kw)

    p = pipe()
    p.build()
    return p.run()[0]


@pytest.mark.parametrize("layout,shape,message", [
    ("DHCW", (4, 4, 3, 4), "Only channel-first or channel-last layouts are supported, got: DHCW."),
    ("HFWC", (4, 2, 4, 3), "For sequences, layout should begin with 'F' or 'C', got: HFWC."),
    ("FCCHW", (2, 3, 3, 4, 4), "Found more the one occurrence of 'F' or 'C' axes in layout: FCCHW."),
    ("FWXYZC", (2, 3, 3, 3, 3, 3), "Too many dimensions, found: 4 data axes, maximum supported is: 3."),
    ("", (2, 3, 3, 3), "empty layout cannot have more than 3 dimensions"),
])
def test_layouts_are_refused_by_name(layout, shape, message):
    for op in (fn.gaussian_blur, fn.laplacian):
        with pytest.raises(PipelineError, match=message.replace("(", r"\(").replace(".", r"\.")):
            _run(op, [np.zeros(shape, np.uint8)], layout=layout, **({"sigma": 1.0} if op is fn.gaussian_blur else {}))


@pytest.mark.parametrize("kw,message", [
    (dict(sigma=0.0, window_size=0), "shouldn't be 0 at the same time for sample: 0, axis: 0"),
    (dict(sigma=-1.0), "`sigma` must have non-negative values"),
    (dict(window_size=-11), "`window_size` must have non-negative values"),
    (dict(window_size=4), "Kernel window should have odd length, got: 4"),
    (dict(sigma=[1.0, 2.0, 3.0]), 'expects either a single value or a list of 2 elements'),
])
def test_gaussian_arguments(kw, message):
    with pytest.raises(PipelineError, match=message):
        _run(fn.gaussian_blur, [np.zeros((5, 5, 3), np.uint8)], **kw)


def test_laplacian_arguments():
    for kw, message in ((dict(window_size=33), "Window size must be an odd integer between 3 and 31"),
                        (dict(window_size=4), "Window size must be an odd integer"),
                        (dict(smoothing_size=6), "Smoothing window size must be an odd integer between 1 and 31"),
                        (dict(dtype=types.INT16), "Output data type must be same as input, FLOAT or skipped")):
        with pytest.raises(PipelineError, match=message):
            _run(fn.laplacian, [np.zeros((5, 5, 3), np.uint8)], **kw)
    with pytest.raises(ArgumentError, match="cannot be specified when ``normalized_kernel``"):
        _run(fn.laplacian, [np.zeros((5, 5, 3), np.uint8)], scale=2.0, normalized_kernel=True)


def test_filter_errors():
    img = [np.zeros((5, 6, 3), np.uint8)]
    with pytest.raises(PipelineError, match="needs a 2-D filter"):
        _run(fn.filter, img, extra=[[np.ones((3,), np.float32)]])
    with pytest.raises(PipelineError, match="anchor"):
        _run(fn.filter, img, extra=[[np.ones((3, 3), np.float32)]], anchor=[3, 0])
    with pytest.raises(PipelineError, match="bigger than the sample"):
        _run(fn.filter, img, extra=[[np.ones((7, 3), np.float32)]], mode="valid")


@pytest.mark.parametrize("border,want", [
    ("reflect_101", [3, 2, 1, 2, 3, 4, 3, 2]), ("reflect_1001", [2, 1, 1, 2, 3, 4, 4, 3]),
    ("wrap", [3, 4, 1, 2, 3, 4, 1, 2]), ("clamp", [1, 1, 1, 2, 3, 4, 4, 4]),
    ("constant", [0, 0, 1, 2, 3, 4, 0, 0])])
def test_borders(border, want):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert K.pad_axis(x, 0, 2, 2, border).tolist() == want


def test_reflection_repeats_for_wide_windows():
    x = torch.tensor([1.0, 2.0])
    assert K.pad_axis(x, 0, 3, 3, "reflect_101").tolist() == [2, 1, 2, 1, 2, 1, 2, 1]
    assert K.pad_axis(torch.tensor([5.0]), 0, 2, 2, "reflect_101").tolist() == [5.0] * 5


def test_window_rules():
    assert K.sigma_to_diameter(1.0) == 7 and K.sigma_to_diameter(0.7) == 7 and K.sigma_to_diameter(0.66) == 5
    assert K.diameter_to_sigma(7) == pytest.approx(1.4) and K.diameter_to_sigma(3) == pytest.approx(0.8)
    w = K.gaussian_window(1.0, 7)
    assert float(w.sum()) == pytest.approx(1.0, abs=1e-6) and torch.equal(w, w.flip(0))
    assert K.derivative_window(5) == [1.0, 0.0, -2.0, 0.0, 1.0] and K.smoothing_window(5) == [1.0, 4.0, 6.0, 4.0, 1.0]


def test_dense_batch_matches_per_sample():
    """A dense batch (one batched call) and the same samples in a ragged batch agree."""
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 256, (2, 12, 13, 3)).astype(np.uint8)
    c = rng.integers(0, 256, (7, 8, 3)).astype(np.uint8)
    for op, kw in ((fn.gaussian_blur, dict(sigma=1.2)), (fn.laplacian, dict(window_size=5, dtype=types.FLOAT))):
        dense = _run(op, [a, b], **kw)
        ragged = _run(op, [a, c, b], **kw)
        np.testing.assert_array_equal(dense.at(0), ragged.at(0))
        np.testing.assert_array_equal(dense.at(1), ragged.at(2))


# DALI 2.4's first row of filter(arange(30).reshape(5, 6), a 5x5 kernel picking the pixel two to the
# left) for each border name it accepts, in any letter case (test_filter passes "101" and "1001")
BORDER_ALIASES = {"101": [2, 1, 0], "reflect101": [2, 1, 0], "REFLECT_101": [2, 1, 0],
                  "1001": [1, 0, 0], "reflect": [1, 0, 0], "reflect1001": [1, 0, 0], "ReFlEcT": [1, 0, 0],
                  "edge": [0, 0, 0], "Clamp": [0, 0, 0], "WRAP": [4, 5, 0], "CONSTANT": [0, 0, 0]}


@pytest.mark.parametrize("border", list(BORDER_ALIASES))
def test_filter_border_names_as_dali(border):
    x = np.arange(30, dtype=np.float32).reshape(5, 6, 1)
    k = np.zeros((5, 5), np.float32)
    k[2, 0] = 1
    out = _run(fn.filter, [x], extra=[[k]], border=border)
    assert np.asarray(out[0])[0, :3, 0].tolist() == BORDER_ALIASES[border]


@pytest.mark.parametrize("border", ["reflect-101", "transparent", "isolated", "symmetric", "replicate"])
def test_filter_border_names_dali_refuses(border):  # DALI 2.4 refuses these too
    with pytest.raises(ArgumentError, match="border"):
        _run(fn.filter, [np.zeros((5, 6, 1), np.float32)], extra=[[np.ones((3, 3), np.float32)]], border=border)
