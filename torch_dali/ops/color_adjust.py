"""brightness, contrast, hue, saturation and color_space_conversion on channels-last images and
sequences (HWC, FHWC, DHWC; CPU or CUDA tensors).

Formulas are those of brightness_contrast / hsv (`functional.color`, DALI 2.4's): brightness and
contrast are brightness_contrast with the other half left neutral, hue and saturation the hsv
matrix with the others at 1. A dense batch runs as one set of torch calls with per-sample
parameters as vectors; DALI ignores `image_type` for hue and saturation (RGB is assumed), and so
does this.
"""
from __future__ import annotations

from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import color_adjust as K
from ..functional.ragged import Flat
from . import _dispatch
from ._registry import register
from ._schema import Arg, OpSchema
from . import layouts as L
from .layout_op import Args, LayoutOp, per_sample, resolve_layout, scalar

LINEAR_TYPES = (torch.uint8, torch.int16, torch.int32, torch.float32)
MATRIX_TYPES = LINEAR_TYPES + (torch.float16,)
CHANNELS_LAST = ("FHWC", "DHWC", "HWC")


def _names(dts: tuple[torch.dtype, ...]) -> str:
    return ", ".join(str(d).replace("torch.", "") for d in dts)


class _Adjust(LayoutOp):
    """Shared: dtype and input-type checks, per-sample parameters as float32 vectors."""

    per_frame_ok = True  # frames are adjusted independently: takes fn.per_frame arguments (DALI 2.4)
    types: tuple[torch.dtype, ...] = LINEAR_TYPES
    layouts = CHANNELS_LAST
    params: tuple[str, ...] = ()

    def setup(self) -> None:
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)
        if self.dtype is not None and self.dtype not in self.types:
            raise ArgumentError(f"{self.name}: `dtype` must be one of {_names(self.types)}, got {self.dtype}")

    def per_frame_layout(self, layout: str, ndim: int) -> str:
        """As `color._ColorOp.per_frame_layout`: a sequence, a missing layout read as for this op."""
        return L.require_frames(self.name, resolve_layout(self.name, layout, ndim, self.layouts))

    def check_input(self, x: torch.Tensor) -> None:
        if x.dtype not in self.types:
            raise ArgumentTypeError(f"{self.name}: input type must be one of {_names(self.types)}, got {x.dtype}")

    def vectors(self, args: dict[str, list[Any]], n: int) -> dict[str, list[float]]:
        return {p: [scalar(self.name, p, v) for v in per_sample(args.get(p), n, self.args.get(p))]
                for p in self.params}

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        batch_args = {k: [v] for k, v in args.items()}
        return self.run_dense(x.unsqueeze(0), layout, batch_args, seed, iteration)[0]

    def checked_flat(self, samples: list[torch.Tensor], channels: int | None = None) -> Flat:
        for x in samples:
            self.check_input(x)
            if channels is not None and x.shape[-1] != channels:
                raise ArgumentError(f"{self.name}: expected 3 channels (RGB), got shape {tuple(x.shape)}")
        if len({x.dtype for x in samples}) != 1:
            raise ArgumentTypeError(f"{self.name}: the samples of a batch must share a type, got "
                                    f"{sorted({str(x.dtype) for x in samples})}")
        return Flat(samples, inner=1)


class _Linear(_Adjust):
    """brightness and contrast: out = in * mul + add with per-sample (mul, add)."""

    def linear(self, args: dict[str, list[Any]], n: int) -> tuple[torch.Tensor, ...]:
        """Per-sample float32 (brightness, shift, contrast) and the contrast center (or None)."""
        raise NotImplementedError

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        self.check_input(x)
        b, shift, c, center = self.linear(args, int(x.shape[0]))
        return _dispatch.call(K.brightness_contrast_batch, x, b, shift, c, center, self.dtype)

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        flat = self.checked_flat(samples)
        b, shift, c, center = self.linear(args, len(samples))
        return flat.split(K.brightness_contrast_flat(flat.items(), flat.ids(), b, shift, c, center, self.dtype))


class Brightness(_Linear):
    params = ("brightness", "brightness_shift")

    def linear(self, args: dict[str, list[Any]], n: int) -> tuple[Any, ...]:
        v = self.vectors(args, n)
        b = torch.tensor(v["brightness"], dtype=K.F32)
        return b, torch.tensor(v["brightness_shift"], dtype=K.F32), torch.ones_like(b), None


class Contrast(_Linear):
    params = ("contrast",)

    def linear(self, args: dict[str, list[Any]], n: int) -> tuple[Any, ...]:
        c = torch.tensor(self.vectors(args, n)["contrast"], dtype=K.F32)
        centers = per_sample(args.get("contrast_center"), n, self.args.get("contrast_center"))
        center = None if centers[0] is None else torch.tensor(
            [scalar(self.name, "contrast_center", v) for v in centers], dtype=K.F32)
        return torch.ones_like(c), torch.zeros_like(c), c, center


