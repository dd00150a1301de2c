"""How a plan's graph is cut into stages and steps, and what flows between them.

A graph's nodes go into DALI's three stages (`stage_order`): CPU ops that depend on no GPU or
mixed op, then mixed ops (decoders: host work and uploads) fed only by those, then the rest. Each
stage is a list of steps (`steps_of`): a batch op, a fused pair of batch ops (`find_fusions`,
`Operator.fuse`), or a chain of per-sample CPU ops run together for each sample.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .. import _knobs
from ..graph.node import Node
from ..ops._operator import Operator
from ..tensor_list import TensorList


@dataclass
class Step:
    """Either one batch op, or a chain of per-sample CPU ops run together for each sample."""

    nodes: list[Node]
    sample_wise: bool
    # two batch ops run as one (`Operator.fuse`): nodes = [producer, consumer]
    fused: Any = None


@dataclass
class StageSpec:
    """One of DALI's three stages of a plan: its kind ("cpu": readers, random draws, CPU ops that
    need no device data; "mixed": decoders, host work and uploads; "gpu": the rest) and its steps."""

    kind: str
    steps: list[Step]
    # one of its batch ops runs on CUDA: a batch leaves the stage with an event
    on_cuda: bool = False
    # may work on several batches at once (on the executor's lanes): none of its ops is a source
    # or needs batches one at a time, in order (user Python functions)
    order_free: bool = True

    @property
    def nodes(self) -> list[Node]:
        return [n for s in self.steps for n in s.nodes]


@dataclass
class Partial:
    """One iteration between stages. `ready`: an event after the last stage's GPU work, recorded
    on `ready_stream`; the next stage's stream waits on it when it is another stream."""

    iteration: int
    values: dict[tuple[int, int], TensorList]
    sources: list[str]
    bs: int
    state: dict[str, Any] = field(default_factory=dict)
    ready: Any = None
    ready_stream: Any = None
    # (source node id, output index) -> its samples' source_info() names (`Operator.source_info`)
    source_info: dict[tuple[int, int], Any] = field(default_factory=dict)


@dataclass
class Batch:
    """One iteration's outputs, the event guarding GPU data, and the state to resume after it."""

    outputs: list[TensorList]
    event: Any = None
    state: dict[str, Any] = field(default_factory=dict)
    iteration: int = 0

    def hand_to(self, consumer: Any, skip_if_ready: bool = False) -> None:
        """The consumer's CUDA stream waits for the batch (with `skip_if_ready`, only if its work
        has not run yet: TORCH_DALI_HOST_WAITS); its memory stays reserved for that stream until
        the consumer's work on it has run."""
        if self.event is None:
            return
        if not (skip_if_ready and self.event.query()):
            consumer.wait_event(self.event)
        for tl in self.outputs:
            if tl.is_cuda:
                for t in ([tl.dense] if tl.dense is not None else tl.samples):
                    t.record_stream(consumer)


def find_fusions(nodes: list[Node], ops: dict[int, Operator], consumers: dict[int, list[Node]],
                 is_output: Callable[[Node], bool]) -> dict[int, tuple[Node, Any]]:
    """consumer id -> (producer, fused op): a batch op whose only reader is another batch op
    on the same device, through its only data input, may run with it as one (`Operator.fuse`)."""
    found: dict[int, tuple[Node, Any]] = {}
    if not _knobs.fusion():
        return found
    for n in nodes:
        cons = consumers[n.id]
        if len(cons) != 1 or is_output(n) or len(n.outputs) != 1:
            continue
        c = cons[0]
        if [d.node.id for d in c.inputs] != [n.id] or n.id in {d.node.id for d in c.arg_inputs.values()} \
                or c.device != n.device or c.id in found or n.id in found:
            continue
        fused = ops[n.id].fuse(ops[c.id])
        if fused is not None:
            found[c.id] = (n, fused)
    return found


def stage_order(nodes: list[Node], first: frozenset[int] = frozenset()) -> list[list[Node]]:
    """[CPU, mixed, GPU] node lists, DALI's three stages. With exec_pipelined each stage runs on
    its own thread, so the CPU work of batch i+2, the decode of batch i+1 and the GPU ops of batch i
    overlap (decode and kernels release the GIL). Nodes in `first` (device sources that set the
    batch size) go in the first stage, so the input-less ops there make as many samples."""
    on_device: set[int] = set()
    cpu: list[Node] = []
    mixed: list[Node] = []
    gpu: list[Node] = []
    in_mixed: set[int] = set()
    for n in nodes:
        if n.id in first:
            cpu.append(n)
            on_device.add(n.id)
            continue
        deps = [d.node.id for d in n.inputs] + [d.node.id for d in n.arg_inputs.values()]
        if n.device == "cpu" and not any(d in on_device for d in deps):
            cpu.append(n)
            continue
        on_device.add(n.id)
        if n.device == "mixed" and all(d in in_mixed or d not in on_device for d in deps):
            mixed.append(n)
            in_mixed.add(n.id)
        else:
            gpu.append(n)
    return [cpu, mixed, gpu]


def steps_of(nodes: list[Node], ops: dict[int, Operator], fusions: dict[int, tuple[Node, Any]]) -> list[Step]:
    """One stage's nodes as steps, in order."""
    steps: list[Step] = []
    chain: list[Node] = []
    absorbed = {p.id for p, _ in fusions.values()}
    for n in nodes:
        op = ops[n.id]
        if n.id in absorbed:  # runs in its consumer's fused step
            continue
        if n.id in fusions:
            if chain:
                steps.append(Step(chain, True))
                chain = []
            producer, fused = fusions[n.id]
            steps.append(Step([producer, n], False, fused))
            continue
        if op.sample_wise and op.device.type == "cpu":
            chain.append(n)
            continue
        if chain:
            steps.append(Step(chain, True))
            chain = []
        steps.append(Step([n], False))
    if chain:
        steps.append(Step(chain, True))
    return steps


def sources_first(nodes: list[Node], ops: dict[int, Operator]) -> list[Node]:
    """`nodes` with the sources whose data set the iteration's batch size (external sources:
    input-less and order-sensitive) first: the input-less ops that follow the batch size (random
    draws, batch_permutation) then make as many samples as were fed, wherever they were defined.
    Moving a node with no inputs earlier keeps the order topological."""
    return [n for n in nodes if sets_size(n, ops)] + [n for n in nodes if not sets_size(n, ops)]


def sets_size(n: Node, ops: dict[int, Operator]) -> bool:
    """Whether `n`'s data set the iteration's batch size (see `sources_first`)."""
    return not n.inputs and not n.arg_inputs and ops[n.id].order_sensitive


def plan_stages(nodes: list[Node], ops: dict[int, Operator],
                fusions: dict[int, tuple[Node, Any]]) -> list[StageSpec]:
    """The stages that have steps, in order (an empty CPU stage when none has)."""
    stages: list[StageSpec] = []
    # a GPU external source fed a short batch: the CPU stage's random draws follow its size (DALI)
    first = frozenset(n.id for n in nodes if n.device == "gpu" and sets_size(n, ops))
    for kind, members in zip(("cpu", "mixed", "gpu"), stage_order(sources_first(nodes, ops), first)):
        steps = steps_of(members, ops, fusions)
        if not steps:
            continue
        stages.append(StageSpec(
            kind, steps, on_cuda=any(ops[s.nodes[0].id].device.type == "cuda" for s in steps),
            order_free=all(n.inputs and not ops[n.id].order_sensitive for s in steps for n in s.nodes)))
    return stages or [StageSpec("cpu", [])]
