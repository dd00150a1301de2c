"""resize_crop_mirror (and DALI's legacy class name FastResizeCropMirror): resize, then crop, then
optional flips, on images and sequences (HWC, CHW, FHWC, FCHW, CFHW), as one resampling of the crop's region (as DALI).

The resize is planned as `resize` plans it (`Resize.plan`: output size, region of interest,
flips, subpixel scale): each axis maps a source window [lo, hi] onto `out` pixels. The crop window
is cut in those output pixels, and the source window under it, [lo + a * s, lo + (a + n) * s] with
s = (hi - lo) / out, is resampled once (`functional.resize` with that window; taps beyond the image
repeat its border, so a crop larger than the resized image is filled with resampled edges); the
mirror (a bit mask, as DALI's: 1 left-right, 2 up-down on HWC; see `mirrored_axes` for the other
layouts) reads that axis's window backwards.
"""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError
from ..functional import crop as C
from ..functional.resize import resize
from ..tensor_list import TensorList
from ._operator import BatchContext, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, length, non_negative, one_of, unit_interval
from .geometry import Resize, filter_args, interp_name


def mirrored_axes(layout: str, mirror: int) -> str:
    """The axes `mirror` flips, as DALI 2.4 does (measured): bit 0 flips the layout's second axis and
    bit 1 its first, each only when it is H or W. So HWC (and HW) flip left-right and up-down; CHW
    and FHWC flip H for bit 0 and nothing for bit 1; FCHW and CFHW flip nothing."""
    return "".join(a for bit, a in ((1, layout[1:2]), (2, layout[:1])) if mirror & bit and a in ("H", "W"))


class ResizeCropMirror(Resize):
    strided_input_ok = True

    def setup(self) -> None:
        super().setup()
        given = lambda k: k in self.node.arg_inputs or self.args.get(k) not in (None, 0, 0.0)  # noqa: E731
        if given("crop") and (given("crop_h") or given("crop_w")):
            raise ArgumentError(f"{self.name}: give either `crop` or `crop_h`/`crop_w`, not both")

    def window(self, h: int, w: int, args: dict[str, Any]) -> C.Window:
        crop = self.get(args, "crop")
        if crop is not None:
            crop = [crop] * 2 if isinstance(crop, (int, float)) else list(crop)
            if len(crop) != 2:
                raise ArgumentError(f"{self.name}: `crop` must be (height, width), got {crop!r}")
            ch, cw = crop
        else:
            ch, cw = self.get(args, "crop_h") or 0.0, self.get(args, "crop_w") or 0.0
        try:
            return C.crop_window(h, w, float(ch), float(cw), float(self.get(args, "crop_pos_y")),
                                 float(self.get(args, "crop_pos_x")), self.args["rounding"])
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        canon = self.canonical(inputs[0])  # sequences and channel-first: one (H, W, K) view
        img = inputs[0] if canon is None else canon.hwk
        self.check_types(img)
        (out_h, y0, y1), (out_w, x0, x1) = self.plan((int(img.shape[0]), int(img.shape[1])), args)
        top, left, h, w = self.window(out_h, out_w, args)
        sy, sx = (y1 - y0) / out_h, (x1 - x0) / out_w
        wy = (y0 + top * sy, y0 + (top + h) * sy)
        wx = (x0 + left * sx, x0 + (left + w) * sx)
        flips = mirrored_axes(self.layout_of(inputs[0]), int(self.get(args, "mirror") or 0))
        if "W" in flips:
            wx = (wx[1], wx[0])
        if "H" in flips:
            wy = (wy[1], wy[0])
        y = resize(img, (h, w), interp_name(self.get(args, "interp_type")), self.args["antialias"],
                   interp_name(self.get(args, "min_filter")), interp_name(self.get(args, "mag_filter")),
                   self.dtype, window=(wy, wx))
        return y if canon is None else canon.back(y)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:  # per sample (no batched kernel here)
        return super(Resize, self).run_batch(ctx, inputs, args)

    def fuse(self, consumer: Any) -> Any:
        return None


_RESIZE_ARGS = (
    Arg("resize_x", "float", 0.0, "output width before the crop (negative flips)", tensor=True),
    Arg("resize_y", "float", 0.0, "output height before the crop (negative flips)", tensor=True),
    Arg("resize_z", "float", 0.0, "volumes only; accepted", tensor=True),
    Arg("resize_shorter", "float", 0.0, "length of the shorter side, aspect kept", tensor=True, check=non_negative),
    Arg("resize_longer", "float", 0.0, "length of the longer side, aspect kept", tensor=True, check=non_negative),
    Arg("size", "floats", None, "size (height, width) before the crop", tensor=True),
    Arg("max_size", "floats", None, "upper limit of the resized (height, width); 0: none on that axis",
        check=length(1, 2)),
    Arg("mode", "str", "default", "how resize_x/resize_y/size are met",
        check=one_of("default", "stretch", "not_larger", "not_smaller")),
    Arg("roi_start", "floats", None, "start of the source window, (y, x)", tensor=True),
    Arg("roi_end", "floats", None, "end of the source window, (y, x); below roi_start flips that axis",
        tensor=True),
    Arg("roi_relative", "bool", False, "roi_start/roi_end as fractions of the input size (0..1)"),
    Arg("subpixel_scale", "bool", True, "a fractional resized size keeps its exact scale (False: the "
        "window maps onto the rounded size)"),
)
_CROP = (
    Arg("crop", "floats", None, "window (height, width) of the resized image", tensor=True),
    Arg("crop_h", "float", 0.0, "window height (with crop_w)", tensor=True, check=non_negative),
    Arg("crop_w", "float", 0.0, "window width (with crop_h)", tensor=True, check=non_negative),
    Arg("crop_d", "float", 0.0, "volumes only; accepted", tensor=True),
    Arg("crop_pos_x", "float", 0.5, "relative horizontal position", tensor=True, check=unit_interval),
    Arg("crop_pos_y", "float", 0.5, "relative vertical position", tensor=True, check=unit_interval),
    Arg("crop_pos_z", "float", 0.5, "volumes only; accepted", tensor=True),
    Arg("rounding", "str", "round", "how the window anchor becomes an integer", check=one_of("round", "truncate")),
    Arg("mirror", "int", 0, "flip mask: 1 left-right, 2 up-down, 3 both", tensor=True),
)
register(OpSchema(
    name="resize_crop_mirror", impl=ResizeCropMirror, output_layout="HWC",
    legacy_names=("FastResizeCropMirror",),
    doc="resize, then crop, then (mirror, a mask: 1 horizontal, 2 vertical) a flip, of images and sequences "
        "(HWC, CHW, FHWC, FCHW, CFHW), in one op.",
    args=_RESIZE_ARGS + _CROP + filter_args(),
))
