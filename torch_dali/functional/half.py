"""Conversion to float16 as DALI 2.4's CPU backend does it.

Measured (fn.cast, crop_mirror_normalize, gaussian_blur outputs): a value halfway between two
float16 values goes to the one farther from zero (1 + 2**-11 -> 1.0009765625, 2049 -> 2050,
2**-25 -> 2**-24), where torch and IEEE's default go to the even one; other values round to the
nearest, and 65520 and above overflow to inf in both. Sources other than float32 are rounded to
float32 first (so 1 + 2**-11 - 2**-40 as a double is a tie there, and goes up).
On CUDA tensors the conversion stays torch's (round half to even), which DALI's GPU kernels are
expected to use; only the CPU was measured.
"""
from __future__ import annotations

import torch


_LOW13 = 0x1FFF  # float32 mantissa bits below float16's in the normal range
_TIE13 = 0x1000  # ... exactly half of float16's last place: the only normal-range ties
_MIN_NORMAL16 = 0x38800000  # 2**-14 as float32 bits: below it float16's step is fixed (subnormals)


def to_half(x: torch.Tensor) -> torch.Tensor:
    """`x` as float16, halfway cases away from zero on the CPU (DALI 2.4's CPU conversion)."""
    if x.dtype == torch.float16:
        return x
    if x.device.type != "cpu" or x.dtype in (torch.bool, torch.uint8, torch.int8) or x.numel() == 0:
        return x.to(torch.float16)  # (small integer types are exact in float16: no halfway case)
    y = x.to(torch.float32).contiguous()
    h = y.to(torch.float16)
    # Only values whose low mantissa bits read exactly half a float16 place (or float16 subnormals)
    # can be ties: a few integer operations find them, and the exact test runs on those alone.
    bits = y.view(torch.int32)
    mag = bits & 0x7FFFFFFF
    maybe = ((bits & _LOW13) == _TIE13) | ((mag < _MIN_NORMAL16) & (mag != 0))
    sel = maybe.reshape(-1).nonzero().squeeze(1)
    if sel.numel():
        flat = h.view(-1)
        flat[sel] = _ties_away(y.view(-1)[sel], flat[sel])
    return h


def _ties_away(y: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """`h` (float32 `y` rounded half to even) with the exact ties moved to the neighbour away from zero."""
    hf = h.to(torch.float32)
    # the float16 neighbour of h on y's side; a tie is y exactly between the two (the differences
    # are exact in float32: y and both neighbours are float32 values within one float16 step)
    toward = torch.where(y > hf, torch.full_like(h, float("inf")), torch.full_like(h, -float("inf")))
    other = torch.nextafter(h, toward)
    of = other.to(torch.float32)
    tie = ((y - hf).abs() == (of - y).abs()) & (y != hf) & (of.abs() > hf.abs())
    return torch.where(tie, other, h)
