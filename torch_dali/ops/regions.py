"""erase, pad and paste: region ops over any layout (paste: HWC), on CPU or CUDA tensors.

Arguments DALI callers commonly pass as None ("unset") default to None here, and the op applies
DALI's default. Region arithmetic, fill conversions and errors follow DALI 2.4 (see
`torch_dali.functional.regions`).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..functional import ragged as FR
from ..functional import regions as R
from ..functional.ragged import Flat
from ..tensor_list import TensorList
from . import batching
from ._operator import BatchContext, Operator
from .layouts import refuse_input
from ._registry import register
from ._schema import Arg, OpSchema

_ERASE_TYPES = (torch.uint8, torch.int8, torch.uint16, torch.int16, torch.uint32, torch.int32,
                torch.uint64, torch.int64, torch.float16, torch.float32)
_PAD_TYPES = _ERASE_TYPES + (torch.bool,)


def _floats(v: Any) -> list[float]:
    if v is None:
        return []
    return [float(x) for x in np.asarray(v, dtype=np.float64).reshape(-1)]


def _ints(v: Any) -> list[int]:
    return [int(x) for x in np.asarray(v, dtype=np.int64).reshape(-1)] if v is not None else []


def _check_type(op: str, x: torch.Tensor, allowed: tuple[torch.dtype, ...]) -> None:
    if x.dtype not in allowed:
        raise ArgumentTypeError(f"{op}: input type {x.dtype} is not supported (supported: "
                                f"{', '.join(str(d)[6:] for d in allowed)})")


def resolve_axes(op: str, layout: str, ndim: int, axes: list[int] | None, names: str | None,
                 default: str = "all") -> list[int]:
    """Axis indices from `axis_names` (looked up in the layout) or `axes` (negative from the
    back); without either: every axis ("all") or every axis but channels ("no_channels")."""
    if names:
        out = []
        for ch in names:
            if ch not in layout:
                raise ArgumentError(f"{op}: axis {ch!r} of `axis_names` is not in the input layout {layout!r}")
            out.append(layout.index(ch))
        return out
    if axes:
        out = []
        for a in axes:
            if not -ndim <= a < ndim:
                raise ArgumentError(f"{op}: `axes` {list(axes)} holds {a}, out of range for a {ndim}-dimensional "
                                    f"input (valid: {-ndim} to {ndim - 1})")
            out.append(a % ndim)
        return out
    if default == "no_channels":
        return [d for d in range(ndim) if d >= len(layout) or layout[d] != "C"]
    return list(range(ndim))


class Erase(Operator):
    sample_wise = False

    def setup(self) -> None:
        if self.args.get("normalized") is not None and (self.args.get("normalized_anchor") is not None
                                                         or self.args.get("normalized_shape") is not None):
            raise ArgumentError(f"{self.name}: `normalized` cannot be combined with `normalized_anchor` or "
                                f"`normalized_shape`")

    def _flag(self, name: str) -> bool:
        if self.args.get("normalized") is not None:
            return bool(self.args["normalized"])
        return bool(self.args.get(name) or False)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        layout = tl.layout()
        cdim = layout.find("C")
        plans = []
        fills: dict[tuple[Any, ...], torch.Tensor] = {}
        name = self.name  # looked up once: a property
        na, ns = self._flag("normalized_anchor"), self._flag("normalized_shape")
        centered = self.args["centered_anchor"]
        for i, x in enumerate(tl):
            _check_type(name, x, _ERASE_TYPES)
            axes = resolve_axes(name, layout, x.dim(), self.args.get("axes"), self.args.get("axis_names"),
                                "no_channels")
            anchor = _floats(args["anchor"][i] if "anchor" in args else self.args.get("anchor"))
            shape = _floats(args["shape"][i] if "shape" in args else self.args.get("shape"))
            if not anchor and shape:
                anchor = [0.0] * len(shape)
            if len(anchor) != len(shape):
                raise ArgumentError(f"{self.name}: `anchor` and `shape` must have the same number of values, got "
                                    f"{len(anchor)} and {len(shape)}")
            if shape and len(shape) % len(axes):
                raise ArgumentError(f"{self.name}: `anchor`/`shape` have {len(shape)} values, not a multiple of "
                                    f"the {len(axes)} axes they describe")
            fill_raw = _floats(args["fill_value"][i] if "fill_value" in args else self.args.get("fill_value"))
            fill_raw = fill_raw or [0.0]
            if len(fill_raw) > 1:
                if cdim < 0:
                    raise ArgumentError(f"{self.name}: a multi-channel `fill_value` needs a 'C' in the input "
                                        f"layout, got {layout!r}")
                if len(fill_raw) != x.shape[cdim]:
                    raise ArgumentError(f"{self.name}: `fill_value` has {len(fill_raw)} values but the input has "
                                        f"{x.shape[cdim]} channels")
            regions = []
            f32 = np.float32
            for r in range(len(shape) // len(axes) if axes else 0):
                start, end = [0] * x.dim(), list(x.shape)
                for j, axis in enumerate(axes):
                    k = r * len(axes) + j
                    a = f32(anchor[k]) * f32(x.shape[axis]) if na else f32(anchor[k])
                    s = f32(shape[k]) * f32(x.shape[axis]) if ns else f32(shape[k])
                    if centered:
                        a = f32(a - s / f32(2))
                    start[axis] = int(a)  # truncation toward zero, as DALI
                    end[axis] = int(f32(a + s))
                regions.append((start, end))
            key = (tuple(fill_raw), x.dtype)  # one conversion per distinct fill (usually one a batch)
            if key not in fills:
                fills[key] = R.c_cast(fill_raw, x.dtype)
            plans.append((regions, fills[key]))
        if batching.batched(self, tl):
            flat_out = self.erase_flat(tl.samples, layout, plans)
            if flat_out is not None:
                return [TensorList(flat_out, layout)]
        # the copies on the pool's threads (single-threaded torch): on the caller's thread each went
        # through torch's intra-op team, which stalls for milliseconds on a busy machine
        return [TensorList(ctx.map(lambda i: R.erase(tl[i], plans[i][0], plans[i][1], cdim) if plans[i][0]
                                   else tl[i], len(tl)), layout)]

    def erase_flat(self, samples: list[torch.Tensor], layout: str,
                   plans: list[tuple[list[tuple[list[int], list[int]]], torch.Tensor]]) -> list[torch.Tensor] | None:
        """HW/HWC images of different sizes whose regions span every channel: one masked select
        over the batch held flat (`functional.ragged`); None for other batches."""
        if layout not in ("HW", "HWC") or len({x.dtype for x in samples}) != 1 \
                or any(x.dim() != len(layout) for x in samples):
            return None
        if layout == "HWC":
            if len({int(x.shape[2]) for x in samples}) != 1:
                return None
            for x, (regions, _) in zip(samples, plans):
                if any(a[2] > 0 or b[2] < x.shape[2] for a, b in regions):
                    return None  # a region within the channels
        flat = Flat(samples, inner=1 if layout == "HWC" else 0)
        c = flat.row
        fills = [f.reshape(-1).expand(c) if f.numel() == 1 else f.reshape(-1) for _, f in plans]
        if any(int(f.numel()) != c for f in fills):
            return None
        ids, yy, xx = FR.positions([(int(s[0]), int(s[1])) for s in flat.shapes], flat.device)
        inside = None
        for r in range(max(len(p[0]) for p in plans)):
            boxes = [(regions[r][0][0], regions[r][1][0], regions[r][0][1], regions[r][1][1])
                     if r < len(regions) else (0, 0, 0, 0) for regions, _ in plans]  # (y0, y1, x0, x1)
            y0, y1, x0, x1 = FR.columns(boxes, ids)
            hit = (yy >= y0) & (yy < y1) & (xx >= x0) & (xx < x1)
            inside = hit if inside is None else inside | hit
        items = flat.items()
        if inside is None:
            return flat.split(items.clone())
        table = torch.stack(fills).to(flat.device, non_blocking=True)
        fill = table[0] if all(torch.equal(f, fills[0]) for f in fills) else table.index_select(0, ids)
        return flat.split(torch.where(inside[:, None], fill, items))


class Pad(Operator):
    sample_wise = False

    def setup(self) -> None:
        if self.args.get("axes") and self.args.get("axis_names"):
            raise ArgumentError(f"{self.name}: `axes` and `axis_names` are mutually exclusive")
        if "axes" in self.node.arg_inputs and self.args.get("axis_names"):
            raise ArgumentError(f"{self.name}: `axes` and `axis_names` are mutually exclusive")

    def _per_axis(self, name: str, v: Any, n: int) -> list[int] | None:
        vals = _ints(v)
        if not vals:
            return None
        if len(vals) == 1:
            return vals * n
        if len(vals) != n:
            raise ArgumentError(f"{self.name}: `{name}` must have 1 or {n} values (one per padded axis), got "
                                f"{len(vals)}")
        return vals

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        layout = tl.layout()
        if not len(tl):
            return [tl]
        ndim = tl[0].dim()
        if any(x.dim() != ndim for x in tl):
            raise ArgumentError(f"{self.name}: all samples must have the same number of dimensions")
        biggest = [max(int(x.shape[d]) for x in tl) for d in range(ndim)]
        out = []
        for i, x in enumerate(tl):
            _check_type(self.name, x, _PAD_TYPES)
            axes_v = args["axes"][i] if "axes" in args else self.args.get("axes")
            axes = resolve_axes(self.name, layout, ndim, _ints(axes_v), self.args.get("axis_names"))
            shape = self._per_axis("shape", args["shape"][i] if "shape" in args else self.args.get("shape"),
                                   len(axes))
            align = self._per_axis("align", args["align"][i] if "align" in args else self.args.get("align"),
                                   len(axes))
            if align is not None and any(a <= 0 for a in align):
                raise ArgumentError(f"{self.name}: `align` {align} holds a value that is not positive")
            target = list(x.shape)
            for j, d in enumerate(axes):
                want = biggest[d] if shape is None or shape[j] <= 0 else max(int(x.shape[d]), shape[j])
                if align is not None:
                    want = -(-want // align[j]) * align[j]
                target[d] = want
            fill_v = args["fill_value"][i] if "fill_value" in args else self.args.get("fill_value")
            fill = R.c_cast(_floats(fill_v) or [0.0], x.dtype)
            if len(_floats(fill_v)) > 1:
                raise ArgumentError(f"{self.name}: `fill_value` must be one value, got {fill_v!r}")
            out.append(R.pad(x, target, fill))
        return [TensorList(out, layout)]


class Paste(Operator):
    sample_wise = False

    def setup(self) -> None:
        c = self.args["n_channels"]
        if not 0 < c <= 1024:
            raise ArgumentError(f"{self.name}: `n_channels` must be in [1, 1024], got {c}")
        fill = self.args["fill_value"]
        fill = [fill] if isinstance(fill, int) else list(fill)
        if len(fill) == 1:
            fill = fill * c
        if len(fill) != c:
            raise ArgumentError(f"{self.name}: `fill_value` must have 1 or n_channels={c} values, got {len(fill)}")
        self.fill = R.c_cast(fill, torch.uint8)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        if tl.layout() not in ("HWC", ""):
            raise ArgumentError(f"{self.name}: input layout must be HWC, got {tl.layout()!r}")
        out: list[tuple[int, int, int, int]] = []  # (h, w, y, x) per sample
        for i, x in enumerate(tl):
            if x.dtype != torch.uint8:
                raise ArgumentTypeError(f"{self.name}: only uint8 images are supported, got {x.dtype}")
            if x.dim() != 3:
                raise refuse_input(self.node, ArgumentError(
                    f"{self.name}: sample {i} has {x.dim()} dimensions (shape {tuple(x.shape)}); "
                    f"{self.name} takes 3-dimensional HWC images"))
            if x.shape[2] != self.args["n_channels"]:
                raise ArgumentError(f"{self.name}: expected HWC images with n_channels={self.args['n_channels']} "
                                    f"channels, got shape {tuple(x.shape)}")
            get = lambda k: float(args[k][i] if k in args else self.args[k])  # noqa: E731
            ratio, px, py = get("ratio"), get("paste_x"), get("paste_y")
            if not ratio >= 1:
                raise ArgumentError(f"{self.name}: `ratio` must be >= 1, got {ratio}")
            for k, v in (("paste_x", px), ("paste_y", py)):
                if not 0 <= v <= 1:
                    raise ArgumentError(f"{self.name}: `{k}` must be in [0, 1], got {v}")
            canvas = get("min_canvas_size")
            if not canvas > -1:  # DALI 2.4 truncates it to an integer first: -0.5 passes, -1 does not
                raise ArgumentError(f"{self.name}: `min_canvas_size` must not be negative, got {canvas}")
            out.append(R.paste_geometry(int(x.shape[0]), int(x.shape[1]), ratio, canvas, py, px))
        # the canvases on the pool's threads (single-threaded torch), as erase's copies
        return [TensorList(ctx.map(lambda i: R.paste(tl[i], *out[i], self.fill), len(tl)), "HWC")]


register(OpSchema(
    name="erase", impl=Erase,
    doc="Sets regions (anchor + shape over `axis_names`/`axes`, several regions back to back) to "
        "`fill_value`; coordinates absolute or normalised, truncated to integers as in DALI.",
    args=(
        Arg("anchor", "float_list", None, "start of each region, per listed axis", tensor=True),
        Arg("shape", "float_list", None, "extent of each region, per listed axis", tensor=True),
        Arg("axes", "int_list", None, "axes the coordinates refer to (DALI's default when neither this "
            "nor axis_names is given: every axis but 'C')"),
        Arg("axis_names", "layout", None, "axes by layout letters, e.g. 'HW' (wins over axes)"),
        Arg("centered_anchor", "bool", False, "anchors are region centres"),
        Arg("fill_value", "float_list", None, "fill, one value or one per channel (default 0)", tensor=True),
        Arg("normalized", "bool", None, "anchor and shape are fractions of the extent"),
        Arg("normalized_anchor", "bool", None, "anchor is a fraction of the extent (default False)"),
        Arg("normalized_shape", "bool", None, "shape is a fraction of the extent (default False)"),
    ),
))
register(OpSchema(
    name="pad", impl=Pad,
    doc="Pads each sample at the end of the chosen axes to the batch's largest extent, or to `shape`, "
        "rounded up to `align`.",
    args=(
        Arg("fill_value", "float", 0.0, "padding value", tensor=True),
        Arg("axes", "int_list", None, "axes to pad (negative from the back; default: all)", tensor=True),
        Arg("axis_names", "layout", None, "axes to pad by layout letters"),
        Arg("shape", "int_list", None, "minimum extent per padded axis (<= 0: the batch's largest)", tensor=True),
        Arg("align", "int_list", None, "extents become multiples of these", tensor=True),
    ),
))
register(OpSchema(
    name="paste", impl=Paste,
    doc="Places uint8 HWC images on a canvas `ratio` times larger (at least `min_canvas_size`), at "
        "relative position (paste_y, paste_x), filled with `fill_value`.",
    args=(
        Arg("ratio", "float", doc="canvas size / input size, >= 1", tensor=True),
        Arg("n_channels", "int", 3, "number of channels"),
        Arg("fill_value", "ints", doc="canvas colour, one value per channel"),
        Arg("paste_x", "float", 0.5, "horizontal position, 0 left .. 1 right", tensor=True),
        Arg("paste_y", "float", 0.5, "vertical position, 0 top .. 1 bottom", tensor=True),
        Arg("min_canvas_size", "float", 0.0, "minimum canvas extent after scaling", tensor=True),
    ),
))
