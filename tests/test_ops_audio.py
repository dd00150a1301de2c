"""preemphasis_filter and to_decibels against values measured on DALI 2.4's CPU backend."""
from __future__ import annotations

import numpy as np
import pytest

from feeds import run_graph
from torch_dali import ArgumentError, fn, types


X = np.array([1.0, 2.0, 4.0, 8.0, 3.0], np.float32)


@pytest.mark.parametrize("border,first", [("zero", 1.0), ("clamp", 0.5), ("reflect", 0.0)])
def test_preemphasis_borders(border, first):
    out = np.asarray(run_graph(lambda x: fn.preemphasis_filter(x, border=border, preemph_coeff=0.5), [X])[0])
    np.testing.assert_array_equal(out, np.array([first, 1.5, 3.0, 6.0, -1.0], np.float32))


def test_preemphasis_types_shapes_and_per_sample_coefficient():
    i16 = [np.array([10, 200, 30], np.int16)]
    np.testing.assert_array_equal(np.asarray(run_graph(lambda x: fn.preemphasis_filter(x, dtype=types.INT16), i16)[0]),
                                  [0, 190, -164])
    np.testing.assert_array_equal(np.asarray(run_graph(lambda x: fn.preemphasis_filter(x, dtype=types.UINT8), i16)[0]),
                                  [0, 190, 0])  # saturated
    out = run_graph(lambda x: fn.preemphasis_filter(x), [np.arange(6, dtype=np.float32).reshape(2, 3)], "ab")
    assert out.layout() == "ab"  # a 2-D sample is one signal in memory order
    np.testing.assert_allclose(np.asarray(out[0]), [[0, 1, 1.03], [1.06, 1.09, 1.12]], rtol=1e-6)
    coeff = fn.constant(fdata=0.25)
    np.testing.assert_array_equal(np.asarray(run_graph(lambda x: fn.preemphasis_filter(x, preemph_coeff=coeff), [X])[0]),
                                  np.array([0.75, 1.75, 3.5, 7.0, 1.0], np.float32))
    with pytest.raises(RuntimeError, match="border"):
        run_graph(lambda x: fn.preemphasis_filter(x, border="bad"), [X])


Y = np.array([0.0, 1e-12, 0.5, 1.0, 4.0, 100.0], np.float32)


def test_to_decibels_bit_exact():
    out = np.asarray(run_graph(lambda x: fn.to_decibels(x), [Y])[0])
    np.testing.assert_array_equal(out, np.array([-200.00001525878906, -140.0, -23.01030158996582, -20.0,
                                                -13.979400634765625, 0.0], np.float32))
    out = np.asarray(run_graph(lambda x: fn.to_decibels(x, multiplier=20, reference=2.0, cutoff_db=-30), [Y])[0])
    np.testing.assert_array_equal(out, np.array([-30.000001907348633, -30.000001907348633, -12.041200637817383,
                                                -6.020600318908691, 6.020600318908691, 33.979400634765625], np.float32))
    np.testing.assert_array_equal(np.asarray(run_graph(lambda x: fn.to_decibels(x), [np.zeros(3, np.float32)])[0]),
                                  np.full(3, -200.00002, np.float32))
    with pytest.raises(RuntimeError, match="float32"):
        run_graph(lambda x: fn.to_decibels(x), [np.array([1, 10], np.int32)])


def test_power_spectrum_axis_nfft_power():
    a = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    out = run_graph(lambda x: fn.power_spectrum(x), [a], "ft")
    assert out.layout() == "ft" and out.dtype == types.FLOAT
    np.testing.assert_allclose(np.asarray(out[0]), np.abs(np.fft.rfft(a, axis=-1)) ** 2, atol=1e-4)
    out = np.asarray(run_graph(lambda x: fn.power_spectrum(x, axis=0, nfft=6, power=1), [a])[0])
    np.testing.assert_allclose(out, np.abs(np.fft.rfft(a, n=6, axis=0)), atol=1e-5)  # 6 > 3: zero-padded
    out = np.asarray(run_graph(lambda x: fn.power_spectrum(x, nfft=5), [a])[0])
    np.testing.assert_allclose(out, np.abs(np.fft.rfft(a, n=5, axis=-1)) ** 2, atol=1e-4)  # truncated
    with pytest.raises(RuntimeError, match="power"):
        run_graph(lambda x: fn.power_spectrum(x, power=3), [a])
    with pytest.raises(RuntimeError, match="float32"):
        run_graph(lambda x: fn.power_spectrum(x), [a.astype(np.float64)])


