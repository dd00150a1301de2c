"""The C helpers' CPU image kernels (`_native/csrc/cpu/cpu_resize.c`, `cpu_image.c`) as per-sample fast kernels
(registered with the dispatch, `ops._dispatch.register_fast_sample`): they run inside the
executor's per-sample chains, on its threads, without holding the GIL.

* random_resized_crop: the spec's window (drawn as the spec draws it), resized as a region of
  interest by `td_resize` (cpu_resize.c).
* resize: each image resized by `td_resize` to the size the spec computes, from the window
  the spec reads (the whole image, a region of interest, or the fractional window `subpixel_scale`
  keeps); flipped windows run the spec.
* resize_crop_mirror: the source window under the crop, as the spec plans it, resized by
  `td_resize`; mirrored axes (a window read backwards) run the spec.
* `functional.resize.resize` itself, for the ops that call it through `_dispatch.call` (resize,
  random_resized_crop and resize_crop_mirror of channel-first images and sequences, the samples
  the kernels above decline, tensor_resize's 2-D blocks).
* crop_mirror_normalize: a window inside the image, mirrored, normalized to float32 (CHW or HWC)
  by `td_crop_mirror_normalize`, scale and shift then applied as the spec applies them; a FLOAT16
  output is those float32 values rounded by `td_to_half` (the spec's to_half, bit for bit).

They take CPU HWC images (rows may be strided, pixels packed): the resizing ops uint8, int16,
uint16 or float32 into the input's type or float32, with the linear, triangular, cubic, Lanczos-3
or Gaussian filter (`interp_type`, `min_filter`, `mag_filter`) given as constants;
crop_mirror_normalize uint8. Anything else, and a sample the helper declines, runs the spec (its
result is the same: tests/test_cpu_resize.py and tests/test_cpu_kernels.py hold them to it).
"""
from __future__ import annotations

from typing import Any

import torch

from ..._native import helpers
from ...functional import resize as R
from ...functional.resize import filter_table
from .._dispatch import FastSampleKernel, register_fast_function, register_fast_sample
from ..geometry import Resize, interp_name
from ..random_resized_crop import RandomResizedCrop
from ..resize_crop_mirror import ResizeCropMirror
from ..normalize import CropMirrorNormalize

_FILTER_ARGS = ("interp_type", "min_filter", "mag_filter")
_OUT_DTYPES = (None, torch.uint8, torch.int16, torch.uint16, torch.float32)  # resize: the input's type or float
_RESIZE_IN = (torch.uint8, torch.int16, torch.uint16, torch.float32)  # what the resize helper reads
_TABLES: list[helpers.FilterTables] = []  # DALI's filter tables for the helper, built on first use


def _tables() -> helpers.FilterTables:
    if not _TABLES:
        _TABLES.append(helpers.FilterTables(filter_table))
    return _TABLES[0]


def _filters(op: Any) -> tuple[str, str]:
    """(the filter of shrinking axes, of the others), from the op's constant arguments."""
    interp = interp_name(op.args.get("interp_type"))
    return interp_name(op.args.get("min_filter")) or interp, interp_name(op.args.get("mag_filter")) or interp


def _filtered_cpu_op(op: Any) -> bool:
    """A CPU op whose every axis filters with a filter the helper has (not nn), given as constants,
    reading HWC images (or data without a layout), with the helper built."""
    if op.device.type != "cpu" or any(n in op.node.arg_inputs for n in _FILTER_ARGS) \
            or not all(f in helpers.FILTER_KINDS for f in _filters(op)):
        return False
    return op.dtype in _OUT_DTYPES and op.hwc_input() and helpers.CPU_RESIZE.load() is not None


def _takes(img: torch.Tensor, types: tuple[torch.dtype, ...] = (torch.uint8,)) -> bool:
    """An HWC image of one of `types` whose pixels are packed (what the helpers read)."""
    return (img.dim() == 3 and img.dtype in types and img.device.type == "cpu" and img.stride(2) == 1
            and (img.shape[1] <= 1 or img.stride(1) == img.shape[2]))


