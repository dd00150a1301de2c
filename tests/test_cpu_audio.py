"""The C helper audio_resample.c (audio_resample's and decoders.audio's resampling on the CPU,
`ops/fast/cpu_audio.py`) gives the spec's bits (`ops.audio_resample.resample`): ratios up and
down, mono and many channels, every quality, clips shorter than the kernel, outputs past the
signal's end, positions past 2^23, NaN and infinities; the ops give the same batches with and
without it."""
from __future__ import annotations

import io
import random
import wave

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import helpers
from torch_dali.ops import audio_resample as AR
from torch_dali.ops.fast import cpu_audio

try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]

_RATES = [(44100.0, 16000.0), (16000.0, 44100.0), (48000.0, 44100.0), (44100.0, 48000.0), (1.0, 3.7),
          (3.3, 1.0), (22050.0, 22050.0), (8000.0, 11025.0)]


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The float32 bits, every NaN made one (a NaN's payload depends on the operands' order)."""
    flat = t.reshape(-1)
    return flat.view(torch.int32).masked_fill(flat.isnan(), 0x7FC00000)


def _check(x: torch.Tensor, n_out: int, ratio: float, lobes: int, case: object) -> None:
    """The helper as the ops call it, and its baseline (non-AVX2) build, against the spec."""
    want = AR.resample(x, n_out, ratio, lobes)
    table, scale, center = AR.sinc_table(lobes)
    portable = helpers.audio_resample(x, n_out, ratio, table, scale, center, lobes, cpu_audio.sum_width(), True)
    for got in (cpu_audio.resample(x, n_out, ratio, lobes), portable):
        assert got is not None, case
        assert got.shape == want.shape and torch.equal(_bits(got), _bits(want)), case


def _signal(rng: random.Random, n: int, c: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    kind = rng.random()
    if kind < 0.15:  # int16 audio as the op normalises it
        return AR.to_domain(torch.randint(-32768, 32768, (n, c), dtype=torch.int16, generator=g), False)
    x = torch.randn(n, c, generator=g) * rng.choice([1.0, 1e-30, 1e30])
    if kind > 0.9:  # NaN, infinities and negative zeros somewhere
        idx = torch.randint(0, n * c, (max(1, n * c // 50),), generator=g)
        x.view(-1)[idx] = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0]).repeat(len(idx))[:len(idx)]
    return x


def test_the_helper_finds_torchs_summation_width() -> None:
    need(helpers.AUDIO_RESAMPLE)
    assert cpu_audio.sum_width() in (4, 8, 16, 32)


def test_resample_matches_the_spec_bit_for_bit() -> None:
    need(helpers.AUDIO_RESAMPLE)
    rng = random.Random(5)
    for case in range(300):
        c = rng.choice([1, 1, 1, 2, 2, 3, 4, 5, 6, 8, 9, 12, 17])
        n = rng.choice([1, 2, 3, 5, 8, 20, rng.randint(1, 3000), rng.randint(1, 3000)])
        quality = rng.choice([0.0, 50.0, 100.0, 10.0, 25.0, 75.0, rng.uniform(0, 100)])
        lobes = AR.lobes_for(quality)
        if rng.random() < 0.7:
            rin, rout = (AR._f32(r) for r in rng.choice(_RATES))
            ratio, n_out = rin / rout, int(np.ceil(n * rout / rin))
        else:  # any ratio, any length (outputs past the end of the signal too)
            ratio, n_out = rng.uniform(0.05, 20.0), rng.randint(1, 1200)
        _check(_signal(rng, n, c), n_out, ratio, lobes, (case, n, c, quality, ratio, n_out))


def test_many_channels_and_long_signals() -> None:
    need(helpers.AUDIO_RESAMPLE)
    rng = random.Random(11)
    for c, n, n_out, lobes in ((33, 300, 120, 16), (40, 100, 40, 3), (1, 70000, 25000, 16), (2, 40000, 33000, 3)):
        _check(_signal(rng, n, c), n_out, n / n_out, lobes, (c, n, n_out, lobes))


def test_positions_past_two_to_the_23() -> None:
    """One block of 256 outputs spanning 8.4M samples: the offsets from the block's start pass 2^23,
    where the helper leaves float32 lanes for int64 indices."""
    need(helpers.AUDIO_RESAMPLE)
    n = 8_448_000
    x = torch.sin(torch.arange(n, dtype=torch.float32) * 0.001)[:, None]
    for n_out in (256, 300):
        _check(x, n_out, n / n_out, 3, n_out)


def test_declines_where_torch_may_split_the_sum_over_channels() -> None:
    """Fewer outputs than channels and a big sum: torch may sum channel groups on different threads,
    whose order the helper does not follow; the spec runs."""
    need(helpers.AUDIO_RESAMPLE)
    assert cpu_audio.resample(torch.randn(30, 64), 10, 3.0, 64) is None
    assert cpu_audio.resample(torch.randn(30, 64), 64, 0.5, 3) is not None


def _wav(samples: np.ndarray, rate: int) -> np.ndarray:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype(np.int16).tobytes())
    return np.frombuffer(buf.getvalue(), dtype=np.uint8)


def test_ops_give_the_same_batches_with_and_without_the_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    need(helpers.AUDIO_RESAMPLE)
    rng = np.random.default_rng(3)
    clips = [rng.standard_normal(int(rng.integers(50, 3000))).astype(np.float32) for _ in range(4)]
    stereo = [(rng.standard_normal((int(rng.integers(50, 3000)), 2)) * 8000).astype(np.int16) for _ in range(4)]
    wavs = [_wav(s, 44100) for s in stereo]

    def make():  # type: ignore[no-untyped-def]
        @pipeline_def(batch_size=4, num_threads=2, device_id=None)
        def pipe():  # type: ignore[no-untyped-def]
            a = fn.external_source(source=lambda: clips)
            s = fn.external_source(source=lambda: stereo)
            w = fn.external_source(source=lambda: wavs)
            return (fn.audio_resample(a, in_rate=16000, out_rate=44100),
                    fn.audio_resample(s, scale=0.37, quality=100, dtype=types.UINT8),
                    fn.decoders.audio(w, sample_rate=16000)[0],
                    fn.decoders.audio(w, sample_rate=22050, downmix=True, dtype=types.FLOAT)[0])
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, make, ["audio_resample"], 16, lambda a, b: torch.equal(_bits(a.float()),
                                                                                            _bits(b.float())))
