"""multi_paste: many regions of many images pasted onto each output canvas (HWC, CPU or CUDA).

With `in_ids`, output sample i takes the regions of input samples in_ids[i] (one input batch);
without it, output i takes sample i of every input, in order. Regions are pasted in order onto a
zero canvas, later ones over earlier ones. Relative anchors round down and relative shapes round
up (DALI 2.4's rounding, measured); a region outside its image or canvas is refused, with DALI's
wording.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional.crop import convert
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema

_TYPES = (torch.uint8, torch.int16, torch.int32, torch.float32)


def _pairs(v: Any, n: int, name: str, op: str, dtype: Any) -> np.ndarray:
    a = np.asarray(v, dtype=dtype).reshape(-1)
    if a.size != 2 * n:
        raise ArgumentError(f"{op}: `{name}` must hold one (y, x) pair per pasted region ({n}), got {a.size} values")
    return a.reshape(n, 2)


class MultiPaste(Operator):
    sample_wise = False

    def setup(self) -> None:
        has_ids = "in_ids" in self.node.arg_inputs or self.args.get("in_ids") is not None
        if has_ids and len(self.node.inputs) != 1:
            raise ArgumentError(f"{self.name}: with `in_ids` the op takes exactly one input batch, got "
                                f"{len(self.node.inputs)}")
        self.has_ids = has_ids
        for a, b in (("in_anchors", "in_anchors_rel"), ("shapes", "shapes_rel"), ("out_anchors", "out_anchors_rel")):
            if self._given(a) and self._given(b):
                raise ArgumentError(f"{self.name}: `{a}` and `{b}` are mutually exclusive")
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)
        if self.dtype is not None and self.dtype not in _TYPES:
            raise ArgumentTypeError(f"{self.name}: `dtype` must be uint8, int16, int32 or float32, got {self.dtype}")

    def _given(self, name: str) -> bool:
        return name in self.node.arg_inputs or self.args.get(name) is not None

    def _get(self, args: dict[str, list[Any]], name: str, i: int) -> Any:
        return args[name][i] if name in args else self.args.get(name)

    def _coords(self, args: dict[str, list[Any]], i: int, n: int, name: str,
                sizes: list[tuple[int, int]]) -> np.ndarray | None:
        """(n, 2) integer anchors or shapes from `name` or `name_rel` (relative to `sizes`)."""
        absolute = self._get(args, name, i)
        if absolute is not None:
            return _pairs(absolute, n, name, self.name, np.int64)
        rel = self._get(args, name + "_rel", i)
        if rel is None:
            return None
        r = _pairs(rel, n, name + "_rel", self.name, np.float32)
        prod = r * np.asarray(sizes, dtype=np.float32).reshape(n, 2)
        return (np.ceil(prod) if name == "shapes" else np.floor(prod)).astype(np.int64)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        for tl in inputs:
            if tl.layout() not in ("HWC", ""):
                raise ArgumentError(f"{self.name}: input layout must be HWC, got {tl.layout()!r}")
            for x in tl:
                if x.dim() != 3:
                    raise ArgumentError(f"{self.name}: MultiPaste supports only 2D data with channels (HWC), got "
                                        f"shape {tuple(x.shape)}")
                if x.dtype not in _TYPES:
                    raise ArgumentTypeError(f"{self.name}: input type must be uint8, int16, int32 or float32, got "
                                            f"{x.dtype}")
        base = inputs[0]
        n_out = len(base)
        out = []
        ctx.source_picks = []  # each output names the samples pasted into it (DALI 2.4)
        for i in range(n_out):
            if self.has_ids:
                ids = [int(v) for v in np.asarray(self._get(args, "in_ids", i)).reshape(-1)]
                for k in ids:
                    if not 0 <= k < len(base):
                        raise ArgumentError(f"{self.name}: `in_ids` of output {i} names sample {k}, but the input "
                                            f"batch has {len(base)} samples (0 to {len(base) - 1})")
                srcs = [base[k] for k in ids]
                ctx.source_picks.append([(0, k) for k in ids])
            else:
                srcs = [tl[i] for tl in inputs]
                ctx.source_picks.append([(t, i) for t in range(len(inputs))])
            n = len(srcs)
            size = self._get(args, "output_size", i)
            if size is None:
                shapes = {tuple(t.shape[:2]) for tl in inputs for t in tl}
                if len(shapes) != 1:
                    a, b = sorted(shapes)[:2]
                    raise ArgumentError(f"{self.name}: without `output_size` the output takes the inputs' size, so they "
                                        f"must all be one size; got samples of {a} and {b}")
                canvas = next(iter(shapes))
            else:
                canvas = tuple(int(v) for v in np.asarray(size).reshape(-1))
                if len(canvas) < 2:
                    raise ArgumentError(f"{self.name}: `output_size` must be (H, W), got {canvas}")
                canvas = canvas[:2]  # as DALI: values past (H, W) (an (H, W, C) shape) are not read
            channels = int(base[i].shape[2])
            if any(int(s.shape[2]) != channels for s in srcs):
                raise ArgumentError(f"{self.name}: the samples pasted into output {i} have different channel counts "
                                    f"({sorted({int(s.shape[2]) for s in srcs} | {channels})})")
            in_sizes = [(int(s.shape[0]), int(s.shape[1])) for s in srcs]
            in_anchor = self._coords(args, i, n, "in_anchors", in_sizes)
            in_anchor = np.zeros((n, 2), np.int64) if in_anchor is None else in_anchor
            shape = self._coords(args, i, n, "shapes", in_sizes)
            if shape is None:
                shape = np.asarray(in_sizes, np.int64).reshape(n, 2) - in_anchor
            out_anchor = self._coords(args, i, n, "out_anchors", [canvas] * n)
            out_anchor = np.zeros((n, 2), np.int64) if out_anchor is None else out_anchor
            dtype = self.dtype or base[i].dtype
            y = torch.zeros((*canvas, channels), dtype=dtype, device=base[i].device)
            for k, src in enumerate(srcs):
                (iy, ix), (h, w), (oy, ox) = in_anchor[k].tolist(), shape[k].tolist(), out_anchor[k].tolist()
                if oy < 0 or ox < 0 or oy + h > canvas[0] or ox + w > canvas[1]:
                    raise ArgumentError(f"{self.name}: The pasted region must be within output bounds. Got output "
                                        f"anchor: {oy} x {ox}, pasted region shape: {h} x {w}, output shape: "
                                        f"{canvas[0]} x {canvas[1]}, for the region at index {k}, pasted into "
                                        f"output sample at index {i}.")
                if iy < 0 or ix < 0 or h < 0 or w < 0 or iy + h > in_sizes[k][0] or ix + w > in_sizes[k][1]:
                    raise ArgumentError(f"{self.name}: The pasted region must be within input bounds. Got input "
                                        f"anchor: {iy} x {ix}, pasted region shape: {h} x {w}, input shape: "
                                        f"{in_sizes[k][0]} x {in_sizes[k][1]}, for the region at index {k}, pasted "
                                        f"into output sample at index {i}.")
                region = src[iy:iy + h, ix:ix + w]
                y[oy:oy + h, ox:ox + w] = convert(region, dtype) if region.dtype != dtype else region
            out.append(y)
        return [TensorList(out, "HWC")]


_T = dict(tensor=True)
register(OpSchema(
    name="multi_paste", impl=MultiPaste, min_inputs=1, max_inputs=64,
    doc="Pastes regions of images onto zero canvases (HWC): with `in_ids`, output i gets regions of "
        "the samples in_ids[i]; without, sample i of each input. Regions are (y, x) pairs per paste.",
    args=(
        Arg("in_ids", "int_list", None, "input samples pasted into each output (one input batch)", **_T),
        Arg("in_anchors", "any", None, "(n, 2) region starts in the inputs (default 0)", **_T),
        Arg("in_anchors_rel", "any", None, "(n, 2) region starts, relative (rounded down)", **_T),
        Arg("shapes", "any", None, "(n, 2) region sizes (default: to the input's end)", **_T),
        Arg("shapes_rel", "any", None, "(n, 2) region sizes, relative to the input (rounded up)", **_T),
        Arg("out_anchors", "any", None, "(n, 2) where each region goes on the canvas (default 0)", **_T),
        Arg("out_anchors_rel", "any", None, "(n, 2) canvas positions, relative (rounded down)", **_T),
        Arg("output_size", "int_list", None, "canvas (H, W); default: the inputs' common size", **_T),
        Arg("dtype", "dtype", None, "output type (default: the input's): uint8, int16, int32, float32"),
    ),
))