def _output(ctx: Any, shape: tuple[int, int, int], dtype: torch.dtype) -> torch.Tensor:
    """The executor's slot for this sample when it fits (no copy afterwards), else a new tensor."""
    slot = ctx.out
    if slot is not None and tuple(slot.shape) == shape and slot.dtype == dtype and slot.is_contiguous():
        return slot
    return torch.empty(shape, dtype=dtype)


class RandomResizedCropSample(FastSampleKernel):
    name = "resize (C helper)"

    def supports(self, op: RandomResizedCrop) -> bool:
        return _filtered_cpu_op(op)

    def run_sample(self, op: RandomResizedCrop, ctx: Any, inputs: list[torch.Tensor],
                   args: dict[str, Any]) -> torch.Tensor | None:
        img = inputs[0]
        if not _takes(img, _RESIZE_IN) or op.layout_of(img) != "HWC":
            return None
        win = op.window(ctx, img)  # drawn once: the fallback below resizes the same window
        out = _output(ctx, (op.size[0], op.size[1], int(img.shape[2])), op.dtype or img.dtype)
        if helpers.resize_roi(img, win, out, op.args["antialias"], _filters(op), _tables()):
            return out
        return op.resize_window(img, win, args)


class ResizeSample(FastSampleKernel):
    name = "resize (C helper)"

    def supports(self, op: Resize) -> bool:
        return _filtered_cpu_op(op) and not op.args.get("save_attrs")  # its second output: the spec

    def run_sample(self, op: Resize, ctx: Any, inputs: list[torch.Tensor],
                   args: dict[str, Any]) -> torch.Tensor | None:
        img = inputs[0]
        if not _takes(img, _RESIZE_IN) or op.layout_of(img) != "HWC":
            return None
        h, w = int(img.shape[0]), int(img.shape[1])
        (out_h, y0, y1), (out_w, x0, x1) = op.plan((h, w), args)
        if not (y1 > y0 and x1 > x0):  # a flip: the spec
            return None
        out = _output(ctx, (out_h, out_w, int(img.shape[2])), op.dtype or img.dtype)
        if helpers.resize_window(img, ((y0, y1), (x0, x1)), out, op.args["antialias"], _filters(op),
                                 _tables()):
            return out
        return None


class ResizeCropMirrorSample(FastSampleKernel):
    name = "resize (C helper)"

    def supports(self, op: ResizeCropMirror) -> bool:
        return _filtered_cpu_op(op)

    def run_sample(self, op: ResizeCropMirror, ctx: Any, inputs: list[torch.Tensor],
                   args: dict[str, Any]) -> torch.Tensor | None:
        img = inputs[0]
        if not _takes(img, _RESIZE_IN) or op.layout_of(img) != "HWC":
            return None
        (h, w), (wy, wx) = op.source_window(img, "HWC", args)
        if not (wy[1] > wy[0] and wx[1] > wx[0]) or h <= 0 or w <= 0:  # a mirror, an empty crop: the spec
            return None
        out = _output(ctx, (h, w, int(img.shape[2])), op.dtype or img.dtype)
        if helpers.resize_window(img, (wy, wx), out, op.args["antialias"], _filters(op), _tables()):
            return out
        return None


