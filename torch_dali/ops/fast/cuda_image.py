"""The CUDA extension's batched image kernels, called on whole batches (one launch a batch): the
glue between TensorLists and `torch.ops.torch_dali`. `image_kernels` registers them as the fast
kernels of resize, random_resized_crop, crop_mirror_normalize and the fused resize ->
crop_mirror_normalize pair (the op's pure-torch path is the spec: tests/gpu hold the kernels to it).
Windows, sizes, mirror flags and statistics are small CPU tensors: the kernels upload them with
the launch, no host synchronisation.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from ..._native import extension
from ...tensor_list import TensorList

INTERP = {"linear": 1, "triangular": 1, "nn": 2}  # the kernels' codes: DALI's filters (resample.h)
OUT_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.uint8)


def kernels() -> Any:
    """`torch.ops.torch_dali` when the extension is loaded, else None."""
    return extension.kernels()


def images_ok(tl: TensorList) -> bool:
    """Whether a batch is what the kernels take: CUDA uint8 HWC images with 1, 3 or 4 channels."""
    d = tl.dense
    if d is not None:  # one check for the whole batch
        return d.is_cuda and d.dtype == torch.uint8 and d.dim() == 4 and d.shape[0] > 0 and d.shape[3] in (1, 3, 4)
    s = tl.samples
    if not s:
        return False
    ext = extension.load()
    if ext is not None and hasattr(ext, "cuda_image_channels"):  # one call for the batch
        return ext.cuda_image_channels(s) > 0
    t0 = s[0]
    if not (t0.is_cuda and t0.dtype == torch.uint8 and t0.dim() == 3 and t0.shape[2] in (1, 3, 4)):
        return False
    # the rest like the first, in one pass
    return len({(t.device, t.dtype, t.dim(), t.shape[2:]) for t in s}) == 1


def image_sizes(tl: TensorList) -> np.ndarray:
    """(n, 2) int64 (height, width) of an HWC batch, one array (no tuple per sample for a dense one)."""
    d = tl.dense
    if d is not None:
        return np.broadcast_to(np.array(d.shape[1:3], dtype=np.int64), (int(d.shape[0]), 2))
    ext = extension.load()
    if ext is not None and hasattr(ext, "sample_sizes") and tl.samples:  # one call, not one per sample
        return ext.sample_sizes(tl.samples).numpy()
    return np.array([t.shape[:2] for t in tl.samples], dtype=np.int64).reshape(-1, 2)


# Argument tensors are made in NumPy and wrapped (torch.from_numpy keeps the GIL): each torch op
# releases it, and getting it back from a busy thread can take Python's switch interval (5 ms).
_NP = {torch.int64: np.int64, torch.int32: np.int32, torch.bool: np.bool_, torch.float32: np.float32}


def _int_tensor(a: Sequence[Sequence[int]] | np.ndarray, dtype: torch.dtype = torch.int64,
                shape: tuple[int, ...] | None = None) -> torch.Tensor:
    arr = np.asarray(a, dtype=np.int64)
    if shape is not None:
        arr = arr.reshape(shape)
    return torch.from_numpy(np.ascontiguousarray(arr, dtype=_NP[dtype]))


def _flags(mirror: Sequence[bool] | np.ndarray | torch.Tensor) -> torch.Tensor:
    if isinstance(mirror, torch.Tensor):
        return mirror
    if isinstance(mirror, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(mirror, dtype=np.bool_))
    return torch.from_numpy(np.array([bool(m) for m in mirror], dtype=np.bool_))


def _host_f32(t: torch.Tensor) -> torch.Tensor:
    return t if t.dtype == torch.float32 and not t.is_cuda else t.float().cpu()


def _source(source: np.ndarray | None) -> torch.Tensor | None:
    """Optional (n, 4) float32 source windows (y, x, h, w) read instead of the whole images."""
    return None if source is None else torch.from_numpy(np.ascontiguousarray(source, dtype=np.float32))


def resize(images: list[torch.Tensor], sizes: Sequence[tuple[int, int]] | np.ndarray, antialias: bool,
           interp: str, source: np.ndarray | None = None) -> list[torch.Tensor]:
    return list(kernels().resize_batch(images, _int_tensor(sizes), bool(antialias), INTERP[interp], _source(source)))


def resize_crop_mirror_normalize(images: list[torch.Tensor], resized: np.ndarray, anchors: np.ndarray,
                                 out_hw: tuple[int, int], mirror: Sequence[bool] | torch.Tensor,
                                 mean: torch.Tensor, std: torch.Tensor, interp: str, antialias: bool,
                                 dtype: torch.dtype, nchw: bool, round_resized: bool = True,
                                 source: np.ndarray | None = None) -> torch.Tensor:
    """Dense batch: each image resized to resized[i] = (h, w) (rounded to uint8 as resize stores
    it, with `round_resized`), the out_hw crop at anchors[i] = (y, x) of that, mirrored, normalized:
    resize followed by crop_mirror_normalize, in one launch and without the resized images."""
    n = len(images)
    return kernels().resize_crop_mirror_normalize(
        images, _int_tensor(resized, shape=(n, 2)), _int_tensor(anchors, shape=(n, 2)), _flags(mirror),
        _host_f32(mean), _host_f32(std), int(out_hw[0]), int(out_hw[1]), INTERP[interp],
        bool(antialias), bool(round_resized), dtype, bool(nchw), _source(source))


def resize_dense(images: list[torch.Tensor], size: Sequence[int] | np.ndarray, antialias: bool,
                 interp: str, source: np.ndarray | None = None) -> torch.Tensor:
    """(N, h, w, C) uint8: every image resized to one size (what resize_batch gives, stacked)."""
    n, c = len(images), int(images[0].shape[2])
    h, w = int(size[0]), int(size[1])
    return resize_crop_mirror_normalize(
        images, np.broadcast_to(np.array([h, w]), (n, 2)), np.zeros((n, 2), dtype=np.int64), (h, w),
        np.zeros(n, dtype=np.bool_), *_identity(c), interp, antialias, torch.uint8, False,
        source=source)


def _windows(wins: Sequence[tuple[int, int, int, int]] | np.ndarray | torch.Tensor) -> torch.Tensor:
    """(n, 4) int32 (y, x, h, w); arrays convert in one step (a list of 256 tuples costs ~0.7 ms)."""
    if isinstance(wins, torch.Tensor):
        return wins.to(torch.int32).contiguous()
    if isinstance(wins, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(wins, dtype=np.int32))
    return torch.tensor([list(w) for w in wins], dtype=torch.int32)


def resized_crops(images: list[torch.Tensor], wins: Sequence[tuple[int, int, int, int]] | np.ndarray,
                  size: tuple[int, int], antialias: bool, regions: np.ndarray | None = None) -> torch.Tensor:
    """Dense (N, h, w, C) uint8: each window resized to `size` (bilinear), rounded as torch does.
    `regions` (n, 4) (y, x, H, W): image i is that part of an H x W image the window is in."""
    c = int(images[0].shape[2])
    n = len(images)
    reg = None if regions is None else torch.from_numpy(np.ascontiguousarray(regions, dtype=np.int64))
    return kernels().resized_crop_mirror_normalize(
        images, _windows(wins), _flags(np.zeros(n, dtype=np.bool_)), *_identity(c),
        int(size[0]), int(size[1]), bool(antialias), torch.uint8, False, reg)


def _identity(c: int) -> tuple[torch.Tensor, torch.Tensor]:
    """mean 0 and std 1 for `c` channels (no normalization)."""
    return torch.from_numpy(np.zeros(c, dtype=np.float32)), torch.from_numpy(np.ones(c, dtype=np.float32))


def crop_mirror_normalize(images: list[torch.Tensor], wins: Sequence[tuple[int, int, int, int]] | torch.Tensor,
                          mirror: Sequence[bool], mean: torch.Tensor, std: torch.Tensor,
                          dtype: torch.dtype, nchw: bool) -> torch.Tensor:
    """Dense batch: windows (all one size, inside their images) cut, mirrored, normalized."""
    win = _windows(wins)
    h, w = int(win[0, 2]), int(win[0, 3])
    return kernels().resized_crop_mirror_normalize(
        images, win, _flags(mirror), _host_f32(mean),
        _host_f32(std), h, w, False, dtype, bool(nchw))
