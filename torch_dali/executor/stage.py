"""Stages: what the executor runs on its threads, one contract for all, and the ordered hand-off
between them.

A `Stage` is one or more of the plan's stages (cpu, mixed, gpu) run one after another for a batch.
Every stage has the same contract: `reset(state)` (where the next batch starts), `next(part, lane)`
(the next batch through it: the first stage makes one from nothing), `get_state()` (where the
stages stand after the last batch made: the resume point) and `shutdown()` (closes its ops).
A stage runs on `lanes` threads at once (the mixed stage, and the GPU stage with it when none of
its ops needs batches in order), each lane with its own CUDA stream.

Batches are numbered by iteration and handed from a stage to the next through a `Reorder`
buffer: lanes finish out of order, the next stage takes them strictly in sequence.
"""
from __future__ import annotations

import threading
import weakref
from collections import deque
from typing import Any

from .. import _knobs
from .plan import Plan
from .steps import Partial, StageSpec

_POLL_S = 0.1  # how often a waiting thread checks for a stop


class Stage:
    """One executor stage: `specs` (the plan's stages it runs in order) on `lanes` threads."""

    def __init__(self, plan: Plan, specs: list[StageSpec], lanes: int = 1, source: bool = False) -> None:
        self.plan = plan
        self.specs = specs
        self.lanes = lanes
        self.source = source  # the first stage: makes the batches, holds the iteration counter
        self.name = "+".join(s.kind for s in specs)
        self.iteration = 0  # the sequence number of the next batch the first stage makes

    def reset(self, state: dict[str, Any] | None = None) -> None:
        """The first stage: the next batch is `state["iteration"]`, the ops as in `state["ops"]`
        (None: from the start). Other stages hold no state between batches."""
        if self.source:
            state = state or {}
            self.iteration = int(state.get("iteration", 0))
            self.plan.load_state_dict(state.get("ops", {}))

    def next(self, part: Partial | None = None, lane: int = 0) -> Partial:
        """Runs one batch through this stage on `lane`: the first stage makes the next batch (and
        records the resume state after it in `part.state`), the others continue `part`."""
        if self.source:
            it = self.iteration
            part = self.plan.start(it)
        if part is None:
            raise RuntimeError(f"stage {self.name}: only the first stage makes batches; this one needs its input")
        laned = self.lanes > 1
        for spec in self.specs:
            part = self.plan.run_stage(spec, part, lane, laned)
        if self.source:
            self.iteration = it + 1
            part.state = self.get_state()
        return part

    def decodes_on_hardware_only(self) -> bool:
        """Whether every op here that says how it decodes (`hardware_only`, the GPU image
        decoders) sends all its JPEGs to the hardware engines, and at least one does."""
        said = [h for spec in self.specs for n in spec.nodes
                if (h := getattr(self.plan.ops[n.id], "hardware_only", None)) is not None]
        return bool(said) and all(said)

    def get_state(self) -> dict[str, Any]:
        """The first stage: where the pipeline stands after the last batch it made (the next
        iteration, the ops' states, each reader's place in its epoch); others: {}."""
        if not self.source:
            return {}
        return {"iteration": self.iteration, "ops": self.plan.state_dict(), "info": self.plan.batch_info()}

    def shutdown(self) -> None:
        """Closes the ops of this stage (idempotent: the plan closes every op again at the end)."""
        for spec in self.specs:
            for node in spec.nodes:
                self.plan.op(node).close()


def make_stages(plan: Plan, lanes: int) -> list[Stage]:
    """The plan's stages as executor stages. The first makes the batches (iteration counter,
    readers): one thread. The mixed stage runs on `lanes` lanes, and the GPU stage joins it on the
    same lane (no hand-off) unless one of its ops needs batches in order."""
    groups = [[s] for s in plan.stages]
    kinds = [s.kind for s in plan.stages]
    if lanes > 1 and "mixed" in kinds and "gpu" in kinds:
        gpu = plan.stages[kinds.index("gpu")]
        # TORCH_DALI_GPU_ON_LANES=0: the GPU stage on its own thread, taking the lanes' batches in
        # order: one GPU output is made at a time instead of one per lane (less memory, for measuring)
        if gpu.order_free and _knobs.get("TORCH_DALI_GPU_ON_LANES") == 1:
            groups = [g for g in groups if g[0] is not gpu]
            groups[kinds.index("mixed")].append(gpu)
    return [Stage(plan, g, lanes if (pos > 0 and g[0].kind == "mixed") else 1, source=pos == 0)
            for pos, g in enumerate(groups)]