class CropMirrorNormalizeSample(FastSampleKernel):
    name = "crop_mirror_normalize (C helper)"

    def __init__(self) -> None:
        # std tensor -> (std, its float32 reciprocal): an op's constant std is one tensor for every
        # sample, and a tiny torch op per sample cost a third of the C kernel's time, GIL held
        self._rstd: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def _reciprocal(self, std: torch.Tensor) -> torch.Tensor:
        hit = self._rstd.get(id(std))
        if hit is not None and hit[0] is std:
            return hit[1]
        rstd = torch.reciprocal(std.to(torch.float32))
        if len(self._rstd) >= 64:  # per-sample std tensors: keep the cache small
            self._rstd.clear()
        self._rstd[id(std)] = (std, rstd)
        return rstd

    def supports(self, op: CropMirrorNormalize) -> bool:
        return (op.device.type == "cpu" and op.dtype in (torch.float32, torch.float16) and not op.args["pad_output"]
                and op.hwc_input() and helpers.CPU_IMAGE.load() is not None)

    def run_sample(self, op: CropMirrorNormalize, ctx: Any, inputs: list[torch.Tensor],
                   args: dict[str, Any]) -> torch.Tensor | None:
        img = inputs[0]
        if not _takes(img) or op.layout_of(img) != "HWC":
            return None
        try:
            y, x, h, w = op.window(img, args)
            mean, std = op.stats(args, int(img.shape[2]), img.device)
        except Exception:  # noqa: BLE001 - the spec meets it again and reports it its way
            return None
        if y < 0 or x < 0 or y + h > img.shape[0] or x + w > img.shape[1] or h <= 0 or w <= 0:
            return None  # a window leaving the image: the spec pads or trims
        chw = op.layout == "CHW"
        c = int(img.shape[2])
        shape = (c, h, w) if chw else (h, w, c)
        half = op.dtype == torch.float16
        out = torch.empty(shape, dtype=torch.float32) if half else _output(ctx, shape, torch.float32)
        if not helpers.crop_mirror_normalize(img, (y, x, h, w), bool(op.get(args, "mirror")), mean,
                                             self._reciprocal(std), out, chw):
            return None
        scale, shift = float(op.args["scale"]), float(op.args["shift"])
        if scale != 1.0:  # as the spec: in place, after the normalization
            out.mul_(scale)
        if shift != 0.0:
            out.add_(shift)
        # FLOAT16: the spec's float32 values rounded as its to_half does (halfway cases away from zero)
        return helpers.to_half(out, _output(ctx, shape, torch.float16)) if half else out


def resize(image: torch.Tensor, size: tuple[int, int], interp: str = "linear", antialias: bool = True,
           min_filter: str | None = None, mag_filter: str | None = None, dtype: torch.dtype | None = None,
           roi: Any = None, window: Any = None, row_channels: int | None = None) -> torch.Tensor | None:
    """`functional.resize.resize` of a CPU (H, W[, K]) image by the helper (copied first when its
    pixels are not packed: channel-first and sequence views), or None for a call it does not take
    (nn, a flipped window, an identity, other types: the spec)."""
    filters = (min_filter or interp, mag_filter or interp)
    out_dtype = dtype or image.dtype
    if image.device.type != "cpu" or image.dim() not in (2, 3) or image.dtype not in _RESIZE_IN \
            or out_dtype not in (image.dtype, torch.float32) or not all(f in helpers.FILTER_KINDS for f in filters) \
            or int(size[0]) <= 0 or int(size[1]) <= 0 or image.numel() == 0 or helpers.CPU_RESIZE.load() is None:
        return None
    x = image.unsqueeze(-1) if image.dim() == 2 else image
    x = x if _takes(x, _RESIZE_IN) else x.contiguous()
    out = torch.empty((int(size[0]), int(size[1]), int(x.shape[2])), dtype=out_dtype)
    if window is not None:
        done = helpers.resize_window(x, window, out, antialias, filters, _tables(), row_channels)
    else:
        region = roi if roi is not None else (0, 0, int(x.shape[0]), int(x.shape[1]))
        done = helpers.resize_roi(x, region, out, antialias, filters, _tables(), row_channels)
    if not done:
        return None
    return out.squeeze(-1) if image.dim() == 2 else out


register_fast_function(R.resize, resize)
register_fast_sample(RandomResizedCrop, RandomResizedCropSample())
register_fast_sample(Resize, ResizeSample())
register_fast_sample(ResizeCropMirror, ResizeCropMirrorSample())
register_fast_sample(CropMirrorNormalize, CropMirrorNormalizeSample())
