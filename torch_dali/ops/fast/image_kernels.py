"""The CUDA extension's kernels as the fast kernels of the image ops (registered with the dispatch,
`ops._dispatch`): each says which batches it `supports` and computes what the op's spec computes.

* resize: every sample in one launch of `resize_batch`; one output size for all gives a dense batch.
* random_resized_crop: the spec's windows (drawn in one C call), cut and resized in one launch.
* crop_mirror_normalize: one launch when every window lies inside its image and has one size.
* resize -> crop_mirror_normalize (fused by the plan, `ops.fused`): only the crop's pixels, rounded
  to uint8 as resize would store them, so the result equals running the two ops.
* flip -> crop_mirror_normalize (fused by the plan), horizontal flips only: crop_mirror_normalize's
  kernel on the flip's input, each flipped sample's window mirrored and its mirror flag inverted.
* flip, horizontal only, of a dense batch: crop_mirror_normalize's kernel with whole-image windows,
  per-sample mirror flags and no normalization (uint8 in, the same uint8 out). No torch kernel is
  launched, so none of torch's CUDA modules is loaded for it.

All take CUDA uint8 HWC batches with 1, 3 or 4 channels, a plain filter (linear, triangular or
nearest; random_resized_crop: linear) given as a constant, and no output dtype other than uint8
for the resizing ops.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from ...tensor_list import TensorList
from .._dispatch import FastKernel, register_fast
from ..fused import FlipCropMirrorNormalize, ResizeCropMirrorNormalize
from ..flip import Flip
from ..geometry import Resize, interp_name
from ..random_resized_crop import RandomResizedCrop
from ..normalize import CropMirrorNormalize, one_size_inside
from . import cuda_image as cuda
from .windows import mirrored_windows, random_crop_window_array

_FILTER_ARGS = ("interp_type", "min_filter", "mag_filter")


def _plain_filter(op: Any) -> bool:
    """One filter the kernels have (linear, triangular, nearest), given as a constant."""
    if any(n in op.node.arg_inputs for n in _FILTER_ARGS):
        return False
    interp = getattr(op.args.get("interp_type"), "key", op.args.get("interp_type"))
    return interp in cuda.INTERP and op.args.get("min_filter") is None and op.args.get("mag_filter") is None


def _hwc(op: Any, inputs: Sequence[TensorList]) -> bool:
    """The kernels read HWC images (or data without a layout, taken as HWC); the batch's own layout
    (fed with `feed_input(..., layout=)`) overrides the traced one."""
    op.note_layout(list(inputs))
    return op.hwc_input()


def _resize_ok(op: Resize, tl: TensorList) -> bool:
    """The kernels map each image, or the window a fractional size kept by subpixel_scale reads,
    onto its output: no region of interest here (`run` declines flips and nearest-neighbour windows)."""
    return (op.device.type == "cuda" and not op.has_roi and not op.args.get("save_attrs")
            and _hwc(op, [tl]) and _plain_filter(op)
            and op.dtype in (None, torch.uint8) and cuda.images_ok(tl) and cuda.kernels() is not None)


def _normalize_ok(op: CropMirrorNormalize, args: dict[str, list[Any]]) -> bool:
    """The fused kernel normalizes with per-batch statistics and no scale, shift or padding."""
    return ("mean" not in args and "std" not in args and not op.args["pad_output"]
            and op.dtype in cuda.OUT_DTYPES and float(op.args["scale"]) == 1.0
            and float(op.args["shift"]) == 0.0 and op.device.type == "cuda" and cuda.kernels() is not None)


def _kernel_plan(op: Resize, tl: TensorList, args: dict[str, list[Any]]) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(sizes, source windows or None) the kernels resample, or None: a region of interest, a flip,
    or nearest-neighbour windows (the spec does those)."""
    plan = op.target_plan(cuda.image_sizes(tl), args)
    if plan is None or (plan[1] is not None and (interp_name(op.args["interp_type"]) or "linear") != "linear"):
        return None
    return plan


