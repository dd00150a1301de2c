"""crop_mirror_normalize: crop, optional mirror, (x - mean) / std * scale + shift, HWC -> CHW."""
from __future__ import annotations

from typing import Any

import torch

from .. import types
from ..errors import ArgumentError
from ..functional.normalize import crop_mirror_normalize, crop_mirror_normalize_batch, per_channel
from ..tensor_list import TensorList
from . import _cuda_batch as cuda_batch
from ._operator import BatchContext, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, one_of
from .geometry import _CROP_ARGS, Crop


class CropMirrorNormalize(Crop):
    """Per-sample on CPU threads; on CUDA a dense batch goes through one batched gather."""

    def setup(self) -> None:
        super().setup()
        self.layout = self.args["output_layout"]
        self._const_stats: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def output_layout(self, index: int) -> str:
        return self.layout

    def _stats(self, args: dict[str, Any], channels: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        if "mean" not in args and "std" not in args and channels in self._const_stats:
            m, s = self._const_stats[channels]
            return m.to(device), s.to(device)
        try:
            mean = per_channel(self.get(args, "mean"), channels, "mean", device)
            std = per_channel(self.get(args, "std"), channels, "std", device)
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None
        if "mean" not in args and "std" not in args:
            self._const_stats[channels] = (mean, std)
        return mean, std

    def _common(self) -> dict[str, Any]:
        return dict(scale=float(self.args["scale"]), shift=float(self.args["shift"]), dtype=self.dtype,
                    layout=self.layout, pad_output=bool(self.args["pad_output"]),
                    fill_values=self.args["fill_values"])

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        img = inputs[0]
        self.check_image(img)
        channels = int(img.shape[2]) if img.dim() == 3 else 1
        mean, std = self._stats(args, channels, img.device)
        try:
            return crop_mirror_normalize(img, self.window(img, args), bool(self.get(args, "mirror")),
                                         mean, std, **self._common(), out=ctx.out)
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None

    def _cuda_fast(self, tl: TensorList, args: dict[str, list[Any]]) -> TensorList | None:
        """One launch of our fused kernel when every window lies inside its image and has one size."""
        if "mean" in args or "std" in args or self.args["pad_output"] or self.dtype not in cuda_batch._OUT_DTYPES \
                or float(self.args["scale"]) != 1.0 or float(self.args["shift"]) != 0.0 \
                or self.device.type != "cuda" or not cuda_batch._images_ok(tl) or cuda_batch.kernels() is None:
            return None
        imgs = tl.samples
        wins = self._windows(tl, args)
        dense = self._one_window(tl, args)
        inside = all(y >= 0 and x >= 0 and y + h <= im.shape[0] and x + w <= im.shape[1]
                     for (y, x, h, w), im in zip(wins[:1] if dense else wins, imgs))
        if not inside or (not dense and len({(w[2], w[3]) for w in wins}) != 1):
            return None
        mirror = args["mirror"] if "mirror" in args else [self.args["mirror"]] * len(imgs)
        mean, std = self._stats({}, int(imgs[0].shape[2]), torch.device("cpu"))
        # one window for a dense batch: broadcast, not a tensor built from n tuples
        win = torch.tensor([list(wins[0])], dtype=torch.int32).expand(len(wins), 4) if dense else wins
        out = cuda_batch.crop_mirror_normalize(imgs, win, mirror, mean, std, self.dtype, self.layout == "CHW")
        return TensorList(out, self.layout)

    @staticmethod
    def _one_window(tl: TensorList, args: dict[str, list[Any]]) -> bool:
        return tl._dense is not None and len(tl) > 0 and not set(args) - {"mirror"}

    def _windows(self, tl: TensorList, args: dict[str, list[Any]]) -> list[Any]:
        """Each sample's crop window; computed once for a dense batch when no per-sample argument
        but `mirror` can move it (all samples then share one shape, so one window)."""
        if self._one_window(tl, args):
            return [self.window(tl[0], {})] * len(tl)
        return [self.window(im, {k: v[i] for k, v in args.items()}) for i, im in enumerate(tl.samples)]

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        fast = self._cuda_fast(tl, args)
        if fast is not None:
            return [fast]
        if len(tl) == 0 or not tl.is_dense_tensor() or "mean" in args or "std" in args \
                or tl[0].dim() != 3:
            return super().run_batch(ctx, inputs, args)
        imgs = tl.as_tensor()
        wins = self._windows(tl, args)
        if len({(w[2], w[3]) for w in wins}) != 1:  # trimmed windows of different sizes
            return super().run_batch(ctx, inputs, args)
        mirror = args["mirror"] if "mirror" in args else [self.args["mirror"]] * len(tl)
        mean, std = self._stats({}, int(imgs.shape[3]), imgs.device)
        anchors = torch.tensor([[w[0], w[1]] for w in wins], dtype=torch.int64)
        out = crop_mirror_normalize_batch(imgs, anchors, (wins[0][2], wins[0][3]),
                                          torch.tensor([bool(m) for m in mirror]), mean, std,
                                          **self._common())
        return [TensorList(out, self.layout)]


register(OpSchema(
    name="crop_mirror_normalize", impl=CropMirrorNormalize, output_layout="CHW",
    doc="Crops, optionally mirrors, normalizes ((x - mean) / std * scale + shift) and changes the "
        "layout of HWC images; by default to float CHW.",
    args=(
        *_CROP_ARGS,
        Arg("mirror", "int", 0, "1 mirrors the sample left-right", tensor=True),
        Arg("mean", "floats", (0.0,), "subtracted, one value or one per channel", tensor=True),
        Arg("std", "floats", (1.0,), "divides, one value or one per channel", tensor=True),
        Arg("scale", "float", 1.0, "multiplies the normalized value"),
        Arg("shift", "float", 0.0, "added last"),
        Arg("dtype", "dtype", types.FLOAT, "output type", aliases=("output_dtype",)),
        Arg("output_layout", "layout", "CHW", "CHW or HWC", check=one_of("CHW", "HWC")),
        Arg("pad_output", "bool", False, "pad channels with zeros to the next power of two"),
    ),
))
