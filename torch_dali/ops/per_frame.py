"""fn.per_frame and per-frame argument inputs, as DALI has them.

`fn.per_frame(x)` marks a batch as sequences by its layout only (the data are unchanged): no
layout becomes "F" padded with "*" to the sample's rank; a layout must already start with "F"
(`replace=True` puts an "F" in place of its first name). An argument input made by per_frame
holds one value per frame (its outer extent: the input's number of frames, or 1 for all frames).

An op that processes frames independently (`per_frame_ok`) and is given such an argument runs on
the batch unfolded into frames, each with its frame's argument values, and the results are
stacked back into sequences ("F" + the frames' layout). An input without frames is used whole
for each frame (its frame count then comes from the arguments), except a channel-first input
("C..."), which DALI refuses: its leading axis is not frames. An op with `per_frame_layout`
(the colour ops) reads a layout-less input with its own default layout and takes sequences only,
as DALI 2.4 does for them.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch

from ..errors import ArgumentError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema


class PerFrame(Operator):
    sample_wise = False

    def layout_known(self, index: int) -> bool:
        return False  # worked out from each batch's rank / layout

    def output_layout(self, index: int) -> str | None:
        return ""

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        ranks = {t.dim() for t in tl.samples}
        if 0 in ranks:
            raise ArgumentError(f"{self.name}: a zero-dimensional sample has no frames to mark (per_frame needs "
                                "samples with an outer frame dimension)")
        layout = tl.layout()
        if not layout:
            layout = "F" + "*" * (ranks.pop() - 1) if len(ranks) == 1 else ""
        elif self.args["replace"]:
            layout = "F" + layout[1:]
        elif layout[0] != "F":
            raise ArgumentError(f"{self.name}: the layout '{layout}' does not start with 'F' (frames); pass "
                                "replace=True to rename its first dimension")
        return [TensorList(tl.dense if tl.dense is not None else tl.samples, layout)]


register(OpSchema(
    name="per_frame", impl=PerFrame,
    doc="Marks the input as sequences (layout starting with 'F'); the data are unchanged. Use it on an "
        "argument input to give a value per frame of the sequences an op processes.",
    args=(Arg("replace", "bool", False, "replace the first name of an existing layout with 'F' (else a layout "
                                        "not starting with 'F' is an error)"),),
))


def per_frame_mismatch(op: str, i: int, name: str, got: int, frames: int, where: str) -> str:
    """A per-frame argument whose value count is neither 1 nor the frame count of `where`
    (input 0, or the first per-frame argument when no input is a sequence)."""
    return (f"{op}: sample {i} of the per-frame argument `{name}` has {got} values, but sample {i} of {where} "
            f"has {frames} frames (give one value per frame, or one for all)")


def _frames_of(op: Any, name: str, i: int, v: Any) -> int:
    if isinstance(v, (list, tuple)):
        if not v:
            raise ArgumentError(f"{op.name}: sample {i} of the per-frame argument `{name}` has no frames")
        return len(v)
    return 1  # one value (a single frame's scalar): for every frame


def _frame_value(v: Any, f: int) -> Any:
    if not isinstance(v, (list, tuple)):
        return v
    return v[f] if len(v) > 1 else v[0]


def run_unfolded(op: Any, ctx: BatchContext, inputs: Sequence[TensorList], args: dict[str, list[Any]],
                 names: list[str], run: Any) -> list[TensorList]:
    """`run(op, ctx, inputs, args)` on the batch unfolded into frames, folded back into sequences."""
    tl = inputs[0]
    layout = tl.layout()
    if layout.startswith("C"):
        raise ArgumentError(f"{op.name}: `{names[0]}` is given per frame (fn.per_frame), but input 0 has the "
                            f"layout `{layout}`, whose first dimension is channels, not frames")
    reader = getattr(op, "per_frame_layout", None)  # an op that needs a sequence and names its layout
    if reader is not None and tl.samples:
        layout = reader(layout, int(tl.samples[0].dim()))
    seq = layout.startswith("F")
    counts: list[int] = []
    for i, x in enumerate(tl.samples):
        n = int(x.shape[0]) if seq else 0
        if seq and n == 0:
            raise ArgumentError(f"{op.name}: sample {i} of input 0 is a sequence of no frames, which an op given "
                                "per-frame arguments refuses")
        where = "input 0"
        for k in names:
            m = _frames_of(op, k, i, args[k][i])
            if m == 1:
                continue
            if n and m != n:
                raise ArgumentError(per_frame_mismatch(op.name, i, k, m, n, where))
            if not seq and not n:
                where = f"argument `{k}`"
            n = m
        counts.append(n if n or seq else 1)
    frames: list[torch.Tensor] = []
    others: list[list[torch.Tensor]] = [[] for _ in inputs[1:]]
    fargs: dict[str, list[Any]] = {k: [] for k in args}
    srcs: list[str] = []
    for i, x in enumerate(tl.samples):
        for f in range(counts[i]):
            frames.append(x[f] if seq else x)
            for j, other in enumerate(inputs[1:]):
                others[j].append(other.samples[i])
            for k, vals in args.items():
                fargs[k].append(_frame_value(vals[i], f) if k in names else vals[i])
            srcs.append(ctx.sources[i] if i < len(ctx.sources) else "")
    unfolded = [TensorList(frames, layout[1:] if seq else layout)]
    unfolded += [TensorList(o, other.layout()) for o, other in zip(others, inputs[1:])]
    group = getattr(op, "sequence_frame_args", None)  # an op that sizes a sequence from all its frames
    if group is not None:
        fargs = group(unfolded[0], fargs, counts)
    fctx = BatchContext(ctx.node, ctx.iteration, len(frames), ctx.device, ctx.pool, srcs, ctx.stream)
    outs = run(op, fctx, unfolded, fargs)
    folded = []
    for out in outs:
        samples, at = [], 0
        for i, n in enumerate(counts):
            part = out.samples[at:at + n]
            at += n
            shapes = sorted({tuple(t.shape) for t in part})
            if len(shapes) > 1:  # DALI works out one size per sequence; this does not (yet)
                raise ArgumentError(f"{op.name}: the frames of sample {i} came out in different shapes {shapes} "
                                    "with their per-frame arguments; give the output size explicitly")
            samples.append(torch.stack(part))
        lay = out.layout()
        folded.append(TensorList(samples, "F" + lay if lay else ""))
    return folded
