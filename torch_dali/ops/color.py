"""Color ops on channel-last images: brightness_contrast, hsv, color_twist (CPU or CUDA tensors).

Formulas, defaults, supported types and layouts (HWC, FHWC, DHWC; no layout means HWC) follow
NVIDIA DALI 2.4; see `torch_dali.functional.color`. Channel-first inputs (CHW...) are refused by
name: DALI refuses them too."""
from __future__ import annotations

from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import color as K
from ..functional import color_adjust as KA
from ..functional.ragged import Flat
from ..tensor_list import TensorList
from . import _dispatch, batching
from . import layouts as L
from ._operator import Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema

# Types DALI 2.4 accepts (anything else is an error there too).
_IN_TYPES = (torch.uint8, torch.int16, torch.int32, torch.float32)
_OUT_TYPES = (torch.uint8, torch.int16, torch.int32, torch.float32)
_MATRIX_IN_TYPES = _IN_TYPES + (torch.float16,)
_MATRIX_OUT_TYPES = _OUT_TYPES + (torch.float16,)


def _names(dts: tuple[torch.dtype, ...]) -> str:
    return ", ".join(str(d).replace("torch.", "") for d in dts)


class _ColorOp(Operator):
    per_frame_ok = True  # frames are adjusted independently: takes fn.per_frame arguments (DALI 2.4)
    in_types: tuple[torch.dtype, ...] = _IN_TYPES
    out_types: tuple[torch.dtype, ...] = _OUT_TYPES
    rgb = False  # needs 3 channels
    in_layout = ""  # the input's layout, known at build (connect)
    _resolved = ""

    def connect(self, plan: Any) -> None:
        self.in_layout, known = L.static_layout(plan, self.node.inputs[0])
        # learnt from each batch: run as a batch op, which sees the batch's layout; per-frame
        # arguments: a batch op too, which the dispatch runs on the batch unfolded into frames
        if not known or self.per_frame_names:
            self.sample_wise = False

    def run_batch(self, ctx: Any, inputs: list[Any], args: dict[str, list[Any]]) -> list[Any]:
        if inputs and inputs[0].layout():
            self.in_layout = inputs[0].layout()
        tl = inputs[0]
        if batching.batched(self, tl):
            samples = tl.samples
            for x in samples:
                self.image(x)  # every sample's checks first, as the per-sample path makes them
            if len({x.dtype for x in samples}) == 1 and len({x.dim() for x in samples}) == 1:
                flat = Flat(samples, inner=1)
                return [TensorList(flat.split(self.run_flat(flat, args, len(samples))), self.output_layout(0))]
        return super().run_batch(ctx, inputs, args)

    def run_flat(self, flat: Flat, args: dict[str, list[Any]], n: int) -> torch.Tensor:
        """Every sample at once (`functional.ragged`), the per-sample values."""
        raise NotImplementedError

    def values(self, args: dict[str, list[Any]], name: str, n: int) -> list[float]:
        """Per-sample values of `name`, as `get` reads each."""
        vals = args.get(name)
        return [self.get(args if vals is None else {name: vals[i]}, name) for i in range(n)]

    def vector(self, args: dict[str, list[Any]], name: str, n: int) -> torch.Tensor:
        return torch.tensor(self.values(args, name, n), dtype=torch.float32)

    def output_layout(self, index: int) -> str:
        return self._resolved or self.in_layout

    def image(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[int, ...]]:
        """The sample as one HWC image (frames and depth stacked on H) and its own shape."""
        if self.in_layout:  # a layout given: it is what is wrong first
            self._resolved = self._resolve(x)
        self.check(x)
        self._resolved = self._resolve(x)
        if x.dim() == 3:
            return x, tuple(x.shape)
        rows = int(torch.tensor(x.shape[:-2]).prod())  # not -1: an empty sample leaves it ambiguous
        return x.reshape(rows, x.shape[-2], x.shape[-1]), tuple(x.shape)

    def per_frame_layout(self, layout: str, ndim: int) -> str:
        """Per-frame arguments need sequences (DALI 2.4): the input's layout, a missing one read as
        for this op (4-D: FHWC); anything else is refused."""
        return L.require_frames(self.name, L.resolve(self.name, layout, ndim, L.COLOR))

    def _resolve(self, x: torch.Tensor) -> str:
        try:
            return L.resolve(self.name, self.in_layout, x.dim(), L.COLOR)
        except ArgumentError as e:
            raise L.refuse_input(self.node, e) from None

    def setup(self) -> None:
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)
        if self.dtype is not None and self.dtype not in self.out_types:
            raise ArgumentError(f"{self.name}: `dtype` must be one of {_names(self.out_types)}, "
                                f"got {self.dtype}")

    def get(self, args: dict[str, Any], name: str) -> float:
        v = args[name] if name in args else self.args[name]
        if isinstance(v, (list, tuple)):
            if len(v) != 1:
                raise ArgumentError(f"{self.name}: `{name}` must be a scalar per sample, got {v!r}")
            v = v[0]
        return float(v)

    def check(self, x: torch.Tensor) -> None:
        if x.dtype not in self.in_types:
            raise ArgumentTypeError(f"{self.name}: input type must be one of {_names(self.in_types)}, "
                                    f"got {x.dtype}")
        if self.rgb and x.shape[-1] != 3:
            raise ArgumentError(f"{self.name}: expected images with 3 channels (RGB), got shape "
                                f"{tuple(x.shape)}")


