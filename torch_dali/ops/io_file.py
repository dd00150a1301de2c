"""io.file.read: each sample, a path encoded as a 1-D uint8 (or int8) array, becomes the file's
bytes as a 1-D uint8 tensor (DALI 2.4's io.file.Read).

The path ends at its first NUL byte (as a C string does), relative paths are relative to the
working directory. Only regular files are read (a FIFO or device is refused, never blocked on);
a missing or unreadable file fails the batch, naming it. An empty file gives an empty sample
(DALI 2.4 fails on one unless dont_use_mmap). `dont_use_mmap` and `use_o_direct` are accepted and
change nothing here: files are read whole with plain reads (host_io, several at once).
"""
from __future__ import annotations

import os
from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError, DataError
from ..io import host_io
from ..skips import printable
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema


def decode_path(op: str, t: torch.Tensor, i: int) -> bytes:
    """Sample i's path bytes (up to the first NUL)."""
    if t.dtype not in (torch.uint8, torch.int8):
        raise ArgumentTypeError(f"{op}: file paths must be uint8 (or int8) arrays of encoded text, got {t.dtype} "
                                f"(sample {i}); encode with np.frombuffer(path.encode(), np.uint8)")
    if t.dim() != 1:
        raise ArgumentError(f"{op}: a file path must be a 1-D byte array, got shape {tuple(t.shape)} (sample {i})")
    raw = t.cpu().contiguous().view(torch.uint8).numpy().tobytes()
    return raw.split(b"\0", 1)[0]


class FileRead(Operator):
    sample_wise = False

    def output_layout(self, index: int) -> str | None:
        return ""

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, Any]) -> list[TensorList]:
        paths = [decode_path(self.name, t, i) for i, t in enumerate(inputs[0])]
        for i, p in enumerate(paths):
            if not p:
                raise DataError(f"{self.name}: sample {i} is an empty file path")
        got = host_io.read_files([os.fsdecode(p) for p in paths])
        out = []
        for p, g in zip(paths, got):
            if isinstance(g, OSError):
                raise DataError(f"{self.name}: cannot read {printable(os.fsdecode(p))}: {g.strerror or g}")
            out.append(g)
        return [TensorList(out, "")]


register(OpSchema(
    name="io.file.read", impl=FileRead, devices=("cpu",), class_name_override="Read",
    doc="Reads whole files named by 1-D uint8 arrays of encoded paths (np.frombuffer(path.encode(), "
        "np.uint8)); each output sample is a file's bytes, 1-D uint8.",
    args=(
        Arg("dont_use_mmap", "bool", False, "accepted for DALI code; files are always read with plain reads"),
        Arg("use_o_direct", "bool", False, "accepted for DALI code; no effect here"),
    ),
))
