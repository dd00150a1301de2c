"""Geometry ops: resize and crop (CPU or CUDA tensors), and ImageOp, the base of the image ops
(flip, random_resized_crop) that take their layout from the input.

Images may be HWC, CHW, HW or sequences of them (FHWC, FCHW, CFHW; flip also volumes); the
layout comes from the input (see `layouts`), an input without one is taken as DALI does (HWC for 3
dimensions), and the output has the input's layout."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError
from ..functional import batch_sizes as BS
from ..functional import crop as C
from ..functional import regions as R
from ..functional import resize_plan as RP
from ..functional.resize import resize
from ..functional.resize3d import resize_volume, volume_axes
from ..tensor_list import TensorList
from . import _dispatch
from . import layouts as L
from ._operator import BatchContext, Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, length, non_negative, one_of
from .geometry_args import CROP_ARGS, filter_args  # noqa: F401 - also imported from here

_RESIZE_MODES = ("default", "stretch", "not_larger", "not_smaller")
_RESIZE_TYPES = (torch.uint8, torch.int16, torch.uint16, torch.float32)


def _enum_value(v: Any) -> Any:
    return types.enum_key(v)


def interp_name(v: Any) -> str | None:
    """A DALI interpolation type (enum, name or int code) as a filter name: "linear", "nn"..."""
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):  # per-sample inputs arrive as DALI's codes
        order = ["nn", "linear", "cubic", "lanczos3", "triangular", "gaussian"]
        return order[v] if 0 <= v < len(order) else "linear"
    return _enum_value(v)


def output_dtype(v: Any) -> torch.dtype | None:
    return None if v is None else types.to_torch_dtype(v)


class ImageOp(Operator):
    """Shared helpers: per-sample argument lookup and the input's layout."""

    strided_input_ok = True  # torch ops and our kernels read strided rows
    layouts: tuple[str, ...] = L.RESIZE
    layout_defaults: dict[int, str] = L.DEFAULT
    in_layout = ""  # the input's layout, known at build (connect)
    _resolved = ""  # the layout the last sample was processed as

    def __init__(self, node: Any, device: torch.device) -> None:
        self._layout_memo: dict[tuple[str, int], str] = {}  # (input layout, rank) -> layout
        super().__init__(node, device)

    def connect(self, plan: Any) -> None:
        if self.node.inputs:
            self.in_layout, known = L.static_layout(plan, self.node.inputs[0])
            if not known:  # learnt from each batch: run as a batch op, which sees the batch's layout
                self.sample_wise = False
            elif self.in_layout:  # a declared layout the op cannot take is refused at build
                L.check_allowed(self.name, self.in_layout, self.layouts)

    def note_layout(self, inputs: list[TensorList]) -> None:
        """The batch's own layout, where it has one (data fed with `feed_input(..., layout=)`)."""
        if inputs and inputs[0].layout():
            self.in_layout = inputs[0].layout()

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        """Sample by sample on the pool's threads, with the batch's layout."""
        self.note_layout(inputs)
        n = len(inputs[0]) if inputs else ctx.batch_size
        outs = ctx.map(lambda i: self.run_sample(ctx.sample(i), [x[i] for x in inputs],
                                                 {k: v[i] for k, v in args.items()}), n)
        return [TensorList(outs, self.output_layout(0))]

    def layout_of(self, x: torch.Tensor) -> str:
        key = (self.in_layout, x.dim())
        lay = self._layout_memo.get(key)
        if lay is None:  # resolved once per (layout, rank): this runs for every sample
            try:
                lay = L.resolve(self.name, self.in_layout, x.dim(), self.layouts, self.layout_defaults)
            except ArgumentError as e:
                raise L.refuse_input(self.node, e) from None
            self._layout_memo[key] = lay
        self._resolved = lay
        return lay

    def hwc_input(self) -> bool:
        """Whether the input is an HWC image (or has no layout: taken as one): the fast paths' case."""
        return self.in_layout in ("", "HWC")

    def output_layout(self, index: int) -> str:
        return self._resolved or self.in_layout

    def get(self, args: dict[str, Any], name: str) -> Any:
        return args[name] if name in args else self.args[name]

    def given(self, name: str) -> bool:
        """Whether the user set `name` (a per-sample input, or a constant other than "unset")."""
        if name in self.node.arg_inputs:
            return True
        v = self.args.get(name)
        return v is not None and v != 0 and v != []

    def set_at_all(self, name: str) -> bool:
        """Whether the user passed `name` at all, even as its default value."""
        return name in self.node.arg_inputs or name in self.node.explicit

    def check_image(self, x: torch.Tensor) -> None:
        if x.dim() not in (2, 3):
            raise ArgumentError(f"{self.name}: expected an HWC image (2 or 3 dimensions), got shape "
                                f"{tuple(x.shape)}")

    def canonical(self, x: torch.Tensor) -> L.Canonical | None:
        """None for an HWC (or HW) image, which the kernels take as it is; else the (H, W, K) view."""
        lay = self.layout_of(x)
        return None if lay in ("HWC", "HW") else L.Canonical(x, lay)


