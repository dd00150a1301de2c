"""Markers that choose what a `Compose` returns; they leave the data as it is.

`ToPureTensor` and `PILToTensor`: a CHW torch tensor (for PIL input: uint8, not scaled);
`ToPILImage`: PIL images. When several are listed, the last one decides."""
from __future__ import annotations

from typing import Any, Literal

from .operator import Operator


class _OutputMarker(Operator):
    output_type = "default"

    def __init__(self, device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device)

    def _kernel(self, data_input: Any) -> Any:
        return data_input


class ToPureTensor(_OutputMarker):
    output_type = "tensor"


class PILToTensor(_OutputMarker):
    output_type = "tensor"


class ToPILImage(_OutputMarker):
    output_type = "pil"
