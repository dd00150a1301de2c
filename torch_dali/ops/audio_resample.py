"""audio_resample: band-limited resampling of (time,) or (time, channels) audio, as DALI 2.4 does it.

Output sample o reads the input around position o * in_rate / out_rate (no half-sample shift; no
widening of the kernel when downsampling, so there is no anti-aliasing). The kernel is a sinc with
`lobes` zero crossings each side under a Hann envelope, lobes = round(0.007 q^2 - 0.09 q + 3) for
quality q, sampled into a table of lobes * 64 + 1 points and read with linear interpolation; taps
are the input samples within `lobes` of the position, clipped to the signal. As in DALI's CPU
kernel, positions run in blocks of 256 outputs: the block's start is computed in float64, the rest
by adding the float32 step, and the table is read in float32, so the values match DALI's to float
rounding (measured: within 1.5e-6 of the largest value at quality <= 50, 1e-5 at quality 100, where
DALI's SSE loop also rounds each tap's offset as it advances it by 4.0 and sums in 4 lanes; an
exact emulation of that was tried and was 3-40x slower, so it is not used). Length: ceil(len * out_rate / in_rate) with the rates (and `scale` = out/in) as float32,
or `out_length`. Integer input is normalized to [-1, 1] (signed: x / max; unsigned: (x - max/2) /
(max/2)); for an unsigned output type the kernel runs on (x + 1) / 2 instead (so a truncated kernel
at the signal's ends loses part of the offset, as DALI's does); integer output is scaled by the
type's maximum, rounded half away from zero and saturated. `resample` is the spec; on the CPU a C
helper gives its bits faster (ops/fast/cpu_audio.py, through `_dispatch.call`).
"""
from __future__ import annotations

import functools
import math
from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from . import _dispatch
from ._operator import Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema

_TYPES = (torch.int8, torch.uint8, torch.int16, torch.uint16, torch.int32, torch.uint32, torch.float32)
_UNSIGNED = {torch.uint8: 255.0, torch.uint16: 65535.0, torch.uint32: 4294967295.0}
_SIGNED = {torch.int8: 127.0, torch.int16: 32767.0, torch.int32: 2147483647.0}
_BLOCK = 256
CHUNK = 1 << 15  # outputs computed at once (bounds the taps matrix)


@functools.lru_cache(maxsize=16)
def sinc_table(lobes: int) -> tuple[torch.Tensor, float, float]:
    """(table with a zero at each end, scale, center): the kernel at x is read at x * scale + center."""
    n = lobes * 64 + 1
    step = torch.tensor(2.0 * lobes / (n - 1), dtype=torch.float32)
    env_step = torch.tensor(2.0 / n, dtype=torch.float32)
    center = (n - 1) // 2
    k = torch.arange(n, dtype=torch.float32) - center
    x = (k * step).to(torch.float64)
    sinc = torch.where(x == 0, torch.ones_like(x), torch.sin(math.pi * x) / (math.pi * x))
    env = 0.5 * (1.0 + torch.cos((k * env_step).to(torch.float64) * math.pi))
    table = torch.zeros(n + 2, dtype=torch.float32)
    table[1:n + 1] = (sinc * env).to(torch.float32)
    return table, float(1.0 / step), float(center + 1)


def _f32(v: Any) -> float:
    """DALI keeps the rates and the scale as float32: 1.37 is 1.37000000477 (lengths round up on it)."""
    return float(torch.tensor(float(v), dtype=torch.float32))


def lobes_for(quality: float) -> int:
    return int(math.floor(0.007 * quality * quality - 0.09 * quality + 3 + 0.5))


