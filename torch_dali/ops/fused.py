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


class ResizeCropMirrorNormalize:
    """The fused pair; `run_batch` takes each op's own context and per-sample arguments."""

    def __init__(self, resize: "Resize", cmn: "CropMirrorNormalize") -> None:
        self.resize = resize
        self.cmn = cmn
        self.ops = (resize, cmn)

    def run_batch(self, ctxs: tuple[BatchContext, BatchContext], inputs: list[TensorList],
                  args: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> list[TensorList]:
        mid = _dispatch.run_batch(self.resize, ctxs[0], inputs, args[0])
        return _dispatch.run_batch(self.cmn, ctxs[1], mid, args[1])


def fuse_resize(resize: "Resize", consumer: Operator) -> ResizeCropMirrorNormalize | None:
    from .normalize import CropMirrorNormalize
    if isinstance(consumer, CropMirrorNormalize) and resize.device.type == "cuda" \
            and consumer.device.type == "cuda" and len(consumer.node.inputs) == 1:
        return ResizeCropMirrorNormalize(resize, consumer)
    return None


class FlipCropMirrorNormalize:
    """The fused pair flip -> crop_mirror_normalize; its spec runs the two ops in turn."""

    def __init__(self, flip: "Flip", cmn: "CropMirrorNormalize") -> None:
        self.flip = flip
        self.cmn = cmn
        self.ops = (flip, cmn)

    def run_batch(self, ctxs: tuple[BatchContext, BatchContext], inputs: list[TensorList],
                  args: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> list[TensorList]:
        mid = _dispatch.run_batch(self.flip, ctxs[0], inputs, args[0])
        return _dispatch.run_batch(self.cmn, ctxs[1], mid, args[1])


def fuse_flip(flip: "Flip", consumer: Operator) -> FlipCropMirrorNormalize | None:
    from .normalize import CropMirrorNormalize
    if isinstance(consumer, CropMirrorNormalize) and flip.device.type == "cuda" \
            and consumer.device.type == "cuda" and len(consumer.node.inputs) == 1:
        return FlipCropMirrorNormalize(flip, consumer)
    return None
