"""The traced graph: nodes in creation order plus the pipeline's outputs."""
from __future__ import annotations

from typing import Any

from ..errors import GraphError
from ..executor.rng import derive_seed
from .node import DataNode, Node


class Graph:
    """Nodes as traced. Node seeds derive from the pipeline seed and the creation index, so the same
    definition and seed give the same seeds; they are written to YAML so a reload keeps them."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.nodes: list[Node] = []
        self.outputs: list[DataNode] = []
        self._names: set[str] = set()

    def add_node(self, schema: Any, *, device: str, args: dict[str, Any], inputs: list[DataNode],
                 arg_inputs: dict[str, DataNode], name: str | None = None, seed: int | None = None,
                 origin: str = "") -> Node:
        idx = len(self.nodes)
        if name is None:
            name = f"__{schema.class_name}_{idx}"
        if name in self._names:
            raise GraphError(f"{schema.display_name()}: a node named '{name}' already exists in this "
                             "pipeline; names must be unique")
        if seed is None or seed == -1:
            seed = derive_seed(self.seed, idx)
        node = Node(id=idx, schema=schema, name=name, device=device, args=args, inputs=list(inputs),
                    arg_inputs=dict(arg_inputs), seed=int(seed), origin=origin)
        out_device = "gpu" if device in ("gpu", "mixed") else "cpu"
        node.outputs = [DataNode(node, i, out_device) for i in range(schema.outputs_for(args, len(inputs)))]
        self.nodes.append(node)
        self._names.add(name)
        return node

    def set_outputs(self, outputs: list[DataNode]) -> None:
        for o in outputs:
            if not isinstance(o, DataNode):
                raise GraphError(f"pipeline outputs must be DataNodes returned by ops, got {o!r}")
        if not outputs:
            raise GraphError("a pipeline needs at least one output")
        self.outputs = list(outputs)

    def reachable(self) -> list[Node]:
        """Nodes the outputs depend on, in creation (= topological) order."""
        seen: set[int] = set()
        stack = [o.node for o in self.outputs]
        while stack:
            n = stack.pop()
            if n.id in seen:
                continue
            seen.add(n.id)
            stack.extend(d.node for d in n.inputs)
            stack.extend(d.node for d in n.arg_inputs.values())
        return [n for n in self.nodes if n.id in seen]

    def find(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise GraphError(f"no operator named '{name}' in this pipeline; names: "
                         + ", ".join(n.name for n in self.nodes))