class Permits:
    """A counting semaphore whose wait ends when `stop` is set: `take()` (False when stopping),
    `give()`, and `refill()` (all `n` again, once nothing is in flight)."""

    def __init__(self, n: int, stop: threading.Event) -> None:
        self.n = max(1, n)
        self._stop = stop
        self._sem = threading.Semaphore(self.n)

    def take(self) -> bool:
        while not self._sem.acquire(timeout=_POLL_S):
            if self._stop.is_set():
                return False
        return True

    def give(self) -> None:
        self._sem.release()

    def refill(self) -> None:
        self._sem = threading.Semaphore(self.n)


class Scheduled:
    """Iterations scheduled (DALI's `schedule_run`) and iterations made: the unstaged producer makes
    only scheduled ones, as DALI runs only those (a Python function's side effects happen in the
    run() that scheduled them, not one or two iterations early, which DALI's
    `test_func_with_side_effects` checks)."""

    def __init__(self, stop: threading.Event) -> None:
        self.count = self.made = 0
        self._stop = stop
        self._cv = threading.Condition()

    def add(self) -> None:
        with self._cv:
            self.count += 1
            self._cv.notify_all()

    def take(self) -> bool:
        """Waits for a scheduled iteration not made yet and counts it made; False once stopping."""
        with self._cv:
            while self.made >= self.count:
                if self._stop.is_set():
                    return False
                self._cv.wait(_POLL_S)
            self.made += 1
        return not self._stop.is_set()

    def reset(self) -> None:
        self.count = self.made = 0


class Lease:
    """The place a batch handed to the consumer keeps among the last stage's permits until the
    consumer has dropped its outputs: each output's data is handed as a fresh object
    (`TensorList.fresh_handle`) whose finalizer counts down, and the permit goes back when none is
    left (or on `release()`, once). The permit goes to the semaphore of the moment it was taken, so
    one left over from before a restart (`Permits.refill`) gives nothing to the new one."""

    def __init__(self, permits: Permits) -> None:
        self._give = permits._sem.release
        self._lock = threading.Lock()
        self._live = 0
        self._done = False

    def watch(self, outputs: list[Any]) -> None:
        """Hands each output's data as a fresh object and watches it; with none to watch, the
        permit goes back now."""
        for tl in outputs:
            handed = tl.fresh_handle()
            if handed is None:
                continue
            with self._lock:
                self._live += 1
            weakref.finalize(handed, self._dropped)
        if self._live == 0:
            self.release()

    def _dropped(self) -> None:
        with self._lock:
            self._live -= 1
            last = self._live == 0
        if last:
            self.release()

    def release(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        self._give()


class OutputPermits(Permits):
    """The last stage's permits: it takes one before making a batch; the consumer's taking the
    batch gives it back (`handed`), or, with `held` (TORCH_DALI_OUTPUT_HELD_COUNTS), the batch
    keeps it in a `Lease` until the consumer drops its outputs, or at the latest until the call
    after next (`asking`); one permit more then."""

    def __init__(self, n: int, stop: threading.Event, held: bool) -> None:
        super().__init__(n + int(held), stop)
        self.held = held
        self._leases: deque[Lease] = deque()

    def refill(self) -> None:
        super().refill()
        self._leases.clear()  # bound to the semaphore before the refill

    def asking(self) -> None:
        """The consumer asks for the next batch: batches before the last one are done with,
        dropped or not."""
        while len(self._leases) > 1:
            self._leases.popleft().release()

    def handed(self, outputs: list[Any]) -> None:
        if not self.held:
            self.give()
            return
        lease = Lease(self)
        self._leases.append(lease)
        lease.watch(outputs)


class Reorder:
    """Batches between two stages, in sequence order: `put(seq, item)` from any lane (it waits
    while `seq` is `capacity` or more ahead of the next one to be taken: lanes cannot run away);
    `get()` gives (seq, item) for the next sequence number, waiting for it. Waits end when `stop`
    is set (put gives False, get None)."""

    def __init__(self, capacity: int, stop: threading.Event) -> None:
        self.capacity = max(1, capacity)
        self._stop = stop
        self._cond = threading.Condition()
        self._items: dict[int, Any] = {}
        self._next = 0

    def put(self, seq: int, item: Any) -> bool:
        with self._cond:
            while seq >= self._next + self.capacity:
                if self._stop.is_set():
                    return False
                self._cond.wait(_POLL_S)
            self._items[seq] = item
            self._cond.notify_all()
            return True

    def get(self) -> tuple[int, Any] | None:
        with self._cond:
            while self._next not in self._items:
                if self._stop.is_set():
                    return None
                self._cond.wait(_POLL_S)
            seq = self._next
            self._next += 1
            self._cond.notify_all()
            return seq, self._items.pop(seq)

    def items(self) -> list[Any]:
        """What waits here now (for memory statistics)."""
        with self._cond:
            return list(self._items.values())

    def restart(self, seq: int) -> None:
        """Drops what waits here; the next batch is `seq` (after a stop, with no thread running)."""
        with self._cond:
            self._items.clear()
            self._next = seq
            self._cond.notify_all()
