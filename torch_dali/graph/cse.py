"""Common subgraph elimination, as DALI does when it builds a pipeline: ops that would compute the
same thing (same op, device, constant arguments, inputs after merging, and seed where the op is
random) run once, and their consumers read the one kept.

Never merged: ops given a name (the user refers to them), ops with state between batches
(readers: epochs, shards; anything with a `state_dict`), ops that must see every call (external
sources, Python functions: `order_sensitive`).
The traced graph is left as it is (names, YAML); the plan runs the merged copy.
"""
from __future__ import annotations

import enum
from dataclasses import replace
from typing import Any, Hashable

import numpy as np
import torch

from ..ops._operator import Operator
from .graph import Graph
from .node import DataNode, Node


class _Unique:
    """A key part that equals nothing else (a value we cannot compare safely)."""

    __slots__ = ()


def _canon(v: Any) -> Hashable:
    """A hashable key for an argument value: equal keys mean equal values (never the reverse:
    what cannot be compared safely gets a key of its own)."""
    if v is None or isinstance(v, (str, bytes, enum.Enum)):
        return (type(v).__name__, v)
    if isinstance(v, (bool, int, float, np.generic)):
        return (type(v).__name__, v.item() if isinstance(v, np.generic) else v)
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_canon(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((str(k), _canon(x)) for k, x in v.items())))
    if isinstance(v, np.ndarray) and v.dtype != object:
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, torch.Tensor) and v.device.type == "cpu":
        return ("tensor", str(v.dtype), tuple(v.shape), v.contiguous().numpy().tobytes()
                if v.dtype != torch.bfloat16 else v.float().contiguous().numpy().tobytes())
    if callable(v):
        return ("callable", id(v))  # the same function object; the node keeps it alive
    return ("unique", _Unique())


def _foldable(node: Node) -> bool:
    impl = node.schema.impl
    if not node.name.startswith("__"):  # named by the user
        return False
    if getattr(impl, "order_sensitive", False):
        return False
    # readers (epochs, shards) and any op with state of its own between batches
    return all(getattr(impl, m, None) is getattr(Operator, m) for m in ("epoch_size", "state_dict"))


def eliminate_common_subgraphs(graph: Graph) -> Graph:
    """`graph` with duplicate ops merged (a copy; `graph` itself is not changed), or `graph` itself
    when nothing merges."""
    nodes = graph.reachable()
    kept: dict[Hashable, Node] = {}
    to: dict[int, Node] = {}  # node id -> the node that replaces it (its own copy or the kept one)
    merged = False
    out_nodes: list[Node] = []

    def ref(d: DataNode) -> DataNode:
        return to[d.node.id].outputs[d.index]

    for n in nodes:
        inputs = [ref(d) for d in n.inputs]
        arg_inputs = {k: ref(d) for k, d in n.arg_inputs.items()}
        if _foldable(n):
            key = (n.schema.name, n.device,
                   tuple((d.node.id, d.index) for d in inputs),
                   tuple(sorted((k, d.node.id, d.index) for k, d in arg_inputs.items())),
                   _canon(n.args), n.seed if n.schema.random else None)
            first = kept.get(key)
            if first is not None:
                to[n.id] = first
                merged = True
                continue
        else:
            key = None
        c = replace(n, inputs=inputs, arg_inputs=arg_inputs, outputs=[], explicit=set(n.explicit))
        c.outputs = [DataNode(c, d.index, d.device) for d in n.outputs]
        to[n.id] = c
        out_nodes.append(c)
        if key is not None:
            kept[key] = c
    if not merged:
        return graph
    g = Graph(graph.seed)
    g.nodes = out_nodes  # ids are kept (the plan keys its ops by them)
    g.outputs = [ref(d) for d in graph.outputs]
    return g
