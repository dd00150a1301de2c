"""The audio-op cases compared with DALI 2.4's CPU backend: each is a graph over one external
source (written against a `fn` module, so the same case runs on DALI and on torch_dali), its input
samples and their layout. Used by audio_make.py (in the DALI venv) and tests/test_ops_audio_*.py."""
from __future__ import annotations

import importlib
from typing import Any, Callable

import numpy as np

from . import audio_wav as W

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


def _spec(bins: int, windows: int, seed: int) -> np.ndarray:
    """A power spectrogram-like (bins, windows) array: non-negative."""
    return (np.random.default_rng(seed).standard_normal((bins, windows)) ** 2).astype(np.float32)


def _mel(n: int, windows: int, seed: int) -> np.ndarray:
    """A log-mel-like (n, windows) array."""
    return (np.random.default_rng(seed).standard_normal((n, windows)) * 10 - 40).astype(np.float32)


def _typed(fn: Any, kw: dict[str, Any]) -> dict[str, Any]:
    """`dtype` given by name, as the `types` module next to `fn` (DALI's or torch_dali's) spells it."""
    if "dtype" not in kw:
        return kw
    types = importlib.import_module(fn.__name__.rsplit(".", 1)[0] + ".types")
    return {**kw, "dtype": getattr(types, kw["dtype"])}


def _pulses(n: int, *spans: tuple[int, int, float]) -> np.ndarray:
    x = np.zeros(n, np.float32)
    for a, b, v in spans:
        x[a:b] = v
    return x


