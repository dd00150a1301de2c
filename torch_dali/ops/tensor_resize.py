"""tensor_resize (and its legacy name experimental.tensor_resize): resampling of any axes of a
tensor with DALI's filters and size rules (functional/tensor_resize.py); and
fast_resize_crop_mirror, DALI 2.4's deprecated name of resize_crop_mirror (same arguments, same
kernel). A dense batch with one plan for every sample is resampled in one call (the batch axis
rides along as an axis that is not resized)."""
from __future__ import annotations

import dataclasses
import functools

from typing import Any

import torch

from .. import types
from ..errors import ArgumentError
from ..functional import tensor_resize as K
from ..functional.resize import resize
from ..functional.tensor_axes import reduced_axes
from ..tensor_list import TensorList
from . import _dispatch
from ._operator import BatchContext
from ._registry import lookup, register
from ._schema import Arg, OpSchema, one_of, positive
from .geometry import interp_name
from .resize_crop_mirror import ResizeCropMirror
from .tensor_axes import BatchShapeOp

_RESIZE = functools.partial(_dispatch.call, resize)  # resize through its registered stand-ins

_PLAN_ARGS = ("sizes", "scales", "roi_start", "roi_end", "alignment")


def _floats(v: Any) -> list[float] | None:
    if v is None:
        return None
    return [float(v)] if isinstance(v, (int, float)) else [float(a) for a in v]


class TensorResize(BatchShapeOp):
    def setup(self) -> None:
        given = lambda k: self.args.get(k) is not None or k in self.node.arg_inputs  # noqa: E731
        if given("sizes") == given("scales"):
            raise ArgumentError(f"{self.name}: give one of `sizes` or `scales`")
        if given("roi_start") != given("roi_end"):
            raise ArgumentError(f"{self.name}: `roi_start` and `roi_end` must be given together")
        if given("scales") and self.args["mode"] in ("not_larger", "not_smaller"):
            raise ArgumentError(f"{self.name}: `scales` cannot be used with mode {self.args['mode']!r}")
        if self.args.get("axes") is not None and self.args.get("axis_names") is not None:
            raise ArgumentError(f"{self.name}: `axes` and `axis_names` are mutually exclusive; give one")
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)

    def output_layout(self, index: int) -> str | None:
        return None  # the input's

    def layout_known(self, index: int) -> bool:
        return True

    def sample_plan(self, shape: list[int], layout: str, args: dict[str, list[Any]], i: int) -> K.Plan:
        a = self.args
        if a.get("axis_names") is not None:
            axes = reduced_axes(self.name, None, a["axis_names"], layout, len(shape))
            axes = [layout.index(c) for c in a["axis_names"]]  # in the names' order
        elif a.get("axes") is not None:
            listed = [a["axes"]] if isinstance(a["axes"], int) else list(a["axes"])
            axes = reduced_axes(self.name, listed, None, layout, len(shape))
            axes = [int(x) + len(shape) if int(x) < 0 else int(x) for x in listed]
        else:
            axes = list(range(len(shape)))
        get = {k: _floats(self.get(args, k, i)) for k in _PLAN_ARGS}
        roi = (get["roi_start"], get["roi_end"]) if get["roi_start"] is not None else None
        return K.plan(self.name, shape, axes, get["sizes"], get["scales"], roi, bool(a["roi_relative"]), a["mode"],
                      _floats(a.get("max_size")), a["size_rounding"], bool(a["subpixel_scale"]),
                      get["alignment"] or [0.5])

    def filters(self, args: dict[str, list[Any]], i: int) -> tuple[str, str | None, str | None]:
        return (interp_name(self.get(args, "interp_type", i)) or "linear",
                interp_name(self.get(args, "min_filter", i)), interp_name(self.get(args, "mag_filter", i)))

    def out_dtype(self, dt: torch.dtype) -> torch.dtype:
        if self.dtype is None or self.dtype == dt:
            return dt
        if self.dtype != torch.float32:
            raise ArgumentError(f"{self.name}: the output type must be the input's ({dt}) or float, got {self.dtype}")
        return self.dtype

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        n = len(tl)
        layout = tl.layout()
        aa = bool(self.args["antialias"])
        if not n:
            return [TensorList([], layout)]
        shapes = [list(tl[i].shape) for i in range(n)]
        plans = [self.sample_plan(shapes[i], layout, args, i) for i in range(n)]
        block = K.spatial_block(shapes, plans)  # DALI picks the resampled axes for the whole batch
        filt = [self.filters(args, i) for i in range(n)]
        if tl.dense is not None and all(p == plans[0] for p in plans) and all(f == filt[0] for f in filt):
            x = tl.dense
            return [TensorList(K.resample(x, plans[0], *filt[0], aa, self.out_dtype(x.dtype), block, batch=1,
                                          resize_fn=_RESIZE), layout)]

        def one(i: int) -> torch.Tensor:
            x = tl[i]
            return K.resample(x, plans[i], *filt[i], aa, self.out_dtype(x.dtype), block, resize_fn=_RESIZE)
        return [TensorList(ctx.map(one, n), layout)]


