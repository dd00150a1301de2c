"""decoders.numpy: each sample a `.npy` file's bytes (uint8) in memory, decoded to its array.

The header is parsed as the numpy reader parses it (`torch_dali.io.npy`: strict, never evaluated;
bool, integers and float16/32/64, little-endian). Fortran-order arrays come out in C order. The
samples of a batch must share their type and number of dimensions; `dtype` converts every sample
with DALI's conversion (integers: rounded half away from zero and saturated), so that a batch of
mixed types can be made one.
"""
from __future__ import annotations

from typing import Any

import torch

from ... import types
from ...errors import ArgumentTypeError, DataError
from ...io import npy
from ...tensor_list import TensorList
from .._operator import BatchContext, Operator
from .._registry import register
from .._schema import Arg, OpSchema
from ..arith_kernels import cast_sat


class NumpyDecoder(Operator):
    sample_wise = False  # the samples' types are checked against each other

    def setup(self) -> None:
        dt = self.args.get("dtype")
        self.dtype = types.to_torch_dtype(dt) if dt is not None else None

    def _decode(self, i: int, data: torch.Tensor) -> torch.Tensor:
        where = f"{self.name}: sample {i}"
        if data.dtype != torch.uint8:
            raise ArgumentTypeError(f"{where}: the encoded input must be uint8 bytes, got {data.dtype}")
        raw = data.reshape(-1).contiguous().cpu().numpy().tobytes()
        h = npy.read_header(lambda off, n: raw[off:off + n], len(raw), where)
        if h.data_offset + h.nbytes != len(raw):
            raise DataError(f"{where}: the .npy data should take {h.nbytes} bytes after its header, the sample "
                            f"has {len(raw) - h.data_offset}")
        arr = npy.as_array(h, bytearray(raw[h.data_offset:]))
        out = arr.contiguous()
        return cast_sat(out, self.dtype) if self.dtype is not None else out

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        out = ctx.map(lambda i: self._decode(i, tl[i]), len(tl))
        for i, t in enumerate(out[1:], 1):
            if t.dtype != out[0].dtype:
                raise DataError(f"{self.name}: sample {i} holds {t.dtype}, sample 0 {out[0].dtype}; the samples of a "
                                "batch must share a type (give `dtype` to convert them)")
            if t.dim() != out[0].dim():
                raise DataError(f"{self.name}: sample {i} has {t.dim()} dimensions, sample 0 {out[0].dim()}; the "
                                "samples of a batch must have as many")
        return [TensorList(out, "")]

    def output_layout(self, index: int) -> str:
        return ""


register(OpSchema(
    name="decoders.numpy", impl=NumpyDecoder, devices=("cpu",),
    doc="Decodes .npy files held in memory (uint8 samples, as numpy.save writes them) to their arrays.",
    args=(Arg("dtype", "dtype", None, "convert the arrays to this type (default: keep the file's)"),),
))
