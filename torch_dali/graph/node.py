"""Graph nodes. A Node is one operator call; a DataNode is one of its outputs."""
from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..errors import GraphError

if TYPE_CHECKING:
    from ..ops._schema import OpSchema
    from .graph import Graph


class DataNodeTruthError(GraphError, TypeError):
    """A DataNode was used where Python needs a bool (a TypeError, as in DALI)."""


class NoSourceError(GraphError, RuntimeError):
    """A DataNode made by hand (`DataNode("x")`) used where an op's output is needed; a
    RuntimeError, as DALI's build raises."""


def require_source(x: "DataNode") -> None:
    if x.node is None:
        raise NoSourceError(f"DataNode '{x.name}' has no op that produces it (it was made directly, as "
                            "DataNode(name)); only an op's outputs can feed ops or be pipeline outputs")


@dataclass(eq=False)
class Node:
    """One operator instance in a graph: immutable once traced."""

    id: int
    schema: "OpSchema"
    name: str
    device: str
    args: dict[str, Any]
    inputs: list["DataNode"]
    arg_inputs: dict[str, "DataNode"]
    seed: int
    origin: str = ""
    outputs: list["DataNode"] = field(default_factory=list)
    # constant arguments the user gave (in the call, the YAML or an override): written to YAML even
    # when they equal the default, so a saved config shows what was set
    explicit: set[str] = field(default_factory=set)
    # whether `seed` was given by the user (else derived from the pipeline seed and the position,
    # and derived again when a node made outside any pipeline joins one)
    seed_given: bool = False
    # a weak reference to the graph that traced it (a pipeline's, or a thread's free graph outside
    # any pipeline); weak, so a node the user keeps does not keep its pipeline's graph alive
    home: Any = field(default=None, repr=False, compare=False)

    @property
    def op(self) -> str:
        return self.schema.name

    def describe(self) -> str:
        where = f" (defined at {self.origin})" if self.origin else ""
        return f"{self.schema.display_name()} '{self.name}'{where}"


class DataNode:
    """A symbolic batch: output `index` of `node`. What `fn.x(...)` returns while a graph is traced."""

    __slots__ = ("node", "index", "device", "_name")

    def __init__(self, node: "Node | str", index: int = 0, device: str = "cpu", source: Any = None) -> None:
        # DALI's own signature is DataNode(name, device="cpu", source=None): a name with no op
        # behind it (what code building DataNodes by hand, and DALI's tests, make)
        if isinstance(node, str):
            self.node, self.index, self.device, self._name = None, 0, device, node
            return
        self.node = node
        self.index = index
        self.device = device
        self._name = None

    @property
    def name(self) -> str:
        if self.node is None:
            return self._name
        return self.node.name if self.index == 0 else f"{self.node.name}:{self.index}"

    def gpu(self) -> "DataNode":
        """Copies the batch to the GPU (DALI's `.gpu()`)."""
        if self.device == "gpu":
            return self
        return _call_op("copy", (self,), {"device": "mixed"})

    def cpu(self) -> "DataNode":
        if self.device == "cpu":
            return self
        return _call_op("copy", (self,), {"device": "cpu"})

    def shape(self, *, dtype: Any = None, device: str = "cpu") -> "DataNode":
        """The run-time shape of each sample, as a new DataNode (1-D, INT64 unless `dtype`)."""
        kw: dict[str, Any] = {"device": device}
        if dtype is not None:
            kw["dtype"] = dtype
        return _call_op("shapes", (self,), kw)

    def property(self, key: str, *, device: str = "cpu") -> "DataNode":
        """A metadata property of each sample ('source_info' or 'layout') as 1-D uint8 bytes, a new
        DataNode (`fn.get_property`)."""
        return _call_op("get_property", (self,), {"key": key, "device": device})

    def source_info(self, *, device: str = "cpu") -> "DataNode":
        """Each sample's source_info (the file or record it was read from), `property('source_info')`."""
        return self.property("source_info", device=device)

    def get(self) -> Any:
        """DALI's debug-mode accessor. In debug mode ops return nodes holding data (eager's
        DataNodeDebug); a node of a traced graph has no batch to return."""
        raise GraphError(
            f"DataNode '{self.name}' has no data while the pipeline is traced: .get() gives a batch "
            "in debug mode (pipeline_def(debug=True)); otherwise run the pipeline and read its "
            "outputs, or apply single ops to data with torch_dali.eager.")

    def __repr__(self) -> str:
        return f"DataNode(name={self.name!r}, device={self.device!r})"

    if TYPE_CHECKING:
        # ops/arithmetic.py installs these at import (ops sit above this module); declared here so
        # type checkers see `a + b`, `a < 1`, `-a` on DataNodes (tests/test_typing.py keeps the lists equal)
        def __add__(self, other: Any) -> DataNode: ...
        def __radd__(self, other: Any) -> DataNode: ...
        def __sub__(self, other: Any) -> DataNode: ...
        def __rsub__(self, other: Any) -> DataNode: ...
        def __mul__(self, other: Any) -> DataNode: ...
        def __rmul__(self, other: Any) -> DataNode: ...
        def __truediv__(self, other: Any) -> DataNode: ...
        def __rtruediv__(self, other: Any) -> DataNode: ...
        def __floordiv__(self, other: Any) -> DataNode: ...
        def __rfloordiv__(self, other: Any) -> DataNode: ...
        def __mod__(self, other: Any) -> DataNode: ...
        def __rmod__(self, other: Any) -> DataNode: ...
        def __pow__(self, other: Any) -> DataNode: ...
        def __rpow__(self, other: Any) -> DataNode: ...
        def __and__(self, other: Any) -> DataNode: ...
        def __rand__(self, other: Any) -> DataNode: ...
        def __or__(self, other: Any) -> DataNode: ...
        def __ror__(self, other: Any) -> DataNode: ...
        def __xor__(self, other: Any) -> DataNode: ...
        def __rxor__(self, other: Any) -> DataNode: ...
        def __lshift__(self, other: Any) -> DataNode: ...
        def __rlshift__(self, other: Any) -> DataNode: ...
        def __rshift__(self, other: Any) -> DataNode: ...
        def __rrshift__(self, other: Any) -> DataNode: ...
        def __eq__(self, other: Any) -> DataNode: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> DataNode: ...  # type: ignore[override]
        def __lt__(self, other: Any) -> DataNode: ...
        def __le__(self, other: Any) -> DataNode: ...
        def __gt__(self, other: Any) -> DataNode: ...
        def __ge__(self, other: Any) -> DataNode: ...
        def __neg__(self) -> DataNode: ...
        def __pos__(self) -> DataNode: ...
        def __abs__(self) -> DataNode: ...
        def __invert__(self) -> DataNode: ...
        def __getitem__(self, index: Any) -> DataNode: ...
        def __hash__(self) -> int: ...

    def __bool__(self) -> bool:
        raise DataNodeTruthError(
            f"DataNode '{self.name}' is symbolic while the graph is traced: it has no truth value (an `if`, "
            "`and`/`or`/`not`, `min()`/`max()` or bool() on it). For per-sample choices use "
            "@pipeline_def(enable_conditionals=True) or per-sample ops; for a boolean tensor use fn.cast.")


