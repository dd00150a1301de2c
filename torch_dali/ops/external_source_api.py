"""The external source seen from the pipeline and from DALI code: `pipe.feed_input()`,
`pipe.reset()` after a source ran out, the checkpointing warning, and DALI's signatures
(`fn.external_source(source=None, num_outputs=None, ...)` and `ops.ExternalSource(...)` take the
source positionally and, with `num_outputs` given, return a list of outputs even for one)."""
from __future__ import annotations

import inspect
from typing import Any

from ..errors import ArgumentError, ArgumentTypeError
from .external_source import ExternalSource
from .external_source_input import CYCLES, GENERATOR_CYCLE, start_iterable
from .external_source_checks import accepted_arg_count


def warn_unrestorable_sources(plan: Any) -> None:
    """With checkpointing on: a warning for each external source whose position a checkpoint
    cannot hold."""
    from ..checkpointing import warn_uncaptured
    for op in plan.ops.values():
        if isinstance(op, ExternalSource) and not op.restorable:
            warn_uncaptured(op.where())


class UnknownSourceError(ArgumentError, KeyError):
    """feed_input names no external source of the pipeline (a KeyError, as in DALI)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def reset_sources(executor: Any, consumed: int | None = None) -> None:
    """`Pipeline.reset()`: once an external source ran out, drops the stopped prefetch and starts
    a new epoch of each external source (nothing happens otherwise, as in DALI). `consumed`: the
    batches the caller took; when the producer made no more than that, only the end is queued."""
    ops = [op for op in executor.plan.ops.values() if isinstance(op, ExternalSource)]
    if not any(op.ran_out for op in ops):
        return
    failed = executor.failure
    if executor.exec_async and not isinstance(failed, StopIteration) and executor.iteration != consumed:
        return  # the consumer has not reached the end yet: batches before it are still queued
    executor.stop()
    for op in ops:
        op.reset_source()


def feed_input(pipe: Any, data_node: Any, data: Any, layout: str | None = None) -> None:
    """`Pipeline.feed_input`: queues `data` for the external source named `data_node` (or another
    input op that `accepts_feed`, experimental.inputs.video).

    A pipeline fed this way runs each iteration when run() asks for it (after iter_setup fed it)
    rather than prefetching ahead of the data.
    """
    from ..graph.node import DataNode
    output = None  # a DataNode (or "name:k") feeds that output alone; a name feeds all (a tuple)
    if isinstance(data_node, DataNode):
        name, output = data_node.node.name, data_node.index
    else:
        name = data_node
        base, sep, idx = str(name).rpartition(":")
        if sep and idx.isascii() and idx.isdigit():
            name, output = base, int(idx)
    executor = pipe.executor
    op = next((o for n, o in ((n, executor.plan.ops[n.id]) for n in executor.plan.nodes) if n.name == name),
              None)
    if op is None:
        sources = [n.name for n in executor.plan.nodes if isinstance(executor.plan.ops[n.id], ExternalSource)]
        raise UnknownSourceError(f"feed_input: no external source named {name!r} in this pipeline (one whose output "
                                 f"no pipeline output needs is not part of it); external sources: "
                                 f"{', '.join(sources) or 'none'}")
    if not isinstance(op, ExternalSource) and not getattr(op, "accepts_feed", False):
        # a KeyError as in DALI 2.4: the name is not one of the pipeline's external sources
        raise UnknownSourceError(f"feed_input: '{name}' is a {op.name}, not an external source")
    op.feed(data, layout, output, pipe.max_batch_size)
    executor.produce_on_demand()  # each batch after the data for it was fed


def check_parallel_source(source: Any, parallel: Any, batch: Any = None) -> None:
    """At definition, as DALI 2.4 (TypeError): a `parallel=True` source that is a plain callable is
    called with one argument (SampleInfo, or BatchInfo / the iteration with batch=True), so one
    taking none is refused; a generator function or an iterable gives whole batches, so it is
    refused with an explicit batch=False."""
    if not parallel or source is None:
        return
    if inspect.isgeneratorfunction(source) or not callable(source):
        if batch is not None and not batch:
            kind = "a generator function" if inspect.isgeneratorfunction(source) else "an iterable"
            raise ArgumentTypeError(f"ExternalSource: parallel=True with {kind} as `source` needs batch mode: "
                                    "it yields whole batches, so drop batch=False (or give a per-sample "
                                    "callable)")
        return
    if accepted_arg_count(source) == 0:
        name = getattr(source, "__name__", type(source).__name__)
        raise ArgumentTypeError(f"ExternalSource: with parallel=True the `source` callable {name} is called with "
                                "one argument (a SampleInfo with batch=False; a BatchInfo or the iteration "
                                "number with batch=True), but it takes none")


def _gather(source: Any, num_outputs: Any, kwargs: dict[str, Any], parallel: Any = None,
            batch: Any = None) -> dict[str, Any]:
    from ._schema import plain_kwargs
    check_parallel_source(source if source is not None else kwargs.get("source"),
                          kwargs.get("parallel", parallel), kwargs.get("batch", batch))
    if inspect.isgenerator(source) and CYCLES.get(kwargs.get("cycle"), "no") != "no" \
            if isinstance(kwargs.get("cycle"), (bool, str, type(None))) else False:
        raise ArgumentTypeError(f"ExternalSource: cycle={kwargs.get('cycle')!r}, but {GENERATOR_CYCLE}")
    if source is not None:
        kwargs["source"] = source
        start_iterable(source)
    if num_outputs is not None:
        kwargs["num_outputs"] = num_outputs
    return plain_kwargs(kwargs)


def external_source(source: Any = None, num_outputs: Any = None, **kwargs: Any) -> Any:
    """`fn.external_source(source=None, num_outputs=None, ...)`: feeds the pipeline from Python
    (an iterable, a generator function or a callable), or from `pipe.feed_input()` without one."""
    from ._registry import call_op, lookup
    return _as_list(call_op(lookup("external_source"), (), _gather(source, num_outputs, kwargs)), num_outputs)


def _as_list(outs: Any, num_outputs: Any) -> Any:
    """With `num_outputs` given, a list of outputs even for one (as DALI)."""
    if num_outputs is None:
        return outs
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


def _external_source_class() -> type:
    from ._registry import make_class, lookup

    base = make_class(lookup("external_source"), "ExternalSource")

    class ExternalSourceClass(base):  # type: ignore[misc, valid-type]
        """`ops.ExternalSource(source=None, num_outputs=None, ...)`; the instance is called with no
        inputs (`source` and other arguments may also be given to the call)."""

        def __init__(self, source: Any = None, num_outputs: Any = None, **kwargs: Any) -> None:
            super().__init__(**_gather(source, num_outputs, kwargs))

        def __call__(self, *inputs: Any, source: Any = None, **kwargs: Any) -> Any:
            if inputs:
                raise ArgumentTypeError(f"ExternalSource takes no inputs, got {len(inputs)}; give the data as "
                                        "`source`")
            merged = {**self._kwargs, **kwargs}
            if source is None and "source" not in kwargs:
                check_parallel_source(merged.get("source"), merged.get("parallel"), merged.get("batch"))
            return _as_list(super().__call__(**_gather(source, None, kwargs, merged.get("parallel"),
                                                       merged.get("batch"))),
                            merged.get("num_outputs"))

    ExternalSourceClass.__name__ = ExternalSourceClass.__qualname__ = "ExternalSource"
    return ExternalSourceClass


ExternalSourceClass = _external_source_class()
