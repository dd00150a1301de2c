"""resize_crop_mirror (and DALI's legacy class name FastResizeCropMirror): resize, then crop, then
optional flips, on images and sequences (HWC, CHW, FHWC, FCHW, CFHW) and volumes (DHWC, CDHW, FDHWC,
FCDHW: depth sized by resize_z, cropped by crop_d / crop_pos_z, flipped by mirror bit 2), as one
resampling of the crop's region (as DALI).

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
from ..functional.resize3d import resize_volume, volume_axes
from ..tensor_list import TensorList
from . import _dispatch
from ._operator import BatchContext, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, length, non_negative, one_of, unit_interval
from .geometry import Resize, filter_args, interp_name


def mirrored_axes(layout: str, mirror: int, nsp: int = 2) -> str:
    """The axes `mirror` flips, as DALI 2.4 does (measured): bit k flips the layout's axis at
    position nsp - 1 - k (nsp: 2 spatial axes, 3 for volumes), only when it is D, H or W. So HWC
    (and HW) flip left-right and up-down; CHW and FHWC flip H for bit 0 and nothing for bit 1; FCHW
    and CFHW flip nothing; DHWC flips W, H and D for bits 0, 1 and 2; CDHW and FDHWC H and D."""
    return "".join(layout[nsp - 1 - k] for k in range(nsp)
                   if mirror & (1 << k) and layout[nsp - 1 - k] in ("D", "H", "W"))


class ResizeCropMirror(Resize):
    strided_input_ok = True

    def setup(self) -> None:
        super().setup()
        given = lambda k: k in self.node.arg_inputs or self.args.get(k) not in (None, 0, 0.0)  # noqa: E731
        if given("crop") and (given("crop_h") or given("crop_w")):
            raise ArgumentError(f"{self.name}: give either `crop` or `crop_h`/`crop_w`, not both")
        # DALI 2.4: crop_h and crop_w come together, crop_d only with both
        if self.set_at_all("crop_h") != self.set_at_all("crop_w") or \
                (self.set_at_all("crop_d") and not self.set_at_all("crop_h")):
            raise ArgumentError(f"{self.name}: give `crop_h` and `crop_w` together (and `crop_d` only with both)")

    def crop_sizes(self, args: dict[str, Any]) -> list[float] | None:
        """`crop` as DALI 2.4 reads it: 2 or 3 values (a single value is refused); None without it."""
        crop = self.get(args, "crop")
        if crop is None:
            return None
        crop = list(crop) if isinstance(crop, (list, tuple)) else [crop]
        if len(crop) not in (2, 3):
            raise ArgumentError(f"{self.name}: `crop` must have 2 values (height, width) or 3 (depth, height, "
                                f"width), got {crop!r}")
        return [float(c) for c in crop]

    def window(self, h: int, w: int, args: dict[str, Any]) -> C.Window:
        crop = self.crop_sizes(args)
        if crop is not None:
            ch, cw = crop[-2:]  # DALI 2.4: a 3-value crop on an image crops with its last two
        else:
            ch, cw = self.get(args, "crop_h") or 0.0, self.get(args, "crop_w") or 0.0
        try:  # a size of 0 or below keeps the whole axis (DALI 2.4, measured)
            return C.crop_window(h, w, max(float(ch), 0.0), max(float(cw), 0.0), float(self.get(args, "crop_pos_y")),
                                 float(self.get(args, "crop_pos_x")), self.args["rounding"])
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None

    def volume_crop(self, out: list[int], args: dict[str, Any]) -> list[tuple[int, int]]:
        """(anchor, extent) of the crop in each of the resized (D, H, W); `crop` of 2 values crops H
        and W (D whole), as DALI 2.4 does."""
        crop = self.crop_sizes(args)
        if crop is not None:
            sizes = ([0.0] + crop) if len(crop) == 2 else crop
        else:
            sizes = [self.get(args, k) or 0.0 for k in ("crop_d", "crop_h", "crop_w")]
        win = []
        for n, c, pos in zip(out, sizes, ("crop_pos_z", "crop_pos_y", "crop_pos_x")):
            k = int(float(c)) if float(c) > 0 else 0
            k = k if k > 0 else n  # 0 or below (truncated): the whole axis
            win.append((C.crop_anchor(n, k, float(self.get(args, pos)), self.args["rounding"]), k))
        return win

    def run_volume(self, x: torch.Tensor, lay: str, args: dict[str, Any]) -> torch.Tensor:
        """A volume: the crop's source window along D, H and W resampled at once (`resize_volume`)."""
        self.check_types(x)
        spatial, rest, order = volume_axes(lay)
        dhw = tuple(int(x.shape[i]) for i in spatial)
        plan = self.plan(dhw, args)
        crop = self.volume_crop([o for o, _, _ in plan], args)
        back = [order.index(i) for i in range(len(lay))]
        if 0 in dhw:  # nothing to resample: an empty crop
            out = [k if n else 0 for (_, k), n in zip(crop, dhw)] + [int(x.shape[i]) for i in rest]
            return x.new_empty(out, dtype=self.dtype or x.dtype).permute(back).contiguous()
        flips = mirrored_axes(lay, int(self.get(args, "mirror") or 0), 3)
        window = []
        for (o, lo, hi), (a, k), name in zip(plan, crop, "DHW"):
            step = (hi - lo) / o
            w = (lo + a * step, lo + (a + k) * step)
            window.append(w[::-1] if name in flips else w)
        v = x.permute(order).reshape(*dhw, -1)
        y = resize_volume(v, tuple(k for _, k in crop), interp_name(self.get(args, "interp_type")),
                          self.args["antialias"], interp_name(self.get(args, "min_filter")),
                          interp_name(self.get(args, "mag_filter")), self.dtype, window=window)
        y = y.reshape(*y.shape[:3], *[int(x.shape[i]) for i in rest])
        return y.permute(back).contiguous()

    def source_window(self, img: torch.Tensor, layout: str,
                      args: dict[str, Any]) -> tuple[tuple[int, int], tuple[tuple[float, float], tuple[float, float]]]:
        """An (H, W, K) image's output (height, width) and the source window ((y0, y1), (x0, x1))
        resampled onto it (a flipped axis's window runs backwards)."""
        (out_h, y0, y1), (out_w, x0, x1) = self.plan((int(img.shape[0]), int(img.shape[1])), args)
        top, left, h, w = self.window(out_h, out_w, args)
        sy, sx = (y1 - y0) / out_h, (x1 - x0) / out_w
        wy = (y0 + top * sy, y0 + (top + h) * sy)
        wx = (x0 + left * sx, x0 + (left + w) * sx)
        flips = mirrored_axes(layout, int(self.get(args, "mirror") or 0))
        if "W" in flips:
            wx = (wx[1], wx[0])
        if "H" in flips:
            wy = (wy[1], wy[0])
        return (h, w), (wy, wx)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        lay = self.layout_of(inputs[0])
        if "D" in lay:
            return self.run_volume(inputs[0], lay, args)
        canon = self.canonical(inputs[0])  # sequences and channel-first: one (H, W, K) view
        img = inputs[0] if canon is None else canon.hwk
        self.check_types(img)
        (h, w), (wy, wx) = self.source_window(img, self.layout_of(inputs[0]), args)
        y = _dispatch.call(resize, img, (h, w), interp_name(self.get(args, "interp_type")), self.args["antialias"],
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
    Arg("resize_z", "float", 0.0, "output depth before the crop (volumes)", tensor=True),
    Arg("resize_shorter", "float", 0.0, "length of the shorter side, aspect kept", tensor=True, check=non_negative),
    Arg("resize_longer", "float", 0.0, "length of the longer side, aspect kept", tensor=True, check=non_negative),
    Arg("size", "floats", None, "size (height, width), or (depth, height, width), before the crop", tensor=True),
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
    Arg("crop", "floats", None, "window (height, width), or (depth, height, width), of the resized image",
        tensor=True),
    Arg("crop_h", "float", 0.0, "window height (with crop_w)", tensor=True, check=non_negative),
    Arg("crop_w", "float", 0.0, "window width (with crop_h)", tensor=True, check=non_negative),
    Arg("crop_d", "float", 0.0, "window depth (volumes, with crop_h and crop_w)", tensor=True),
    Arg("crop_pos_x", "float", 0.5, "relative horizontal position", tensor=True, check=unit_interval),
    Arg("crop_pos_y", "float", 0.5, "relative vertical position", tensor=True, check=unit_interval),
    Arg("crop_pos_z", "float", 0.5, "relative depth position (volumes)", tensor=True, check=unit_interval),
    Arg("rounding", "str", "round", "how the window anchor becomes an integer", check=one_of("round", "truncate")),
    Arg("mirror", "int", 0, "flip mask: 1 left-right, 2 up-down, 3 both; 4 depth (volumes)", tensor=True),
)
register(OpSchema(
    name="resize_crop_mirror", impl=ResizeCropMirror, output_layout="HWC",
    legacy_names=("FastResizeCropMirror",),
    doc="resize, then crop, then (mirror, a mask: 1 horizontal, 2 vertical, 4 depth) a flip, of images and "
        "sequences (HWC, CHW, FHWC, FCHW, CFHW) and volumes (DHWC, CDHW, FDHWC, FCDHW), in one op.",
    args=_RESIZE_ARGS + _CROP + filter_args(),
))
