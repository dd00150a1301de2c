"""`Normalize`: (x - mean) / std per channel, `fn.normalize` with the statistics shaped to the layout."""
from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np
import torch

from .... import fn
from .operator import ArgumentValidateRule, Operator, graph_input


def _is_sequence_like(v: Any) -> bool:
    return isinstance(v, (torch.Tensor, np.ndarray)) or (isinstance(v, Sequence) and not isinstance(v, str))


class _ValidateStd(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, std: Any, **_: Any) -> None:
        if not _is_sequence_like(std):
            raise TypeError(f"std must be a sequence (one value per channel), got {type(std).__name__}")
        if bool(torch.any(torch.as_tensor(std) == 0)):
            raise ValueError(f"std must not hold a zero, got {std}")


class _ValidateMean(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, mean: Any, **_: Any) -> None:
        if not _is_sequence_like(mean):
            raise TypeError(f"mean must be a sequence (one value per channel), got {type(mean).__name__}")
        torch.as_tensor(mean)  # as torchvision: anything torch cannot read is refused here


def per_channel(values: Any, channel_last: bool) -> np.ndarray:
    """Per-channel statistics shaped to broadcast over an HWC (1, 1, C) or CHW (C, 1, 1) sample."""
    arr = np.asarray(values.cpu() if isinstance(values, torch.Tensor) else values)
    return arr[None, None, :] if channel_last else arr[:, None, None]


class Normalize(Operator):
    """Normalizes each channel: (x - mean[c]) / std[c]. `inplace` is not supported."""

    arg_rules = (_ValidateStd, _ValidateMean)

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False,
                 device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device, mean=mean, std=std)
        self.mean = mean
        self.std = std
        if inplace:
            raise NotImplementedError("Normalize(inplace=True) is not supported")
        self.inplace = inplace

    def _kernel(self, data_input: Any) -> Any:
        channel_last = graph_input().layout == "HWC"
        return fn.normalize(data_input, mean=per_channel(self.mean, channel_last),
                            stddev=per_channel(self.std, channel_last), device=self.device)