class ResizeKernel(FastKernel):
    name = "resize_batch (CUDA extension)"

    def supports(self, op: Resize, inputs: Sequence[TensorList], args: dict[str, list[Any]]) -> bool:
        return _resize_ok(op, inputs[0])

    def run(self, op: Resize, ctx: Any, inputs: Sequence[TensorList],
            args: dict[str, list[Any]]) -> list[TensorList] | None:
        tl = inputs[0]
        plan = _kernel_plan(op, tl, args)
        if plan is None:
            return None
        sizes, source = plan
        interp = interp_name(op.args["interp_type"]) or "linear"
        if (sizes == sizes[0]).all():
            return [TensorList(cuda.resize_dense(tl.samples, sizes[0], op.args["antialias"], interp, source),
                               tl.layout())]
        return [TensorList(cuda.resize(tl.samples, sizes, op.args["antialias"], interp, source), tl.layout())]


class RandomResizedCropKernel(FastKernel):
    name = "resized_crop_mirror_normalize (CUDA extension)"

    def supports(self, op: RandomResizedCrop, inputs: Sequence[TensorList], args: dict[str, list[Any]]) -> bool:
        interp = getattr(op.args.get("interp_type"), "key", None)
        return (op.device.type == "cuda" and interp == "linear" and _hwc(op, inputs) and _plain_filter(op)
                and op.dtype in (None, torch.uint8) and cuda.images_ok(inputs[0]) and cuda.kernels() is not None)

    def run(self, op: RandomResizedCrop, ctx: Any, inputs: Sequence[TensorList],
            args: dict[str, list[Any]]) -> list[TensorList] | None:
        tl = inputs[0]
        imgs = tl.samples
        regions = tl.regions  # parts of images (a decoder decoded what we read): windows of the wholes
        sizes = (np.array([tuple(im.shape) for im in imgs], dtype=np.int64)[:, :2] if regions is None
                 else regions[:, 2:])  # fastest way seen
        wins = random_crop_window_array(op.node.seed, ctx.iteration, sizes, op.area, op.ratio,
                                        op.args["num_attempts"])
        return [TensorList(cuda.resized_crops(imgs, wins, op.size, op.args["antialias"], regions), tl.layout())]


class CropMirrorNormalizeKernel(FastKernel):
    name = "resized_crop_mirror_normalize (CUDA extension)"

    def supports(self, op: CropMirrorNormalize, inputs: Sequence[TensorList],
                 args: dict[str, list[Any]]) -> bool:
        return _normalize_ok(op, args) and _hwc(op, inputs) and cuda.images_ok(inputs[0])

    def run(self, op: CropMirrorNormalize, ctx: Any, inputs: Sequence[TensorList],
            args: dict[str, list[Any]]) -> list[TensorList] | None:
        tl = inputs[0]
        in_hw = cuda.image_sizes(tl)
        wins = op.windows_array(in_hw, args)
        if wins is None or not one_size_inside(wins, in_hw):
            return None
        mean, std = op.stats({}, int(tl[0].shape[2]), torch.device("cpu"))
        out = cuda.crop_mirror_normalize(tl.samples, wins, op.mirror_flags(args, len(tl)), mean, std,
                                         op.dtype, op.layout == "CHW")
        return [TensorList(out, op.layout)]


