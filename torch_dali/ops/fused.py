"""Pairs of ops that run as one CUDA kernel when the plan finds one feeding only the other.

`resize` -> `crop_mirror_normalize` (DALI's validation recipe, the Serialization example, and the
fused decode-crop + resize training recipe): the kernel computes only the pixels of the crop,
rounding them to uint8 as resize would store them, so the result equals running the two ops, with
no resized images in memory. When a batch does not suit the kernel, the two ops run as usual.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ..tensor_list import TensorList
from . import _cuda_batch as cuda_batch
from ._operator import BatchContext, Operator

if TYPE_CHECKING:
    from .geometry import Resize
    from .normalize import CropMirrorNormalize


class ResizeCropMirrorNormalize:
    """The fused pair; `run_fused` takes each op's own per-sample arguments."""

    def __init__(self, resize: "Resize", cmn: "CropMirrorNormalize") -> None:
        self.resize = resize
        self.cmn = cmn
        self.ops = (resize, cmn)

    def run_fused(self, ctxs: tuple[BatchContext, BatchContext], inputs: list[TensorList],
                  args: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> list[TensorList]:
        out = self._fast(inputs[0], *args)
        if out is not None:
            return [out]
        mid = self.resize.run_batch(ctxs[0], inputs, args[0])
        return self.cmn.run_batch(ctxs[1], mid, args[1])

    def _fast(self, tl: TensorList, rargs: dict[str, list[Any]], cargs: dict[str, list[Any]]) -> TensorList | None:
        from .normalize import one_size_inside
        rs, cmn = self.resize, self.cmn
        if not (cuda_batch.resize_ok(rs, tl) and cmn.kernel_ok(cargs)):
            return None
        sizes = rs.target_sizes(cuda_batch.image_sizes(tl), rargs)
        if sizes is None:
            return None
        wins = cmn.windows_array(sizes, cargs)
        if wins is None or not one_size_inside(wins, sizes):
            return None
        from .geometry import _interp_name
        n = len(tl)
        mean, std = cmn.stats({}, int(tl[0].shape[2]), torch.device("cpu"))
        out = cuda_batch.resize_crop_mirror_normalize(
            tl.samples, sizes, wins[:, :2], (int(wins[0, 2]), int(wins[0, 3])), cmn.mirror_flags(cargs, n),
            mean, std, _interp_name(rs.args["interp_type"]) or "linear", rs.args["antialias"], cmn.dtype,
            cmn.layout == "CHW")
        return TensorList(out, cmn.layout)


def fuse_resize(resize: "Resize", consumer: Operator) -> ResizeCropMirrorNormalize | None:
    from .normalize import CropMirrorNormalize
    if isinstance(consumer, CropMirrorNormalize) and resize.device.type == "cuda" \
            and consumer.device.type == "cuda" and len(consumer.node.inputs) == 1:
        return ResizeCropMirrorNormalize(resize, consumer)
    return None
