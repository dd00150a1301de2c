"""What `Pipeline.build()` refuses in a graph before it plans it, where DALI 2.4 refuses it too."""
from __future__ import annotations

from typing import Any

from ..errors import ArgumentError, GraphError, PipelineError
from .graph import Graph

# the start methods of `multiprocessing` (DALI starts its Python workers with one of them)
PY_START_METHODS = ("fork", "spawn", "forkserver")


class ForeignNodeError(GraphError, RuntimeError):
    """An operator made inside another pipeline used by this one (DALI: RuntimeError at build)."""


def check_foreign_nodes(graph: Graph) -> None:
    """A node made inside another pipeline (`with p1:`) and used here: DALI 2.4 refuses the
    pipeline at build (RuntimeError). Here it would be a copy with its own state and seed, not the
    other pipeline's data, so it is refused too. (Ops made outside any pipeline join it.)"""
    stolen = graph.foreign_pipeline_nodes
    if stolen:
        raise ForeignNodeError(
            f"Pipeline: {stolen[0].describe()} was made inside another pipeline and is used by this "
            f"one ({len(stolen)} such operator(s)); an operator belongs to the pipeline it was made "
            "in: make it again inside this pipeline, or outside any pipeline to share its definition")


def check_callback_pickler(pickler: Any, py_start_method: str) -> None:
    """`py_callback_pickler` with the `fork` start method (the default): DALI 2.4 refuses the
    Pipeline when it is made (ValueError), as forked workers pickle nothing."""
    if pickler is not None and py_start_method == "fork":
        raise ArgumentError("Pipeline: py_callback_pickler is only used to send callbacks to workers started "
                            "with 'spawn' or 'forkserver'; with py_start_method='fork' leave it out")


def check_parallel_sources(graph: Graph, py_num_workers: int, py_start_method: str, pickler: Any = None) -> None:
    """DALI 2.4 refuses at build a `parallel=True` external source when `py_num_workers` is below 1
    (RuntimeError), `py_start_method` names no multiprocessing start method or `py_callback_pickler`
    is neither None, an object with `dumps` and `loads`, nor a tuple or list (ValueError);
    torch_dali runs such sources on its threads but refuses the same settings."""
    parallel = [n for n in graph.nodes if n.op == "external_source" and n.args.get("parallel")]
    if not parallel:
        return
    if py_num_workers < 1:
        raise PipelineError(f"Pipeline: {parallel[0].describe()} has parallel=True, which needs "
                            f"py_num_workers >= 1 (got {py_num_workers}); give a positive worker "
                            "count or drop parallel=True")
    if py_start_method not in PY_START_METHODS:
        raise ArgumentError(f"Pipeline: py_start_method={py_start_method!r} is not a start method "
                            f"({', '.join(PY_START_METHODS)}); {parallel[0].describe()} has parallel=True")
    if not (pickler is None or isinstance(pickler, (tuple, list))
            or (hasattr(pickler, "dumps") and hasattr(pickler, "loads"))):
        raise ArgumentError(f"Pipeline: py_callback_pickler={pickler!r} has no `dumps` and `loads`; give a module "
                            "such as pickle or dill, a (module, dumps_kwargs, loads_kwargs) tuple, or None")
