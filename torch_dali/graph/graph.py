"""The traced graph: nodes in creation order plus the pipeline's outputs."""
from __future__ import annotations

import weakref
from typing import Any

from ..errors import ArgumentError, GraphError
from ..rng import derive_seed
from .node import DataNode, Node, require_source


class Graph:
    """Nodes as traced. Node seeds derive from the pipeline seed and the creation index, so the same
    definition and seed give the same seeds; a seeded pipeline writes them to YAML so a reload keeps
    them (an unseeded one writes only those given to ops)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.nodes: list[Node] = []
        self.outputs: list[DataNode] = []
        self._names: set[str] = set()
        # nodes made outside this graph -> their copies here (the originals are kept alive so that
        # their ids stay theirs)
        self._copies: dict[int, tuple[Node, Node]] = {}
        # seeds count the ops that are not device copies: a GPU op fed from the CPU (an implicit
        # copy before it) draws what the same op draws on the CPU
        self._seeded = 0
        # nodes copied in from another pipeline's graph: DALI refuses such a pipeline at build
        self.foreign_pipeline_nodes: list[Node] = []

    def derived_seed(self) -> int:
        """The seed the next op added without one gets (from the pipeline seed and its position)."""
        return derive_seed(self.seed, self._seeded)

    def add_node(self, schema: Any, *, device: str, args: dict[str, Any], inputs: list[DataNode],
                 arg_inputs: dict[str, DataNode], name: str | None = None, seed: int | None = None,
                 origin: str = "") -> Node:
        for x in (*inputs, *arg_inputs.values()):
            require_source(x)
        idx = len(self.nodes)
        if name is None:
            name = f"__{schema.class_name}_{idx}"
        if name in self._names:
            raise GraphError(f"{schema.display_name()}: a node named '{name}' already exists in this "
                             "pipeline; names must be unique")
        seed_given = seed is not None and seed != -1
        if seed_given and not -2**63 <= int(seed) < 2**63:  # type: ignore[arg-type]
            raise ArgumentError(f"{schema.display_name()}: `seed` {seed} does not fit int64 (DALI 2.4 "
                                "refuses it too)")
        if not seed_given:
            seed = derive_seed(self.seed, self._seeded)
        if schema.name != "copy":
            self._seeded += 1
        node = Node(id=idx, schema=schema, name=name, device=device, args=args, inputs=list(inputs),
                    arg_inputs=dict(arg_inputs), seed=int(seed), origin=origin, seed_given=seed_given, home=weakref.ref(self))
        out_device = "gpu" if device in ("gpu", "mixed") else "cpu"
        node.outputs = [DataNode(node, i, out_device) for i in range(schema.outputs_for(args, len(inputs)))]
        self._keep(node)
        return node

    def _keep(self, node: Node) -> None:
        self.nodes.append(node)
        self._names.add(node.name)

    def owns(self, node: Node) -> bool:
        return node.id < len(self.nodes) and self.nodes[node.id] is node

    def set_outputs(self, outputs: list[DataNode]) -> None:
        for o in outputs:
            if not isinstance(o, DataNode):
                raise GraphError(f"pipeline outputs must be DataNodes returned by ops, got {o!r}")
            require_source(o)
        if not outputs:
            raise GraphError("a pipeline needs at least one output")
        self.outputs = self.adopt(list(outputs))

    def adopt(self, outs: list[DataNode]) -> list[DataNode]:
        """`outs` with every node they depend on that was made outside this graph (ops called
        outside any pipeline) copied in, in creation order, with seeds derived from this graph's
        seed unless given."""
        for o in outs:
            require_source(o)
        foreign: dict[int, Node] = {}
        stack = [o.node for o in outs]
        while stack:
            n = stack.pop()
            if self.owns(n) or id(n) in foreign or id(n) in self._copies:
                continue
            foreign[id(n)] = n
            home = n.home() if n.home is not None else None
            if home is not None and home is not self and not isinstance(home, FreeGraph):
                self.foreign_pipeline_nodes.append(n)
            stack.extend(d.node for d in n.inputs)
            stack.extend(d.node for d in n.arg_inputs.values())

        def mapped(d: DataNode) -> DataNode:
            c = self._copies.get(id(d.node))
            return c[1].outputs[d.index] if c is not None else d

        for n in sorted(foreign.values(), key=lambda n: n.id):
            name = None if n.name.startswith("__") else n.name
            c = self.add_node(n.schema, device=n.device, args=dict(n.args), inputs=[mapped(d) for d in n.inputs],
                              arg_inputs={k: mapped(d) for k, d in n.arg_inputs.items()}, name=name,
                              seed=n.seed if n.seed_given else None, origin=n.origin)
            c.explicit = set(n.explicit)
            self._copies[id(n)] = (n, c)
        return [mapped(o) for o in outs]

    def reachable(self) -> list[Node]:
        """Nodes the outputs depend on, in creation (= topological) order. As in DALI 2.4, Python
        function ops (their side effects are the point: a `num_outputs=0` sink, a counter) run too,
        with what they depend on, when no output needs them."""
        seen: set[int] = set()
        stack = [o.node for o in self.outputs]
        stack += [n for n in self.nodes if getattr(n.schema.impl, "no_prune", False)]
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


class FreeGraph(Graph):
    """Where ops called outside any pipeline put their nodes. It keeps none of them (they live as
    long as the DataNodes that reach them); a pipeline copies in those its outputs need."""

    def __init__(self) -> None:
        super().__init__(0)
        self._count = 0

    def add_node(self, schema: Any, **kw: Any) -> Node:
        name = kw.get("name")
        if name is None:
            kw["name"] = f"__{schema.class_name}_free{self._count}"
        return super().add_node(schema, **kw)

    def _keep(self, node: Node) -> None:
        node.id = self._count  # creation order, for the copy into a pipeline
        self._count += 1

    def owns(self, node: Node) -> bool:
        return False

    def set_outputs(self, outputs: list[DataNode]) -> None:
        raise GraphError("outputs belong to a pipeline: call pipe.set_outputs(...)")
