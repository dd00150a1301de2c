"""`multi_crop`: several crops of one sample, as `nvidia.dali.experimental.multi_crop` (a helper of
DALI releases after 2.4). Each anchor is one `fn.slice` of the same input with the same crop shape;
the slices are stacked along a new outer axis (`stack=True`) or returned as a list of DataNodes."""
from __future__ import annotations

from typing import Any, Sequence

from .. import fn


def multi_crop(data: Any, anchors: Sequence[Any] | None = None, crop: Any = None, rel_anchors: Sequence[Any] | None = None,
               rel_crop: Any = None, axes: Any = (0, 1), axis_names: str | None = None, stack: bool = True,
               out_of_bounds_policy: str | None = None, fill_values: Any = None, device: str | None = None) -> Any:
    """N crops of `data`, one per anchor.

    Give either `anchors` (absolute coordinates along `axes`) with `crop` (the absolute extent of every
    crop), or `rel_anchors` (fractions of the extent) with `rel_crop`. `axes` (default (0, 1), the HW of
    HWC) or `axis_names` say which dimensions the coordinates index; `out_of_bounds_policy`,
    `fill_values` and `device` go to each `fn.slice` when given. With `stack=True` (the default) the
    result is one DataNode whose outer dimension counts the crops; with `stack=False` a list of N
    DataNodes. Raises ValueError for a missing or doubled choice of anchors, a missing crop shape or an
    empty anchor list.
    """
    absolute = anchors is not None
    if absolute == (rel_anchors is not None):
        raise ValueError("multi_crop: pass exactly one of `anchors` (absolute, with `crop`) and "
                         f"`rel_anchors` (fractions, with `rel_crop`); got "
                         f"{'both' if absolute else 'neither'}")
    if absolute and crop is None:
        raise ValueError("multi_crop: `crop` must be provided with `anchors` (the extent of every crop "
                         "along `axes`)")
    if not absolute and rel_crop is None:
        raise ValueError("multi_crop: `rel_crop` must be provided with `rel_anchors` (the relative "
                         "extent of every crop along `axes`)")
    starts = list(anchors if absolute else rel_anchors)  # type: ignore[arg-type]
    if not starts:
        raise ValueError("multi_crop: the anchor list is empty; give at least one anchor (one per crop)")
    kwargs: dict[str, Any] = {"axis_names": axis_names} if axis_names is not None else {"axes": axes}
    for name, value in (("out_of_bounds_policy", out_of_bounds_policy), ("fill_values", fill_values),
                        ("device", device)):
        if value is not None:
            kwargs[name] = value
    if absolute:
        crops = [fn.slice(data, start=s, shape=crop, **kwargs) for s in starts]
    else:
        crops = [fn.slice(data, rel_start=s, rel_shape=rel_crop, **kwargs) for s in starts]
    return fn.stack(*crops) if stack else crops


__all__ = ["multi_crop"]