def _positions(n_out: int, ratio: float, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(block base index int64, float32 offset from it) for each output, as DALI accumulates them."""
    starts = torch.arange(0, n_out, _BLOCK, dtype=torch.float64, device=device) * ratio
    base = torch.floor(starts)
    pos = torch.empty(starts.numel(), min(_BLOCK, n_out), dtype=torch.float32, device=device)
    pos[:, 0] = (starts - base).to(torch.float32)
    step = torch.tensor(ratio, dtype=torch.float32, device=device)
    for k in range(1, pos.shape[1]):
        pos[:, k] = pos[:, k - 1] + step
    bases = base.to(torch.int64)[:, None].expand_as(pos).reshape(-1)[:n_out]
    return bases, pos.reshape(-1)[:n_out]


def resample(x: torch.Tensor, n_out: int, ratio: float, lobes: int) -> torch.Tensor:
    """x: (n, c) float32; ratio: input samples per output sample. Returns (n_out, c) float32."""
    n, dev = x.shape[0], x.device
    out = torch.zeros(n_out, x.shape[1], dtype=torch.float32, device=dev)
    if n == 0 or n_out == 0:
        return out
    table, scale, center = sinc_table(lobes)
    table = table.to(dev)
    bases, pos = _positions(n_out, ratio, dev)
    taps = torch.arange(-lobes - 1, lobes + 2, device=dev)
    for a in range(0, n_out, CHUNK):
        b_, p = bases[a:a + CHUNK], pos[a:a + CHUNK]
        rel = torch.floor(p).to(torch.int64)[:, None] + taps[None, :]  # tap index relative to the base
        lo, hi = torch.ceil(p).to(torch.int64)[:, None] - lobes, torch.floor(p).to(torch.int64)[:, None] + lobes
        absolute = b_[:, None] + rel
        ok = (rel >= lo) & (rel <= hi) & (absolute >= 0) & (absolute < n)
        d = rel.to(torch.float32) - p[:, None]
        fi = d * torch.tensor(scale, dtype=torch.float32) + torch.tensor(center, dtype=torch.float32)
        fi = fi.clamp(0, table.numel() - 2)
        i = torch.floor(fi)
        di = fi - i
        i = i.to(torch.int64)
        w = table[i] + di * (table[i + 1] - table[i])
        w = torch.where(ok, w, torch.zeros((), device=dev))
        samples = x[absolute.clamp(0, n - 1)]  # (chunk, taps, c)
        out[a:a + CHUNK] = (samples * w[..., None]).sum(1)
    return out


def to_domain(x: torch.Tensor, unsigned_out: bool) -> torch.Tensor:
    """float32 samples in the domain the kernel runs in: [0, 1] for an unsigned output type,
    else [-1, 1] (float input is taken as it is, or shifted by +1 and halved)."""
    if x.dtype in _UNSIGNED and unsigned_out:
        return (x.to(torch.float64) / _UNSIGNED[x.dtype]).to(torch.float32)
    if x.dtype in _SIGNED:
        y = (x.to(torch.float64) / _SIGNED[x.dtype]).to(torch.float32)
    elif x.dtype in _UNSIGNED:
        half = _UNSIGNED[x.dtype] / 2
        y = ((x.to(torch.float64) - half) / half).to(torch.float32)
    else:
        y = x
    return (y + 1) * 0.5 if unsigned_out else y


def from_domain(y: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The kernel's float32 output as `dtype`: scaled by the type's maximum, rounded half away from
    zero, saturated."""
    if dtype == torch.float32:
        return y
    top = _SIGNED.get(dtype) or _UNSIGNED[dtype]
    v = (y * torch.tensor(top, dtype=torch.float32)).to(torch.float64)
    v = torch.sign(v) * torch.floor(v.abs() + 0.5)
    return v.clamp(-top - 1 if dtype in _SIGNED else 0.0, top).to(dtype)


class AudioResample(Operator):
    def setup(self) -> None:
        a = self.args
        self.given = {k for k in ("in_rate", "out_rate", "scale", "out_length")
                      if a.get(k) is not None or k in self.node.arg_inputs}  # a constant or a per-sample input
        rates = ("in_rate" in self.given, "out_rate" in self.given)
        if rates[0] != rates[1]:
            raise ArgumentError(f"{self.name}: `in_rate` and `out_rate` go together; give both or neither")
        given = rates[0] + ("scale" in self.given) + ("out_length" in self.given)
        if given > 1:
            raise ArgumentError(f"{self.name}: give only one of the rates (in_rate/out_rate), `scale` or `out_length`")
        if given == 0:
            raise ArgumentError(f"{self.name}: give the rates (in_rate/out_rate), `scale` or `out_length`")
        if not 0 <= float(a["quality"]) <= 100:
            raise ArgumentError(f"{self.name}: `quality` must be in [0, 100], got {a['quality']}")
        self.dtype = None if a.get("dtype") is None else types.to_torch_dtype(a["dtype"])
        if self.dtype is not None and self.dtype not in _TYPES:
            raise ArgumentTypeError(f"{self.name}: output type {self.dtype} is not supported (int8, uint8, int16, "
                                    "uint16, int32, uint32 or float32)")

    def _arg(self, args: dict[str, Any], name: str) -> Any:
        return args[name] if name in args else self.args.get(name)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        if x.dim() not in (1, 2):
            raise ArgumentError(f"{self.name}: the input must be (time,) or (time, channels), got shape "
                                f"{tuple(x.shape)}")
        dtype = self.dtype or x.dtype
        if x.dtype not in _TYPES or dtype not in _TYPES:
            raise ArgumentTypeError(f"{self.name}: type {x.dtype if x.dtype not in _TYPES else dtype} is not "
                                    "supported (int8, uint8, int16, uint16, int32, uint32 or float32)")
        n, i = int(x.shape[0]), ctx.index
        if "in_rate" in self.given:
            rin, rout = _f32(self._arg(args, "in_rate")), _f32(self._arg(args, "out_rate"))
            if not rin > 0:
                raise ArgumentError(f"{self.name}: `in_rate` must be positive, got {rin} (sample {i})")
            if not rout >= 0:
                raise ArgumentError(f"{self.name}: `out_rate` must not be negative, got {rout} (sample {i})")
            n_out = math.ceil(n * rout / rin)
        elif "scale" in self.given:
            rin, rout = 1.0, _f32(self._arg(args, "scale"))
            if not rout >= 0:
                raise ArgumentError(f"{self.name}: `scale` must not be negative, got {rout} (sample {i})")
            n_out = math.ceil(n * rout)
        else:
            n_out = int(self._arg(args, "out_length"))
            if n_out < 0:
                raise ArgumentError(f"{self.name}: `out_length` must not be negative, got {n_out} (sample {i})")
            if n == 0 and n_out:
                raise ArgumentError(f"{self.name}: sample {i} is empty; it cannot give {n_out} samples")
            rin, rout = float(n or 1), float(n_out or 1)
        if n_out * max(1, x[0].numel() if n else 1) > 1 << 30:
            raise ArgumentError(f"{self.name}: sample {i} would have {n_out} samples")
        ratio = rin / rout if rout else 1.0
        sig = to_domain(x, dtype in _UNSIGNED).reshape(n, int(x.shape[1]) if x.dim() == 2 else 1)
        y = _dispatch.call(resample, sig, n_out, ratio, lobes_for(float(self.args["quality"])))
        return from_domain(y, dtype).reshape((n_out,) + tuple(x.shape[1:]))


register(OpSchema(
    name="audio_resample", impl=AudioResample, legacy_names=(),
    doc="Resamples (time,) or (time, channels) audio with a Hann-windowed sinc; the ratio from in_rate/out_rate, "
        "scale or out_length.",
    args=(Arg("in_rate", "float", None, "input sampling rate (with out_rate)", tensor=True),
          Arg("out_rate", "float", None, "output sampling rate (with in_rate)", tensor=True),
          Arg("scale", "float", None, "output rate / input rate", tensor=True),
          Arg("out_length", "int", None, "output length in samples", tensor=True),
          Arg("quality", "float", 50.0, "0..100: 3, 16 or 64 sinc lobes at 0, 50, 100"),
          Arg("dtype", "dtype", None, "output type (default: the input's); values are rescaled to its range")),
))
