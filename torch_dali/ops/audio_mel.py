"""mel_filter_bank and mfcc (float32, CPU or CUDA tensors), with DALI 2.4's conventions.

mel_filter_bank: nfilter triangular filters over nfft // 2 + 1 bins (nfft = 2 * (bins - 1), bin k at
k * sample_rate / nfft Hz). Their corners are nfilter + 2 points equally spaced in mel between
freq_low and freq_high (default sample_rate / 2); only bins in [ceil(freq_low / step), floor(freq_high
/ step)] contribute. `normalize` divides each filter by half its width in Hz (unit area); else its peak
is 1. Slaney's mel scale is linear (f * 3 / 200) below 1 kHz and logarithmic above; HTK's is
1127 ln(1 + f / 700). The frequency axis is the layout's 'f'; without a layout the first of a 1-D or
2-D sample, else the second to last.

mfcc: the DCT (type 1-4, Wikipedia's unscaled definitions; `normalize`: orthonormal, not for type 1)
of each vector along `axis`, keeping the first min(n_mfcc, length) coefficients; a lifter L != 0 scales
coefficient i by 1 + (L / 2) * sin(pi * (i + 1) / L).
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema

_MIN_LOG_HZ, _LIN_HZ_PER_MEL, _LOG_STEP = 1000.0, 200.0 / 3.0, math.log(6.4) / 27.0


def _slaney_to_mel(f: float) -> float:
    if f < _MIN_LOG_HZ:
        return f / _LIN_HZ_PER_MEL
    return _MIN_LOG_HZ / _LIN_HZ_PER_MEL + math.log(f / _MIN_LOG_HZ) / _LOG_STEP


def _slaney_to_hz(m: float) -> float:
    base = _MIN_LOG_HZ / _LIN_HZ_PER_MEL
    return m * _LIN_HZ_PER_MEL if m < base else _MIN_LOG_HZ * math.exp(_LOG_STEP * (m - base))


_SCALES: dict[str, tuple[Callable[[float], float], Callable[[float], float]]] = {
    "slaney": (_slaney_to_mel, _slaney_to_hz),
    "htk": (lambda f: 1127.0 * math.log1p(f / 700.0), lambda m: 700.0 * math.expm1(m / 1127.0)),
}


@functools.lru_cache(maxsize=64)
def mel_weights(nbins: int, nfilter: int, rate: float, lo: float, hi: float, formula: str,
                normalize: bool) -> torch.Tensor:
    """(nfilter, nbins) float32 weights; all zero where the bins cannot hold a spectrum (nbins < 2)."""
    w = torch.zeros(nfilter, nbins, dtype=torch.float64)
    nfft = 2 * (nbins - 1)
    if nfft <= 0:
        return w.to(torch.float32)
    to_mel, to_hz = _SCALES[formula]
    m_lo, m_hi = to_mel(lo), to_mel(hi)
    delta = (m_hi - m_lo) / (nfilter + 1)
    corners = [to_hz(m_lo + i * delta) for i in range(nfilter + 1)] + [to_hz(m_hi)]
    step = rate / nfft
    first, last = max(0, math.ceil(lo / step)), min(nbins - 1, math.floor(hi / step))
    j = 0  # the interval [corners[j], corners[j + 1]) holding the bin: filter j - 1 falls, filter j rises
    for k in range(first, last + 1):
        f = k * step
        while j <= nfilter and f >= corners[j + 1]:
            j += 1
        if j > nfilter:
            break
        fall = (corners[j + 1] - f) / (corners[j + 1] - corners[j])
        if j >= 1:
            w[j - 1, k] = fall
        if j < nfilter:
            w[j, k] = 1.0 - fall
    if normalize:  # filter i spans corners i .. i + 2; its right corner is one delta above corner i + 1
        right = torch.tensor([to_hz(m_lo + (i + 1) * delta + delta) for i in range(nfilter)], dtype=torch.float64)
        w *= (2.0 / (right - torch.tensor(corners[:nfilter], dtype=torch.float64)))[:, None]
    return w.to(torch.float32)


def _apply_along(w: torch.Tensor, x: torch.Tensor, axis: int) -> torch.Tensor:
    """w @ x along `axis` of x (w: (out, len))."""
    moved = x.movedim(axis, -1)
    return (moved @ w.to(x.device).T).movedim(-1, axis).contiguous()


class MelFilterBank(Operator):
    sample_wise = False  # the frequency axis comes from the batch's layout (run_batch)

    def setup(self) -> None:
        a = self.args
        self.rate, self.lo = float(a["sample_rate"]), float(a["freq_low"])
        self.hi = float(a["freq_high"]) if a["freq_high"] > 0 else self.rate / 2
        if int(a["nfilter"]) <= 0:
            raise ArgumentError(f"{self.name}: `nfilter` must be positive, got {a['nfilter']}")
        if self.rate <= 0:
            raise ArgumentError(f"{self.name}: `sample_rate` must be positive, got {self.rate}")
        if self.lo < 0:
            raise ArgumentError(f"{self.name}: `freq_low` must not be negative, got {self.lo}")
        if not self.lo < self.hi <= self.rate:  # DALI 2.4 bounds freq_high by sample_rate, not its half
            raise ArgumentError(f"{self.name}: `freq_high` ({self.hi}) must be above `freq_low` ({self.lo}) "
                                f"and at most `sample_rate` ({self.rate})")
        if a["mel_formula"] not in _SCALES:
            raise ArgumentError(f"{self.name}: `mel_formula` must be 'slaney' or 'htk', got {a['mel_formula']!r}")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        layout = inputs[0].layout() or ""
        outs = []
        for x in inputs[0]:
            if x.dtype != torch.float32:
                raise ArgumentTypeError(f"{self.name}: the input must be float32, got {x.dtype}")
            axis = self._axis(x, layout)
            w = mel_weights(int(x.shape[axis]), int(self.args["nfilter"]), self.rate, self.lo, self.hi,
                            str(self.args["mel_formula"]), bool(self.args["normalize"]))
            outs.append(_apply_along(w, x, axis))
        return [TensorList(outs, layout)]

    def _axis(self, x: torch.Tensor, layout: str) -> int:
        if layout:
            if "f" not in layout:
                raise ArgumentError(f"{self.name}: the input layout {layout!r} has no 'f' (frequency) axis")
            return layout.index("f")
        if x.dim() == 0:
            raise ArgumentError(f"{self.name}: the input must have a frequency axis, got a scalar")
        return 0 if x.dim() <= 2 else x.dim() - 2


@functools.lru_cache(maxsize=64)
def dct_matrix(n: int, count: int, kind: int, ortho: bool) -> torch.Tensor:
    """(count, n) float32 rows of the DCT of type `kind` (Wikipedia's unscaled definitions)."""
    k = torch.arange(count, dtype=torch.float64)[:, None]
    t = torch.arange(n, dtype=torch.float64)[None, :]
    if kind == 1:
        c = torch.cos(math.pi / (n - 1) * k * t)
        c[:, 0] = 0.5
        c[:, -1] = 0.5 * torch.cos(math.pi * k[:, 0])
    elif kind == 2:
        c = torch.cos(math.pi / n * k * (t + 0.5))
    elif kind == 3:
        c = torch.cos(math.pi / n * (k + 0.5) * t)
        c[:, 0] = 0.5
    else:
        c = torch.cos(math.pi / n * (k + 0.5) * (t + 0.5))
    if ortho:
        c = c * math.sqrt(2.0 / n)
        if kind == 2:
            c[0] /= math.sqrt(2.0)
        elif kind == 3:
            c[:, 0] = 1.0 / math.sqrt(n)
    return c.to(torch.float32)


class MFCC(Operator):
    def setup(self) -> None:
        a = self.args
        if int(a["n_mfcc"]) <= 0:
            raise ArgumentError(f"{self.name}: `n_mfcc` must be positive, got {a['n_mfcc']}")
        if a["dct_type"] not in (1, 2, 3, 4):
            raise ArgumentError(f"{self.name}: `dct_type` must be 1, 2, 3 or 4, got {a['dct_type']}")
        if a["normalize"] and a["dct_type"] == 1:
            raise ArgumentError(f"{self.name}: `normalize` (orthonormal DCT) is not available for dct_type=1")
        if int(a["axis"]) < 0:
            raise ArgumentError(f"{self.name}: `axis` must not be negative, got {a['axis']}")

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        if x.dtype != torch.float32:
            raise ArgumentTypeError(f"{self.name}: the input must be float32, got {x.dtype}")
        axis, kind = int(self.args["axis"]), int(self.args["dct_type"])
        if x.dim() < 2:
            raise ArgumentError(f"{self.name}: the input must have at least 2 dimensions, got shape "
                                f"{tuple(x.shape)}")
        if axis >= x.dim():
            raise ArgumentError(f"{self.name}: `axis` {axis} is out of range for a {x.dim()}-D sample")
        n = int(x.shape[axis])
        if kind == 1 and n == 1:
            raise ArgumentError(f"{self.name}: a type 1 DCT needs at least 2 values along the axis "
                                f"(sample {ctx.index})")
        count = min(int(self.args["n_mfcc"]), n)
        c = dct_matrix(n, count, kind, bool(self.args["normalize"])) if n else torch.zeros(0, 0)
        lifter = float(self.args["lifter"])
        if lifter != 0:  # a negative lifter applies too (measured on DALI 2.4)
            i = torch.arange(count, dtype=torch.float64)
            c = c * (1.0 + lifter / 2 * torch.sin(math.pi * (i + 1) / lifter)).to(torch.float32)[:, None]
        return _apply_along(c, x, axis)


register(OpSchema(
    name="mel_filter_bank", impl=MelFilterBank,
    doc="Mel spectrogram: a bank of nfilter triangular filters over the spectrogram's 'f' axis; float32.",
    args=(Arg("nfilter", "int", 128, "number of mel filters"),
          Arg("sample_rate", "float", 44100.0, "the signal's sampling rate"),
          Arg("freq_low", "float", 0.0, "lowest frequency"),
          Arg("freq_high", "float", 0.0, "highest frequency (0: sample_rate / 2)"),
          Arg("mel_formula", "str", "slaney", "'slaney' or 'htk'"),
          Arg("normalize", "bool", True, "unit-area filters (else unit peak)")),
))
register(OpSchema(
    name="mfcc", impl=MFCC, class_name_override="MFCC",
    doc="Mel-frequency cepstral coefficients: a DCT (type 1-4) along `axis` of a mel spectrogram, "
        "optionally liftered; float32.",
    args=(Arg("axis", "int", 0, "the axis transformed"),
          Arg("dct_type", "int", 2, "DCT type: 1, 2, 3 or 4"),
          Arg("n_mfcc", "int", 20, "coefficients kept"),
          Arg("normalize", "bool", False, "orthonormal DCT (not for type 1)"),
          Arg("lifter", "float", 0.0, "cepstral lifter coefficient (0: none)")),
))
