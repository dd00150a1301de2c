"""random_resized_crop: a random window (area fraction and aspect ratio drawn as DALI draws them)
resized to `size`; on CUDA it may read only the parts of the images its windows need."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import ArgumentError
from ..functional.crop_window import random_crop_window, reading_regions
from ..functional.resize import resize
from ..tensor_list import TensorList
from . import _dispatch
from . import layouts as L
from ._operator import BatchContext, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, length, positive
from .fast.windows import random_crop_window_array
from .geometry import ImageOp, filter_args, interp_name, output_dtype


class RandomResizedCrop(ImageOp):
    """A random window (area and aspect ratio drawn as DALI does), resized to `size`."""

    layouts = L.RANDOM_RESIZED_CROP

    def setup(self) -> None:
        size = self.args["size"]
        size = [size] if isinstance(size, int) else list(size)
        self.size = (size[0], size[-1])
        self.area = self._pair("random_area")
        self.ratio = self._pair("random_aspect_ratio")
        if not 0 < self.area[0] <= self.area[1]:
            raise ArgumentError(f"{self.name}: `random_area` must be 0 < min <= max, got {self.area}")
        if not 0 < self.ratio[0] <= self.ratio[1]:
            raise ArgumentError(f"{self.name}: `random_aspect_ratio` must be 0 < min <= max, "
                                f"got {self.ratio}")
        self.dtype = output_dtype(self.args["dtype"])

    def _pair(self, name: str) -> tuple[float, float]:
        v = self.args[name]
        v = [v] if isinstance(v, (int, float)) else list(v)
        return (float(v[0]), float(v[-1]))

    def window(self, ctx: SampleContext, img: torch.Tensor) -> tuple[int, int, int, int]:
        return random_crop_window(ctx.rng, int(img.shape[0]), int(img.shape[1]), self.area, self.ratio,
                                  self.args["num_attempts"])

    def resize_window(self, img: torch.Tensor, window: tuple[int, int, int, int], args: dict[str, Any]) -> torch.Tensor:
        """An (H, W, K) image's window resized to `size`. The window is a region of interest, as in
        DALI: the filter reads the pixels past it."""
        return _dispatch.call(resize, img, self.size, interp_name(self.get(args, "interp_type")),
                              self.args["antialias"], interp_name(self.get(args, "min_filter")),
                              interp_name(self.get(args, "mag_filter")), self.dtype, roi=window)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        canon = self.canonical(inputs[0])
        img = inputs[0] if canon is None else canon.hwk
        out = self.resize_window(img, self.window(ctx, img), args)
        return out if canon is None else canon.back(out)

    def takes_regions(self) -> bool:
        """HWC images resampled with a constant linear filter: the case whose taps `reading_regions`
        bounds (and the batched CUDA kernel's, which reads regions exactly as whole images)."""
        interp = getattr(self.args.get("interp_type"), "key", None)
        return (self.device.type == "cuda" and self.hwc_input() and interp == "linear"
                and self.dtype in (None, torch.uint8) and self.args.get("min_filter") is None and self.args.get("mag_filter") is None
                and not any(k in self.node.arg_inputs for k in ("interp_type", "min_filter", "mag_filter")))

    def input_regions(self, iteration: int, sizes: np.ndarray) -> np.ndarray:
        wins = random_crop_window_array(self.node.seed, iteration, sizes, self.area, self.ratio,
                                        self.args["num_attempts"])
        return reading_regions(wins, sizes, self.size)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        regions = inputs[0].regions
        if regions is None:
            return super().run_batch(ctx, inputs, args)
        # parts of images: windows drawn for the whole images, read from the parts (the CUDA
        # kernel reads them exactly; here the shifted float origin may round a value differently)
        self.note_layout(inputs)

        def one(i: int) -> torch.Tensor:
            y0, x0, h, w = (int(v) for v in regions[i])
            wy, wx, wh, ww = random_crop_window(ctx.sample(i).rng, h, w, self.area, self.ratio,
                                                self.args["num_attempts"])
            return self.resize_window(inputs[0][i], (wy - y0, wx - x0, wh, ww), {k: v[i] for k, v in args.items()})
        return [TensorList(ctx.map(one, len(inputs[0])), self.output_layout(0))]


register(OpSchema(
    name="random_resized_crop", impl=RandomResizedCrop, random=True,
    doc="Crops a random area / aspect-ratio window and resizes it to `size` (height, width).",
    args=(
        Arg("size", "ints", doc="output (height, width)", check=positive),
        Arg("random_area", "floats", (0.08, 1.0), "range of the window's fraction of the image area",
            check=length(1, 2)),
        Arg("random_aspect_ratio", "floats", (3.0 / 4.0, 4.0 / 3.0),
            "range of the window's width / height (drawn log-uniformly)", check=length(1, 2)),
        Arg("num_attempts", "int", 10, "tries before the clamped fallback window", check=positive),
        *filter_args(),
    ),
))