class FastResizeCropMirror(ResizeCropMirror):
    """resize_crop_mirror under DALI's deprecated name (its calls warn: ops/legacy.py)."""


_ARGS = (
    Arg("sizes", "float_list", None, "output sizes of the resized axes", tensor=True),
    Arg("scales", "float_list", None, "scale factors of the resized axes (sizes rounded by size_rounding)",
        tensor=True),
    Arg("axes", "ints", None, "the axes sizes/scales/max_size/roi refer to (default: all)"),
    Arg("axis_names", "layout", None, "the axes sizes/scales/... refer to, by layout name"),
    Arg("max_size", "floats", None, "upper limit of the output size (one value, or one per axis)"),
    Arg("mode", "str", "default", "how missing sizes are filled and sizes met",
        check=one_of("default", "stretch", "not_larger", "not_smaller")),
    Arg("size_rounding", "str", "round", "how sizes from scales are rounded",
        check=one_of("round", "truncate", "ceil")),
    Arg("subpixel_scale", "bool", True, "keep fractional scales (the region read moves instead)"),
    Arg("alignment", "float_list", [0.5], "which point of the region stays in place when a size is rounded (0: "
        "start, 1: end)", tensor=True),
    Arg("roi_start", "float_list", None, "start of the region of interest, per resized axis", tensor=True),
    Arg("roi_end", "float_list", None, "end of the region of interest (before roi_start: flipped)", tensor=True),
    Arg("roi_relative", "bool", False, "roi coordinates relative to the input size"),
    Arg("interp_type", "interp_type", types.INTERP_LINEAR, "resampling filter", tensor=True),
    Arg("min_filter", "interp_type", None, "filter for shrinking axes (default: interp_type)", tensor=True),
    Arg("mag_filter", "interp_type", None, "filter for growing axes (default: interp_type)", tensor=True),
    Arg("antialias", "bool", True, "widen the filter when downscaling"),
    Arg("dtype", "dtype", None, "output type: the input's (default) or FLOAT"),
    Arg("minibatch_size", "int", 32, "accepted for compatibility; unused", check=positive),
    Arg("temp_buffer_hint", "int", 0, "accepted for compatibility; unused"),
)
for _name in ("tensor_resize", "experimental.tensor_resize"):  # DALI keeps the experimental name as an alias
    register(OpSchema(name=_name, impl=TensorResize, args=_ARGS,
                      doc="Resizes any axes of a tensor (sizes or scales, modes, region of interest) with "
                          "resize's filters."))
_RCM = lookup("resize_crop_mirror")
# DALI 2.4's fast variant does not antialias by default (measured: equal to antialias=False)
_FAST_ARGS = tuple(dataclasses.replace(a, default=False) if a.name == "antialias" else a for a in _RCM.args)
register(OpSchema(name="fast_resize_crop_mirror", impl=FastResizeCropMirror, args=_FAST_ARGS,
                  output_layout=_RCM.output_layout, class_name_override="FastResizeCropMirror",
                  doc="Deprecated name of resize_crop_mirror (same arguments and results)."))
