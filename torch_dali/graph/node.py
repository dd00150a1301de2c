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

    @property
    def op(self) -> str:
        return self.schema.name

    def describe(self) -> str:
        where = f" (defined at {self.origin})" if self.origin else ""
        return f"{self.schema.display_name()} '{self.name}'{where}"


class DataNode:
    """A symbolic batch: output `index` of `node`. What `fn.x(...)` returns while a graph is traced."""

    __slots__ = ("node", "index", "device")

    def __init__(self, node: Node, index: int, device: str) -> None:
        self.node = node
        self.index = index
        self.device = device

    @property
    def name(self) -> str:
        return self.node.name if self.index == 0 else f"{self.node.name}:{self.index}"

    def gpu(self) -> "DataNode":
        """Copies the batch to the GPU (DALI's `.gpu()`)."""
        if self.device == "gpu":
            return self
        return _copy_op(self, "mixed")

    def cpu(self) -> "DataNode":
        if self.device == "cpu":
            return self
        return _copy_op(self, "cpu")

    def __repr__(self) -> str:
        return f"DataNode(name={self.name!r}, device={self.device!r})"

    def __bool__(self) -> bool:
        raise GraphError(
            f"DataNode '{self.name}' is symbolic while the graph is traced: it has no truth value. "
            "Use per-sample ops (e.g. fn.random.coin_flip as an argument) instead of Python `if`.")


# -- tracing context: which graph `fn.x(...)` calls add nodes to -----------------------------------

_local = threading.local()


def current_graph() -> "Graph":
    stack = getattr(_local, "stack", None)
    if not stack:
        raise GraphError(
            "torch_dali ops must be called while a pipeline's graph is defined: inside "
            "define_graph(), inside `with pipe:`, or inside a @pipeline_def function")
    return stack[-1]


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


# -- the copy op behind DataNode.gpu()/.cpu() ----------------------------------------------------------
# Ops sit above this module (they add nodes to graphs), so the ops layer registers how a copy is
# traced (`set_copy_op`, done by ops/_registry.py) instead of this module importing up into `fn`.

def _no_copy_op(node: "DataNode", device: str) -> "DataNode":
    raise GraphError("DataNode.gpu()/.cpu(): no copy op is registered (import torch_dali first)")


_copy_op: Callable[["DataNode", str], "DataNode"] = _no_copy_op


def set_copy_op(copy: Callable[["DataNode", str], "DataNode"]) -> None:
    """Sets how `DataNode.gpu()` / `.cpu()` add their copy node (`copy(node, device)`)."""
    global _copy_op
    _copy_op = copy
