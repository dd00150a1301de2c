"""The C helper's resampling for audio_resample and decoders.audio on the CPU
(`_native/csrc/cpu/audio_resample.c`), a stand-in for the spec `ops.audio_resample.resample`
(registered with the dispatch, `ops._dispatch.register_fast_function`; the ops call the spec through
`_dispatch.call`). It equals the spec bit for bit (tests/test_cpu_audio.py holds it to it).

The spec's last step is torch's float32 `.sum(1)` over the taps, whose order of additions depends
on torch's SIMD vector width for that kernel (8 floats on AVX2 and default builds; a build that
sums AVX512-wide would use 16). The first call finds the width by running the helper and the spec
on a few small inputs that tell the orders apart; if no width gives the spec's bits (a torch whose
summation changed), the helper stays unused and the spec runs.
"""
from __future__ import annotations

import threading

import torch

from ..._native import helpers
from .. import audio_resample as AR
from .._dispatch import register_fast_function

_GRAIN = 32768  # torch's parallel grain: a larger sum may be split between threads
_WIDTHS = (8, 16, 4, 32)
_width: int | None = None
_lock = threading.Lock()


def _probe() -> int:
    """torch's vector width for float32 sums as the helper must emulate it; 0 when none matches."""
    g = torch.Generator().manual_seed(20261205)
    cases = []
    for c, lobes, n, ratio in ((1, 3, 300, 0.7), (1, 16, 300, 2.3), (1, 64, 400, 0.45), (2, 16, 200, 1.3),
                               (5, 3, 150, 0.9), (9, 16, 80, 1.1), (17, 3, 60, 0.8), (36, 16, 40, 1.7)):
        x = torch.randn(n, c, generator=g)
        n_out = int(n / ratio)
        cases.append((x, n_out, ratio, lobes, AR.resample(x, n_out, ratio, lobes)))
    for width in _WIDTHS:
        ok = True
        for x, n_out, ratio, lobes, want in cases:
            table, scale, center = AR.sinc_table(lobes)
            got = helpers.audio_resample(x, n_out, ratio, table, scale, center, lobes, width)
            if got is None or not torch.equal(got.view(torch.int32), want.view(torch.int32)):
                ok = False
                break
        if ok:
            return width
    return 0


def sum_width() -> int:
    """The width the helper runs with (probed once); 0 when the helper is not used."""
    global _width
    if _width is None:
        with _lock:
            if _width is None:
                _width = _probe() if helpers.AUDIO_RESAMPLE.load() is not None else 0
    return _width


def resample(x: torch.Tensor, n_out: int, ratio: float, lobes: int) -> torch.Tensor | None:
    """`ops.audio_resample.resample`, or None for a call the helper does not take."""
    if x.device.type != "cpu" or x.dtype != torch.float32 or x.dim() != 2 or x.numel() == 0 or n_out <= 0:
        return None
    c = int(x.shape[1])
    if c > 1:  # torch splits a big sum between threads along its largest dimension: channels, then
        last = n_out - (n_out - 1) // AR.CHUNK * AR.CHUNK  # (the spec's last chunk of outputs)
        if c > min(last, AR.CHUNK) and min(last, AR.CHUNK) * (2 * lobes + 3) * c >= _GRAIN:
            return None
    width = sum_width()
    if not width:
        return None
    table, scale, center = AR.sinc_table(lobes)
    return helpers.audio_resample(x, n_out, ratio, table, scale, center, lobes, width)


register_fast_function(AR.resample, resample)