# -- resize -----------------------------------------------------------------------------------------

_VOLUMES = ("DHWC", "CDHW", "FDHWC", "FCDHW")


class Resize(ImageOp):
    """Resizes images and volumes (DHWC, CDHW and sequences of them: three spatial axes, sized by
    `resize_z` too); sizes and windows may be per-sample (`resize_shorter=fn.random.uniform(...)`).
    The output size and the source window of each axis come from `resize_plan` (DALI's rules)."""

    layouts = L.RESIZE + _VOLUMES

    def setup(self) -> None:
        ways = [self.given("resize_x") or self.given("resize_y") or self.given("resize_z"), self.given("size"),
                self.given("resize_shorter"), self.given("resize_longer")]
        zeros = any(self.set_at_all(k) for k in ("resize_x", "resize_y", "resize_z", "resize_shorter", "resize_longer"))
        if sum(ways) != 1 and not (sum(ways) == 0 and zeros):  # DALI 2.4: sizes of 0 keep the image's
            raise ArgumentError(
                f"{self.name}: give exactly one way of sizing: `resize_x`/`resize_y`, `size`, "
                f"`resize_shorter` or `resize_longer`, got {sum(ways)}")
        if (ways[2] or ways[3]) and self.args["mode"] != "default":
            raise ArgumentError(f"{self.name}: `mode` cannot be combined with `resize_shorter` or "
                                f"`resize_longer`, got mode={self.args['mode']!r}")
        if self.defined("roi_start") != self.defined("roi_end"):
            raise ArgumentError(f"{self.name}: `roi_start` and `roi_end` must be given together")
        self.has_roi = self.defined("roi_start")
        for name in ("size", "roi_start", "roi_end", "max_size"):
            v = self.args.get(name)
            if name not in self.node.arg_inputs and isinstance(v, list) and len(v) not in (1, 2, 3):
                raise ArgumentError(f"{self.name}: `{name}` must have 1 value or one per spatial axis (2, or "
                                    f"3 for volumes), got {len(v)}")
        self.dtype = output_dtype(self.args["dtype"])

    def defined(self, name: str) -> bool:
        """Whether `name` was given at all (a window starting at 0 is a window)."""
        return name in self.node.arg_inputs or self.args.get(name) is not None

    def shape_arg(self, args: dict[str, Any], name: str) -> Any:
        """A size-like argument (`size`, `roi_start`, `roi_end`): a per-sample one must give both axes."""
        v = self.get(args, name)
        if name in self.node.arg_inputs and len(v if isinstance(v, list) else [v]) not in (2, 3):
            raise ArgumentError(f"{self.name}: each sample's `{name}` must have one value per spatial axis, "
                                f"got {v!r}")
        return v

    def check_types(self, x: torch.Tensor) -> None:
        """DALI resizes uint8, int16, uint16 and float32 images, to their own type or to float32."""
        if x.dtype not in _RESIZE_TYPES:
            raise ArgumentError(f"{self.name}: the input type {x.dtype} is not supported; it takes "
                                "uint8, int16, uint16 and float32")
        if self.dtype not in (None, x.dtype, torch.float32):
            raise ArgumentError(f"{self.name}: `dtype` must be the input's type ({x.dtype}) or float, "
                                f"got {self.dtype}")

    def plan(self, hw: tuple[int, ...], args: dict[str, Any]) -> tuple[tuple[int, float, float], ...]:
        """[(output extent, window start, window end)] for the spatial axes of one image ((height,
        width)) or volume ((depth, height, width))."""
        sizing = {k: float(self.get(args, k) or 0.0)
                  for k in ("resize_x", "resize_y", "resize_z", "resize_shorter", "resize_longer")}
        sizing["size"] = self.shape_arg(args, "size") if self.given("size") else None
        roi = (self.shape_arg(args, "roi_start"), self.shape_arg(args, "roi_end")) if self.has_roi else None
        try:
            return RP.one(hw, sizing, self.args["mode"], self.args["max_size"], roi, bool(self.args["roi_relative"]),
                          bool(self.args["subpixel_scale"]))
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None

    def target_sizes(self, in_hw: np.ndarray, args: dict[str, list[Any]]) -> np.ndarray | None:
        """Every sample's output (height, width) in one NumPy pass, when every sample maps its whole
        image onto it; None when a sample reads another window (a region of interest, a flip, a
        fractional size kept exactly by `subpixel_scale`)."""
        plan = self.target_plan(in_hw, args)
        return plan[0] if plan is not None and plan[1] is None else None

    def target_plan(self, in_hw: np.ndarray, args: dict[str, list[Any]]) -> tuple[np.ndarray, np.ndarray | None] | None:
        """What the batched kernels compute, in one NumPy pass: (every sample's output (height, width),
        None when each maps its whole image onto it, else each sample's source window (y, x, h, w) as
        the spec reads it, float32); None when a sample reads a region of interest or a flipped
        window (the spec does those)."""
        if self.has_roi:
            return None
        n = len(in_hw)
        vals = {k: (np.asarray(args[k], dtype=np.float64) if k in args else self.args[k] or 0.0)
                for k in ("resize_x", "resize_y", "resize_shorter", "resize_longer")}
        size: Any = None
        if self.given("size"):
            size = np.asarray(args["size"], dtype=np.float64) if "size" in args else self.args["size"]
            if "size" in args and (size.ndim != 2 or size.shape[1] != 2):
                return None  # the spec reports it
        req, mode = RP.requested(n, 2, size=size, mode=self.args["mode"], **vals)
        out, lo, hi = RP.plan(in_hw, req, mode, self.args["max_size"], subpixel_scale=bool(self.args["subpixel_scale"]))
        if not (lo != 0).any() and not (hi != np.asarray(in_hw, dtype=np.float64)).any():
            return out, None
        if (hi <= lo).any():
            return None  # a flip
        # as the spec's axes: origin and span rounded to float32 (span from the rounded ends)
        F = np.float32
        lo32, hi32 = lo.astype(F), hi.astype(F)
        return out, np.concatenate([lo32, (hi32 - lo32).astype(F)], axis=1)

    def run_volume(self, x: torch.Tensor, lay: str, args: dict[str, Any]) -> torch.Tensor:
        """A volume (its layout has D): seen as (D, H, W, K), frames and channels merged into K."""
        self.check_types(x)
        spatial, rest, order = volume_axes(lay)
        dhw = tuple(int(x.shape[i]) for i in spatial)
        plan = self.plan(dhw, args)
        if 0 in dhw:  # an empty volume stays empty (DALI 2.4: the planned extents, 0 where the input's is 0)
            out = [o if n else 0 for (o, _, _), n in zip(plan, dhw)] + [int(x.shape[i]) for i in rest]
            y = x.new_empty(out, dtype=self.dtype or x.dtype).permute([order.index(i) for i in range(len(lay))])
            return (y, torch.tensor(dhw, dtype=torch.int32)) if self.args.get("save_attrs") else y.contiguous()
        v = x.permute(order).reshape(*dhw, -1)
        window = None if all((lo, hi) == (0.0, n) for (_, lo, hi), n in zip(plan, dhw)) else \
            [(lo, hi) for _, lo, hi in plan]
        y = resize_volume(v, tuple(o for o, _, _ in plan), interp_name(self.get(args, "interp_type")),
                          self.args["antialias"], interp_name(self.get(args, "min_filter")),
                          interp_name(self.get(args, "mag_filter")), self.dtype, window=window)
        y = y.reshape(*y.shape[:3], *[int(x.shape[i]) for i in rest])
        y = y.permute([order.index(i) for i in range(len(lay))]).contiguous()
        if self.args.get("save_attrs"):
            return y, torch.tensor(dhw, dtype=torch.int32, device=y.device)
        return y

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        lay = self.layout_of(inputs[0])
        if "D" in lay:
            return self.run_volume(inputs[0], lay, args)
        canon = self.canonical(inputs[0])
        self.check_types(inputs[0])
        img = inputs[0] if canon is None else canon.hwk
        hw = (int(img.shape[0]), int(img.shape[1]))
        (oh, y0, y1), (ow, x0, x1) = self.plan(hw, args)
        if 0 in hw:  # an empty image stays empty (DALI 2.4: the planned extents, 0 where the input's is 0)
            y = img.new_empty((oh if hw[0] else 0, ow if hw[1] else 0, *img.shape[2:]), dtype=self.dtype or img.dtype)
            y = y if canon is None else canon.back(y)
            return (y, torch.tensor(hw, dtype=torch.int32)) if self.args.get("save_attrs") else y
        window = None if (y0, y1, x0, x1) == (0.0, hw[0], 0.0, hw[1]) else ((y0, y1), (x0, x1))
        # DALI rounds by its memory rows: C values interleaved for channel-last data, 1 for planes
        rows = None if canon is None else (canon.channels if canon.layout.endswith("C") else 1)
        y = _dispatch.call(resize, img, (oh, ow), interp_name(self.get(args, "interp_type")), self.args["antialias"],
                           interp_name(self.get(args, "min_filter")), interp_name(self.get(args, "mag_filter")),
                           self.dtype, window=window, row_channels=rows)
        y = y if canon is None else canon.back(y)
        if self.args.get("save_attrs"):  # DALI's testing output: the input's (height, width)
            return y, torch.tensor(hw, dtype=torch.int32, device=y.device)
        return y

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        if not self.args.get("save_attrs"):
            return super().run_batch(ctx, inputs, args)
        self.note_layout(inputs)
        outs = ctx.map(lambda i: self.run_sample(ctx.sample(i), [x[i] for x in inputs],
                                                 {k: v[i] for k, v in args.items()}), len(inputs[0]))
        return [TensorList([o[0] for o in outs], self.output_layout(0)), TensorList([o[1] for o in outs], "")]

    def output_layout(self, index: int) -> str:
        return "" if index == 1 else super().output_layout(index)

    def fuse(self, consumer: Operator) -> Any:
        """resize -> crop_mirror_normalize on CUDA runs as one op pair (ops/fused.py), which has a
        fused kernel."""
        from .fused import fuse_resize
        if not self.hwc_input() or not consumer.hwc_input() or self.args.get("save_attrs"):
            return None  # the fused kernel reads HWC images
        return fuse_resize(self, consumer)


