"""What the decoder tests compare with DALI 2.4's outputs: a short sha256 of a tensor's bytes
(computed once with DALI's venv; CI has no DALI), and the output type / dtype names they use."""
from __future__ import annotations

import hashlib

import numpy as np
import torch

from torch_dali import types

OUTPUT_TYPES = {"RGB": types.RGB, "BGR": types.BGR, "GRAY": types.GRAY, "ANY": types.ANY_DATA,
                "YCbCr": types.YCbCr}
DTYPES = {"u8": torch.uint8, "u16": torch.uint16, "f32": torch.float32}


def digest(t: torch.Tensor) -> str:
    return hashlib.sha256(np.ascontiguousarray(t.numpy()).tobytes()).hexdigest()[:16]
