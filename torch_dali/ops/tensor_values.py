"""one_hot and get_property.

one_hot follows DALI 2.4: a batch whose every sample holds one element is read as scalars (the
legacy rule) unless `axis` is given; classes are the input values truncated to integers; on/off
values are converted to `dtype` as C converts (integers wrap). get_property gives each sample's
`layout` or `source_info` as uint8 bytes; `source_info` is what the sample's `source_info()` gives:
the reader's name for the file or record it came from (as DALI names it: relative to `file_root`,
empty for readers.sequence and readers.nemo_asr), followed back through the op's first input;
empty for data no reader named."""
from __future__ import annotations

from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import tensor_values as K
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema, non_negative
from .tensor_axes import BatchShapeOp


class OneHot(BatchShapeOp):
    def setup(self) -> None:
        self.dtype = types.to_torch_dtype(self.args["dtype"])
        name = self.args.get("axis_name")
        if name is not None and len(name) != 1:
            raise ArgumentError(f"{self.name}: `axis_name` must be one character, got {name!r}")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        n = len(tl)
        dt = tl.dense.dtype if tl.dense is not None else (tl[0].dtype if n else torch.int32)
        if dt == torch.bool or dt.is_complex:
            raise ArgumentTypeError(f"{self.name}: unsupported input type {dt}; give integers or floats")
        ndim = self.sample_ndim(tl)
        scalars = ndim == 0 or (self.args.get("axis") is None and n > 0
                                and all(t.numel() == 1 for t in (tl.samples if tl.dense is None else [tl.dense[0]])))
        name = self.args.get("axis_name") or ""
        k = int(self.args["num_classes"])
        on = K.c_cast(float(self.args["on_value"]), self.dtype, tl.device)
        off = K.c_cast(float(self.args["off_value"]), self.dtype, tl.device)
        if scalars:
            flat = tl.dense.reshape(n) if tl.dense is not None else torch.stack([t.reshape(()) for t in tl.samples]) \
                if n else torch.zeros(0, dtype=dt, device=tl.device)
            return [TensorList(K.one_hot(flat, k, 1, on, off), name)]
        axis = -1 if self.args.get("axis") is None else int(self.args["axis"])
        if not -1 <= axis <= ndim:
            raise ArgumentError(f"{self.name}: axis {axis} is out of range for {ndim}-dimensional inputs "
                                f"(accepted: [-1, {ndim}])")
        axis = ndim if axis < 0 else axis
        layout = tl.layout()
        if name:
            if len(layout) != ndim:
                raise ArgumentError(f"{self.name}: `axis_name` needs the input's layout to name its {ndim} "
                                    f'dimensions, got "{layout}"')
            out_layout = layout[:axis] + name + layout[axis:]
        else:
            out_layout = ""
        if tl.dense is not None:
            return [TensorList(K.one_hot(tl.dense, k, axis + 1, on, off), out_layout)]
        return [TensorList(ctx.map(lambda i: K.one_hot(tl[i], k, axis, on, off), n), out_layout)]


class GetProperty(Operator):
    """Each sample's `layout` or `source_info`, as a 1-D uint8 tensor of its bytes."""

    sample_wise = False
    reads_source_info = True  # DALI's source_info(): a reader's name for the sample, not its full path

    def setup(self) -> None:
        if self.args["key"] not in ("layout", "source_info"):
            raise ArgumentError(f"{self.name}: unsupported property key {self.args['key']!r}; it takes 'layout' or "
                                "'source_info'")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        n = len(inputs[0])
        if self.args["key"] == "layout":
            texts = [inputs[0].layout()] * n
        else:
            texts = [str(ctx.source_info[i]) if i < len(ctx.source_info) else "" for i in range(n)]
        return [TensorList([torch.tensor(list(s.encode()), dtype=torch.uint8, device=self.device) for s in texts], "")]

    def output_layout(self, index: int) -> str:
        return ""


register(OpSchema(
    name="one_hot", impl=OneHot,
    doc="One-hot encoding: a new axis of num_classes entries, on_value at each input value's class.",
    args=(Arg("num_classes", "int", 0, "number of classes", check=non_negative),
          Arg("axis", "int", None, "where the new axis goes (default -1: last; a scalar input's only axis); "
              "given, samples of one element are not read as scalars"),
          Arg("axis_name", "str", None, "the layout name of the new axis (else the layout is cleared)"),
          Arg("dtype", "dtype", types.FLOAT, "output type"),
          Arg("on_value", "float", 1.0, "the value at the class (converted to dtype as C converts)"),
          Arg("off_value", "float", 0.0, "the value elsewhere")),
))
register(OpSchema(
    name="get_property", impl=GetProperty, input_devices="any",
    doc="A property of each sample as uint8 bytes: its 'layout' or its 'source_info' (the file or record it "
        "was read from).",
    args=(Arg("key", "str", doc="'layout' or 'source_info'"),),
))
