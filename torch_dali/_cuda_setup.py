"""Process-wide CUDA settings made when torch_dali is imported, before any CUDA context exists
(the driver reads them when it makes the context; later they change nothing in this process).

CUDA_DEVICE_MAX_CONNECTIONS: the driver maps every stream onto one of this many hardware work
queues (8 unless set). A pipeline runs about two dozen streams (lanes, the GPU stage, the decoder's
states); with 8 queues some share one with each other and with the training's stream, and a
queue whose head waits for an event (a lane waiting for its decode) holds back every stream
queued behind it. More queues fed a GPU-bound training ~2% better but ran the pipelines alone
slower (2026-12-04, H200), so nothing is set unless TORCH_DALI_CUDA_CONNECTIONS asks for it
(TORCH_DALI_HOST_WAITS keeps our streams from parking in shared queues instead). A value the
user set is never changed."""
from __future__ import annotations

import os
import sys

from . import _knobs

CONNECTIONS = "CUDA_DEVICE_MAX_CONNECTIONS"


def set_connections() -> bool:
    """Sets CUDA_DEVICE_MAX_CONNECTIONS where that can still take effect; whether it did."""
    n = _knobs.get("TORCH_DALI_CUDA_CONNECTIONS")
    if not n or os.environ.get(CONNECTIONS, "").strip():
        return False
    if _context_exists():
        return False  # the context has its queues already
    os.environ[CONNECTIONS] = str(n)
    return True


def _context_exists() -> bool:
    """Whether torch has made its CUDA context (torch not imported yet: it has not)."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.cuda.is_initialized()