class ResizeCropMirrorNormalizeKernel(FastKernel):
    name = "resize_crop_mirror_normalize (CUDA extension)"

    def supports(self, pair: ResizeCropMirrorNormalize, inputs: Sequence[TensorList],
                 args: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> bool:
        return _resize_ok(pair.resize, inputs[0]) and _normalize_ok(pair.cmn, args[1]) and pair.cmn.hwc_input()

    def run(self, pair: ResizeCropMirrorNormalize, ctx: Any, inputs: Sequence[TensorList],
            args: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> list[TensorList] | None:
        rs, cmn = pair.resize, pair.cmn
        rargs, cargs = args
        tl = inputs[0]
        plan = _kernel_plan(rs, tl, rargs)
        if plan is None:
            return None
        sizes, source = plan
        interp = interp_name(rs.args["interp_type"]) or "linear"
        wins = cmn.windows_array(sizes, cargs)
        if wins is None or not one_size_inside(wins, sizes):
            return None
        mean, std = cmn.stats({}, int(tl[0].shape[2]), torch.device("cpu"))
        out = cuda.resize_crop_mirror_normalize(
            tl.samples, sizes, wins[:, :2], (int(wins[0, 2]), int(wins[0, 3])), cmn.mirror_flags(cargs, len(tl)),
            mean, std, interp, rs.args["antialias"], cmn.dtype, cmn.layout == "CHW", source=source)
        return [TensorList(out, cmn.layout)]


class HorizontalFlipKernel(FastKernel):
    name = "resized_crop_mirror_normalize (CUDA extension), as a mirror"

    def supports(self, op: Flip, inputs: Sequence[TensorList], args: dict[str, list[Any]]) -> bool:
        tl = inputs[0]
        d = tl.dense
        return (op.device.type == "cuda" and d is not None and d.dim() == 4 and d.is_cuda
                and d.dtype == torch.uint8 and int(d.shape[3]) in (1, 3, 4) and d.shape[0] > 0
                and _hwc(op, inputs) and cuda.kernels() is not None
                and not any(op.flags(args, "vertical", len(tl))) and not any(op.flags(args, "depthwise", len(tl))))

    def run(self, op: Flip, ctx: Any, inputs: Sequence[TensorList], args: dict[str, list[Any]]) -> list[TensorList] | None:
        tl = inputs[0]
        n, h, w, c = (int(v) for v in tl.dense.shape)
        wins = np.broadcast_to(np.array([0, 0, h, w], dtype=np.int64), (n, 4))
        out = cuda.crop_mirror_normalize(tl.samples, wins, op.flags(args, "horizontal", n), torch.zeros(c),
                                         torch.ones(c), torch.uint8, False)
        return [TensorList(out, tl.layout())]


class FlipCropMirrorNormalizeKernel(FastKernel):
    name = "resized_crop_mirror_normalize (CUDA extension), flip folded in"

    def supports(self, pair: FlipCropMirrorNormalize, inputs: Sequence[TensorList],
                 args: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> bool:
        flip, cmn = pair.flip, pair.cmn
        n = len(inputs[0])
        return (flip.device.type == "cuda" and _normalize_ok(cmn, args[1]) and _hwc(flip, inputs)
                and cmn.hwc_input() and cuda.images_ok(inputs[0])
                and not any(flip.flags(args[0], "vertical", n)) and not any(flip.flags(args[0], "depthwise", n)))

    def run(self, pair: FlipCropMirrorNormalize, ctx: Any, inputs: Sequence[TensorList],
            args: tuple[dict[str, list[Any]], dict[str, list[Any]]]) -> list[TensorList] | None:
        flip, cmn = pair.flip, pair.cmn
        fargs, cargs = args
        tl = inputs[0]
        n = len(tl)
        in_hw = cuda.image_sizes(tl)
        wins = cmn.windows_array(in_hw, cargs)  # windows of the flipped images (same sizes)
        if wins is None or not one_size_inside(wins, in_hw):
            return None
        flipped = flip.flags(fargs, "horizontal", n)
        mirror = [bool(m) != f for m, f in zip(cmn.mirror_flags(cargs, n), flipped)]
        mean, std = cmn.stats({}, int(tl[0].shape[2]), torch.device("cpu"))
        out = cuda.crop_mirror_normalize(tl.samples, mirrored_windows(wins, in_hw, flipped), mirror, mean, std,
                                         cmn.dtype, cmn.layout == "CHW")
        return [TensorList(out, cmn.layout)]


register_fast(Flip, HorizontalFlipKernel())
register_fast(FlipCropMirrorNormalize, FlipCropMirrorNormalizeKernel())
register_fast(Resize, ResizeKernel())
register_fast(RandomResizedCrop, RandomResizedCropKernel())
register_fast(CropMirrorNormalize, CropMirrorNormalizeKernel())
register_fast(ResizeCropMirrorNormalize, ResizeCropMirrorNormalizeKernel())
