"""PackedSamples: a batch of 1-D samples held as parts of one buffer (offsets and sizes in NumPy).

Readers hand encoded files and records to the decoders this way: a tensor per sample costs ~2 us of
GIL-held work to make and hands the GIL away again when it dies (pytorch/pytorch#83623), 256 times a
batch on the reader's and the decoder's threads. Ops that take packed samples (the header parse,
the GPU decoder) read the buffer at the offsets; any other op gets the views (`views()`), made
once, when it first asks (`TensorList.samples`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
import torch


@dataclass(frozen=True, eq=False)
class PackedSamples:
    """Sample i is `buffer[offsets[i]:offsets[i] + sizes[i]]`. Parts may repeat (a padded batch)
    and lie in any order; each lies inside `buffer` (checked when made)."""

    buffer: torch.Tensor  # 1-D, contiguous
    offsets: np.ndarray  # int64 (n,)
    sizes: np.ndarray  # int64 (n,)

    @staticmethod
    def make(buffer: torch.Tensor, offsets: Sequence[int] | np.ndarray,
             sizes: Sequence[int] | np.ndarray) -> "PackedSamples":
        offsets = np.ascontiguousarray(offsets, dtype=np.int64).reshape(-1)
        sizes = np.ascontiguousarray(sizes, dtype=np.int64).reshape(-1)
        if buffer.dim() != 1 or not buffer.is_contiguous():
            raise ValueError(f"PackedSamples: the buffer must be 1-D and contiguous, got shape "
                             f"{tuple(buffer.shape)} strides {buffer.stride()}")
        if offsets.shape != sizes.shape:
            raise ValueError(f"PackedSamples: {offsets.size} offsets for {sizes.size} sizes")
        if offsets.size and (offsets.min() < 0 or sizes.min() < 0
                             or (offsets + sizes).max() > buffer.numel()):
            raise ValueError(f"PackedSamples: a part lies outside the buffer of {buffer.numel()} elements")
        return PackedSamples(buffer, offsets, sizes)

    def __len__(self) -> int:
        return int(self.offsets.size)

    def take(self, rows: Sequence[int] | np.ndarray) -> "PackedSamples":
        """The samples at `rows`, in that order (same buffer)."""
        rows = np.asarray(rows, dtype=np.int64)
        return PackedSamples(self.buffer, self.offsets[rows], self.sizes[rows])

    def view(self, i: int) -> torch.Tensor:
        a = int(self.offsets[i])
        return self.buffer[a:a + int(self.sizes[i])]

    __getitem__ = view  # packed[i]: sample i as a view, made when asked

    def __iter__(self) -> Iterator[torch.Tensor]:
        return iter(self.views())

    def views(self) -> list[torch.Tensor]:
        """Every sample as a view of the buffer (one tensor each)."""
        buf = self.buffer
        return [buf[a:a + b] for a, b in zip(self.offsets.tolist(), self.sizes.tolist())]

    def addresses(self) -> np.ndarray:
        """Each sample's first byte's address (int64), for C code reading the parts in place."""
        return self.offsets * self.buffer.element_size() + self.buffer.data_ptr()
