"""`select`: per sample, one of several augmentations, chosen by an index.

Each augmentation is traced once. The DataNodes given to it are routed (`_conditional.route`):
the samples that chose it come as they are, the others as one-pixel stand-ins, so each sample's
work is done once, in the augmentation it chose; `_conditional.pick` then takes every sample from
its augmentation's output. Batch sizes and sample positions stay those of the pipeline, so the
random draws inside an augmentation do not depend on which samples chose it, and the result does
not depend on the number of threads. (DALI instead splits the batch at `if`s on the index; the
outputs are the same for augmentations that work sample by sample, which all of the standard
ones do.)
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...errors import ArgumentError, ArgumentTypeError
from ...graph.node import DataNode
from ...ops._registry import call_op, lookup
from ...ops._schema import adopted


def _route(value: Any, index: DataNode, branch: int) -> Any:
    if not isinstance(value, DataNode):
        return value
    return call_op(lookup("_conditional.route"), (adopted(value), index), {"branch": branch})


def select(ops: Sequence[Callable[..., Any]], selected_op_idx: Any, *op_args: Any, **op_kwargs: Any) -> Any:
    """`ops[selected_op_idx](*op_args, **op_kwargs)`, per sample: `selected_op_idx` is an integer
    per sample in [0, len(ops) - 1] (a CPU DataNode) or a Python int (the same op for all)."""
    if len(ops) == 0:
        raise ArgumentError("select: the list of operations is empty")
    if isinstance(selected_op_idx, int) and not isinstance(selected_op_idx, bool):
        if not 0 <= selected_op_idx < len(ops):
            raise ArgumentError(f"select: index {selected_op_idx} is out of range for {len(ops)} operations")
        return ops[selected_op_idx](*op_args, **op_kwargs)
    if not isinstance(selected_op_idx, DataNode):
        raise ArgumentTypeError(f"select: `selected_op_idx` must be a DataNode of integers (or an int), got "
                                f"{type(selected_op_idx).__name__}")
    if len(ops) == 1:
        return ops[0](*op_args, **op_kwargs)
    if selected_op_idx.device != "cpu":
        raise ArgumentError("select: `selected_op_idx` must be on the CPU (one integer per sample)")
    index = adopted(selected_op_idx)
    outs = []
    for k, op in enumerate(ops):
        args = [_route(a, index, k) for a in op_args]
        kwargs = {name: _route(v, index, k) for name, v in op_kwargs.items()}
        out = op(*args, **kwargs)
        if not isinstance(out, DataNode):
            raise ArgumentTypeError(f"select: operation {k} ({getattr(op, 'name', op)!r}) returned "
                                    f"{type(out).__name__}; each must return one DataNode")
        outs.append(adopted(out))
    if any(o.device == "gpu" for o in outs):
        outs = [o.gpu() for o in outs]
    return call_op(lookup("_conditional.pick"), (*outs, index), {})
