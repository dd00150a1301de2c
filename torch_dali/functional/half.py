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


def to_half(x: torch.Tensor) -> torch.Tensor:
    """`x` as float16, halfway cases away from zero on the CPU (DALI 2.4's CPU conversion)."""
    if x.dtype == torch.float16:
        return x
    h = x.to(torch.float16)
    if x.device.type != "cpu" or x.dtype in (torch.bool, torch.uint8, torch.int8) or x.numel() == 0:
        return h  # (small integer types are exact in float16: no halfway case)
    y = x.to(torch.float32)
    hf = h.to(torch.float32)
    # the float16 neighbour of h on y's side; a tie is y exactly between the two (the differences
    # are exact in float32: y and both neighbours are float32 values within one float16 step)
    toward = torch.where(y > hf, torch.full_like(h, float("inf")), torch.full_like(h, -float("inf")))
    other = torch.nextafter(h, toward)
    of = other.to(torch.float32)
    tie = ((y - hf).abs() == (of - y).abs()) & (y != hf) & (of.abs() > hf.abs())
    return torch.where(tie, other, h)
