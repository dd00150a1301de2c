"""resize_crop_mirror (and DALI's legacy class name FastResizeCropMirror): resize, then crop, then
an optional horizontal flip, on HWC images, as one resampling of the crop's region (as DALI).

The resize's output size is worked out as `resize` does; the scale is the unrounded size over the
input's (DALI's subpixel_scale: the rounded canvas stays centred on the image), the crop window is
cut in output pixels, and the source region
under it is resampled once (`functional.resize` with a region of interest; taps beyond the image
repeat its border, so a window larger than the resized image is filled with resampled edges).
"""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError
from ..functional import crop as C
from ..functional.resize import max_sizes, output_size, resize
from ..tensor_list import TensorList
from ._operator import BatchContext, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, non_negative, one_of, unit_interval
from .geometry import Resize, filter_args, interp_name


def float_size(in_h: int, in_w: int, args: dict[str, Any], out: tuple[int, int]) -> tuple[float, float]:
    """The resize's output (height, width) before rounding (what sets DALI's subpixel scale); the
    rounded `out` where a cap or mode makes the unrounded size ambiguous."""
    size = args.get("size")
    if args.get("max_size") is not None or args.get("mode", "default") != "default":
        return float(out[0]), float(out[1])
    ins = (float(in_h), float(in_w))
    if size is not None:
        s = [abs(C.f32(v)) for v in ([size] if isinstance(size, (int, float)) else size)]
        req = [s[0], s[0]] if len(s) == 1 else [s[0], s[1]]
    elif args.get("resize_shorter"):
        k = 0 if in_h <= in_w else 1
        f = abs(C.f32(args["resize_shorter"])) / ins[k]
        return ins[0] * f, ins[1] * f
    elif args.get("resize_longer"):
        k = 0 if in_h >= in_w else 1
        f = abs(C.f32(args["resize_longer"])) / ins[k]
        return ins[0] * f, ins[1] * f
    else:
        req = [abs(C.f32(args.get("resize_y") or 0.0)), abs(C.f32(args.get("resize_x") or 0.0))]
    given = [k for k in range(2) if req[k] > 0]
    if not given:
        return ins
    return tuple(req[k] if req[k] > 0 else ins[k] * req[given[0]] / ins[given[0]] for k in range(2))  # type: ignore


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
        img = inputs[0]
        self.check_image(img)
        (out_h, out_w), flip_x, flip_y = self.target(img, args)
        in_h, in_w = int(img.shape[0]), int(img.shape[1])
        sizing = {k: self.get(args, k) for k in ("size", "resize_x", "resize_y", "resize_shorter", "resize_longer")}
        sizing.update(max_size=self.args["max_size"], mode=self.args["mode"])
        if not self.args["subpixel_scale"]:
            fh, fw = float(out_h), float(out_w)
        else:
            fh, fw = float_size(in_h, in_w, sizing, (out_h, out_w))
        top, left, h, w = self.window(out_h, out_w, args)
        sy, sx = in_h / fh, in_w / fw
        # the rounded canvas keeps the scale and stays centred on the image (DALI's subpixel_scale)
        oy, ox = (in_h - out_h * sy) / 2, (in_w - out_w * sx) / 2
        roi = (oy + top * sy, ox + left * sx, h * sy, w * sx)
        y = resize(img, (h, w), interp_name(self.get(args, "interp_type")), self.args["antialias"],
                   interp_name(self.get(args, "min_filter")), interp_name(self.get(args, "mag_filter")),
                   self.dtype, roi=roi)
        return C.flip(y, bool(self.get(args, "mirror")) != flip_x, flip_y)

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
    Arg("max_size", "floats", None, "upper limit of the resized (height, width)"),
    Arg("mode", "str", "default", "how resize_x/resize_y/size are met",
        check=one_of("default", "stretch", "not_larger", "not_smaller")),
    Arg("roi_start", "float_list", None, "accepted; the whole image is resized", tensor=True),
    Arg("roi_end", "float_list", None, "accepted; the whole image is resized", tensor=True),
    Arg("roi_relative", "bool", False, "accepted"),
    Arg("subpixel_scale", "bool", True, "scale by the unrounded output size (False: the rounded one)"),
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
    Arg("mirror", "int", 0, "1 flips the result left-right", tensor=True),
)
register(OpSchema(
    name="resize_crop_mirror", impl=ResizeCropMirror, output_layout="HWC",
    legacy_names=("FastResizeCropMirror",),
    doc="resize, then crop, then (mirror=1) a horizontal flip, of HWC images, in one op.",
    args=_RESIZE_ARGS + _CROP + filter_args(),
))