# -- tracing context: which graph `fn.x(...)` calls add nodes to -----------------------------------

_local = threading.local()


def current_graph() -> "Graph":
    """The graph being traced; outside any (no `with pipe:`, no define_graph), this thread's free
    graph: ops called there make nodes that join a pipeline when it names them as outputs
    (`pipe.set_outputs(...)`), as in DALI."""
    stack = getattr(_local, "stack", None)
    if stack:
        return stack[-1]
    free = getattr(_local, "free", None)
    if free is None:
        from .graph import FreeGraph
        free = _local.free = FreeGraph()
    return free


def tracing() -> bool:
    """Whether a pipeline's graph is being traced on this thread."""
    return bool(getattr(_local, "stack", None))


def set_debug_active(active: bool) -> None:
    """Marks this thread as running a debug-mode pipeline's definition (torch_dali.eager)."""
    _local.debug = active


def debug_active() -> bool:
    """Whether ops called now run at once (a debug-mode definition running, no graph traced)."""
    return bool(getattr(_local, "debug", False)) and not tracing()


def push_graph(graph: "Graph") -> None:
    if not hasattr(_local, "stack"):
        _local.stack = []
    _local.stack.append(graph)


def pop_graph() -> None:
    _local.stack.pop()


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def caller_origin() -> str:
    """`file.py:42` of the first frame outside torch_dali: where the user made this op."""
    f = sys._getframe(1)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(_PKG_DIR):
            return f"{os.path.basename(path)}:{f.f_lineno}"
        f = f.f_back
    return ""


# -- the ops behind DataNode.gpu()/.cpu()/.shape() -------------------------------------------------------
# Ops sit above this module (they add nodes to graphs), so the ops layer registers how an op is
# traced (`set_op_caller`, done by ops/_registry.py) instead of this module importing up into `fn`.

def _no_op_caller(op: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    raise GraphError(f"DataNode: no op caller is registered to add `{op}` (import torch_dali first)")


_call_op: Callable[[str, tuple[Any, ...], dict[str, Any]], Any] = _no_op_caller


def set_op_caller(caller: Callable[[str, tuple[Any, ...], dict[str, Any]], Any]) -> None:
    """Sets how DataNode methods add an op node: `caller(op_name, inputs, kwargs)`, as `fn.<op>` would."""
    global _call_op
    _call_op = caller