def _speechy(n: int, seed: int) -> np.ndarray:
    """Quiet noise with a loud burst in the middle third."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 1e-3
    x[n // 3: n // 3 * 2] += np.sin(np.arange(n // 3) * 0.3)
    return x.astype(np.float32)


_WAVS = {
    "pcm8": W.pcm(8, 1, 50, 16000, 1), "pcm16": W.pcm(16, 1, 50, 16000, 2), "pcm16_st": W.pcm(16, 2, 50, 44100, 3),
    "pcm24_st": W.pcm(24, 2, 50, 16000, 4), "pcm32": W.pcm(32, 1, 50, 16000, 5), "pcm8_st": W.pcm(8, 2, 30, 8000, 6),
    "pcm16_ext3": W.pcm(16, 3, 40, 16000, 7, extensible=True), "f32_st": W.floats(32, 2, 40, 22050, 8),
    "f64": W.floats(64, 1, 40, 22050, 9),
    "pcm16_list": W.riff(1, 1, 8000, 16, np.arange(-5, 5, dtype="<i2").tobytes(), extra=b"LIST\x04\x00\x00\x00abcd"),
}
_DEC: dict[str, tuple[list[bytes], dict[str, Any]]] = {
    **{f"{name}_{t.lower()}": ([data], dict(dtype=t)) for name, data in _WAVS.items() for t in ("FLOAT", "INT16", "INT32")},
    **{f"{name}_downmix_{t.lower()}": ([data], dict(downmix=True, dtype=t))
       for name, data in _WAVS.items() for t in ("FLOAT", "INT16")},
    "batch": ([_WAVS["pcm16"], _WAVS["pcm24_st"], _WAVS["f32_st"]], {}),
    "resample_st": ([_WAVS["pcm16_st"]], dict(sample_rate=22050.0)),
    "resample_st_i16": ([_WAVS["pcm16_st"]], dict(sample_rate=22050.0, dtype="INT16")),
    "resample_st_i32": ([_WAVS["pcm16_st"]], dict(sample_rate=16000.0, dtype="INT32")),
    "resample_down_q0": ([_WAVS["pcm16_st"]], dict(sample_rate=8000.0, downmix=True, quality=0)),
    "resample_up": ([_WAVS["pcm24_st"]], dict(sample_rate=44100.0)),
    "resample_float_i16": ([_WAVS["f32_st"]], dict(sample_rate=11025.0, dtype="INT16")),
    "same_rate": ([_WAVS["pcm16"]], dict(sample_rate=16000.0, dtype="INT16")),
    "negative_rate": ([_WAVS["pcm16"]], dict(sample_rate=-5.0)),
    # downmix of 3+ channels, where the rounding of the channel average shows (int32 keeps every bit)
    "f32_5ch_downmix_int32": ([W.floats(32, 5, 200, 16000, 10)], dict(downmix=True, dtype="INT32")),
    "pcm16_3ch_downmix_int32": ([W.pcm(16, 3, 200, 16000, 11)], dict(downmix=True, dtype="INT32")),
    "pcm16_7ch_downmix_int16": ([W.pcm(16, 7, 300, 16000, 12)], dict(downmix=True, dtype="INT16")),
    "err_garbage": ([b"RIFF\x00\x00 not audio"], {}),
    "err_dtype": ([_WAVS["pcm16"]], dict(dtype="UINT8")),
}


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
    **{f"mel_{k}": v for k, v in {
        "default": ((lambda fn, a: fn.mel_filter_bank(a)), [_spec(513, 4, 3), _spec(513, 2, 4)], None),
        "small": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=4, sample_rate=16000)), [_spec(17, 5, 5)], None),
        "htk": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=10, sample_rate=16000, mel_formula="htk",
                                                   freq_low=300, freq_high=6000)), [_spec(129, 3, 6)], "ft"),
        "peak": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=12, sample_rate=22050, normalize=False,
                                                    freq_low=50)), [_spec(257, 3, 7)], None),
        "tf": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=6, sample_rate=16000)), [_spec(65, 4, 8).T.copy()], "tf"),
        "1d": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=6, sample_rate=16000)), [_spec(65, 1, 9)[:, 0].copy()], None),
        "3d": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=6, sample_rate=16000)),
               [np.stack([_spec(65, 3, 10), _spec(65, 3, 11)])], None),
        "high_above_nyquist": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=8, sample_rate=16000, freq_high=9000)),
                               [_spec(65, 2, 12)], None),
        "many_filters": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=40, sample_rate=16000)), [_spec(17, 2, 13)], None),
        "empty": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=4)), [np.zeros((0, 5), np.float32)], None),
        "one_bin": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=4)), [np.ones((1, 3), np.float32)], None),
        "err_layout": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=4)), [_spec(17, 2, 1)], "ab"),
        "err_f64": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=4)), [np.ones((17, 2))], None),
        "err_high": ((lambda fn, a: fn.mel_filter_bank(a, sample_rate=16000, freq_low=5000, freq_high=4000)),
                     [_spec(17, 2, 1)], None),
        "err_low": ((lambda fn, a: fn.mel_filter_bank(a, freq_low=-1.0)), [_spec(17, 2, 1)], None),
        "err_nfilter": ((lambda fn, a: fn.mel_filter_bank(a, nfilter=0)), [_spec(17, 2, 1)], None),
        "err_rate": ((lambda fn, a: fn.mel_filter_bank(a, sample_rate=0.0)), [_spec(17, 2, 1)], None),
        "err_formula": ((lambda fn, a: fn.mel_filter_bank(a, mel_formula="bark")), [_spec(17, 2, 1)], None),
    }.items()},
    **{f"mfcc_{k}": v for k, v in {
        "default": ((lambda fn, a: fn.mfcc(a)), [_mel(40, 7, 1), _mel(40, 3, 2)], None),
        **{f"t{t}{'_ortho' if o else ''}": ((lambda fn, a, t=t, o=o: fn.mfcc(a, n_mfcc=5, dct_type=t, normalize=o)),
                                            [_mel(12, 4, 3)], "ft") for t in (1, 2, 3, 4) for o in (False, True)},
        "lifter": ((lambda fn, a: fn.mfcc(a, n_mfcc=6, lifter=3.0)), [_mel(12, 4, 4)], None),
        "lifter_neg": ((lambda fn, a: fn.mfcc(a, n_mfcc=6, lifter=-2.0)), [_mel(12, 4, 4)], None),
        "axis1": ((lambda fn, a: fn.mfcc(a, n_mfcc=4, axis=1)), [_mel(6, 9, 5)], "tf"),
        "clip": ((lambda fn, a: fn.mfcc(a, n_mfcc=30)), [_mel(6, 3, 6)], None),
        "3d": ((lambda fn, a: fn.mfcc(a, n_mfcc=3, axis=1)), [np.stack([_mel(8, 3, 7), _mel(8, 3, 8)])], None),
        "empty": ((lambda fn, a: fn.mfcc(a, n_mfcc=4)), [np.zeros((0, 3), np.float32)], None),
        "err_1d": ((lambda fn, a: fn.mfcc(a, n_mfcc=4)), [_mel(6, 1, 1)[:, 0].copy()], None),
        "err_axis": ((lambda fn, a: fn.mfcc(a, axis=2)), [_mel(6, 3, 1)], None),
        "err_neg_axis": ((lambda fn, a: fn.mfcc(a, axis=-1)), [_mel(6, 3, 1)], None),
        "err_n_mfcc": ((lambda fn, a: fn.mfcc(a, n_mfcc=0)), [_mel(6, 3, 1)], None),
        "err_type": ((lambda fn, a: fn.mfcc(a, dct_type=5)), [_mel(6, 3, 1)], None),
        "err_ortho_t1": ((lambda fn, a: fn.mfcc(a, dct_type=1, normalize=True)), [_mel(6, 3, 1)], None),
        "err_t1_one": ((lambda fn, a: fn.mfcc(a, dct_type=1)), [_mel(1, 3, 1)], None),
        "err_f64": ((lambda fn, a: fn.mfcc(a)), [np.ones((6, 3))], None),
    }.items()},
    **{f"nsr_{k}": ((lambda fn, a, kw=kw: fn.nonsilent_region(a, **kw)), data, None) for k, (data, kw) in {
        "impulse": ([_pulses(50, (20, 21, 1.0))], dict(window_length=4)),
        "block": ([_pulses(50, (20, 30, 1.0))], dict(window_length=4)),
        **{f"cut{-c}": ([_pulses(50, (20, 30, 1.0), (35, 36, 0.5), (3, 4, 0.1))], dict(window_length=4, cutoff_db=c))
           for c in (-3, -6, -20, -40)},
        "wl1": ([_pulses(50, (20, 30, 1.0), (35, 36, 0.5))], dict(window_length=1, cutoff_db=-20)),
        "start": ([_pulses(12, (1, 2, 1.0))], dict(window_length=4)),
        "end": ([_pulses(12, (11, 12, 1.0))], dict(window_length=4)),
        "short": ([np.ones(3, np.float32)], dict(window_length=4)),
        "zeros": ([np.zeros(10, np.float32)], dict(window_length=4)),
        "all_quiet": ([_pulses(50, (20, 30, 1.0))], dict(window_length=1, cutoff_db=3)),
        "ref": ([_pulses(50, (20, 30, 1.0), (35, 36, 0.5))], dict(window_length=1, reference_power=0.5, cutoff_db=-3)),
        "i16": ([np.array([0, 0, 100, 0, 0], np.int16), np.array([0, 0, 100, 0, 0, 0, 0], np.int16)],
                dict(window_length=5)),
        "u8_ref": ([np.array([0, 0, 100, 0, 0], np.uint8)], dict(window_length=1, reference_power=1.0, cutoff_db=-40)),
        "noise": ([_speechy(4000, 1), _speechy(3000, 2)], dict(window_length=256, cutoff_db=-30)),
        "default": ([_speechy(20000, 3)], {}),
        "reset": ([_pulses(50, (20, 30, 1.0))], dict(window_length=5, reset_interval=10)),
        "err_reset": ([_pulses(50, (20, 30, 1.0))], dict(window_length=5)),
        "err_ref": ([_pulses(50, (20, 30, 1.0))], dict(window_length=1, reference_power=-1.0)),
        "err_ref0": ([_pulses(50, (20, 30, 1.0))], dict(window_length=1, reference_power=0.0)),
        "err_2d": ([np.ones((3, 1), np.float32)], dict(window_length=1)),
        "err_f64": ([np.ones(3)], dict(window_length=1)),
    }.items()},
    **{f"resample_{k}": ((lambda fn, a, kw=kw: fn.audio_resample(a, **_typed(fn, kw))), data, None) for k, (data, kw) in {
        "impulse_up": ([_pulses(64, (20, 21, 1.0))], dict(scale=2.0)),
        "impulse_down": ([_pulses(64, (20, 21, 1.0))], dict(scale=0.5)),
        "up_odd": ([_signal(300, 1), _signal(1000, 2)], dict(scale=1.37)),
        "down_odd": ([_signal(700, 3)], dict(scale=0.61)),
        "rates": ([_sine_mix(1600, 16000.0, 4)], dict(in_rate=16000.0, out_rate=22050.0)),
        "rates_down": ([_sine_mix(2205, 22050.0, 5)], dict(in_rate=22050.0, out_rate=8000.0)),
        "out_length": ([_signal(100, 6), _signal(50, 7)], dict(out_length=77)),
        "q0": ([_signal(200, 8)], dict(scale=1.5, quality=0)),
        "q100": ([_signal(200, 8)], dict(scale=1.5, quality=100)),
        "q33": ([_signal(200, 8)], dict(scale=0.7, quality=33)),
        "long": ([_signal(5000, 9)], dict(scale=1.1)),
        "channels": ([np.stack([_signal(300, 10), _signal(300, 11), _signal(300, 12)], 1)], dict(scale=0.8)),
        "i16": ([(_signal(300, 13) * 8000).astype(np.int16)], dict(scale=1.3)),
        "u8_to_f": ([(np.clip(_signal(300, 14) * 40 + 128, 0, 255)).astype(np.uint8)], dict(scale=0.9, dtype="FLOAT")),
        "f_to_i16": ([_signal(300, 15) * 0.3], dict(scale=1.25, dtype="INT16")),
        "f_to_u8": ([_signal(300, 16) * 0.3], dict(scale=1.25, dtype="UINT8")),
        "zero_scale": ([_signal(30, 17)], dict(scale=0.0)),
        "empty": ([np.zeros(0, np.float32)], dict(scale=1.5)),
        "err_3d": ([np.ones((2, 10, 2), np.float32)], dict(scale=1.5)),
        "err_f64": ([np.ones(10)], dict(scale=1.5)),
        "err_none": ([np.ones(10, np.float32)], {}),
        "err_two": ([np.ones(10, np.float32)], dict(scale=1.5, out_length=3)),
        "err_half_rates": ([np.ones(10, np.float32)], dict(in_rate=1.5)),
        "err_neg_scale": ([np.ones(10, np.float32)], dict(scale=-1.0)),
        "err_quality": ([np.ones(10, np.float32)], dict(scale=1.5, quality=101)),
        "err_empty_len": ([np.zeros(0, np.float32)], dict(out_length=4)),
    }.items()},
    **{f"dec_{k}": ((lambda fn, a, kw=kw: tuple(fn.decoders.audio(a, **_typed(fn, kw)))), [W.as_sample(d) for d in data],
                    None) for k, (data, kw) in _DEC.items()},
}