# -- crop -------------------------------------------------------------------------------------------

class Crop(ImageOp):
    """Cuts a window of `crop` = (height, width) at relative position (crop_pos_y, crop_pos_x)."""

    layouts = L.CROP
    layout_defaults = L.DEFAULT_CROP

    def setup(self) -> None:
        # set at all (0 included: that dimension is kept whole), as DALI checks it
        if self.set_at_all("crop_h") != self.set_at_all("crop_w"):
            raise ArgumentError(f"{self.name}: `crop_h` and `crop_w` must be given together")
        if self.given("crop") and self.given("crop_h"):
            raise ArgumentError(f"{self.name}: give either `crop` or `crop_h`/`crop_w`, not both")
        crop = self.args.get("crop")
        if crop is not None and not isinstance(crop, (int, float)) and len(crop) not in (2, 3):
            raise ArgumentError(f"{self.name}: `crop` must be (height, width) or (depth, height, width), got {crop!r}")
        self.policy = _enum_value(self.args["out_of_bounds_policy"])
        self.dtype = output_dtype(self.args["dtype"])
        fill = self.args["fill_values"]
        self.fill_values = [float(fill)] if isinstance(fill, (int, float)) else list(fill or [0.0])

    def window(self, img: torch.Tensor, args: dict[str, Any]) -> C.Window:
        crop = self.get(args, "crop")
        if crop is not None:
            crop = [crop, crop] if isinstance(crop, (int, float)) else list(crop)
            if len(crop) not in (2, 3):
                raise ArgumentError(f"{self.name}: `crop` must be (height, width) or (depth, height, width), got "
                                    f"{crop!r}")
            ch, cw = crop[-2:]
        else:
            ch, cw = self.get(args, "crop_h"), self.get(args, "crop_w")
        in_h, in_w = int(img.shape[0]), int(img.shape[1])
        try:
            win = C.crop_window(in_h, in_w, ch, cw, float(self.get(args, "crop_pos_y")),
                                float(self.get(args, "crop_pos_x")), self.args["rounding"])
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None
        return C.apply_policy(win, in_h, in_w, self.policy)

    def windows_array(self, in_hw: np.ndarray, args: dict[str, list[Any]]) -> np.ndarray | None:
        """Every sample's window (n, 4) = (y, x, h, w) in one NumPy pass, before the out-of-bounds
        policy (the same as `window` for windows inside their images); None when a position is
        outside [0, 1] (the per-sample path reports it)."""
        n = len(in_hw)
        if "crop" in args or self.args.get("crop") is not None:
            if "crop" in args:  # one value or (h, w) per sample
                crop = np.asarray(args["crop"], dtype=np.float64)
                crop = crop[:, None] if crop.ndim == 1 else crop
            else:
                crop = np.atleast_1d(np.asarray(self.args["crop"], dtype=np.float64))[None, :]
            ch, cw = np.broadcast_to(crop[:, 0], (n,)), np.broadcast_to(crop[:, -1], (n,))
        else:
            ch, cw = (np.asarray(args[k] if k in args else self.args[k] or 0.0, dtype=np.float64)
                      for k in ("crop_h", "crop_w"))
        pos = [np.asarray(args[k] if k in args else self.args[k], dtype=np.float64)
               for k in ("crop_pos_y", "crop_pos_x")]
        if any(((p < 0) | (p > 1) | np.isnan(p)).any() for p in pos) or (ch < 0).any() or (cw < 0).any():
            return None
        return BS.crop_windows(in_hw, ch, cw, pos[0], pos[1], self.args["rounding"])

    def crops_depth(self, lay: str, args: dict[str, Any]) -> bool:
        """Whether a depth window is cut (see crop_depth)."""
        crop = self.get(args, "crop")
        size = list(crop)[0] if isinstance(crop, (list, tuple)) and len(crop) == 3 else self.get(args, "crop_d")
        return bool(size) and ("D" in lay or "F" in lay)

    def crop_depth(self, x: torch.Tensor, lay: str, args: dict[str, Any],
                   fill: list[float] | None = None) -> torch.Tensor:
        """The depth window of a volume (see layouts.crop_depth); `fill` replaces fill_values."""
        crop = self.get(args, "crop")
        size = list(crop)[0] if isinstance(crop, (list, tuple)) and len(crop) == 3 else self.get(args, "crop_d")
        try:
            return L.crop_depth(x, lay, size, float(self.get(args, "crop_pos_z")), self.args["rounding"],
                                self.policy, self.fill_values if fill is None else fill)
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        lay = self.layout_of(inputs[0])
        x = inputs[0]
        if self.dtype is not None and self.policy == "pad" and self.crops_depth(lay, args):
            x = C.clamp_cast(x, self.dtype)  # so that depth padding takes the fill in the output type
        x = self.crop_depth(x, lay, args)
        canon = None if lay in ("HWC", "HW") else L.Canonical(x, lay)
        img = x if canon is None else canon.hwk
        fill = self.fill_values if canon is None else canon.per_k(self.fill_values)
        if self.policy in R.BORDER_POLICIES:  # the window's outside taken from the image (edge, reflect, wrap)
            y, x, h, w = self.window(img, args)
            out = R.slice_window(img, [y, x] + [0] * (img.dim() - 2), [h, w] + list(img.shape[2:]), self.policy)
        else:
            out = C.crop(img, self.window(img, args), fill, self.dtype)
        out = C.clamp_cast(out, self.dtype) if self.dtype is not None else out
        return out if canon is None else canon.back(out)


