"""The C helpers of numeric kernels whose results are defined by a spec's order of operations:
random_bbox_crop's window search, box_encoder's anchor matching, bb_flip and bbox_paste, and
DALI-ordered sums (re-exported by `helpers`, through which the fast kernels call them, so that
tests can stand in for them in one place)."""
from __future__ import annotations

import array
import ctypes
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from .build import CLibrary

CSRC = Path(__file__).resolve().parent / "csrc"
_MASK64 = (1 << 64) - 1


def _bbox_crop_signatures(lib: ctypes.CDLL) -> None:
    u64, i64, c_int, d, vp = ctypes.c_uint64, ctypes.c_int64, ctypes.c_int, ctypes.c_double, ctypes.c_void_p
    lib.td_bbox_crop.argtypes = [u64, u64, c_int, vp, c_int, vp, vp, vp, vp, c_int, c_int, vp, c_int, d, d, c_int,
                                 c_int, c_int, c_int, c_int, d, vp, vp, i64, vp, vp, vp, vp, vp, vp, vp]
    lib.td_bbox_crop.restype = c_int
    lib.td_bbox_remap.argtypes = [c_int, c_int, vp, c_int, vp, vp, vp, vp, vp, vp, vp, vp]
    lib.td_bbox_remap.restype = i64


def _reduce_sum_signatures(lib: ctypes.CDLL) -> None:
    for f in (lib.td_dali_sum_f32, lib.td_dali_sum_f64):
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int,
                      ctypes.c_void_p, ctypes.c_void_p]
        f.restype = ctypes.c_int


def _box_encoder_signatures(lib: ctypes.CDLL) -> None:
    i64, vp, c_int = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int
    lib.td_box_match.argtypes = [vp, vp, i64, i64, vp, i64, vp, vp]
    lib.td_box_encode.argtypes = [vp, vp, i64, i64, vp, i64, ctypes.c_float, c_int, vp, vp, vp, vp, vp]
    lib.td_box_match.restype = lib.td_box_encode.restype = c_int


def _box_moves_signatures(lib: ctypes.CDLL) -> None:
    i64, vp = ctypes.c_int64, ctypes.c_void_p
    lib.td_bb_flip.argtypes = [i64, vp, vp, vp, ctypes.c_int, vp]
    lib.td_bbox_paste.argtypes = [i64, vp, vp, vp, vp]
    lib.td_bb_flip.restype = lib.td_bbox_paste.restype = ctypes.c_int


#: bb_flip and bbox_paste of a batch, bit-identical to functional.detection's batch functions
BOX_MOVES = CLibrary(CSRC / "cpu" / "box_moves.c", [], ["-O2", "-ffp-contract=off"],
                     disable_env="TORCH_DALI_NO_CPU_KERNELS", configure=_box_moves_signatures)

#: box_encoder (anchor matching and encoding), bit-identical to functional.detection's
#: match_anchors and box_encoder_batch (float32, no fused multiply-add)
BOX_ENCODER = CLibrary(CSRC / "cpu" / "box_encoder.c", [], ["-O3", "-ffp-contract=off", "-fno-trapping-math"],
                     disable_env="TORCH_DALI_NO_CPU_KERNELS", configure=_box_encoder_signatures)

#: random_bbox_crop's window search for a batch, bit-identical to functional.bbox_crop.find_crop's
#: (no fused multiply-add: products round as NumPy's do)
BBOX_CROP = CLibrary(CSRC / "cpu" / "bbox_crop.c", ["m"], ["-O2", "-ffp-contract=off"],
                     disable_env="TORCH_DALI_NO_CPU_KERNELS", configure=_bbox_crop_signatures)

#: float sums in DALI's CPU order (functional.reduce_order), bit-identical to its plan (adds only,
#: none fused)
REDUCE_SUM = CLibrary(CSRC / "cpu" / "reduce_sum.c", [], ["-O3", "-ffp-contract=off"],
                      disable_env="TORCH_DALI_NO_CPU_KERNELS", configure=_reduce_sum_signatures)


