"""What DALI's Pipeline has beyond running a graph: the current pipeline (`Pipeline.current()`,
`with pipe:`), checkpoints (torch_dali.checkpointing), the declared output types and dimensions
(`output_dtype=`, `output_ndim=`, `output_layout=`), DALI's executor flags (`StreamPolicy`,
`OperatorConcurrency`: kept and serialized; the executor here has one policy), and how DALI's loose
argument values become ours."""
from __future__ import annotations

import enum
import operator
import threading
from typing import Any

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, GraphError, PipelineError
from .graph import Graph
from .node import DataNode, pop_graph, push_graph
_current = threading.local()


class OutputTypeError(GraphError, TypeError):
    """A pipeline output that is neither a DataNode nor a constant (a TypeError, as in DALI)."""


class StreamPolicy(enum.Enum):
    """DALI's CUDA stream assignment of the executor; recorded (`Pipeline.stream_policy`) and
    serialized, with no effect here: GPU work runs on the pipeline's own stream."""
    UNSPECIFIED = 0
    SINGLE = 16
    PER_BACKEND = 32
    PER_OPERATOR = 48


class OperatorConcurrency(enum.Enum):
    """DALI's limit on operators running at once; recorded (`Pipeline.concurrency`) and
    serialized, with no effect here: CPU ops run on the pipeline's threads."""
    UNSPECIFIED = 0
    NONE = 2
    BACKEND = 4
    FULL = 6


def executor_flag(name: str, value: Any, kind: type[enum.Enum]) -> Any:
    """`stream_policy` / `concurrency`: None, a member of `kind`, or (from YAML) a member's name."""
    if value is None or isinstance(value, kind):
        return value
    if isinstance(value, str) and value in kind.__members__:
        return kind[value]
    raise ArgumentTypeError(f"Pipeline: `{name}` must be a {kind.__name__} member or None, got {value!r}")


# DALI's Pipeline arguments accepted with no effect here (the executor is always dynamic)
ACCEPTED = {"exec_dynamic", "experimental_exec_dynamic", "py_callback_pickler"}


