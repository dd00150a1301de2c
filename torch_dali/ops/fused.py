"""Pairs of ops that the plan runs as one step when it finds one feeding only the other.

`flip` -> `crop_mirror_normalize` on CUDA (a horizontal flip before the usual normalization, as in
DALI's flip example pipelines): cropping a mirrored image is mirroring the window on the other side,
so the fast kernel folds the flip into the crop's window and mirror flag and reads the flip's
input: no flipped batch in memory, one launch less.

`resize` -> `crop_mirror_normalize` on CUDA (DALI's validation recipe, the Serialization example,
and the fused decode-crop + resize training recipe). The pair's spec is the two ops one after the
other (each through the dispatch, so each may still take its own fast kernel); its fast kernel
(`ops.fast.image_kernels`) computes only the pixels of the crop, rounding them to uint8 as resize
would store them, so the result equals the two ops, with no resized images in memory.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..tensor_list import TensorList
from . import _dispatch
from ._operator import BatchContext, Operator

if TYPE_CHECKING:
    from .flip import Flip
    from .geometry import Resize
    from .normalize import CropMirrorNormalize


class _IntoCropMirrorNormalize:
    """An op and the crop_mirror_normalize reading it, as one step; `run_batch` (the pair's spec)
    runs the two in turn, each through the dispatch with its own context and per-sample arguments.
    Subclasses name the pair, so each has its own fast kernel (`ops.fast.image_kernels`)."""

    def __init__(self, first: Operator, cmn: "CropMirrorNormalize") -> None:
        self.first = first
        self.cmn = cmn
        self.ops = (first, cmn)

    def run_batch(self, ctxs: tuple[BatchContext, BatchContext], inputs: list[TensorList],
                  args: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> list[TensorList]:
        mid = _dispatch.run_batch(self.first, ctxs[0], inputs, args[0])
        return _dispatch.run_batch(self.cmn, ctxs[1], mid, args[1])


class ResizeCropMirrorNormalize(_IntoCropMirrorNormalize):
    """resize -> crop_mirror_normalize."""

    @property
    def resize(self) -> "Resize":
        return self.first  # type: ignore[return-value]


class FlipCropMirrorNormalize(_IntoCropMirrorNormalize):
    """flip -> crop_mirror_normalize."""

    @property
    def flip(self) -> "Flip":
        return self.first  # type: ignore[return-value]


def _reads_on_cuda(op: Operator, consumer: Operator) -> bool:
    """`consumer` is a crop_mirror_normalize on CUDA whose one data input is `op`'s, also on CUDA."""
    from .normalize import CropMirrorNormalize
    return (isinstance(consumer, CropMirrorNormalize) and op.device.type == "cuda"
            and consumer.device.type == "cuda" and len(consumer.node.inputs) == 1)


def fuse_resize(resize: "Resize", consumer: Operator) -> ResizeCropMirrorNormalize | None:
    return ResizeCropMirrorNormalize(resize, consumer) if _reads_on_cuda(resize, consumer) else None  # type: ignore[arg-type]


def fuse_flip(flip: "Flip", consumer: Operator) -> FlipCropMirrorNormalize | None:
    return FlipCropMirrorNormalize(flip, consumer) if _reads_on_cuda(flip, consumer) else None  # type: ignore[arg-type]
