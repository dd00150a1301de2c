"""crop_mirror_normalize: crop, optional mirror, (x - mean) / std * scale + shift, and a new layout
(any permutation of the input's: HWC -> CHW by default). Inputs may be HWC, CHW, HW or sequences
(FHWC, FCHW, CFHW); mean and std are per channel (C)."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError
from ..functional import ragged as R
from ..functional.normalize import (crop_mirror_normalize, crop_mirror_normalize_batch, crop_mirror_normalize_flat,
                                    padded_channels, per_channel)
from ..functional.regions import c_cast, channel_fill
from ..functional.ragged import Flat
from ..tensor_list import TensorList
from . import batching
from . import layouts as L
from ._operator import BatchContext, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, one_of
from .geometry import CROP_ARGS, Crop


class CropMirrorNormalize(Crop):
    """Per-sample on CPU threads; on CUDA a dense batch goes through one batched gather."""

    layouts = L.CROP
    layout_defaults = L.DEFAULT

    def setup(self) -> None:
        super().setup()
        if self.policy not in ("error", "pad", "trim_to_shape"):  # DALI 2.4's takes no border policy
            raise ArgumentError(f"{self.name}: `out_of_bounds_policy` must be 'error', 'pad' (or 'constant') or "
                                f"'trim_to_shape', got {self.args['out_of_bounds_policy']!r}")
        self.layout = self.args["output_layout"]
        self._const_stats: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def output_layout(self, index: int) -> str:
        return self.layout

    def hwc_input(self) -> bool:
        return super().hwc_input() and self.layout in ("CHW", "HWC")

    def _other_layout(self, ctx: SampleContext, img: torch.Tensor, lay: str, args: dict[str, Any]) -> torch.Tensor:
        """A layout other than HWC: depth cut first, then the (H, W, K) view normalized as HWC, then
        padded and put in the output layout (a permutation of the input's, as in DALI). Depth
        slices outside the volume take the fill values in the output type, as pixels outside the
        image do (not normalized: DALI fills after normalizing)."""
        if sorted(self.layout) != sorted(lay):
            raise ArgumentError(f'{self.name}: output_layout "{self.layout}" is not a permutation of the input '
                                f'layout "{lay}"')
        c_axis = lay.find("C")
        c = int(img.shape[c_axis]) if c_axis >= 0 else 1
        oob, pad = self._fills(c)
        cut = self.crop_depth(img, lay, args, fill=[0.0])
        inside = None
        if cut is not img:  # which depth slices come from the volume: the same cut of a ones vector
            ones = torch.ones([int(n) if a in "DF" else 1 for a, n in zip(lay, img.shape)], device=img.device)
            inside = self.crop_depth(ones, lay, args, fill=[0.0]) != 0
        canon = L.Canonical(cut, lay)
        k = int(canon.hwk.shape[2])
        try:
            mean = per_channel(canon.per_k(_as_list(self.get(args, "mean"))), k, "mean", img.device)
            std = per_channel(canon.per_k(_as_list(self.get(args, "std"))), k, "std", img.device)
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None
        common = {**self._common(c), "layout": "HWC", "pad_output": False, "fill_values": canon.per_k(oob),
                  "pad_values": None}
        try:
            y = crop_mirror_normalize(canon.hwk, self.window(canon.hwk, args), bool(self.get(args, "mirror")),
                                      mean, std, **common)
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None
        y = canon.back(y)
        if inside is not None and not bool(inside.all()):
            fill = channel_fill(c_cast(oob, y.dtype, y.device), y.dim(), c_axis)
            y = torch.where(inside, y, fill)
        if self.args["pad_output"] and c_axis >= 0:
            y = L.pad_channels(y, lay, None if pad is None else c_cast(pad, y.dtype, y.device))
        return y.permute([lay.index(a) for a in self.layout]).contiguous()

    def _fills(self, c: int) -> tuple[list[float], list[float] | None]:
        """(values of pixels outside the input, values of pad_output's added channels) for `c`
        input channels. As DALI 2.4: the added channels hold the fill values (one value for all,
        or one per output channel) only under out_of_bounds_policy="pad", zeros otherwise."""
        f = self.fill_values
        c_out = padded_channels(c) if self.args["pad_output"] else c
        oob = f[:c] if len(f) == c_out != c else f
        if self.policy != "pad" or c_out == c or len(f) not in (1, c_out):
            return oob, [0.0] * (c_out - c)
        return oob, f * (c_out - c) if len(f) == 1 else f[c:]

    def stats(self, args: dict[str, Any], channels: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
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

    def _common(self, channels: int) -> dict[str, Any]:
        oob, pad = self._fills(channels)
        return dict(scale=float(self.args["scale"]), shift=float(self.args["shift"]), dtype=self.dtype,
                    layout=self.layout, pad_output=bool(self.args["pad_output"]),
                    fill_values=oob, pad_values=pad)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        img = inputs[0]
        lay = self.layout_of(img)
        if lay not in ("HWC", "HW") or self.layout not in ("CHW", "HWC"):
            return self._other_layout(ctx, img, lay, args)
        channels = int(img.shape[2]) if img.dim() == 3 else 1
        mean, std = self.stats(args, channels, img.device)
        try:
            return crop_mirror_normalize(img, self.window(img, args), bool(self.get(args, "mirror")),
                                         mean, std, **self._common(channels), out=ctx.out)
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None

    def mirror_flags(self, args: dict[str, list[Any]], n: int) -> list[Any]:
        return args["mirror"] if "mirror" in args else [self.args["mirror"]] * n

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        """A dense batch of HWC images with one window size inside them: one batched gather
        (`functional.normalize.crop_mirror_normalize_batch`); otherwise sample by sample."""
        self.note_layout(inputs)
        tl = inputs[0]
        if len(tl) and not tl.is_dense_tensor() and batching.batched(self, tl):
            out = self.run_flat(tl, args)
            if out is not None:
                return [out]
        if len(tl) == 0 or not tl.is_dense_tensor() or "mean" in args or "std" in args \
                or tl[0].dim() != 3 or not self.hwc_input():
            return super().run_batch(ctx, inputs, args)
        imgs = tl.as_tensor()
        in_hw = np.broadcast_to(np.array(imgs.shape[1:3], dtype=np.int64), (len(tl), 2))
        wins = self.windows_array(in_hw, args)
        if wins is None or not one_size_inside(wins, in_hw):  # trimmed, padded or bad windows
            return super().run_batch(ctx, inputs, args)
        mean, std = self.stats({}, int(imgs.shape[3]), imgs.device)
        out = crop_mirror_normalize_batch(imgs, torch.from_numpy(np.ascontiguousarray(wins[:, :2])),
                                          (int(wins[0, 2]), int(wins[0, 3])),
                                          torch.tensor([bool(m) for m in self.mirror_flags(args, len(tl))]),
                                          mean, std, **self._common(int(imgs.shape[3])))
        return [TensorList(out, self.layout)]


    def run_flat(self, tl: TensorList, args: dict[str, list[Any]]) -> TensorList | None:
        """HWC images of different sizes, windows of one size inside them: one gather over the
        batch held flat (`functional.ragged`); None for any other batch (sample by sample)."""
        s = tl.samples
        if "mean" in args or "std" in args or not self.hwc_input() or any(t.dim() != 3 for t in s) \
                or len({(t.dtype, int(t.shape[2])) for t in s}) != 1:
            return None
        in_hw = np.array([t.shape[:2] for t in s], dtype=np.int64).reshape(-1, 2)
        wins = self.windows_array(in_hw, args)
        if wins is None or not one_size_inside(wins, in_hw):
            return None
        self.layout_of(s[0])
        flat = Flat(s, inner=1)
        mean, std = self.stats({}, int(s[0].shape[2]), flat.device)
        out = crop_mirror_normalize_flat(flat.items(), R.starts(flat.rows), in_hw[:, 1].tolist(),
                                         torch.from_numpy(np.ascontiguousarray(wins[:, :2])),
                                         (int(wins[0, 2]), int(wins[0, 3])),
                                         torch.tensor([bool(m) for m in self.mirror_flags(args, len(s))]),
                                         mean, std, **self._common(int(s[0].shape[2])))
        return TensorList(out, self.layout)


def _as_list(v: Any) -> list[float]:
    return [float(x) for x in v] if isinstance(v, (list, tuple)) else [float(v)]


def one_size_inside(wins: np.ndarray, in_hw: np.ndarray) -> bool:
    """Whether windows (n, 4) all have one size and lie inside their (n, 2) images."""
    return bool((wins[:, 2:] == wins[0, 2:]).all() and (wins[:, :2] >= 0).all()
                and (wins[:, :2] + wins[:, 2:] <= in_hw).all() and (wins[0, 2:] > 0).all())


register(OpSchema(
    name="crop_mirror_normalize", impl=CropMirrorNormalize, output_layout="CHW",
    doc="Crops, optionally mirrors, normalizes ((x - mean) / std * scale + shift) and changes the "
        "layout of images (HWC, CHW, HW, FHWC, FCHW, CFHW); by default HWC to float CHW.",
    args=(
        *CROP_ARGS,
        Arg("mirror", "int", 0, "1 mirrors the sample left-right", tensor=True),
        Arg("mean", "floats", (0.0,), "subtracted, one value or one per channel", tensor=True),
        Arg("std", "floats", (1.0,), "divides, one value or one per channel", tensor=True),
        Arg("scale", "float", 1.0, "multiplies the normalized value"),
        Arg("shift", "float", 0.0, "added last"),
        Arg("dtype", "dtype", types.FLOAT, "output type", aliases=("output_dtype",)),
        Arg("output_layout", "layout", "CHW", "the output layout: a permutation of the input's (CHW, HWC, "
            "FCHW...)", check=lambda v: None if set(v) <= set("FDHWC") and len(set(v)) == len(v) else
            "distinct axes among F, D, H, W, C"),
        Arg("pad_output", "bool", False, "pad channels to the next power of two: zeros, or the fill values "
            "under out_of_bounds_policy=\"pad\""),
    ),
))