def bbox_crop(seed: int, iteration: int, ids: np.ndarray, lo: np.ndarray, hi: np.ndarray, offsets: np.ndarray,
              thresholds: Sequence[float], overlap: bool, aspect: Sequence[float], scaling: tuple[float, float],
              allow_no_crop: bool, num_attempts: int, total_num_attempts: int, all_boxes: bool,
              prune: float | None, crop_shape: np.ndarray | None, input_shape: np.ndarray | None,
              max_attempts: int) -> tuple[np.ndarray, ...] | int | None:
    """The windows of samples `ids` (see bbox_crop.c): (anchor, shape, rel_lo, rel_hi, keep,
    exhausted, best_metric), or the index of the first sample whose search gave up, or None when
    the helper is not built or refuses the arguments."""
    lib = BBOX_CROP.load()
    n, nd = len(ids), lo.shape[1]
    if lib is None:
        return None
    f64 = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
    ids, offsets = np.ascontiguousarray(ids, np.int64), np.ascontiguousarray(offsets, np.int64)
    lo, hi, thr, asp = f64(lo), f64(hi), f64(thresholds), f64(aspect)
    cs = None if crop_shape is None else f64(crop_shape)
    ins = None if input_shape is None else f64(input_shape)
    anchor, shape = np.zeros((n, nd), np.float32), np.zeros((n, nd), np.float32)
    rel_lo, rel_hi, best = np.zeros((n, nd)), np.zeros((n, nd)), np.zeros(n)
    keep, exhausted = np.zeros(lo.shape[0], np.uint8), np.zeros(n, np.uint8)
    r = lib.td_bbox_crop(int(seed) & _MASK64, int(iteration) & _MASK64, n, ids.ctypes.data, nd, lo.ctypes.data,
                         hi.ctypes.data, offsets.ctypes.data, thr.ctypes.data, len(thr), int(overlap),
                         asp.ctypes.data, len(asp) // 2, float(scaling[0]), float(scaling[1]), int(allow_no_crop),
                         int(num_attempts), int(total_num_attempts), int(all_boxes), int(prune is not None),
                         float(prune or 0.0), None if cs is None else cs.ctypes.data,
                         None if ins is None else ins.ctypes.data, int(max_attempts), anchor.ctypes.data,
                         shape.ctypes.data, rel_lo.ctypes.data, rel_hi.ctypes.data, keep.ctypes.data,
                         exhausted.ctypes.data, best.ctypes.data)
    if r == -2:
        return None
    if r >= 0:
        return r
    return anchor, shape, rel_lo, rel_hi, keep.astype(bool), exhausted.astype(bool), best


