"""roi_random_crop and random_crop_generator: random crop windows as data (CPU, as in DALI).

Draws come from each sample's SampleRNG, so the same seed gives the same windows whatever the
thread count. random_crop_generator draws exactly as random_resized_crop does (same area /
aspect-ratio / fallback rules, `functional.crop_window`), so the two pick the same window for the
same seed and sample. Argument errors are raised when the batch runs (as DALI does: its tests
expect them from `pipe.run()`), in our own words.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import ArgumentError
from ..functional.crop_window import random_crop_window
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema, length, positive


def _ints(v: Any) -> list[int] | None:
    if v is None:
        return None
    return [int(x) for x in np.asarray(v).reshape(-1)]


class ROIRandomCrop(Operator):
    sample_wise = False

    def _get(self, args: dict[str, list[Any]], name: str, i: int) -> list[int] | None:
        return _ints(args[name][i] if name in args else self.args.get(name))

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        has_in_shape = "in_shape" in args or self.args.get("in_shape") is not None
        if inputs and has_in_shape:
            raise ArgumentError(f"{self.name}: `in_shape` was given and so was an input: the input's own shape is "
                                "used, so give one or the other")
        has_end = "roi_end" in args or self.args.get("roi_end") is not None
        has_shape = "roi_shape" in args or self.args.get("roi_shape") is not None
        if has_end == has_shape:
            raise ArgumentError(f"{self.name}: give exactly one of `roi_end` and `roi_shape` "
                                f"({'both were' if has_end else 'neither was'} given)")
        n = len(inputs[0]) if inputs else ctx.batch_size
        out = []
        for i in range(n):
            crop = self._get(args, "crop_shape", i)
            start = self._get(args, "roi_start", i)
            in_shape = [int(s) for s in inputs[0][i].shape] if inputs else self._get(args, "in_shape", i)
            if has_end:
                end = self._get(args, "roi_end", i)
            else:
                end = [a + b for a, b in zip(start, self._get(args, "roi_shape", i))]
            ndim = len(crop)
            if inputs and in_shape is not None and len(in_shape) > ndim:
                # DALI 2.4: an input of more dimensions than crop_shape (an HWC image, a 2-D crop)
                # is cropped in its leading ones
                in_shape = in_shape[:ndim]
            for name, v in (("roi_start", start), ("ROI end/shape", end), ("in_shape", in_shape)):
                if v is not None and len(v) != ndim:
                    raise ArgumentError(f"{self.name}: `{name}` has {len(v)} values, `crop_shape` {ndim}")
            if in_shape is not None and any(s < 0 for s in in_shape):
                raise ArgumentError(f"{self.name}: the input shape {in_shape} has a negative extent")
            if any(c < 0 for c in crop):
                raise ArgumentError(f"{self.name}: `crop_shape` {crop} has a negative extent")
            if any(e < s for s, e in zip(start, end)):
                raise ArgumentError(f"{self.name}: the ROI ends before it starts (start {start}, end {end})")
            if in_shape is not None and any(s < 0 or e > n_ for s, e, n_ in zip(start, end, in_shape)):
                raise ArgumentError(f"{self.name}: the ROI (start {start}, end {end}) reaches outside the input of "
                                    f"shape {in_shape}")
            if in_shape is not None and any(c > n_ for c, n_ in zip(crop, in_shape)):
                raise ArgumentError(f"{self.name}: `crop_shape` {crop} is larger than the input of shape {in_shape}")
            rng = ctx.sample(i).rng
            anchor = []
            for d in range(ndim):
                if crop[d] >= end[d] - start[d]:  # the window holds the ROI
                    lo, hi = end[d] - crop[d], start[d]
                else:  # the window lies inside the ROI
                    lo, hi = start[d], end[d] - crop[d]
                if in_shape is not None:
                    lo, hi = max(lo, 0), min(hi, in_shape[d] - crop[d])
                anchor.append(rng.randint(lo, hi))
            out.append(torch.tensor(anchor, dtype=torch.int64))
        return [TensorList(out, "")]


class RandomCropGenerator(Operator):
    sample_wise = False

    def setup(self) -> None:
        self.area = self._pair("random_area")
        self.ratio = self._pair("random_aspect_ratio")
        if not 0 < self.area[0] <= self.area[1]:
            raise ArgumentError(f"{self.name}: `random_area` must be 0 < min <= max, got {self.area}")
        if not 0 < self.ratio[0] <= self.ratio[1]:
            raise ArgumentError(f"{self.name}: `random_aspect_ratio` must be 0 < min <= max, got {self.ratio}")

    def _pair(self, name: str) -> tuple[float, float]:
        v = self.args[name]
        v = [v] if isinstance(v, (int, float)) else list(v)
        return float(v[0]), float(v[-1])

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        anchors, shapes = [], []
        for i, s in enumerate(inputs[0]):
            dims = [int(v) for v in s.reshape(-1).tolist()]
            if s.dim() != 1 or len(dims) not in (2, 3):
                raise ArgumentError(f"{self.name}: expected a shape (H, W) or (H, W, C) per sample, got "
                                    f"{s.tolist()}")
            if min(dims[:2]) <= 0:  # an empty (or negative) extent: the empty window at 0, as DALI 2.4
                y = x = h = w = 0
            else:
                y, x, h, w = random_crop_window(ctx.sample(i).rng, dims[0], dims[1], self.area, self.ratio,
                                                self.args["num_attempts"])
            anchors.append(torch.tensor([y, x], dtype=torch.int32))
            shapes.append(torch.tensor([h, w], dtype=torch.int32))
        return [TensorList(anchors, ""), TensorList(shapes, "")]


register(OpSchema(
    name="roi_random_crop", impl=ROIRandomCrop, devices=("cpu",), min_inputs=0, max_inputs=1, random=True,
    class_name_override="ROIRandomCrop",
    doc="A random start (int64) for a `crop_shape` window that holds the ROI (or lies inside it when "
        "smaller), within `in_shape` or the input's shape when given.",
    args=(
        Arg("crop_shape", "int_list", doc="window extents", tensor=True),
        Arg("roi_start", "int_list", doc="ROI start", tensor=True),
        Arg("roi_end", "int_list", None, "ROI end (excludes roi_shape)", tensor=True),
        Arg("roi_shape", "int_list", None, "ROI extents (excludes roi_end)", tensor=True),
        Arg("in_shape", "int_list", None, "shape of the data to crop (excludes an input)", tensor=True),
    ),
))
register(OpSchema(
    name="random_crop_generator", impl=RandomCropGenerator, devices=("cpu",), num_outputs=2, random=True,
    doc="From shapes (H, W[, C]): a random window's anchor (y, x) and shape (h, w), int32, drawn as "
        "random_resized_crop draws its windows.",
    args=(
        Arg("random_area", "floats", (0.08, 1.0), "range of the window's fraction of the area", check=length(1, 2)),
        Arg("random_aspect_ratio", "floats", (3.0 / 4.0, 4.0 / 3.0), "range of width / height (log-uniform)",
            check=length(1, 2)),
        Arg("num_attempts", "int", 10, "tries before the clamped fallback window", check=positive),
    ),
))
