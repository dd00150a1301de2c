"""The executor's stages: one contract (reset, next, get_state, shutdown) and the ordered hand-off
between them (sequence numbers through a reorder buffer)."""
from __future__ import annotations

import random
import threading
import time
import warnings
import weakref

import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.executor.stage import Reorder, Stage


def test_reorder_gives_batches_in_sequence_whatever_order_lanes_finish() -> None:
    stop = threading.Event()
    box = Reorder(4, stop)
    got: list[int] = []
    rnd = random.Random(0)
    delays = [rnd.random() * 0.01 for _ in range(40)]
    todo = list(range(40))
    lock = threading.Lock()

    def lane() -> None:
        while True:
            with lock:
                if not todo:
                    return
                seq = todo.pop(0)
            time.sleep(delays[seq])  # lanes finish out of order
            assert box.put(seq, f"batch{seq}")

    lanes = [threading.Thread(target=lane) for _ in range(4)]
    for t in lanes:
        t.start()
    for _ in range(40):
        r = box.get()
        assert r is not None
        got.append(r[0])
        assert r[1] == f"batch{r[0]}"
    for t in lanes:
        t.join()
    assert got == list(range(40))


def test_reorder_holds_back_a_lane_that_runs_ahead_and_stops() -> None:
    stop = threading.Event()
    box = Reorder(2, stop)
    assert box.put(1, "b1")  # within capacity of the next expected (0)
    done = threading.Event()

    def ahead() -> None:
        box.put(2, "b2")  # two ahead of 0: waits until 0 is taken
        done.set()

    t = threading.Thread(target=ahead)
    t.start()
    time.sleep(0.3)
    assert not done.is_set() and len(box.items()) == 1
    box.put(0, "b0")
    assert box.get() == (0, "b0")
    assert done.wait(5)
    assert box.get() == (1, "b1") and box.get() == (2, "b2")
    stop.set()
    assert box.get() is None  # nothing more will come: a waiting consumer ends
    assert box.put(9, "late") is False
    t.join()
    box.restart(5)
    stop.clear()
    assert box.items() == [] and box.put(5, "b5") and box.get() == (5, "b5")


@pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=4)
def _counter():
    return fn.random.uniform(range=(0, 1), shape=(3,), name="U"), fn.random.coin_flip(name="C")


def test_stage_contract_next_get_state_reset() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)
    pipe = _counter()
    ex = pipe.executor
    source = ex.stages[0]
    assert isinstance(source, Stage) and source.source and source.iteration == 0
    first = source.next()
    assert first.iteration == 0 and source.iteration == 1
    assert source.get_state()["iteration"] == 1 and first.state["iteration"] == 1
    second = ex.plan.outputs(source.next())
    source.reset(first.state)
    again = ex.plan.outputs(source.next())
    assert all(a.as_tensor().equal(b.as_tensor()) for a, b in zip(second, again))  # resumed at batch 1
    source.reset()
    assert source.iteration == 0
    source.shutdown()
    pipe.shutdown()


@pipeline_def(batch_size=2, num_threads=1, device_id=0, seed=4, prefetch_queue_depth=2)
def _staged():
    """CPU -> mixed -> GPU stages (run on the CPU here): what the stage tests count."""
    x = fn.random.uniform(range=(0, 1), shape=(4,))
    y = fn.copy(x, device="mixed")
    return fn.copy(y, device="gpu")


