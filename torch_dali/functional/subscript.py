"""NumPy-style indexing of one tensor (`x[1]`, `x[:, 2:5]`, `x[::-1]`): the kernel of
`DataNode.__getitem__` (DALI's `_tensor_subscript`).

A subscript is, per leading dimension, either an index (the dimension goes away) or a slice
(`lo`, `hi`, `step`, any of them None, with Python's clamping and negative steps). Indices out of
range are errors, as in DALI; slices are clamped, as in Python."""
from __future__ import annotations

from dataclasses import dataclass

import torch


class SubscriptError(ValueError):
    """An index out of range, a zero step or more subscripts than dimensions."""


@dataclass(frozen=True)
class Subscript:
    """One dimension's subscript: `at` (an index), or a slice `lo:hi:step` (None: Python's default)."""

    at: int | None = None
    lo: int | None = None
    hi: int | None = None
    step: int | None = None


def check_ndim(ndim: int, count: int) -> None:
    if count > ndim:
        raise SubscriptError(f"too many indices ({count}) for a {ndim}-D tensor")


def subscript(t: torch.Tensor, subs: list[Subscript]) -> torch.Tensor:
    """`t` indexed by `subs` (one per leading dimension). Slices with a positive step are views;
    negative steps copy."""
    check_ndim(t.dim(), len(subs))
    out = t
    for d, s in enumerate(subs):  # slices first: the dimensions keep their positions
        if s.at is not None:
            continue
        if s.step == 0:
            raise SubscriptError(f"the step of a slice cannot be zero (dimension {d})")
        n = int(out.shape[d])
        start, stop, step = slice(s.lo, s.hi, s.step).indices(n)
        if step > 0:
            out = out[(slice(None),) * d + (slice(start, max(start, stop), step),)]
        else:
            # a stop at or past the start selects nothing (NumPy's x[0:1:-1]); torch.arange refuses it
            idx = torch.arange(start, min(start, stop), step, device=out.device)
            out = out.index_select(d, idx)
    for d in reversed(range(len(subs))):  # then indices, from the last: earlier positions stay put
        at = subs[d].at
        if at is None:
            continue
        n = int(out.shape[d])
        if not -n <= at < n:
            raise SubscriptError(f"index {at} is out of range for dimension {d} of length {n}")
        out = out.select(d, at % n)
    return out


def kept_layout(layout: str, indexed: list[bool]) -> str:
    """The layout after subscripts that index (`indexed[d]`) or slice each leading dimension d:
    the names of indexed dimensions go away."""
    if not layout:
        return ""
    return "".join(c for d, c in enumerate(layout) if d >= len(indexed) or not indexed[d])
