"""The audio-op cases compared with DALI 2.4's CPU backend: each is a graph over one external
source (written against a `fn` module, so the same case runs on DALI and on torch_dali), its input
samples and their layout. Used by audio_make.py (in the DALI venv) and tests/test_ops_audio_*.py."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

TABLES = "audio_tables.npz"

Case = tuple[Callable[[Any, Any], Any], list[np.ndarray], str | None]


def _signal(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _spectro(n: int = 23, seed: int = 0, shape: tuple[int, ...] | None = None, **kw: Any) -> Case:
    x = _signal(n, seed)
    return (lambda fn, a: fn.spectrogram(a, **kw)), [x if shape is None else x.reshape(shape)], None


def _sine_mix(n: int, rate: float, seed: int) -> np.ndarray:
    t = np.arange(n) / rate
    rng = np.random.default_rng(seed)
    return (np.sin(2 * np.pi * 440 * t) + 0.5 * np.sin(2 * np.pi * 3000 * t)
            + 0.1 * rng.standard_normal(n)).astype(np.float32)


CASES: dict[str, Case] = {
    "spec_default_wl": _spectro(n=700, window_length=64, window_step=32),
    "spec_step3": _spectro(window_length=8, window_step=3),
    "spec_zero_pad": _spectro(window_length=8, window_step=3, reflect_padding=False),
    "spec_odd": _spectro(window_length=7, window_step=2, power=1, layout="tf"),
    "spec_nfft": _spectro(window_length=8, window_step=3, nfft=11),
    "spec_not_centered": _spectro(window_length=8, window_step=3, center_windows=False),
    "spec_short_reflect": _spectro(n=3, window_length=8, window_step=4, power=1),
    "spec_short_not_centered": _spectro(n=2, window_length=4, center_windows=False),
    "spec_window_fn": _spectro(window_length=4, window_step=5, window_fn=[1.0, 0.5, 0.25, 0.0], layout="tf"),
    "spec_col": _spectro(n=20, shape=(20, 1), window_length=4, window_step=2),
    "spec_row": _spectro(n=20, shape=(1, 20), window_length=4, window_step=2),
    "spec_err_too_short": _spectro(n=3, window_length=8, window_step=4, center_windows=False),
    "spec_err_2d": _spectro(n=40, shape=(2, 20), window_length=4),
    "spec_err_nfft": _spectro(window_length=8, nfft=4),
    "spec_err_power": _spectro(window_length=8, power=3),
    "spec_err_window_fn": _spectro(window_length=4, window_fn=[1.0, 1.0]),
    "spec_err_empty": _spectro(n=0, window_length=4),
    "spec_err_f64": ((lambda fn, a: fn.spectrogram(a, window_length=4)), [np.ones(8)], None),
    "spec_sine": ((lambda fn, a: fn.spectrogram(a, nfft=256, window_length=200, window_step=80)),
                  [_sine_mix(1600, 16000.0, 1), _sine_mix(1000, 16000.0, 2)], None),
}