def test_stage_names_and_lanes_follow_the_plan(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """The mixed stage gets the lanes, the GPU stage follows on one thread (or joins the lanes with
    TORCH_DALI_GPU_ON_LANES=1); a CPU-only plan is one stage."""
    warnings.simplefilter("ignore", RuntimeWarning)
    monkeypatch.setenv("TORCH_DALI_MIXED_LANES", "3")
    assert [(s.name, s.lanes) for s in _counter().executor.stages] == [("cpu", 1)]

    ex = _staged().executor  # by default the GPU stage runs on its own thread, in order
    assert [(s.name, s.lanes) for s in ex.stages] == [("cpu", 1), ("mixed", 3), ("gpu", 1)]
    assert ex.staged
    want = _staged().run()[0].as_tensor().clone()
    monkeypatch.setenv("TORCH_DALI_GPU_ON_LANES", "1")  # the GPU stage joins the mixed lanes
    pipe = _staged()
    assert [(s.name, s.lanes) for s in pipe.executor.stages] == [("cpu", 1), ("mixed+gpu", 3)]
    assert torch.equal(pipe.run()[0].as_tensor(), want)


def test_decode_permits_bound_the_decoded_batches_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """TORCH_DALI_DECODE_PERMITS=N: at most N batches between a mixed lane starting one and the GPU
    stage having read it (each a decoded batch of device memory); without it the lanes run ahead.
    The batches and their order do not change."""
    warnings.simplefilter("ignore", RuntimeWarning)
    monkeypatch.setenv("TORCH_DALI_MIXED_LANES", "3")

    def most_alive(permits: str) -> tuple[int, list[torch.Tensor]]:
        monkeypatch.setenv("TORCH_DALI_DECODE_PERMITS", permits)
        pipe = _staged()
        plan = pipe.executor.plan
        run_stage = plan.run_stage
        lock = threading.Lock()
        alive = [0, 0]  # now, most

        def counted(spec, part, lane, laned):  # type: ignore[no-untyped-def]
            if spec.kind == "mixed":
                with lock:
                    alive[0] += 1
                    alive[1] = max(alive[1], alive[0])
            if spec.kind == "gpu":
                time.sleep(0.02)  # a slow GPU stage: the lanes would run ahead of it
            out = run_stage(spec, part, lane, laned)
            if spec.kind == "gpu":
                with lock:
                    alive[0] -= 1
            return out
        plan.run_stage = counted
        outs = [pipe.run()[0].as_tensor().clone() for _ in range(12)]
        pipe.shutdown()
        return alive[1], outs

    free, want = most_alive("0")
    bounded, got = most_alive("2")
    assert free >= 4  # three lanes, the room and the batch being read
    assert bounded <= 2
    assert all(torch.equal(a, b) for a, b in zip(want, got))


def test_decode_permits_follow_the_mixed_stage_decoders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two decoded batches alive when every op of the mixed stage that decodes sends all its JPEGs
    to the hardware engines (their batches decode one at a time), three otherwise or when no op
    says; the knob wins."""
    warnings.simplefilter("ignore", RuntimeWarning)
    monkeypatch.delenv("TORCH_DALI_DECODE_PERMITS", raising=False)
    plan = _staged().executor.plan
    copy_op = type(plan.ops[next(n.id for n in plan.nodes if n.device == "mixed")])
    assert _staged().executor.decode_permits == 3  # no op says how it decodes
    monkeypatch.setattr(copy_op, "hardware_only", True, raising=False)
    assert _staged().executor.decode_permits == 2
    monkeypatch.setattr(copy_op, "hardware_only", False, raising=False)
    assert _staged().executor.decode_permits == 3
    monkeypatch.setenv("TORCH_DALI_DECODE_PERMITS", "4")
    assert _staged().executor.decode_permits == 4


def test_held_batch_counts_until_the_consumer_drops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """TORCH_DALI_OUTPUT_HELD_COUNTS=1: the batch handed out keeps a permit until the consumer has
    dropped its outputs. A consumer holding the last batch while it asks for the next (a `for`
    loop) then never has the last stage make batch k+2 while batch k-1 is alive (without the knob
    it does); one dropping each batch keeps the full prefetch; one keeping every batch still gets
    them all (the permit comes back at the call after next). Batches and their order never change."""
    warnings.simplefilter("ignore", RuntimeWarning)

    def run(held: str, keep: str) -> tuple[int, int, list[torch.Tensor]]:
        monkeypatch.setenv("TORCH_DALI_OUTPUT_HELD_COUNTS", held)
        pipe = _staged()
        plan = pipe.executor.plan
        run_stage = plan.run_stage
        made, dropped, early = [0], set(), [0]

        def counted(spec, part, lane, laned):  # type: ignore[no-untyped-def]
            if spec.kind == "gpu":
                if made[0] >= 3 and made[0] - 3 not in dropped:
                    early[0] += 1  # batch k+2 made while the consumer still holds batch k-1
                made[0] += 1
            return run_stage(spec, part, lane, laned)
        plan.run_stage = counted
        outs, kept, prev, ahead, after = [], [], None, 0, 99
        for taken in range(10):
            cur = pipe.run()[0]
            weakref.finalize(cur, dropped.add, taken)
            outs.append(cur.as_tensor().clone())
            time.sleep(0.05)  # the stages fill what they may while the consumer holds both
            if taken >= 2:  # past the start, when the permit of a batch not yet handed is free too
                ahead = max(ahead, made[0] - taken - 1)
            if keep == "all":
                kept.append(cur)
            elif keep == "last":
                prev = cur  # batch k-1 dropped: its permit comes back now, not at the next call
            del cur
            time.sleep(0.05)
            if taken >= 2:
                after = min(after, made[0] - taken - 1)
        del prev, kept
        pipe.shutdown()
        return early[0], ahead if keep != "last" else after, outs

    early, ahead, want = run("0", "last")
    assert early >= 3 and ahead == 2, (early, ahead)  # "last": made ahead once the consumer dropped k-1  # the test sees what the knob prevents
    early, ahead, got = run("1", "last")  # once it holds one batch again, two are made ahead
    assert early == 0 and ahead == 2, (early, ahead)
    assert all(torch.equal(a, b) for a, b in zip(want, got))
    _, ahead, got = run("1", "none")
    assert ahead == 2 and all(torch.equal(a, b) for a, b in zip(want, got))
    _, ahead, got = run("1", "all")  # never dropped: one batch fewer made ahead, none lost
    assert ahead == 1 and all(torch.equal(a, b) for a, b in zip(want, got))


class _Event:
    def __init__(self, done: bool) -> None:
        self.done = done

    def query(self) -> bool:
        return self.done


class _Stream:
    def __init__(self) -> None:
        self.waited: list[object] = []

    def wait_event(self, event: object) -> None:
        self.waited.append(event)


@pytest.mark.parametrize("done, skip, waits", [(False, False, 1), (True, False, 1), (False, True, 1), (True, True, 0)])
def test_a_batch_handed_on_is_waited_for_unless_done_and_host_waits(done: bool, skip: bool, waits: int) -> None:
    """The consumer's stream waits for a batch's event; with TORCH_DALI_HOST_WAITS only while the
    batch's GPU work has not run yet (a wait for a passed event would still sit in its queue)."""
    from torch_dali.executor.steps import Batch
    stream, event = _Stream(), _Event(done)
    Batch([], event).hand_to(stream, skip)
    assert stream.waited == [event] * waits
