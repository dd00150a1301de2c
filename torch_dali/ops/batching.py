"""Whether an op runs a batch of variable-size samples as one batched torch call (the flat or
padded-group forms of `functional.ragged`) or sample by sample.

On CUDA, one launch sequence per batch: per-sample launches (a few tens per sample, a few thousand
per batch) cost more than the work. On the CPU samples run on the pool's threads, each in cache,
which is faster there. Both give the same values (tests/test_ragged_batches.py checks it on CPU
tensors by patching `batched`).
"""
from __future__ import annotations

from typing import Any

from ..tensor_list import TensorList


def batched(op: Any, tl: TensorList) -> bool:
    """Whether `op` runs batch `tl` as one batched call."""
    return op.device.type == "cuda" and batchable(tl)


def batchable(tl: TensorList) -> bool:
    """Whether the batched forms can take `tl`: two samples or more, and (the flat form keeps a
    pixel's channels together) one channel count when the last axis is channels or unnamed."""
    if len(tl) < 2:
        return False
    lay = tl.layout()
    if lay and lay[-1] in "DHW":  # the last axis is spatial: its sizes may differ
        return True
    return len({int(t.shape[-1]) if t.dim() else 0 for t in tl.samples}) == 1
