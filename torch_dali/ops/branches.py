"""Choosing one of several branches per sample without paying for the others:
`_conditional.route` and `_conditional.pick`; DALI's own pair, `_conditional.split` and
`_conditional.merge` (called directly: a predicate argument instead of a branch index), works the same way.

DALI splits a batch at an `if` and runs each branch's ops on only the samples that take it. The
executor here runs every op on the whole batch (one batch size per iteration, per-sample random
draws keyed by the sample's place in it), so a branch cannot get a smaller batch. Instead,
`route` hands a branch each sample that takes it as it is and, in place of every other sample, a
stand-in: a sample that takes the branch cut to extent 1 in every dimension but the channels (`C`;
the last one when the batch has no layout), so the branch's ops see only values meant for it. They
then do the work only for its own samples, batch sizes and sample positions stay those of the
pipeline (so random draws do not depend on the split), and
`pick` takes, per sample, the output of the branch that sample chose.

A dense batch on the GPU is passed whole: its ops run as one batched launch either way, and
stand-ins would turn it into per-sample launches. The ops in a branch then see every sample (their
results for samples of other branches are dropped by `pick`).
"""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator, batch_args
from ._registry import register
from ._schema import Arg, OpSchema, non_negative


def branch_indices(op: str, index: TensorList, n: int, count: int | None = None) -> list[int]:
    """The branch index of each sample (a CPU scalar per sample), checked against `count` branches."""
    if len(index) != n:
        raise ArgumentError(f"{op}: the branch index has {len(index)} samples, the data {n}")
    out = []
    for i, v in enumerate(batch_args(index)):
        if isinstance(v, list) or isinstance(v, bool):
            raise ArgumentError(f"{op}: the branch index must be one integer per sample; sample {i} is {v!r}")
        if isinstance(v, float) and not v.is_integer():
            raise ArgumentTypeError(f"{op}: the branch index must be an integer; sample {i} is {v}")
        k = int(v)
        if count is not None and not 0 <= k < count:
            raise ArgumentError(f"{op}: sample {i} chose branch {k}, but there are {count} (0 to {count - 1})")
        out.append(k)
    return out


def stand_in(t: torch.Tensor, layout: str) -> torch.Tensor:
    """`t` cut to extent 1 in every dimension but the channels: what a branch gets for a sample
    that does not take it (a view: no copy, no work)."""
    if t.dim() == 0:
        return t
    keep = {d for d, c in enumerate(layout) if c == "C"} if len(layout) == t.dim() else {t.dim() - 1}
    return t[tuple(slice(None) if d in keep else slice(0, 1) for d in range(t.dim()))]


def with_stand_ins(samples: list[torch.Tensor], takes: list[bool], layout: str,
                   whole: bool = False) -> list[torch.Tensor]:
    """The samples that take a branch as they are; in place of each other one, the first taking
    sample's stand-in, or with `whole` that sample itself (values meant for the branch, as DALI's
    ops there would see only those: an index another branch guards against, say `data[i]` under
    `if i < len`, must not fail here). When no sample takes it: each sample's own stand-in, or with
    `whole` the samples as they are."""
    donor = next((t for t, m in zip(samples, takes) if m), None)
    if whole:
        return list(samples) if donor is None else [t if m else donor for t, m in zip(samples, takes)]
    cut = None if donor is None else stand_in(donor, layout)
    return [t if m else (cut if cut is not None else stand_in(t, layout)) for t, m in zip(samples, takes)]


class Route(Operator):
    """Sample i of the data where the index of sample i is `branch`, else its stand-in."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        data, index = inputs
        n = len(data)
        mine = [k == self.args["branch"] for k in branch_indices(self.name, index, n)]
        if all(mine) or (data.dense is not None and data.is_cuda):
            return [data]
        layout = data.layout()
        return [TensorList(with_stand_ins(data.samples, mine, layout), layout)]

    def output_layout(self, index: int) -> str | None:
        return None


class Pick(Operator):
    """Sample i of input index[i] (the index is the last input): the output of the branch sample i took."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        values, index = inputs[:-1], inputs[-1]
        n = len(values[0])
        if any(len(v) != n for v in values):
            raise ArgumentError(f"{self.name}: the branches give batches of different sizes "
                                f"({', '.join(str(len(v)) for v in values)})")
        chosen = branch_indices(self.name, index, n, len(values))
        layout = next((v.layout() for v in values if v.layout()), "")
        denses = [v.dense for v in values]
        if n and all(d is not None for d in denses) and len({(d.shape, d.dtype, d.device) for d in denses}) == 1:
            which = torch.tensor(chosen, device=denses[0].device)
            out = denses[0].clone()
            for k in range(1, len(values)):
                rows = (which == k).nonzero().flatten()
                if rows.numel():
                    out[rows] = denses[k][rows]
            return [TensorList(out, layout)]
        out_samples = [values[k][i] for i, k in enumerate(chosen)]
        self._check_same(out_samples, chosen)
        devices = {t.device for t in out_samples}
        if len(devices) > 1:
            gpu = next(d for d in devices if d.type == "cuda")
            out_samples = [t.to(gpu) for t in out_samples]
        # one tensor on the GPU (batched kernels downstream); on the CPU a stack would copy every
        # sample once more, while the ops after it work sample by sample anyway
        if out_samples and out_samples[0].is_cuda and all(t.shape == out_samples[0].shape for t in out_samples):
            return [TensorList(torch.stack(out_samples), layout)]
        return [TensorList(out_samples, layout)]

    def _check_same(self, samples: list[torch.Tensor], chosen: list[int]) -> None:
        dtypes = {t.dtype for t in samples}
        if len(dtypes) > 1:
            raise ArgumentTypeError(f"{self.name}: the branches give different element types "
                                    f"({', '.join(sorted(str(d) for d in dtypes))}); every branch must give one type")
        ndims = {t.dim() for t in samples}
        if len(ndims) > 1:
            raise ArgumentError(f"{self.name}: the branches give different numbers of dimensions ({sorted(ndims)})")

    def output_layout(self, index: int) -> str | None:
        return None  # the first branch's (every branch keeps the layout of the data it was given)