class BrightnessContrast(_ColorOp):
    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x, shape = self.image(inputs[0])
        center = args["contrast_center"] if "contrast_center" in args else self.args.get("contrast_center")
        return _dispatch.call(
            K.brightness_contrast, x, self.get(args, "brightness"), self.get(args, "brightness_shift"),
            self.get(args, "contrast"), None if center is None else self.get({"contrast_center": center}, "contrast_center"),
            self.dtype).reshape(shape)

    def run_flat(self, flat: Flat, args: dict[str, list[Any]], n: int) -> torch.Tensor:
        center = None
        if "contrast_center" in args or self.args.get("contrast_center") is not None:
            center = self.vector(args, "contrast_center", n)
        return KA.brightness_contrast_flat(flat.items(), flat.ids(), self.vector(args, "brightness", n),
                                           self.vector(args, "brightness_shift", n), self.vector(args, "contrast", n),
                                           center, self.dtype)


class Hsv(_ColorOp):
    in_types, out_types, rgb = _MATRIX_IN_TYPES, _MATRIX_OUT_TYPES, True

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x, shape = self.image(inputs[0])
        return _dispatch.call(K.hsv, x, self.get(args, "hue"), self.get(args, "saturation"), self.get(args, "value"),
                              self.dtype).reshape(shape)

    def run_flat(self, flat: Flat, args: dict[str, list[Any]], n: int) -> torch.Tensor:
        h, s, v = (self.values(args, k, n) for k in ("hue", "saturation", "value"))
        m = K.hsv_matrices64(h, s, v).to(torch.float32)
        return KA.color_matrix_flat(flat.items(), flat.ids(), m, None, self.dtype)


class ColorTwist(_ColorOp):
    in_types, out_types, rgb = _MATRIX_IN_TYPES, _MATRIX_OUT_TYPES, True

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x, shape = self.image(inputs[0])
        return _dispatch.call(K.color_twist, x, self.get(args, "brightness"), self.get(args, "contrast"),
                              self.get(args, "hue"), self.get(args, "saturation"), self.dtype).reshape(shape)

    def run_flat(self, flat: Flat, args: dict[str, list[Any]], n: int) -> torch.Tensor:
        b, c, h, s = (self.values(args, k, n) for k in ("brightness", "contrast", "hue", "saturation"))
        m, off = K.color_twist_matrices(b, c, h, s, flat.dtype)
        return KA.color_matrix_flat(flat.items(), flat.ids(), m.to(torch.float32), off, self.dtype)


def _a(name: str, default: Any, doc: str) -> Arg:
    return Arg(name, "float", default, doc, tensor=True)


register(OpSchema(
    name="brightness_contrast", impl=BrightnessContrast,
    doc="out = brightness * (contrast_center + contrast * (in - contrast_center)) + "
        "brightness_shift * max(output type); integers round and saturate.",
    args=(
        _a("brightness", 1.0, "multiplier of the result"),
        _a("brightness_shift", 0.0, "added, as a fraction of the output type's maximum"),
        _a("contrast", 1.0, "stretch about contrast_center (0 gives a flat image)"),
        Arg("contrast_center", "float", None, "value contrast keeps fixed (default: half the input "
            "type's range, 128 for uint8, 0.5 for float)", tensor=True),
        Arg("dtype", "dtype", None, "output type (default: the input's)"),
    ),
))
register(OpSchema(
    name="hsv", impl=Hsv,
    doc="Hue rotation, saturation and value scaling of RGB images, as a 3x3 matrix in YIQ space.",
    args=(
        _a("hue", 0.0, "hue rotation in degrees"),
        _a("saturation", 1.0, "saturation multiplier"),
        _a("value", 1.0, "value (brightness) multiplier"),
        Arg("dtype", "dtype", types.UINT8, "output type (DALI's default is UINT8 for any input)"),
    ),
))
register(OpSchema(
    name="color_twist", impl=ColorTwist,
    doc="hsv's hue/saturation matrix with brightness and contrast (about half the input range).",
    args=(
        _a("brightness", 1.0, "multiplier of the result"),
        _a("contrast", 1.0, "stretch about half the input type's range"),
        _a("hue", 0.0, "hue rotation in degrees"),
        _a("saturation", 1.0, "saturation multiplier"),
        Arg("dtype", "dtype", None, "output type (default: the input's)"),
        # DALI 2.4 gives the same pixels for every value (checked against its CPU backend)
        Arg("image_type", "image_type", types.RGB, "color space of the input and output; as in DALI "
            "2.4, the input is taken as RGB whatever is given"),
    ),
))
