"""Host memory for whole batches: reused from batch to batch, on transparent huge pages.

A dense batch that the executor's threads fill sample by sample is large (64 float 3x224x224
images: 38 MB) and comes fresh from the kernel each batch (glibc maps allocations that size anew),
so filling it costs a page fault per 4 KiB: ~9,400 faults and ~20 ms of CPU per such batch on the
virtualised 2-core machine measured (bench/results/refactor_cpu_before_after.json), a sixth of
the batch's work. Asking the kernel for transparent huge pages on it (madvise MADV_HUGEPAGE, what
torch's own THP_MEM_ALLOC_ENABLE does for every allocation) took that to ~4 ms there. The result
is an ordinary torch tensor; where the call is not available (not Linux, no libc) or
`TORCH_DALI_HUGE_PAGES=0`, nothing is asked.

Even on huge pages the kernel still zeroes every fresh page: a batch of 32 float 3x192x192
crop_mirror_normalize outputs (14 MB) spent ~5 ms of system time per batch there, against ~14 ms of
user time. `BatchBuffers` hands a pipeline's batches memory it has filled before, once nothing refers
to it any more (DALI's executor reuses its output buffers the same way), so those pages are not
faulted in again.
"""
from __future__ import annotations

import ctypes
import math
import sys
import threading
from typing import Any, Sequence

import numpy as np
import torch

from .. import _knobs

_MIN_BYTES = 4 << 20  # smaller buffers gain little (and glibc may reuse their pages anyway)
_HUGE = 2 << 20  # the x86-64 / arm64 (4 KiB base pages) huge page size
_MADV_HUGEPAGE = 14  # linux/mman.h
_madvise: Any = None


def _load() -> Any:
    """libc's madvise, or False where there is none to call."""
    global _madvise
    if _madvise is None:
        _madvise = False
        if sys.platform.startswith("linux"):
            try:
                f = ctypes.CDLL(None, use_errno=True).madvise
                f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                f.restype = ctypes.c_int
                _madvise = f
            except (OSError, AttributeError):
                pass
    return _madvise


class BatchBuffers:
    """Memory for one pipeline's dense CPU batches, reused once no tensor refers to it.

    Each block is a numpy array; a batch is a torch view of its first bytes (`torch.from_numpy`
    keeps the slice, and through it the block, referenced while any tensor or view of the batch
    lives). A block whose reference count is back to the pool's own is free, whatever the consumer
    did with the batch: kept, sliced, turned into numpy, or dropped. At most `keep` blocks are
    tracked (the oldest is forgotten, and freed as usual once unused), so a consumer that holds
    on to every batch does not make the pool grow."""

    _ALIGN = 2 << 20  # capacities in whole huge pages: batches of near sizes share blocks

    def __init__(self, keep: int = 8, min_bytes: int = 1 << 20) -> None:
        self.keep = keep
        self.min_bytes = min_bytes
        self._blocks: list[np.ndarray] = []
        self._lock = threading.Lock()

    def empty(self, shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
        """An uninitialised CPU tensor of `shape` and `dtype` (contiguous), from a free block when
        there is one of the size."""
        shape = tuple(int(s) for s in shape)
        nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        if nbytes < self.min_bytes:
            return torch.empty(shape, dtype=dtype)
        with self._lock:
            block = self._free_block(nbytes)
            if block is None:
                cap = -(-nbytes // self._ALIGN) * self._ALIGN
                block = _huge(np.empty(cap, dtype=np.uint8))
                self._blocks.append(block)
                if len(self._blocks) > self.keep:
                    self._forget_one()
        return torch.from_numpy(block[:nbytes]).view(dtype).view(shape)

    def _free_block(self, nbytes: int) -> np.ndarray | None:
        best = None
        for i in range(len(self._blocks)):
            # references: the list's and getrefcount's argument; any more is a live batch
            if sys.getrefcount(self._blocks[i]) <= 2 and nbytes <= self._blocks[i].size <= 2 * nbytes + self._ALIGN:
                if best is None or self._blocks[i].size < self._blocks[best].size:
                    best = i
        if best is None:
            return None
        block = self._blocks.pop(best)  # most recently used last: the oldest are forgotten first
        self._blocks.append(block)
        return block

    def _forget_one(self) -> None:
        for i in range(len(self._blocks)):
            if sys.getrefcount(self._blocks[i]) <= 2:  # a free one first
                del self._blocks[i]
                return
        del self._blocks[0]

    def held_bytes(self) -> int:
        """Bytes of the blocks tracked now (free or in use)."""
        with self._lock:
            return sum(b.size for b in self._blocks)


def _huge(block: np.ndarray) -> np.ndarray:
    """`block`, its whole huge pages asked for (see the module's text)."""
    if block.nbytes >= _MIN_BYTES and _knobs.get("TORCH_DALI_HUGE_PAGES"):
        advise = _load()
        if advise:
            ptr = block.ctypes.data
            start, end = -(-ptr // _HUGE) * _HUGE, (ptr + block.nbytes) // _HUGE * _HUGE
            if end > start:
                advise(start, end - start, _MADV_HUGEPAGE)
    return block
