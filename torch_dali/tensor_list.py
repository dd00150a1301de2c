"""TensorList: one batch of one pipeline output, a torch tensor per sample (or one dense tensor)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from .errors import ArgumentError


class TensorList:
    """A batch held as torch tensors. `at(i)` gives NumPy on the CPU and a torch tensor on the GPU.

    When every sample has the same shape the batch may be backed by one dense tensor
    (`as_tensor()` is then free and DLPack export is zero-copy).
    """

    def __init__(self, samples: Sequence[torch.Tensor] | torch.Tensor, layout: str = "") -> None:
        if isinstance(samples, torch.Tensor):
            self._dense: torch.Tensor | None = samples
            self._samples: list[torch.Tensor] | None = None
        else:
            self._dense = None
            self._samples = list(samples)
        self._layout = layout

    # -- construction helpers -------------------------------------------------------------
    @property
    def samples(self) -> list[torch.Tensor]:
        if self._samples is None:
            self._samples = list(self._dense.unbind(0)) if self._dense is not None else []
        return self._samples

    @property
    def device(self) -> torch.device:
        if self._dense is not None:
            return self._dense.device
        return self._samples[0].device if self._samples else torch.device("cpu")

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def dense(self) -> torch.Tensor | None:
        """The one tensor backing the whole batch (batch dimension first) when there is one, else
        None: a cheap test for the batched paths (unlike `as_tensor()`, it never stacks)."""
        return self._dense

    # -- DALI's API ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._dense.shape[0]) if self._dense is not None else len(self._samples or [])

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.samples[i]

    def __iter__(self):
        return iter(self.samples)

    def at(self, i: int) -> Any:
        """Sample `i`: a NumPy array for CPU batches (as DALI), a torch tensor for GPU batches."""
        if not -len(self) <= i < len(self):
            raise IndexError(f"TensorList.at: index {i} out of range for a batch of {len(self)}")
        t = self.samples[i]
        if t.device.type == "cpu":
            return t.numpy() if t.dtype != torch.bfloat16 else t.float().numpy()
        return t

    def layout(self) -> str:
        return self._layout

    def shape(self) -> list[tuple[int, ...]]:
        return [tuple(t.shape) for t in self.samples]

    def is_dense_tensor(self) -> bool:
        if self._dense is not None:
            return True
        s = self.samples
        return all(t.shape == s[0].shape for t in s)

    def as_tensor(self) -> torch.Tensor:
        """The batch as one tensor with a leading batch dimension (samples must share a shape)."""
        if self._dense is None:
            if not self.is_dense_tensor():
                raise ArgumentError(
                    "TensorList.as_tensor: samples have different shapes "
                    f"({sorted(set(self.shape()))[:3]}...); pad or crop them to one shape first")
            self._dense = torch.stack(self.samples) if self.samples else torch.empty(0)
        return self._dense

    def as_cpu(self) -> "TensorList":
        if self.device.type == "cpu":
            return self
        if self._dense is not None:
            return TensorList(self._dense.cpu(), self._layout)
        return TensorList([t.cpu() for t in self.samples], self._layout)

    asCPU = as_cpu  # DALI's legacy spelling

    def as_array(self) -> np.ndarray:
        return self.as_cpu().as_tensor().numpy()

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.as_tensor().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self.as_tensor().__dlpack_device__()

    def __repr__(self) -> str:
        kind = "TensorListGPU" if self.is_cuda else "TensorListCPU"
        return f"{kind}(batch={len(self)}, layout={self._layout!r}, shapes={self.shape()[:2]}...)"


TensorListCPU = TensorList
TensorListGPU = TensorList