def test_to_decibels_edges_as_dali():
    """Values measured on DALI 2.4's CPU backend: NaN and infinite inputs, a negative reference, a
    floor that underflows float32, a multiplier of 0; a reference of 0 is refused at build."""
    z = np.array([np.nan, np.inf, -np.inf, -1, 0.5], np.float32)
    cut = -200.00001525878906
    np.testing.assert_array_equal(np.asarray(run_graph(lambda x: fn.to_decibels(x, reference=-1.0), [z])[0]),
                                  np.array([cut, cut, np.inf, 0.0, cut], np.float32))
    np.testing.assert_array_equal(np.asarray(run_graph(lambda x: fn.to_decibels(x, reference=1e-45), [z])[0]),
                                  np.array([cut, np.inf, cut, cut, np.inf], np.float32))
    # the sample's own maximum skips NaN and is never below 0
    for a, want in [([0.5, np.nan, 0.25], [0.0, cut, -3.0103001594543457]), ([-1, -2, -0.5], [cut] * 3)]:
        out = np.asarray(run_graph(lambda x: fn.to_decibels(x), [np.array(a, np.float32)])[0])
        np.testing.assert_array_equal(out, np.array(want, np.float32))
    w = np.array([0, 1e-45, 1e-39, 0.5, 4], np.float32)
    out = np.asarray(run_graph(lambda x: fn.to_decibels(x, reference=1.0, multiplier=1e-30, cutoff_db=-5.0), [w])[0])
    np.testing.assert_array_equal(out, np.array([-4.4853472985117047e-29, -4.4853472985117047e-29,
                                                 -3.9000003132937535e-29, -3.01030020823265e-31,
                                                 6.0206004164653e-31], np.float32))
    out = np.asarray(run_graph(lambda x: fn.to_decibels(x, reference=1.0, multiplier=0.0), [w])[0])
    np.testing.assert_array_equal(np.signbit(out), [True, True, True, True, False])
    np.testing.assert_array_equal(out, np.zeros(5, np.float32))
    assert np.isnan(np.asarray(run_graph(lambda x: fn.to_decibels(x, multiplier=0.0, cutoff_db=5.0), [w])[0])).all()
    with pytest.raises(RuntimeError, match="`reference` argument can't be zero"):
        run_graph(lambda x: fn.to_decibels(x, reference=0.0), [w])


def test_power_spectrum_negative_axis_is_the_last():
    """DALI 2.4 (measured): any negative `axis` transforms the last dimension; (3, 5, 7) with axis=-2 and
    nfft=4 gives (3, 5, 3)."""
    a = np.random.default_rng(1).standard_normal((3, 5, 7)).astype(np.float32)
    for axis in (-2, -3, -5):
        out = np.asarray(run_graph(lambda x: fn.power_spectrum(x, axis=axis, nfft=4), [a])[0])
        assert out.shape == (3, 5, 3)
        np.testing.assert_allclose(out, np.abs(np.fft.rfft(a, n=4, axis=-1)) ** 2, atol=1e-4)
    with pytest.raises(RuntimeError, match="axis"):
        run_graph(lambda x: fn.power_spectrum(x, axis=3), [a])


def test_power_spectrum_nfft_not_positive_is_the_axis_length():
    """DALI 2.4 (measured): nfft=0, -1 or -5 gives what no nfft gives: an FFT of the axis' length."""
    a = np.random.default_rng(2).standard_normal((7, 10)).astype(np.float32)
    want = np.abs(np.fft.rfft(a, axis=0)) ** 2
    for nfft in (0, -1, -5):
        out = np.asarray(run_graph(lambda x: fn.power_spectrum(x, axis=0, nfft=nfft), [a])[0])
        assert out.shape == (4, 10)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op,kw", [(fn.spectrogram, dict(window_length=2**31)), (fn.spectrogram, dict(nfft=2**31)),
                                   (fn.power_spectrum, dict(nfft=2**31))])
def test_fft_sizes_past_2_to_24_are_refused_before_allocating(op, kw):
    """A 2**31-sample window (a config's typo or attack) once meant a 16 GiB allocation and the
    process killed by the OOM killer; such sizes are refused when the op is made."""
    with pytest.raises(ArgumentError, match=r"at most 16777216"):
        op(np.zeros(64, np.float32), **kw)