def integer(name: str, v: Any, default: int) -> int:
    """An integer Pipeline argument; NumPy integers are integers, None means the default."""
    if v is None:
        return default
    if isinstance(v, bool):
        raise ArgumentError(f"Pipeline: `{name}` must be an integer, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        raise ArgumentError(f"Pipeline: `{name}` must be an integer, got {v!r}") from None


def flatten_outputs(outs: Any) -> list[DataNode]:
    """Nested lists of DataNodes are flattened (torch_dali's own code returns them); a list of
    numbers is one constant output, as in DALI."""
    flat: list[DataNode] = []
    for o in outs:
        if isinstance(o, (list, tuple)) and has_node(o):
            flat.extend(flatten_outputs(o))
        else:
            flat.append(o)
    return flat


def numbers_only(outs: list[Any]) -> bool:
    """A list of plain numbers (Python or NumPy scalars): one constant output."""
    return all(isinstance(x, (bool, int, float, np.generic)) for x in outs)


def has_node(o: Any) -> bool:
    return isinstance(o, DataNode) or (isinstance(o, (list, tuple)) and any(has_node(x) for x in o))


def as_nodes(outs: list[Any]) -> list[DataNode]:
    """Outputs that are constants (NumPy arrays, numbers) become constant nodes, as in DALI."""
    from .. import types
    from .branch_values import check_defined
    res = []
    for i, o in enumerate(outs):
        check_defined(o)  # a variable an `if` on a DataNode set in one branch only
        if isinstance(o, DataNode):
            res.append(o)
            continue
        if isinstance(o, types.ScalarConstant):
            # its own type, the value saturated to it as fn.constant does (DALI 2.4: INT64 kept,
            # Constant(300, UINT8) gives 255); not through NumPy, which narrows and refuses
            res.append(types.Constant(o.value, o.dtype, device="cpu"))
            continue
        if isinstance(o, (bool, int, float, np.ndarray, np.generic, list, tuple)) or hasattr(o, "__array__"):
            res.append(types.Constant(o, device="cpu"))
        else:
            raise OutputTypeError(f"pipeline output {i} is a {type(o).__name__} ({type(o)}); outputs must be "
                                  "DataNodes returned by ops, or constants (NumPy arrays, numbers)")
    return res


class DaliAPI:
    """Mixed into Pipeline (which gives `_graph`, `_seed`, `_built`, `state_dict()`, `graph`)."""

    _graph: Graph | None
    _seed: int
    _restored: Any
    _enable_checkpointing: bool

    @staticmethod
    def current() -> "Any":
        """The pipeline whose graph is being defined on this thread (`with pipe:`, define_graph,
        a @pipeline_def function), or None."""
        stack = getattr(_current, "stack", None)
        return stack[-1] if stack else None

    @staticmethod
    def push_current(pipeline: Any) -> "Any":
        """Makes `pipeline` current (ops called now join its graph); returns the previous one."""
        prev = DaliAPI.current()
        graph = pipeline.graph_in_definition()
        if not hasattr(_current, "stack"):
            _current.stack = []
        _current.stack.append(pipeline)
        push_graph(graph)
        return prev

    @staticmethod
    def pop_current() -> None:
        """Undoes the last push_current()."""
        stack = getattr(_current, "stack", None)
        if not stack:
            raise GraphError("Pipeline.pop_current: no pipeline is current")
        stack.pop()
        pop_graph()

    def enable_api_check(self, enable: bool) -> None:
        """DALI's switch for its check that one pipeline is driven one way (run(), schedule_run() /
        outputs(), or an iterator). torch_dali does not refuse mixing them (conformance/on_purpose.md),
        so there is nothing to switch; the call is accepted."""
        return None

    @property
    def enable_checkpointing(self) -> bool:
        return self._enable_checkpointing

    @property
    def is_restored_from_checkpoint(self) -> bool:
        return self._restored is not None

    @property
    def iterator_data(self) -> Any:
        """What a framework iterator saved with the checkpoint this pipeline was restored from."""
        return self._restored[2] if self._restored is not None else None

    def checkpoint(self, filename: str | None = None, *, iterator_data: Any = None) -> str:
        """Where the pipeline stands after the last batch taken, as a string that
        `Pipeline(..., checkpoint=...)` resumes from (also written to `filename`)."""
        if not self._enable_checkpointing:
            raise ArgumentError("checkpoint: checkpointing is disabled; make the pipeline with "
                                "enable_checkpointing=True")
        from ..checkpointing import dumps
        text = dumps(self.state_dict(), {n.name: n.seed for n in self.graph.reachable()}, iterator_data)
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as f:
                f.write(text)
        return text


    def _set_output_descs(self, output_dtype: Any, output_ndim: Any, output_layout: Any = None) -> None:
        """Checks `output_dtype` / `output_ndim` / `output_layout` (one value or one per output;
        None, or an empty layout: any)."""
        from .. import types
        for v in _as_list(output_layout):
            if v is not None and not isinstance(v, str):
                raise ArgumentTypeError(f"Pipeline: `output_layout` must be a string, a list of strings or None, "
                                        f"got {type(v).__name__} in {output_layout!r}")
        self._output_layout = output_layout
        for v in _as_list(output_ndim):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise ArgumentTypeError(f"Pipeline: `output_ndim` must be integers or None, got {output_ndim!r}")
            if v is not None and v < 0:
                raise ArgumentError(f"Pipeline: `output_ndim` must be non-negative, got {output_ndim!r}")
        for v in _as_list(output_dtype):
            if v is not None and not isinstance(v, types.DALIDataType):
                raise ArgumentTypeError(f"Pipeline: `output_dtype` must be either a types.DALIDataType, None or a "
                                        f"list of them, got {output_dtype!r}")
            if v == types.NO_TYPE:
                raise ArgumentError("Pipeline: `output_dtype` cannot be types.NO_TYPE; use None for any type")
        self._output_dtype, self._output_ndim = output_dtype, output_ndim

    def output_dtype(self) -> list[Any]:
        """The declared element type of each output (None: any)."""
        return _per_output(self._output_dtype, len(self.graph.outputs))  # type: ignore[attr-defined]

    def output_ndim(self) -> list[Any]:
        """The declared number of dimensions of each output's samples (None: any)."""
        return _per_output(self._output_ndim, len(self.graph.outputs))  # type: ignore[attr-defined]

    def output_layout(self) -> list[Any]:
        """The declared layout of each output's samples (None: any)."""
        return [v or None for v in _per_output(self._output_layout, len(self.graph.outputs))]  # type: ignore

    def _check_output_descs(self, n: int) -> None:
        for what, v in (("output_dtype", self._output_dtype), ("output_ndim", self._output_ndim)):
            if isinstance(v, (list, tuple)) and len(v) != n:
                raise PipelineError(f"Pipeline: Lengths of `{what}` ({len(v)}) and of the outputs ({n}) do not match")

    def _verify_outputs(self, outs: Any) -> None:
        if self._output_dtype is None and self._output_ndim is None and not self._output_layout:
            return
        dts, nds = _per_output(self._output_dtype, len(outs)), _per_output(self._output_ndim, len(outs))
        lays = _per_output(self._output_layout, len(outs))
        for k, (tl, dt, nd, lay) in enumerate(zip(outs, dts, nds, lays)):
            if not len(tl):
                continue
            if dt is not None and tl.dtype != dt:
                raise PipelineError(f"Pipeline: Data type {tl.dtype!r} of output {k} does not match the declared "
                                    f"output_dtype {dt!r}")
            if nd is not None and tl.ndim() != nd:
                raise PipelineError(f"Pipeline: Number of dimensions {tl.ndim()} of output {k} does not match the "
                                    f"declared output_ndim {nd}")
            if lay and tl.layout() != lay:
                raise PipelineError(f"Pipeline: Layout {tl.layout()!r} of output {k} does not match the declared "
                                    f"output_layout {lay!r}")


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _per_output(v: Any, n: int) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v] * n
