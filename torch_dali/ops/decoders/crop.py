"""decoders.image_crop, decoders.image_slice and peek_image_shape.

The two decoders are `decoders.image` with a window: on the CPU the window is decoded alone where
the JPEG allows it (`io.decode.decode_image_crop`), with device='mixed' the whole image is
decoded on the GPU and the window cut as a view. Windows follow `crop` (crop sizes truncated, the
anchor rounded as `rounding` says) and `slice` (llround of start / end) exactly; a window leaving
the image is refused, as DALI refuses it.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import torch

from ... import types
from ...errors import ArgumentError
from ...functional import crop as C
from ...io import decode as D
from ...tensor_list import TensorList
from .._operator import BatchContext, Operator, SampleContext
from .._registry import register
from .._schema import Arg, OpSchema, non_negative, one_of, unit_interval
from ..slicing import named_window, positional_window
from .image import DECODER_ARGS, DECODER_TUNING_ARGS, ImageDecoder

Window = tuple[int, int, int, int]


def _check_window(op: str, win: Window, h: int, w: int) -> Window:
    y, x, wh, ww = win
    if y < 0 or x < 0 or y + wh > h or x + ww > w or wh < 0 or ww < 0:
        raise ArgumentError(f"{op}: The cropping window [{y}..{y + wh}, {x}..{x + ww}] is not valid for image "
                            f"dimensions [{h} x {w}]")
    return win


class _WindowDecoder(ImageDecoder):
    """A decoder whose window comes from per-sample arguments (`window(args, i, h, w)`)."""

    crops = True

    def setup(self) -> None:
        super().setup()
        self._local = threading.local()

    def window(self, args: dict[str, Any], h: int, w: int, extra: list[torch.Tensor]) -> Window:
        raise NotImplementedError

    def _sample_args(self, ctx: SampleContext) -> tuple[dict[str, Any], list[torch.Tensor]]:
        batch = getattr(self._local, "batch", None)
        if batch is not None:  # mixed op: the batch's arguments, this sample's values
            args, extra = batch
            return {k: v[ctx.index] for k, v in args.items()}, [e[ctx.index] for e in extra]
        return self._local.sample

    def window_fn(self, ctx: SampleContext) -> Callable[[int, int], Window]:
        args, extra = self._sample_args(ctx)
        return lambda h, w: _check_window(self.name, self.window(args, h, w, extra), h, w)

    def decode_one(self, ctx: SampleContext, data: torch.Tensor) -> torch.Tensor:
        chw = self._kept(data, take=True)
        if chw is not None:
            win = self.window_fn(ctx)(int(chw.shape[1]), int(chw.shape[2]))
            return D.from_chw(chw, self.output_type, self.dtype, win)
        return D.decode_image_crop(data, self.window_fn(ctx), self.output_type, self.dtype, self.adjust,
                                   ctx.source, self.name, self.max_pixels, fast_idct=self.fast_idct)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        self._local.batch = None
        self._local.sample = (args, list(inputs[1:]))
        return self.decode_one(ctx, inputs[0])

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        if self.device.type != "cuda":  # sample by sample, with the anchor / shape inputs
            return Operator.run_batch(self, ctx, inputs, args)
        self._local.batch = (args, list(inputs[1:]))
        try:
            return super().run_batch(ctx, inputs[:1], args)
        finally:
            self._local.batch = None

    def gpu_windows(self, ctx: BatchContext, sizes: np.ndarray, rows: list[int]) -> np.ndarray | None:
        """The windows of the GPU-decoded `rows` (a window is checked against its image, so the
        other rows' placeholder sizes are not asked)."""
        wins = np.zeros((len(sizes), 4), dtype=np.int64)
        wins[:, 2:] = sizes
        for i in rows:
            h, w = int(sizes[i, 0]), int(sizes[i, 1])
            wins[i] = self.window_fn(ctx.sample(i))(h, w)
        return wins


class ImageDecoderCrop(_WindowDecoder):
    def setup(self) -> None:
        super().setup()
        given = lambda k: k in self.node.arg_inputs or self.args.get(k) not in (None, 0, 0.0)  # noqa: E731
        if given("crop") and (given("crop_h") or given("crop_w")):
            raise ArgumentError(f"{self.name}: give either `crop` or `crop_h`/`crop_w`, not both")

    def window(self, args: dict[str, Any], h: int, w: int, extra: list[torch.Tensor]) -> Window:
        get = lambda k: args[k] if k in args else self.args.get(k)  # noqa: E731
        crop = get("crop")
        if crop is not None:
            crop = [crop] * 2 if isinstance(crop, (int, float)) else [float(v) for v in np.asarray(crop).reshape(-1)]
            if len(crop) != 2:
                raise ArgumentError(f"{self.name}: `crop` must be (height, width), got {crop!r}")
            ch, cw = crop
        else:
            ch, cw = get("crop_h") or 0.0, get("crop_w") or 0.0
        try:
            return C.crop_window(h, w, float(ch), float(cw), float(get("crop_pos_y")), float(get("crop_pos_x")),
                                 self.args["rounding"])
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None


class ImageDecoderSlice(_WindowDecoder):
    def setup(self) -> None:
        super().setup()
        named = [k for k in ("start", "rel_start", "end", "rel_end", "shape", "rel_shape")
                 if self.args.get(k) is not None or k in self.node.arg_inputs]
        n_in = len(self.node.inputs)
        if named and n_in > 1:
            raise ArgumentError(f"{self.name}: named slice arguments cannot be combined with anchor and shape inputs")
        if not named and n_in != 3:
            raise ArgumentError(f"{self.name}: give named slice arguments (start/end, start/shape...) or both "
                                f"positional inputs (anchor, shape); got {n_in} input(s)")
        self.named = bool(named)

    def window(self, args: dict[str, Any], h: int, w: int, extra: list[torch.Tensor]) -> Window:
        names, axes = self.args.get("axis_names"), args["axes"] if "axes" in args else self.args.get("axes")
        if names:
            if any(ch not in "HW" for ch in names):
                raise ArgumentError(f"{self.name}: `axis_names` of an image must be made of H and W, got {names!r}")
            dims = ["HW".index(ch) for ch in names]
        else:
            dims = [int(a) for a in np.asarray([1, 0] if axes is None else axes).reshape(-1)]
            for a in dims:
                if not -2 <= a < 2:
                    raise ArgumentError(f"{self.name}: `axes` holds {a}, out of range for an image's 2 dimensions "
                                        "(valid: -2 to 1)")
            dims = [a % 2 for a in dims]
        if self.named:
            anchor, extent = named_window(self.name, lambda k: args[k] if k in args else self.args.get(k), (h, w), dims)
        else:
            anchor, extent = positional_window(self.name, extra[0], extra[1], (h, w), dims,
                                               self.args["normalized_anchor"], self.args["normalized_shape"])
        return anchor[0], anchor[1], extent[0], extent[1]


# DALI 2.4 (measured) refuses the others (8/16-bit integers, float16, bool): they would wrap or round
_PEEK_DTYPES = (types.INT32, types.UINT32, types.INT64, types.UINT64, types.FLOAT, types.FLOAT64)


def _peek_dtype_ok(v: Any) -> str | None:
    return None if v in _PEEK_DTYPES else "one of " + ", ".join(repr(d) for d in _PEEK_DTYPES)


class PeekImageShape(Operator):
    """(H, W, C) of what decoders.image would return, from the header alone."""

    def setup(self) -> None:
        self.dtype = types.to_torch_dtype(self.args["dtype"])

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        shape = D.peek_image_shape(inputs[0], self.args["image_type"], self.args["adjust_orientation"])
        return torch.tensor(shape, dtype=torch.int64).to(self.dtype)

    def output_layout(self, index: int) -> str:
        return ""


_CROP_ARGS = (
    Arg("crop", "floats", None, "window (height, width); sizes are truncated", tensor=True),
    Arg("crop_h", "float", 0.0, "window height (with crop_w)", tensor=True, check=non_negative),
    Arg("crop_w", "float", 0.0, "window width (with crop_h)", tensor=True, check=non_negative),
    Arg("crop_d", "float", 0.0, "volumes only; accepted", tensor=True),
    Arg("crop_pos_x", "float", 0.5, "relative horizontal position, 0 left .. 1 right", tensor=True,
        check=unit_interval),
    Arg("crop_pos_y", "float", 0.5, "relative vertical position, 0 top .. 1 bottom", tensor=True,
        check=unit_interval),
    Arg("crop_pos_z", "float", 0.5, "volumes only; accepted", tensor=True),
    Arg("rounding", "str", "round", "how the window anchor becomes an integer", check=one_of("round", "truncate")),
)
_SLICE_ARGS = (
    Arg("axes", "int_list", None, "image axes of the slice arguments (default [1, 0]: x, y)", tensor=True),
    Arg("axis_names", "layout", None, "image axes as letters, 'H' and 'W' (wins over axes)"),
    Arg("start", "int_list", None, "window start", tensor=True),
    Arg("rel_start", "float_list", None, "window start, relative", tensor=True),
    Arg("end", "int_list", None, "window end (exclusive)", tensor=True),
    Arg("rel_end", "float_list", None, "window end, relative", tensor=True),
    Arg("shape", "int_list", None, "window extent", tensor=True),
    Arg("rel_shape", "float_list", None, "window extent, relative", tensor=True),
    Arg("normalized_anchor", "bool", True, "a float positional anchor is relative"),
    Arg("normalized_shape", "bool", True, "a float positional shape is relative"),
)
register(OpSchema(
    name="decoders.image_crop", impl=ImageDecoderCrop, devices=("cpu", "mixed"), input_devices="cpu",
    legacy_names=("ImageDecoderCrop",), output_layout="HWC",
    doc="Decodes and crops a fixed window (crop's rules); on the CPU only the window of a JPEG is decoded.",
    args=DECODER_ARGS + _CROP_ARGS + DECODER_TUNING_ARGS,
))
register(OpSchema(
    name="decoders.image_slice", impl=ImageDecoderSlice, devices=("cpu", "mixed"), input_devices="cpu",
    legacy_names=("ImageDecoderSlice",), output_layout="HWC", min_inputs=1, max_inputs=3,
    doc="Decodes and cuts a window given as slice arguments (named, or anchor and shape inputs).",
    args=DECODER_ARGS + _SLICE_ARGS + DECODER_TUNING_ARGS,
))
register(OpSchema(
    name="peek_image_shape", impl=PeekImageShape, devices=("cpu",), legacy_names=("PeekImageShape",),
    doc="The (H, W, C) shape decoders.image would give, read from the header (no decoding).",
    args=(
        Arg("image_type", "image_type", types.RGB, "color space the shape is for (GRAY: 1 channel)"),
        Arg("adjust_orientation", "bool", True, "apply the EXIF orientation"),
        Arg("dtype", "dtype", types.INT64, "element type of the shape: int32, uint32, int64, uint64, float or "
            "float64", check=_peek_dtype_ok),
    ),
))
