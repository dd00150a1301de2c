"""Keeping the loader's CUDA streams out of the training's hardware queue (TORCH_DALI_QUEUE_PROBE; here
beside the decoder, whose own streams read the same registry, as io is the box that reaches native code).

The driver spreads streams over a few hardware work queues in the order they are made, and a queue
runs its streams' work in order: a loader stream whose head waits (for the JPEG engines, another
stream's event) holds back a training kernel queued behind it in the same queue. Which queue a
stream got cannot be asked, but it can be observed (the extension's `streams_share_queue`), so the
pipeline registers the stream that builds it (the consumer's) and the default stream, and every
stream the loader makes after that is tried against them and made again when it shares a queue.
The decoder's own streams (C++) read the same registry."""
from __future__ import annotations

import threading
from typing import Any

import torch

from .. import _knobs

TRIES = 8  # the driver's default queue count: one of 8 consecutive streams lands in each queue
_lock = threading.Lock()


def _ext() -> Any:
    from .._native import extension
    ext = extension.load()
    return ext if ext is not None and hasattr(ext, "streams_share_queue") else None


def avoid_consumer(device: torch.device) -> bool:
    """Registers the calling thread's current stream on `device` and the default stream as the
    queues to keep out of; False when the probe is off or cannot run (no extension)."""
    if not _knobs.get("TORCH_DALI_QUEUE_PROBE"):
        return False
    ext = _ext()
    if ext is None:
        return False
    with _lock:
        ext.avoid_queue_of(0)
        ext.avoid_queue_of(torch.cuda.current_stream(device).cuda_stream)
    return True


def new_stream(device: torch.device, priority: int) -> Any:
    """A stream from torch's pool that shares no queue with a registered stream, where one of
    TRIES consecutive pool streams does not (torch's pool hands its streams out in turn)."""
    stream = torch.cuda.Stream(device, priority=priority)
    ext = _ext() if _knobs.get("TORCH_DALI_QUEUE_PROBE") else None
    avoided = ext.avoided_streams() if ext is not None else []
    for _ in range(TRIES - 1):
        if not any(ext.streams_share_queue(stream.cuda_stream, s) for s in avoided):
            break
        stream = torch.cuda.Stream(device, priority=priority)
    return stream
