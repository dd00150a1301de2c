"""Axis arithmetic and kernels of the tensor-shape ops (transpose, squeeze, expand_dims, cat, stack,
element_extract): which axes an argument names, the output shape and layout. Pure torch; the
kernels return views where the data need not move."""
from __future__ import annotations

import math
from typing import Sequence

import torch

from ..errors import ArgumentError


def axes_from_names(op: str, names: str, layout: str) -> list[int]:
    """The positions of `names` in `layout` (each must be there)."""
    out = []
    for a in names:
        k = layout.find(a)
        if k < 0:
            raise ArgumentError(f"{op}: the input layout \"{layout}\" has no axis '{a}'")
        out.append(k)
    return out


def wrap_axis(op: str, axis: int, ndim: int, what: str = "axis") -> int:
    """`axis` in [-ndim, ndim - 1], negative counted from the back."""
    if not -ndim <= axis < ndim:
        raise ArgumentError(f"{op}: {what} {axis} is out of range for {ndim}-dimensional samples "
                            f"(accepted: [{-ndim}, {ndim - 1}])")
    return axis + ndim if axis < 0 else axis


def reduced_axes(op: str, axes: int | Sequence[int] | None, names: str | None, layout: str,
                 ndim: int) -> list[int]:
    """The sorted, distinct axes named by `axes` (negative from the back) or `axis_names`; all of
    them when neither is given."""
    if names is not None:
        if not layout:
            raise ArgumentError(f"{op}: `axis_names` needs an input with a layout; this input has none")
        got = axes_from_names(op, names, layout)
    elif axes is None:
        return list(range(ndim))
    else:
        listed = [axes] if isinstance(axes, int) else list(axes)
        got = [wrap_axis(op, int(a), ndim) for a in listed]
    if len(set(got)) != len(got):
        raise ArgumentError(f"{op}: an axis is named twice in {list(axes) if names is None else names!r}")
    return sorted(got)


# -- transpose ------------------------------------------------------------------------------------

def check_perm(op: str, perm: Sequence[int], ndim: int) -> list[int]:
    perm = [int(p) for p in perm]
    if len(perm) != ndim:
        raise ArgumentError(f"{op}: `perm` has {len(perm)} entries, the input has {ndim} dimensions")
    if sorted(perm) != list(range(ndim)):
        raise ArgumentError(f"{op}: `perm` {perm} is not a permutation of 0..{ndim - 1}")
    return perm


def transpose(x: torch.Tensor, perm: Sequence[int], batched: bool = False) -> torch.Tensor:
    """`x` with dimension i taken from dimension perm[i] (after a leading batch axis when
    `batched`), in a new contiguous buffer, as DALI writes it."""
    order = [0, *[p + 1 for p in perm]] if batched else list(perm)
    return x.permute(order).contiguous()


# -- squeeze / expand_dims ---------------------------------------------------------------------

def squeeze_shape(op: str, shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    """`shape` without `axes`; each removed extent must be 1, unless the volume is 0 before and
    after (an empty tensor stays empty)."""
    ndim = len(shape)
    for a in axes:
        if not 0 <= a < ndim:
            raise ArgumentError(f"{op}: axis {a} is out of range for {ndim}-dimensional samples")
    if len(set(axes)) != len(axes):
        raise ArgumentError(f"{op}: `axes` {list(axes)} names a dimension to remove more than once")
    out = [int(s) for k, s in enumerate(shape) if k not in axes]
    if math.prod(out) != math.prod(shape) or (math.prod(shape) and any(shape[a] != 1 for a in axes)):
        raise ArgumentError(f"{op}: cannot remove dimensions {sorted(axes)} of a sample of shape "
                            f"{list(shape)}: the result would hold {math.prod(out)} elements, the sample holds "
                            f"{math.prod(shape)}")
    return out


def expand_shape(op: str, shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    """`shape` with extents of 1 inserted so that they land at output positions `axes`."""
    if any(a < 0 for a in axes):
        raise ArgumentError(f"{op}: `axes` {list(axes)} holds a negative position; new dimensions are placed by "
                            "non-negative output positions")
    if len(set(axes)) != len(axes):
        raise ArgumentError(f"{op}: `axes` names an output position twice: {list(axes)}")
    ndim = len(shape) + len(axes)
    if any(a >= ndim for a in axes):
        raise ArgumentError(f"{op}: `axes` {list(axes)} reach past the output's last position {ndim - 1} (the "
                            f"input has {len(shape)} dimensions, {len(axes)} are added)")
    it = iter(shape)
    return [1 if k in axes else int(next(it)) for k in range(ndim)]


def expand_layout(layout: str, axes: Sequence[int], names: str) -> str:
    """`layout` with `names[j]` inserted at output position `axes[j]`."""
    ndim = len(layout) + len(axes)
    at = dict(zip(axes, names))
    it = iter(layout)
    return "".join(at[k] if k in at else next(it) for k in range(ndim))


# -- cat / stack ----------------------------------------------------------------------------------

def check_joinable(op: str, samples: Sequence[torch.Tensor], axis: int | None) -> None:
    """The samples joined into one must share the type and number of dimensions, and their shapes
    (but for `axis`, when concatenating)."""
    first = samples[0]
    for t in samples[1:]:
        if t.dtype != first.dtype or t.dim() != first.dim():
            raise ArgumentError(f"{op}: all inputs must have the same type and number of dimensions; got "
                                f"{first.dtype} with {first.dim()} and {t.dtype} with {t.dim()}")
        for k, (a, b) in enumerate(zip(first.shape, t.shape)):
            if k != axis and a != b:
                what = ("can differ in size only along the concatenation axis" if axis is not None
                        else "must have equal shapes")
                raise ArgumentError(f"{op}: the joined tensors {what}; got {list(first.shape)} and "
                                    f"{list(t.shape)}")
