"""flip: mirrors images, sequences and volumes along W, H and D (per-sample flags), CPU or CUDA."""
from __future__ import annotations

from typing import Any

import torch

from ..functional import crop as C
from ..tensor_list import TensorList
from . import batching
from . import layouts as L
from ._operator import BatchContext, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema
from .geometry import ImageOp


class Flip(ImageOp):
    layouts = L.FLIP

    def flags(self, args: dict[str, list[Any]], name: str, n: int) -> list[bool]:
        """Each sample's `horizontal` / `vertical` / `depthwise` flag (per-sample or constant)."""
        return [bool(v) for v in (args[name] if name in args else [self.args[name]] * n)]

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        lay = self.layout_of(x)
        dims = [lay.index(axis) for axis, arg in (("W", "horizontal"), ("H", "vertical"), ("D", "depthwise"))
                if axis in lay and bool(self.get(args, arg))]
        return x.flip(dims) if dims else x

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        """On CUDA a dense batch flips in two launches, not one per sample (the batched spec)."""
        self.note_layout(inputs)
        tl = inputs[0]
        if self.device.type == "cuda" and self.hwc_input() and len(tl) and tl.is_dense_tensor() and tl[0].dim() == 3:
            n = len(tl)
            out = C.flip_batch(tl.as_tensor(), self.flags(args, "horizontal", n), self.flags(args, "vertical", n))
            return [TensorList(out, tl.layout())]
        if batching.batched(self, tl) and self.hwc_input() and all(t.dim() == 3 for t in tl.samples) \
                and len({t.dtype for t in tl.samples}) == 1 and len({int(t.shape[2]) for t in tl.samples}) == 1:
            n = len(tl)
            self.layout_of(tl[0])
            return [TensorList(C.flip_flat(tl.samples, self.flags(args, "horizontal", n),
                                           self.flags(args, "vertical", n)), self.output_layout(0))]
        return super().run_batch(ctx, inputs, args)

    def fuse(self, consumer: Any) -> Any:
        """flip -> crop_mirror_normalize on CUDA runs as one op pair (ops/fused.py): its kernel
        folds a horizontal flip into the crop's window and mirror flag."""
        from .fused import fuse_flip
        if not self.hwc_input() or not consumer.hwc_input():
            return None
        return fuse_flip(self, consumer)


register(OpSchema(
    name="flip", impl=Flip, doc="Mirrors images, sequences and volumes along W, H and D (per-sample flags).",
    args=(
        Arg("horizontal", "int", 1, "1 flips left-right", tensor=True),
        Arg("vertical", "int", 0, "1 flips upside down", tensor=True),
        Arg("depthwise", "int", 0, "1 flips volumes front to back (layouts with D)", tensor=True),
    ),
))
