"""Small ops: cast, copy (DataNode.gpu()/.cpu())."""
from __future__ import annotations

import contextlib
from typing import Any

import torch

from .. import types
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator, SampleContext
from .arith_kernels import cast_sat
from .enum_data import enum_type_of, is_enum_type, refuse_float, storage_dtype
from ._registry import register
from ._schema import Arg, OpSchema


class Cast(Operator):
    def setup(self) -> None:
        target = self.args["dtype"]
        self.dtype = storage_dtype(target)
        source = enum_type_of(self.node.inputs[0]) if self.node.inputs else None
        # enum values convert to and from integers only (DALI's pipeline fails when it runs: so here)
        self.float_refused = None
        if is_enum_type(target):
            self.float_refused = (None, target)
        elif source is not None and self.dtype.is_floating_point:
            self.float_refused = (source, target)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        if self.float_refused is not None:
            source, target = self.float_refused
            if source is not None or x.dtype.is_floating_point:
                refuse_float(self.name, source or types.from_torch_dtype(x.dtype), target)
        # DALI's conversion: integers saturate, floats round half away from zero (arith_kernels)
        return cast_sat(x, self.dtype)


class Copy(Operator):
    """Moves a batch between devices; device='mixed' copies CPU -> GPU."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        if tl.device == ctx.device:
            return [tl]
        if tl.is_cuda and ctx.device.type == "cpu":
            # to the host: a blocking copy on the stream that made the data (this op is a CPU op,
            # so the step did not enter it), so the CPU ops after it read the values, not a
            # buffer the copy has yet to fill
            with torch.cuda.stream(ctx.stream) if ctx.stream is not None else contextlib.nullcontext():
                if tl.is_dense_tensor() and len(tl):
                    return [TensorList(tl.as_tensor().to("cpu"), tl.layout())]
                return [TensorList([t.to("cpu") for t in tl.samples], tl.layout())]
        if tl.is_dense_tensor() and len(tl):
            dense = tl.as_tensor()
            if ctx.device.type == "cuda":
                dense = dense.pin_memory() if not dense.is_pinned() else dense
            return [TensorList(dense.to(ctx.device, non_blocking=True), tl.layout())]
        return [TensorList([t.to(ctx.device, non_blocking=True) for t in tl.samples], tl.layout())]

    def output_layout(self, index: int) -> str | None:
        return None  # the input's: ops after `.gpu()` see the layout the data came with


register(OpSchema(
    name="cast", impl=Cast, doc="Converts the element type (float to integer rounds and saturates).",
    args=(Arg("dtype", "dtype", doc="output type, e.g. types.FLOAT", aliases=("output_dtype",)),),
))
register(OpSchema(
    name="copy", impl=Copy, doc="Copies the batch; with device='mixed' from the CPU to the GPU.",
    devices=("cpu", "mixed", "gpu"), input_devices="any",
))