def bbox_remap(b: np.ndarray, ndim: int, extents: bool, offsets: np.ndarray, rel_lo: np.ndarray, rel_hi: np.ndarray,
               keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The kept boxes in their windows' coordinates (see td_bbox_remap in bbox_crop.c): float32
    (kept, 2 * ndim) boxes, their int64 rows, int32 indices in their samples and int64 counts per
    sample; None when the helper is not built or leaves the batch to NumPy (signed zeros, NaN)."""
    lib = BBOX_CROP.load()
    if lib is None or b.dtype != np.float32 or not b.flags.c_contiguous or b.shape[1] != 2 * ndim:
        return None
    n, total = len(offsets) - 1, b.shape[0]
    out, rows = np.empty((total, 2 * ndim), np.float32), np.empty(total, np.int64)
    local, counts = np.empty(total, np.int32), np.empty(n, np.int64)
    keep8 = keep.view(np.uint8) if keep.dtype == np.bool_ else keep.astype(np.uint8)
    k = lib.td_bbox_remap(n, ndim, b.ctypes.data, int(extents), offsets.ctypes.data, rel_lo.ctypes.data,
                          rel_hi.ctypes.data, keep8.ctypes.data, out.ctypes.data, rows.ctypes.data,
                          local.ctypes.data, counts.ctypes.data)
    if k < 0:
        return None
    return out[:k], rows[:k], local[:k], counts


def dali_sum(v: torch.Tensor, reduced: Sequence[int], kept: Sequence[int], groups: Sequence[int]) -> torch.Tensor | None:
    """The sums of `v` (CPU, float32 or float64, any strides) over the axes `reduced` (sorted),
    one per position of the axes `kept`, in DALI's order over the merged reduced axes `groups`,
    read in place; None when the helper is not built or refuses the arguments."""
    lib = REDUCE_SUM.load()
    if lib is None or v.device.type != "cpu":
        return None
    f = {torch.float32: lib.td_dali_sum_f32, torch.float64: lib.td_dali_sum_f64}.get(v.dtype)
    if f is None:
        return None

    def offsets(axes: Sequence[int]) -> np.ndarray:  # element offsets, row-major over `axes`
        off = np.zeros(1, dtype=np.int64)
        for a in axes:
            off = np.add.outer(off, np.arange(int(v.shape[a]), dtype=np.int64) * int(v.stride(a))).reshape(-1)
        return off

    rows, cols, sizes = offsets(reduced), offsets(kept), np.asarray(groups, dtype=np.int64)
    out = torch.empty(len(cols), dtype=v.dtype)
    if f(v.data_ptr(), rows.ctypes.data, cols.ctypes.data, len(cols), len(sizes), sizes.ctypes.data,
         out.data_ptr()) != 0:
        return None
    return out


def box_encode(boxes: torch.Tensor, counts: torch.Tensor, anchors: torch.Tensor, criteria: float, offset: bool,
               scale: float, means: Sequence[float], stds: Sequence[float]) -> tuple[torch.Tensor, ...] | None:
    """box_encoder of a padded CPU float32 batch (see box_encoder.c): (B, M, 4) encodings, (B, M)
    best box indices and whether each anchor matched; None when the helper is not built, refuses
    the arguments, or meets a NaN IoU."""
    lib = BOX_ENCODER.load()
    if lib is None:
        return None
    b, a = boxes.detach().contiguous(), anchors.detach().contiguous()
    c = counts.detach().to(torch.int64).contiguous()
    B, N, M = int(b.shape[0]), int(b.shape[1]), int(a.shape[0])
    params = np.array([scale, *means, *stds], dtype=np.float32)
    best_box = torch.empty((B, M), dtype=torch.int64)
    best_iou = torch.empty((B, M), dtype=torch.float32)
    enc = torch.empty((B, M, 4), dtype=torch.float32)
    matched = torch.empty((B, M), dtype=torch.bool)
    if lib.td_box_encode(b.data_ptr(), c.data_ptr(), B, N, a.data_ptr(), M, float(criteria), int(bool(offset)),
                         params.ctypes.data, best_box.data_ptr(), best_iou.data_ptr(), enc.data_ptr(),
                         matched.data_ptr()) != 0:
        return None
    return enc, best_box, matched



def box_moves(ptrs: Sequence[int], counts: Sequence[int], flags: Sequence[int] | None, ltrb: bool,
              rows: Sequence[float] | None) -> torch.Tensor | None:
    """bb_flip (`flags`: flip x, flip y per sample) or bbox_paste (`rows`: 5 float32 values per
    sample) of contiguous CPU float32 samples at addresses `ptrs` holding `counts` boxes of 4
    values (see box_moves.c): the batch's (boxes, 4) results, or None when the helper is not built."""
    f = BOX_MOVES.holding_gil("td_bb_flip" if rows is None else "td_bbox_paste")  # short: keep the GIL
    if f is None:
        return None
    # array.array: a buffer and its address in ~1 us (NumPy's .ctypes.data alone costs ~0.8 us)
    # (each buffer held in a name until the call returns)
    p, c = array.array("q", ptrs), array.array("q", counts)
    params = array.array("B", flags) if rows is None else array.array("f", rows)
    out = torch.empty((sum(counts), 4), dtype=torch.float32)
    if rows is None:
        f(len(p), p.buffer_info()[0], c.buffer_info()[0], params.buffer_info()[0], int(ltrb), out.data_ptr())
    else:
        f(len(p), p.buffer_info()[0], c.buffer_info()[0], params.buffer_info()[0], out.data_ptr())
    return out
