"""slice: a window of any tensor, by named arguments (start / rel_start with end / rel_end / shape /
rel_shape) or by positional anchor and shape inputs, with DALI 2.4's out-of-bounds policies.

Coordinates are worked out in double precision and rounded half away from zero, as DALI does;
`fill_values` convert to the output type as C's static_cast does (DALI's behaviour).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import regions as R
from ..functional.crop import clamp_cast, round_half_away
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema, one_of
from .regions import resolve_axes

_OUT_TYPES = (torch.float32, torch.float16, torch.uint8)
_NAMED = ("start", "rel_start", "end", "rel_end", "shape", "rel_shape")


def _vals(v: Any) -> list[float]:
    return [float(x) for x in np.asarray(v, dtype=np.float64).reshape(-1)]


def named_window(op: str, get_arg: Callable[[str], Any], shape: tuple[int, ...],
                 axes: list[int]) -> tuple[list[int], list[int]]:
    """(anchor, extent) over every dim of `shape` from start / rel_start and end / rel_end / shape /
    rel_shape (`get_arg(name)` -> value or None) for the dims in `axes`; others are whole."""
    def get(k: str) -> list[float] | None:
        v = get_arg(k)
        if v is None:
            return None
        vals = _vals(v)
        if len(vals) == 1 and len(axes) > 1:
            vals = vals * len(axes)
        if len(vals) != len(axes):
            raise ArgumentError(f"{op}: `{k}` must have {len(axes)} values (one per sliced axis), got {len(vals)}")
        return vals
    v = {k: get(k) for k in _NAMED}
    anchor, extent = [0] * len(shape), list(shape)
    for j, d in enumerate(axes):
        n = shape[d]
        a = v["start"][j] if v["start"] else (v["rel_start"][j] * n if v["rel_start"] else 0.0)
        for k in ("shape", "rel_shape"):
            if v[k] and v[k][j] < 0:
                raise ArgumentError(f"{op}: `{k}` must be >= 0, got {v[k][j]}")
        if v["end"]:
            e = v["end"][j]
        elif v["rel_end"]:
            e = v["rel_end"][j] * n
        elif v["shape"]:
            e = a + v["shape"][j]
        elif v["rel_shape"] and v["rel_start"]:
            e = (v["rel_start"][j] + v["rel_shape"][j]) * n  # one product: less rounding, as DALI
        elif v["rel_shape"]:
            e = a + v["rel_shape"][j] * n
        else:
            e = float(n)
        if e < a:
            raise ArgumentError(f"{op}: the end can't be before the start, got start={a} end={e}")
        anchor[d] = round_half_away(a)
        extent[d] = round_half_away(e) - anchor[d]
    return anchor, extent


def positional_window(op: str, a_t: torch.Tensor, s_t: torch.Tensor, shape: tuple[int, ...], axes: list[int],
                      normalized_anchor: bool, normalized_shape: bool) -> tuple[list[int], list[int]]:
    """(anchor, extent) from anchor and shape tensors (float: relative when normalized_*; integer:
    absolute)."""
    if a_t.dtype != s_t.dtype:
        raise ArgumentTypeError(f"{op}: anchor and shape inputs must have the same type, got {a_t.dtype} and "
                                f"{s_t.dtype}")
    if a_t.dtype not in (torch.int32, torch.int64, torch.float32):
        raise ArgumentTypeError(f"{op}: anchor and shape must be int32, int64 or float32, got {a_t.dtype}")
    if a_t.dim() > 1 or tuple(a_t.shape) != tuple(s_t.shape) or a_t.numel() != len(axes):
        raise ArgumentError(f"{op}: anchor and shape must be scalars or 1D with {len(axes)} values, got shapes "
                            f"{tuple(a_t.shape)} and {tuple(s_t.shape)}")
    floats = a_t.dtype.is_floating_point
    na, ns = floats and normalized_anchor, floats and normalized_shape
    av, sv = _vals(a_t.cpu()), _vals(s_t.cpu())
    anchor, extent = [0] * len(shape), list(shape)
    for j, d in enumerate(axes):
        n = shape[d]
        a, s = av[j], sv[j]
        if na and ns:
            e, a = (a + s) * n, a * n
        else:
            a = a * n if na else a
            e = a + (s * n if ns else s)
        if e < a:
            raise ArgumentError(f"{op}: the end can't be before the start, got start={a} end={e}")
        anchor[d] = round_half_away(a)
        extent[d] = round_half_away(e) - anchor[d]
    return anchor, extent


class Slice(Operator):
    sample_wise = False

    def setup(self) -> None:
        given = {k for k in _NAMED if self.args.get(k) is not None or k in self.node.arg_inputs}
        if {"start", "rel_start"} <= given:
            raise ArgumentError(f"{self.name}: `start` and `rel_start` are mutually exclusive")
        ends = given & {"end", "rel_end", "shape", "rel_shape"}
        if len(ends) > 1:
            raise ArgumentError(f"{self.name}: `end`, `rel_end`, `shape` and `rel_shape` are mutually exclusive, "
                                f"got {', '.join(sorted(ends))}")
        self.named = given
        n_in = len(self.node.inputs)
        if given and n_in > 1:
            raise ArgumentError(f"{self.name}: named slice arguments cannot be combined with positional anchor and "
                                f"shape inputs")
        if not given and n_in != 3:
            raise ArgumentError(f"{self.name}: give named slice arguments (start/end, start/shape...) or both "
                                f"positional inputs (anchor, shape); got {n_in} input(s)")
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)
        self.policy = R.oob_policy(self.args["out_of_bounds_policy"])

    def axes(self, layout: str, ndim: int, args: dict[str, list[Any]] | None = None, i: int = 0) -> list[int]:
        names, axes = self.args.get("axis_names"), self.args.get("axes")
        if args is not None and "axes" in args:  # per sample (DALI's `axes` is a tensor argument)
            v = args["axes"][i]
            names, axes = None, [int(a) for a in (v if isinstance(v, list) else [v])]
        if names is None and axes is None:
            axes = [1, 0]  # DALI's default: (x, y) of an HWC image, and the same for any layout
        if names == "" or (names is None and axes == []):
            return list(range(ndim))
        return resolve_axes(self.name, layout, ndim, axes if names is None else None, names)

    def _named_window(self, args: dict[str, list[Any]], i: int, shape: tuple[int, ...],
                      axes: list[int]) -> tuple[list[int], list[int]]:
        return named_window(self.name, lambda k: args[k][i] if k in args else self.args.get(k), shape, axes)

    def _positional_window(self, a_t: torch.Tensor, s_t: torch.Tensor, shape: tuple[int, ...],
                           axes: list[int]) -> tuple[list[int], list[int]]:
        return positional_window(self.name, a_t, s_t, shape, axes, self.args["normalized_anchor"],
                                 self.args["normalized_shape"])

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        layout = tl.layout()
        # per sample on the pool's threads (single-threaded torch there): on the caller's thread
        # each window's copy ran through torch's intra-op team, 5x DALI's time on a busy machine
        return [TensorList(ctx.map(lambda i: self._one(i, tl[i], inputs, args, layout), len(tl)), layout)]

    def _one(self, i: int, x: torch.Tensor, inputs: list[TensorList], args: dict[str, list[Any]],
             layout: str) -> torch.Tensor:
        cdim = layout.find("C")
        fills = [float(f) for f in (self.args.get("fill_values") or [0.0])]
        if x.dtype == torch.bool:
            raise ArgumentTypeError(f"{self.name}: bool input is not supported")
        out_dtype = self.dtype or x.dtype
        if out_dtype != x.dtype and out_dtype not in _OUT_TYPES:
            raise ArgumentTypeError(f"{self.name}: `dtype` must be the input's, float32, float16 or uint8, "
                                    f"got {out_dtype}")
        shape = tuple(int(s) for s in x.shape)
        axes = self.axes(layout, x.dim(), args, i)
        if self.named:
            anchor, extent = self._named_window(args, i, shape, axes)
        else:
            anchor, extent = self._positional_window(inputs[1][i], inputs[2][i], shape, axes)
        inside = all(0 <= a and a + e <= n for a, e, n in zip(anchor, extent, shape))
        if not inside and self.policy == "error":
            raise ArgumentError(f"{self.name}: the slice (anchor {list(anchor)}, shape {list(extent)}) reaches "
                                f"outside the input of shape {list(shape)} and out_of_bounds_policy is "
                                "'error'; use 'pad' or 'trim_to_shape' to slice past the edges")
        if not inside and self.policy == "trim_to_shape":
            anchor, extent = R.trim(anchor, extent, shape)
        fill = None
        if len(fills) > 1:
            if cdim < 0:
                raise ArgumentError(f"{self.name}: several `fill_values` need a 'C' in the layout, got {layout!r}")
            if len(fills) != extent[cdim]:
                raise ArgumentError(f"{self.name}: {len(fills)} `fill_values` for {extent[cdim]} channels")
        if not inside and self.policy in ("pad", "constant"):
            fill = R.c_cast(fills, out_dtype)
        try:
            y = R.slice_window(x, anchor, extent, self.policy, None, cdim)
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None
        y = clamp_cast(y, out_dtype)  # floats to integers truncated, as DALI's slice kernel
        if fill is not None:  # the padded part takes the fill in the output type
            mask = R.slice_window(torch.ones(shape, dtype=torch.bool, device=x.device), anchor, extent, "pad",
                                  torch.zeros(1, dtype=torch.bool), cdim)
            y = torch.where(mask, y, R.channel_fill(fill.to(y.device), y.dim(), cdim))
        return y.contiguous()


register(OpSchema(
    name="slice", impl=Slice, min_inputs=1, max_inputs=3, input_kinds=("", "cpu_or_same", "cpu_or_same"),
    doc="Cuts a window from any tensor: named start/end/shape (absolute, or rel_* relative) or "
        "positional (anchor, shape) inputs; axes by `axis_names` or `axes` (default [1, 0]: W, H of an "
        "HWC image).",
    args=(
        Arg("axes", "int_list", None, "axes of the slice arguments (negative from the back; default [1, 0])",
            tensor=True),
        Arg("axis_names", "layout", None, "axes of the slice arguments as layout letters (wins over axes)"),
        Arg("start", "int_list", None, "window start", tensor=True),
        Arg("rel_start", "float_list", None, "window start, relative to the extent", tensor=True),
        Arg("end", "int_list", None, "window end (exclusive)", tensor=True),
        Arg("rel_end", "float_list", None, "window end, relative", tensor=True),
        Arg("shape", "int_list", None, "window extent", tensor=True),
        Arg("rel_shape", "float_list", None, "window extent, relative", tensor=True),
        Arg("normalized_anchor", "bool", True, "a float positional anchor is relative"),
        Arg("normalized_shape", "bool", True, "a float positional shape is relative"),
        Arg("out_of_bounds_policy", "str", "error", "outside the input: error, pad/constant, edge/clamp, "
            "reflect/reflect_1001, reflect_101, wrap, trim_to_shape (DALI's other spellings too)",
            check=R.oob_policy_check),
        Arg("fill_values", "float_list", None, "padding, one value or one per channel (default 0)"),
        Arg("dtype", "dtype", None, "output type: the input's, FLOAT, FLOAT16 or UINT8",
            aliases=("output_dtype",)),
        Arg("image_type", "image_type", None, "legacy; accepted and ignored"),
    ),
))