# -- schemas ----------------------------------------------------------------------------------------

register(OpSchema(
    name="resize", impl=Resize,
    doc="Resizes images (HWC, CHW, HW, FHWC, FCHW, CFHW) and volumes (DHWC, CDHW, FDHWC, FCDHW), "
        "optionally a region of interest of them; output sizes, windows, flips, subpixel scale and "
        "rounding follow DALI.",
    args=(
        Arg("resize_x", "float", 0.0, "output width (negative flips)", tensor=True),
        Arg("resize_y", "float", 0.0, "output height (negative flips)", tensor=True),
        Arg("resize_z", "float", 0.0, "output depth of volumes; 2-D inputs ignore it (as DALI)", tensor=True),
        Arg("resize_shorter", "float", 0.0, "length of the shorter side, aspect kept", tensor=True,
            check=non_negative),
        Arg("resize_longer", "float", 0.0, "length of the longer side, aspect kept", tensor=True,
            check=non_negative),
        Arg("size", "floats", None, "output (height, width); 0 keeps the aspect ratio, negative flips", tensor=True),
        Arg("max_size", "floats", None, "upper limit of the output (height, width); 0: none on that axis",
            check=length(1, 2)),
        Arg("mode", "str", "default", "how resize_x/resize_y/size are met",
            check=one_of(*_RESIZE_MODES)),
        Arg("roi_start", "floats", None, "start of the source window, (y, x) (spatial axes in layout order)",
            tensor=True),
        Arg("roi_end", "floats", None, "end of the source window, (y, x); below roi_start flips that axis",
            tensor=True),
        Arg("roi_relative", "bool", False, "roi_start/roi_end as fractions of the input size (0..1)"),
        *filter_args(),
        Arg("subpixel_scale", "bool", True, "a fractional output size keeps its exact scale (the source "
            "window shrinks or grows about its centre); False: the window maps onto the rounded size"),
        Arg("image_type", "image_type", None, "legacy; accepted and ignored"),
        Arg("save_attrs", "bool", False, "a second output: each input's (height, width), int32 (DALI's testing aid)"),
    ),
    num_outputs=lambda a: 2 if a.get("save_attrs") else 1,
))
register(OpSchema(
    name="crop", impl=Crop,
    doc="Crops images (HWC, CHW, HW, FHWC, FCHW, CFHW) at a relative position; windows leaving the image "
        "follow the policy.",
    args=(*CROP_ARGS, Arg("dtype", "dtype", None, "output type (default: the input's)",
                           aliases=("output_dtype",))),
))
