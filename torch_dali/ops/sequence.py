"""sequence_rearrange: the frames of each sequence (its outermost axis) in a new order.

`new_order` (a constant or one list per sample) names, for each output frame, the input frame it
copies; frames may repeat or be left out, but the result keeps at least one. The input's layout
must be empty or start with 'F', and each frame must have at least one dimension of its own.
"""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema


class SequenceRearrange(Operator):
    sample_wise = False  # the layout is checked once per batch (run_batch), then each sample gathered

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        i = ctx.index
        if x.dim() < 2:
            raise ArgumentError(f"{self.name}: sample {i} has shape {tuple(x.shape)}; a sequence needs the frame axis "
                                "and at least one axis per frame")
        order = args.get("new_order", self.args.get("new_order"))
        order = [order] if isinstance(order, (int, float)) else list(order)
        if any(isinstance(v, (list, tuple)) for v in order):
            raise ArgumentError(f"{self.name}: `new_order` of sample {i} must be a 1-D list of frame indices; it has "
                                f"more dimensions ({torch.tensor(order).dim()})")
        if not order:
            raise ArgumentError(f"{self.name}: `new_order` is empty (sample {i}); the output needs at least one frame")
        if any(isinstance(v, float) for v in order):  # DALI 2.4 refuses a float tensor, whole or not
            raise ArgumentTypeError(f"{self.name}: `new_order` of sample {i} must hold integers, got {order}")
        n = int(x.shape[0])
        for k, v in enumerate(order):
            if not float(v).is_integer() or not 0 <= v < n:
                raise ArgumentError(f"{self.name}: `new_order[{k}]` is {v}, outside [0, {n}) for sample {i} "
                                    f"(a sequence of {n} frames)")
        return x[torch.tensor([int(v) for v in order], dtype=torch.long, device=x.device)]

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        layout = inputs[0].layout()
        if layout and layout[0] != "F":
            raise ArgumentError(f"{self.name}: the input layout '{layout}' is not a sequence's (it must start with 'F')")
        return super().run_batch(ctx, inputs, args)


register(OpSchema(
    name="sequence_rearrange", impl=SequenceRearrange,
    doc="Reorders the frames (outermost axis) of each sequence: output frame k is input frame new_order[k]; "
        "frames may repeat or be dropped.",
    args=(Arg("new_order", "ints", doc="for each output frame, the index of the input frame it copies",
              tensor=True),),
))
