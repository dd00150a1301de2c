"""A share of a GPU JPEG batch's windows decoded by libjpeg-turbo on the host's cores, beside the
hardware engines (TORCH_DALI_NVJPEG_CPU_SHARE).

DALI's ResNet-50 recipe sends every JPEG to the hardware engines (hw_decoder_load=1), and on q95
4:4:4 JPEGs the engines bound the pipeline while most cores wait. The random-crop decoders know each
window before the batch decodes, so a fixed share of the batch (spread by position: the same samples
every run, so reruns give the same bits) is decoded window by window on the CPU (io/jpeg_roi's C
decoder, one call per thread per batch, the GIL released) while the engines decode the rest, then
uploaded in one copy. libjpeg's pixels can differ from the engines' by the IDCT's rounding (as DALI's
CPU and GPU decoders do); a sample the CPU cannot decode goes back to the GPU decoder."""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from .. import _knobs
from ..packed import PackedSamples
from . import jpeg_roi

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def threads() -> int:
    n = _knobs.get("TORCH_DALI_NVJPEG_CPU_THREADS")
    return n if n > 0 else max(1, min(8, (os.cpu_count() or 2) // 2))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(threads(), thread_name_prefix="td-cpu-jpeg")
        return _pool


def picks(rois: torch.Tensor | None, share: float) -> np.ndarray:
    """Positions of the samples the CPU decodes: a `share` of those with a window, spread evenly
    by position (sample i goes when floor((k + 1) * share) passes an integer at its k-th window)."""
    if rois is None or share <= 0.0 or not jpeg_roi.available():
        return np.zeros(0, dtype=np.int64)
    r = rois.numpy() if isinstance(rois, torch.Tensor) else np.asarray(rois)
    windowed = np.flatnonzero((r[:, 2] > 0) & (r[:, 3] > 0))
    k = np.arange(windowed.size)
    take = np.floor((k + 1) * share) > np.floor(k * share)
    return windowed[take]


class Pending:
    """The CPU share of one batch, decoding on the pool; `finish()` uploads it."""

    def __init__(self, datas: list[torch.Tensor] | PackedSamples, rows: np.ndarray, rois: torch.Tensor,
                 gray: bool) -> None:
        r = rois.numpy() if isinstance(rois, torch.Tensor) else np.asarray(rois)
        self.rows, self.gray = rows, gray
        self.windows = np.ascontiguousarray(r[rows], dtype=np.int64)
        c = 1 if gray else 3
        sizes = self.windows[:, 2] * self.windows[:, 3] * c
        self.offsets = np.zeros(rows.size, dtype=np.int64)
        np.cumsum(sizes[:-1], out=self.offsets[1:])
        total = int(sizes.sum())
        self.host = torch.empty(max(total, 1), dtype=torch.uint8, pin_memory=torch.cuda.is_available())
        if isinstance(datas, PackedSamples):
            base = datas.buffer.data_ptr()
            self.ptrs = (base + datas.offsets[rows]).astype(np.uint64)
            self.lens = datas.sizes[rows].astype(np.uint64)
            self._keep: Any = datas.buffer
        else:
            picked = [datas[int(i)] for i in rows]
            picked = [d if d.is_contiguous() and d.device.type == "cpu" else d.cpu().contiguous() for d in picked]
            self.ptrs = np.array([d.data_ptr() for d in picked], dtype=np.uint64)
            self.lens = np.array([d.numel() for d in picked], dtype=np.uint64)
            self._keep = picked
        self.codes = np.zeros(rows.size, dtype=np.int32)
        n = threads()
        lib = jpeg_roi.LIB.load()
        args = (rows.size, self.ptrs.ctypes.data, self.lens.ctypes.data, self.windows.ctypes.data, int(gray),
                self.host.data_ptr(), self.offsets.ctypes.data)
        codes = self.codes.ctypes.data
        self.futures: list[Future] = [_executor().submit(lib.tdj_decode_roi_batch, *args, k, n, codes)
                                      for k in range(min(n, rows.size))]

    def finish(self, device: torch.device) -> tuple[list[torch.Tensor | None], np.ndarray]:
        """(the decoded windows on `device`, None where the CPU could not decode; the positions of
        those, for the GPU decoder). Uploaded with one copy on the current stream."""
        for f in self.futures:
            f.result()
        dev = self.host.to(device, non_blocking=True)
        c = 1 if self.gray else 3
        out: list[torch.Tensor | None] = []
        for (y, x, h, w), off, code in zip(self.windows.tolist(), self.offsets.tolist(), self.codes.tolist()):
            out.append(dev[off:off + h * w * c].view(h, w, c) if code == 0 else None)
        failed = self.rows[self.codes != 0]
        self._keep = None
        return out, failed


