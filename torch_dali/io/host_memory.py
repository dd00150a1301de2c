"""Host memory for whole batches on transparent huge pages.

A dense batch that the executor's threads fill sample by sample is large (64 float 3x224x224
images: 38 MB) and comes fresh from the kernel each batch (glibc maps allocations that size anew),
so filling it costs a page fault per 4 KiB: ~9,400 faults and ~20 ms of CPU per such batch on the
virtualised 2-core machine measured (bench/results/refactor_cpu_before_after.json), a sixth of
the batch's work. Asking the kernel for transparent huge pages on it (madvise MADV_HUGEPAGE, what
torch's own THP_MEM_ALLOC_ENABLE does for every allocation) took that to ~4 ms there. The result
is an ordinary torch tensor; where the call is not available (not Linux, no libc) or
`TORCH_DALI_HUGE_PAGES=0`, nothing is asked.
"""
from __future__ import annotations

import ctypes
import math
import sys
from typing import Any, Sequence

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


def empty_batch(shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    """torch.empty(shape, dtype=dtype) on the CPU, its whole huge pages asked for before it is
    written (only for buffers of 4 MiB or more)."""
    t = torch.empty(tuple(shape), dtype=dtype)
    nbytes = math.prod(t.shape) * t.element_size()
    if nbytes < _MIN_BYTES or not _knobs.get("TORCH_DALI_HUGE_PAGES"):
        return t
    advise = _load()
    if advise:
        ptr = t.data_ptr()
        start, end = -(-ptr // _HUGE) * _HUGE, (ptr + nbytes) // _HUGE * _HUGE
        if end > start:
            advise(start, end - start, _MADV_HUGEPAGE)  # advice only: a refusal changes nothing
    return t