class _Matrix(_Adjust):
    types = MATRIX_TYPES

    def matrices(self, args: dict[str, list[Any]], n: int) -> torch.Tensor:
        raise NotImplementedError

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        self.check_input(x)
        if x.shape[-1] != 3:
            raise ArgumentError(f"{self.name}: expected 3 channels (RGB), got shape {tuple(x.shape[1:])}")
        return _dispatch.call(K.color_matrix_batch, x, self.matrices(args, int(x.shape[0])), self.dtype)

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        flat = self.checked_flat(samples, channels=3)
        m = self.matrices(args, len(samples))
        return flat.split(K.color_matrix_flat(flat.items(), flat.ids(), m, None, self.dtype))


class Hue(_Matrix):
    params = ("hue",)

    def matrices(self, args: dict[str, list[Any]], n: int) -> torch.Tensor:
        h = self.vectors(args, n)["hue"]
        return K.hsv_matrices(h, [1.0] * n, [1.0] * n)


class Saturation(_Matrix):
    params = ("saturation",)

    def matrices(self, args: dict[str, list[Any]], n: int) -> torch.Tensor:
        # a negative factor is taken, as DALI takes it: the chroma is mirrored and scaled
        return K.hsv_matrices([0.0] * n, self.vectors(args, n)["saturation"], [1.0] * n)


class ColorSpaceConversion(LayoutOp):
    """uint8 only, as DALI's CPU backend; a conversion to the same space copies."""

    layouts = ("FDHWC", "FHWC", "DHWC", "HWC")

    def setup(self) -> None:
        self.src = _space(self.name, "image_type", self.args["image_type"])
        self.dst = _space(self.name, "output_type", self.args["output_type"])

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        return self.convert(x)

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.convert(x)

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        for x in samples:
            self.check(x)
        flat = Flat(samples, inner=1)
        y = K.color_space_conversion(flat.items(), self.src, self.dst)
        return flat.split(y, [(*s[:-1], int(y.shape[-1])) for s in flat.shapes])

    def convert(self, x: torch.Tensor) -> torch.Tensor:
        self.check(x)
        return _dispatch.call(K.color_space_conversion, x, self.src, self.dst)

    def check(self, x: torch.Tensor) -> None:
        if x.dtype != torch.uint8:
            raise ArgumentTypeError(f"{self.name}: the input must be uint8, got {x.dtype}")
        want = K.CHANNELS[self.src]
        if x.shape[-1] != want:
            raise ArgumentError(f"{self.name}: a {self.src} input has {want} channel(s), got shape "
                                f"{tuple(x.shape)}")


def _space(op: str, arg: str, v: Any) -> str:
    name = v.name if isinstance(v, types.DALIImageType) else str(v)
    if name not in K.CHANNELS:
        raise ArgumentError(f"{op}: `{arg}` must be one of {', '.join(K.CHANNELS)}, got {name}")
    return name


def _f(name: str, default: float, doc: str, **kw: Any) -> Arg:
    return Arg(name, "float", default, doc, tensor=True, **kw)


_DTYPE = Arg("dtype", "dtype", None, "output type (default: the input's)")
_IMAGE_TYPE = Arg("image_type", "image_type", types.RGB, "color space of the input and output (DALI "
                  "assumes RGB whatever is given)")

register(OpSchema(
    name="brightness", impl=Brightness,
    doc="out = brightness_shift * max(output type) + brightness * in (1 is the maximum for floats).",
    args=(_f("brightness", 1.0, "multiplier"),
          _f("brightness_shift", 0.0, "added, as a fraction of the output type's maximum"), _DTYPE),
))
register(OpSchema(
    name="contrast", impl=Contrast,
    doc="out = contrast_center + contrast * (in - contrast_center).",
    args=(_f("contrast", 1.0, "stretch about contrast_center (0 gives a flat image)"),
          Arg("contrast_center", "float", None, "the value contrast keeps (default: half the input "
              "type's range, 128 for uint8, 0.5 for float)", tensor=True), _DTYPE),
))
register(OpSchema(
    name="hue", impl=Hue, doc="Rotates the hue of RGB images by `hue` degrees (in YIQ space).",
    args=(_f("hue", 0.0, "hue change in degrees"), _IMAGE_TYPE, _DTYPE),
))
register(OpSchema(
    name="saturation", impl=Saturation, doc="Scales the saturation of RGB images (in YIQ space).",
    args=(_f("saturation", 1.0, "saturation factor: 0 gives gray, 1 keeps the image, a negative one "
                "mirrors the chroma"),
          _IMAGE_TYPE, _DTYPE),
))
register(OpSchema(
    name="color_space_conversion", impl=ColorSpaceConversion,
    doc="Converts uint8 images between RGB, BGR, GRAY and YCbCr (ITU-R BT.601, 16..235).",
    args=(Arg("image_type", "image_type", doc="color space of the input"),
          Arg("output_type", "image_type", doc="color space of the output")),
))