def predicate_flags(op: str, args: dict[str, list[Any]], n: int) -> list[bool]:
    """The `predicate` argument input of split/merge: one scalar per sample (nonzero is true)."""
    pred = args.get("predicate")
    if pred is None or len(pred) != n:
        raise ArgumentError(f"{op}: `predicate` must be given as a batch of {n} scalars (one per sample)")
    for i, v in enumerate(pred):
        if isinstance(v, list):
            raise ArgumentError(f"{op}: the predicate of a conditional must be a scalar per sample; sample {i} "
                                f"has {len(v)} values")
    return [bool(v) for v in pred]


class Split(Operator):
    """DALI's `_conditional.split`: the samples whose predicate is true (first output) and false (second).
    Batch sizes stay the pipeline's (see the module's docstring): each output holds its own samples
    as they are and, in place of the other branch's samples, the first of its own (whole, as
    `branch_input` does: DALI's ops there see only that side's samples, so one that needs their
    shape, `reshape(shape=[10, 10, 3])`, must get it); `merge` drops those."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        data = inputs[0]
        flags = predicate_flags(self.name, args, len(data))
        layout = data.layout()
        return [TensorList(with_stand_ins(data.samples, [f == side for f in flags], layout, whole=True), layout)
                for side in (True, False)]

    def output_layout(self, index: int) -> str | None:
        return None


class BranchInput(Operator):
    """A value made before an `if` as one branch's ops read it (graph.branch_scope): samples that
    take the `side` as they are, each other one replaced by the first that takes it (as it is: the
    ops do the same work, on values meant for them); unchanged when none takes it."""

    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        data = inputs[0]
        side = bool(self.args["side"])
        takes = [f == side for f in predicate_flags(self.name, args, len(data))]
        if all(takes) or not any(takes) or (data.dense is not None and data.is_cuda):
            return [data]
        return [TensorList(with_stand_ins(data.samples, takes, data.layout(), whole=True), data.layout())]

    def output_layout(self, index: int) -> str | None:
        return None


class Merge(Pick):
    """DALI's `_conditional.merge`: per sample, the first input where the predicate is true, else the second."""

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        true, false = inputs
        if len(true) != len(false):
            raise ArgumentError(f"{self.name}: the branches give batches of different sizes ({len(true)}, "
                                f"{len(false)})")
        flags = predicate_flags(self.name, args, len(true))
        if true.layout() != false.layout() and len(set(flags)) > 1:
            raise ArgumentError(f"{self.name}: the branches give different layouts ({true.layout()!r}, "
                                f"{false.layout()!r})")
        chosen = [0 if f else 1 for f in flags]
        out = [(true if f else false)[i] for i, f in enumerate(flags)]
        self._check_same(out, chosen)
        layout = next((v.layout() for v in (true, false) if v.layout()), "")
        return [TensorList(out, layout)]


_PREDICATE_ARGS = (Arg("predicate", "bool", doc="one boolean per sample: which branch the sample takes", tensor=True),
                   Arg("preserve", "bool", False, "accepted (nothing is pruned here)"))

register(OpSchema(
    name="_conditional.split", impl=Split, devices=("cpu", "gpu"), num_outputs=2, class_name_override="Split",
    doc="The samples whose predicate is true, and those whose predicate is false (the two sides of an `if`); "
        "batch sizes stay the pipeline's, each of the other side's samples replaced by the first of this side's.",
    args=_PREDICATE_ARGS))
register(OpSchema(
    name="_conditional.merge", impl=Merge, min_inputs=2, max_inputs=2, devices=("cpu", "gpu"),
    input_devices="any", class_name_override="Merge",
    doc="Per sample, the first input where the predicate is true, else the second: where the two sides of a "
        "`split` meet.",
    args=_PREDICATE_ARGS))
register(OpSchema(
    name="_conditional.branch_input", impl=BranchInput, devices=("cpu", "gpu"), input_devices="any",
    class_name_override="BranchInput",
    doc="A value made before an `if` on a DataNode as one branch's operators read it: the samples that take "
        "the branch as they are, every other one replaced by the first sample that takes it.",
    args=(Arg("predicate", "bool", doc="one boolean per sample: the `if`'s condition", tensor=True),
          Arg("side", "bool", True, "the branch: True for the `if` body, False for the `else`")),
))
register(OpSchema(
    name="_conditional.route", impl=Route, min_inputs=2, max_inputs=2, devices=("cpu", "gpu"),
    input_devices="any", class_name_override="Route",
    doc="Per sample: the data where the branch index (second input, a CPU integer per sample) is `branch`, "
        "else a stand-in cut to extent 1 in every dimension but the channels, so the branch's ops skip the work.",
    args=(Arg("branch", "int", doc="the branch this output feeds", check=non_negative),),
))
register(OpSchema(
    name="_conditional.pick", impl=Pick, min_inputs=2, max_inputs=64, devices=("cpu", "gpu"),
    input_devices="any", class_name_override="Pick",
    doc="Per sample i: sample i of input k, where k is sample i of the last input (a CPU integer): "
        "where the branches `route` fed meet.",
))
