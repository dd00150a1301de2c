"""Runs a Plan: synchronously, or on a producer thread that makes the iterations scheduled (DALI's schedule_run)."""
from __future__ import annotations

import atexit
import os
import queue
import sys
import threading
import time
import weakref
from typing import Any

import torch

from .. import _knobs
from .._thread_priority import lower_this_thread
from ..errors import PipelineError
from .plan import Plan
from .steps import Batch, Partial
from .stage import OutputPermits, Permits, Reorder, Scheduled, Stage, make_stages
from .watch import (add_times, dump_stall, leave_running, memory_report, no_batch_error, stall_dump_s,
                    stop_timeout_s, wait_for_left_running)

_POLL_S = 0.1  # how often a waiting consumer checks for shutdown and Ctrl-C
_LIVE: "weakref.WeakSet[Executor]" = weakref.WeakSet()


@atexit.register
def _shutdown_all() -> None:
    """Stop producer threads and pools before the interpreter tears down torch and CUDA;
    a thread still inside a torch op at that point aborts the process. Each wait is bounded
    (`stop_timeout_s`): an op that never returns is named and left behind, not waited out."""
    for ex in list(_LIVE):
        try:
            ex.shutdown()
        except BaseException:  # noqa: BLE001 - exiting anyway (a second Ctrl-C included)
            pass
    try:
        wait_for_left_running()
    except BaseException:  # noqa: BLE001 - Ctrl-C during the wait: exit now
        pass


def _after_fork_in_child() -> None:
    """os.fork() copies only the forking thread: every executor that ran in the parent has lost
    its threads (and its locks may be held by threads that no longer exist). Such executors are
    marked, never touched again here, and refuse to run; new pipelines in the child work."""
    parent = os.getppid()
    for ex in list(_LIVE):
        if ex._ran:
            ex._forked_from = parent


os.register_at_fork(after_in_child=_after_fork_in_child)


class Executor:
    """The iteration counter, the prefetch queue and the resume state live here.

    Each queued batch carries the plan's state right after it was produced: resuming from the state
    of the last batch the consumer took never counts prefetched-but-unconsumed batches as consumed.
    """

    def __init__(self, plan: Plan, prefetch_queue_depth: int, exec_async: bool,
                 exec_pipelined: bool = True) -> None:
        self.plan = plan
        self.depth = max(1, prefetch_queue_depth)
        self.exec_async = exec_async
        self._queue: queue.Queue[Batch | BaseException] = queue.Queue(maxsize=self.depth)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._failed: BaseException | None = None
        self._close_on_exit = False
        self._ran = False  # threads (producer, stages, the plan's pool) may exist
        self._forked_from: int | None = None  # the parent's pid, in a child forked after a run
        self._abandoned: str | None = None  # why this executor gave up on a stuck op
        # exec_pipelined with device ops: the stages (CPU, mixed, GPU) run on threads of their own,
        # handing batches on in order (`stage.Reorder`). The mixed stage runs on several lanes
        # (threads, each with its own CUDA stream: batches decode at once), and the GPU stage with
        # it unless one of its ops needs batches one at a time (user Python functions, sources).
        self.staged = bool(exec_pipelined) and plan.has_device_stage
        self.stages: list[Stage] = make_stages(plan, _knobs.mixed_lanes())
        # after stage pos: room for as many batches as the wider side has lanes (the last one
        # feeds the consumer's queue, in order)
        # A decoded batch waiting for the GPU stage is device memory, and a lane that put one
        # there would start decoding another: room for one (measured on an H200: fused 1.47 -> 1.09
        # GiB, validation 2.03 -> 1.58 GiB, images/s within the run's noise).
        widths = [st.lanes for st in self.stages] + [1]
        room = _knobs.get("TORCH_DALI_HANDOFF_ROOM")

        def room_after(pos: int) -> int:
            if room:
                return room
            if self.stages[pos].name == "mixed" and pos + 1 < len(self.stages):
                return 1
            return max(widths[pos], widths[pos + 1])

        self._handoffs = [Reorder(room_after(pos), self._stop) for pos in range(len(self.stages))]
        self._stage_threads: list[threading.Thread] = []
        # Batches the last stage may have made and the consumer has not taken: it takes a permit
        # before making one, next() gives one back. So the device outputs alive are the queue's
        # `depth` plus the one the consumer holds, as in DALI, not the queue plus every hand-off
        # on the way to it (each a full batch of GPU memory). Never fewer than the last stage's
        # lanes: a lane without a permit would idle.
        # TORCH_DALI_OUTPUT_HELD_COUNTS: a `for` loop still holds the last batch while it asks for
        # the next, so the stage may make one more output batch meanwhile (`OutputPermits`).
        self._permits = OutputPermits(max(self.depth, self.stages[-1].lanes), self._stop,
                                      self.staged and _knobs.get("TORCH_DALI_OUTPUT_HELD_COUNTS"))
        # TORCH_DALI_DECODE_PERMITS: decoded batches alive at once, from a mixed lane starting one
        # to the stage after it having read it. Without it, every lane decodes ahead while one batch
        # waits in the room and one is read: lanes + 2 decoded batches of device memory.
        names = [st.name for st in self.stages]
        self._decode_pos = names.index("mixed") if "mixed" in names[:-1] else None
        self.decode_permits = 0 if self._decode_pos is None else _knobs.decode_permits(
            self.stages[self._decode_pos].decodes_on_hardware_only())
        self._decoding = Permits(self.decode_permits, self._stop)
        # per stage lane: seconds waiting for input, working, waiting to hand on; batches
        self._timing: dict[str, list[float]] = {}
        # external sources whose data are fetched on the caller's thread, as DALI fetches them
        # (`ops.external_pump`): asked before each wait for `depth` iterations beyond those handed
        self._pumps = [op for op in plan.ops.values() if getattr(op, "fetches_in_caller", False)]
        for op in self._pumps:
            op.ahead.watch(self._stop)
        self._handed = 0  # batches handed to the consumer since the producer (re)started
        self._scheduled = Scheduled(self._stop)  # DALI's scheduled iterations (`schedule_one`) since then
        self._first = True  # the next schedule_run() schedules `depth` iterations
        _LIVE.add(self)

    @property
    def iteration(self) -> int:
        """The next iteration the first stage makes."""
        return self.stages[0].iteration

    # -- producing -----------------------------------------------------------------------------

    def _finish(self, part: Partial) -> Batch:
        event = part.ready  # after the batch's last GPU work, on whichever stream ran it
        if event is None and self.plan.streams.main is not None:
            event = torch.cuda.Event()
            event.record(self.plan.streams.main)
        return Batch(self.plan.outputs(part), event, part.state, part.iteration)

    def _produce_one(self) -> Batch:
        part = self.stages[0].next()
        for stage in self.stages[1:]:
            part = stage.next(part, 0)
        return self._finish(part)

    def _put(self, q: "queue.Queue[Any]", item: Any) -> None:
        while not self._stop.is_set():
            try:
                q.put(item, timeout=_POLL_S)
                return
            except queue.Full:
                continue

    def _loop(self) -> None:
        lower_this_thread()
        try:
            if self.plan.cuda is not None:
                torch.cuda.set_device(self.plan.cuda)
            if self.staged:
                self._pipelined_loop()
            else:
                self._produce_loop()
        finally:
            clean = True
            if self._stage_threads:
                self._stop.set()
                limit = stop_timeout_s()
                for t in self._stage_threads:
                    t.join(timeout=limit)
                    clean = clean and not t.is_alive()
                self._stage_threads = []
            if self._close_on_exit and clean:  # never under a stage thread still in an op
                self._close()

    def _produce_loop(self) -> None:
        while self._scheduled.take():
            try:
                item: Batch | BaseException = self._produce_one()
            except BaseException as e:  # noqa: BLE001 - handed to the consumer, never lost
                item = e
            self._put(self._queue, item)
            if isinstance(item, BaseException):
                return

    def _stage_loop(self, pos: int, lane: int = 0) -> None:
        """One lane of stage `pos` on its own thread: takes the next batch from the stage before
        (the first stage makes it) and hands it on under its sequence number. An error is handed
        on too, in its place."""
        lower_this_thread()
        if self.plan.cuda is not None:
            torch.cuda.set_device(self.plan.cuda)
        stage = self.stages[pos]
        inbox = self._handoffs[pos - 1] if pos > 0 else None
        outbox = self._handoffs[pos]
        last = pos == len(self.stages) - 1
        tm = self._timing.setdefault(f"{stage.name}.{lane}", [0.0, 0.0, 0.0, 0])
        # taken before the batch is (in sequence order, so the oldest batch always holds one)
        takes_decode = bool(self.decode_permits) and pos == self._decode_pos
        gives_decode = bool(self.decode_permits) and self._decode_pos is not None and pos == self._decode_pos + 1
        while not self._stop.is_set():
            if (last and not self._permits.take()) or (takes_decode and not self._decoding.take()):
                return
            t0 = time.perf_counter()
            t1 = t0
            if inbox is None:
                seq = stage.iteration
                try:
                    item: Partial | BaseException = stage.next()
                except BaseException as e:  # noqa: BLE001 - handed on, never lost
                    item = e
            else:
                got = inbox.get()
                if got is None:
                    return
                seq, part = got
                t1 = time.perf_counter()
                try:
                    item = part if isinstance(part, BaseException) else stage.next(part, lane)
                except BaseException as e:  # noqa: BLE001
                    item = e
                if gives_decode:  # its decoded values were dropped as this stage ended (Plan._live_after)
                    self._decoding.give()
            t2 = time.perf_counter()
            if not outbox.put(seq, item):
                return
            add_times(tm, t0, t1, t2)
            if isinstance(item, BaseException):
                return
            # nothing of this batch stays referenced here while the next permit is waited for: its
            # outputs must die when the consumer drops them (TORCH_DALI_OUTPUT_HELD_COUNTS's leases)
            item = part = got = None  # type: ignore[assignment]

    def _pipelined_loop(self) -> None:
        """exec_pipelined with device ops: every stage on threads of its own (one per lane); here
        the finished batches are taken in order and queued for the consumer. Batch i's GPU ops,
        the decode of the next batches and the reading of later ones overlap."""
        self._stage_threads = [threading.Thread(target=self._stage_loop, args=(pos, lane), daemon=True,
                                                name=f"torch_dali-{stage.name}.{lane}")
                               for pos, stage in enumerate(self.stages) for lane in range(stage.lanes)]
        for t in self._stage_threads:
            t.start()
        while not self._stop.is_set():
            got = self._handoffs[-1].get()
            if got is None:
                return
            part = got[1]
            try:
                item: Batch | BaseException = part if isinstance(part, BaseException) else self._finish(part)
            except BaseException as e:  # noqa: BLE001 - handed to the consumer, never lost
                item = e
            self._put(self._queue, item)
            if isinstance(item, BaseException):
                return
            item = part = got = None  # type: ignore[assignment]  # (as in _stage_loop)

    def _start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._permits.refill()  # nothing is in flight now
            self._decoding.refill()
            self._thread = threading.Thread(target=self._loop, name="torch_dali-prefetch", daemon=True)
            self._thread.start()

    # -- consuming -----------------------------------------------------------------------------
    def next(self, timeout: float | None = None) -> Batch:
        """The next batch; with `timeout` (seconds, exec_async only) a PipelineError naming the
        running ops when none is ready by then (the batch is still delivered by a later call)."""
        self._check_usable()
        if self._failed is not None:
            raise self._failed
        self._ran = True
        if self._scheduled.count <= self._handed:
            self.schedule_one()  # outputs asked for without a schedule_run() before
        if not self.exec_async:
            batch = self._produce_one()
        else:
            self._start()
            t0 = time.monotonic()
            dumped = False
            self._permits.asking()
            while True:
                try:
                    item = self._queue.get(timeout=_POLL_S)
                    if self.staged:
                        self._permits.handed(item.outputs) if isinstance(item, Batch) else self._permits.give()
                    break
                except queue.Empty:
                    if self._thread is not None and not self._thread.is_alive() and self._queue.empty():
                        raise RuntimeError("torch_dali: the prefetch thread stopped unexpectedly")
                    waited = time.monotonic() - t0
                    if timeout is not None and waited >= timeout:
                        raise no_batch_error(timeout, self.plan.running_ops())
                    if not dumped and waited >= stall_dump_s():
                        dumped = True
                        dump_stall(waited, self._handed)
            if isinstance(item, BaseException):
                self._failed = item
                self._join_producer()  # its stage threads too: a restart must not meet them again
                raise item
            batch = item
        self._handed += 1
        if batch.event is not None:
            batch.hand_to(torch.cuda.current_stream(self.plan.cuda), self.plan.streams.host_waits)
        return batch

    def schedule_count(self) -> int:
        """How many iterations DALI's `schedule_run()` schedules now: `prefetch_queue_depth` the
        first time (and after an epoch ended and was reset), then one."""
        return self.depth if self._first else 1

    def schedule_one(self) -> None:
        """Schedules one more iteration: external sources fetching on the caller's thread fetch
        its data now, on this thread (`ops.external_pump`)."""
        self._check_usable()
        target = self._scheduled.count + 1
        for op in self._pumps:
            # on demand, sources run when the batch is made; repeat_last data is fixed now (DALI)
            if self.exec_async or op.pumps_on_demand:
                op.caller_fetch = True  # before the producer first runs it
                op.pump(target, self.plan.batch_size)
        self._scheduled.add()
        self._first = False

    def rearm(self) -> None:
        """The next `schedule_run()` schedules `prefetch_queue_depth` iterations again (a new epoch)."""
        self._first = True

    def pending(self) -> int:
        """Scheduled iterations whose batches were not taken yet (DALI's `not empty()`)."""
        return max(0, self._scheduled.count - self._handed)

    @property
    def failure(self) -> BaseException | None:
        """The error that ended prefetching (StopIteration when a source ran out), as next() raised
        it; None while batches are coming, after a stop or restore, and when batches are made on
        demand (next() then raises the error itself)."""
        return self._failed

    def produce_on_demand(self) -> None:
        """From now on each batch is produced when next() asks for it, not prefetched: a pipeline
        fed with feed_input() gets its data before each run(). Nothing changes once prefetching
        has started (a prefetched batch cannot be unmade)."""
        if self.exec_async and self._thread is None:
            self.exec_async = False

    def _check_usable(self) -> None:
        if self._forked_from is not None:
            raise PipelineError(
                f"torch_dali: this pipeline ran in process {self._forked_from} before os.fork(); its "
                f"threads exist only there, so it cannot run in this process ({os.getpid()}). Build a "
                "new pipeline in the child (in a torch DataLoader worker: lazily, on the first "
                "__getitem__)")
        if self._abandoned is not None:
            raise PipelineError(f"{self._abandoned}; build a new pipeline")

    def _join_producer(self) -> None:
        """After the producer handed on an error it is exiting: wait for it (and, through its
        `finally`, its stage threads) so nothing of this run is left to touch the plan."""
        thread = self._thread
        self._stop.set()
        if thread is not None and not self._own_thread():
            thread.join(timeout=stop_timeout_s())  # an op stuck for good is not waited out
            if thread.is_alive():
                self._abandon("did not return after the pipeline failed", quiet=True)
                return
        self._thread = None

    def _abandon(self, why: str, quiet: bool = False, wait_at_exit: bool = True) -> None:
        """Gives up on a producer stuck in an op: it is left running (a daemon; it closes the
        plan if it ever gets out) and this executor refuses to run again."""
        ops = self.plan.running_ops()
        what = "; ".join(ops) if ops else "the pipeline's producer thread"
        self._abandoned = (f"torch_dali: stopping the pipeline: {what} {why}; it is left running on a "
                           "daemon thread (a running Python call cannot be interrupted)")
        self._close_on_exit = True
        if wait_at_exit:  # not after Ctrl-C: the user asked to stop waiting
            leave_running([t for t in (self._thread, *self._stage_threads) if t is not None and t.is_alive()])
        if not quiet:
            print(self._abandoned, file=sys.stderr, flush=True)

    def stage_stats(self) -> dict[str, dict[str, float]]:
        """Per stage lane of the staged executor ("cpu.0", "mixed.1", "gpu.0"), since the first
        batch: seconds waiting for the stage before, working, waiting for the stage after (or the
        consumer), and batches. The stage that never waits is the one that bounds throughput."""
        return {name: {"wait_in_s": round(a, 4), "busy_s": round(b, 4), "wait_out_s": round(c, 4), "batches": int(n)}
                for name, (a, b, c, n) in sorted(self._timing.items())}

    def reset_stage_stats(self) -> None:
        """Starts `stage_stats()` over (after a warm-up, say)."""
        for v in self._timing.values():
            v[:] = [0.0, 0.0, 0.0, 0]

    def memory_stats(self) -> dict[str, int]:
        """Batches ready for the consumer ("prefetched") and batches waiting between stages
        ("staged": with lanes, several more than the prefetch depth), with their bytes. Batches a
        stage is working on right now are not counted."""
        batches = [list(b.outputs) for b in list(self._queue.queue) if isinstance(b, Batch)]
        parts = [list(p.values.values()) for h in self._handoffs for p in h.items() if isinstance(p, Partial)]
        pool = self.plan.pool
        threads = (len(pool.threads()) if pool is not None else 0) + \
            (1 if self._thread is not None and self._thread.is_alive() else 0) + \
            sum(t.is_alive() for t in self._stage_threads)
        return memory_report(batches, parts, threads)

    # -- control -------------------------------------------------------------------------------
    def stop(self, timeout: float | None = None) -> bool:
        """Stops the producer and drops prefetched batches (state rewinds to what was consumed).

        Waits at most `timeout` seconds (default `stop_timeout_s()`; restore() passes inf: a
        slow op mid-training is waited for) for the op running now to return; one that does not
        (a hung Python function) is named on stderr and left running on its daemon thread, and
        this executor refuses to run again. Ctrl-C during the wait does the same at once. Returns
        whether the producer stopped."""
        if self._forked_from is not None:
            return True  # the parent's threads and locks: never touched in a child
        self._stop.set()
        if self._own_thread():
            return True  # never wait on ourselves
        thread = self._thread
        if thread is not None and self._abandoned is None:
            limit = stop_timeout_s() if timeout is None else timeout
            t0 = time.monotonic()
            noted = False
            try:
                while thread.is_alive():
                    try:
                        self._queue.get(timeout=_POLL_S)
                    except queue.Empty:
                        pass
                    waited = time.monotonic() - t0
                    if waited >= limit and thread.is_alive():
                        self._abandon(f"did not return within {limit:g} s (TORCH_DALI_STOP_TIMEOUT_S)")
                        return False
                    if not noted and waited >= 2.0:
                        noted = True
                        ops = self.plan.running_ops()
                        bound = f"up to {limit:g} s " if limit != float("inf") else ""
                        print(f"torch_dali: stopping the pipeline: waiting {bound}for "
                              f"{'; '.join(ops) if ops else 'the producer thread'} (Ctrl-C stops the wait)",
                              file=sys.stderr, flush=True)
            except KeyboardInterrupt:
                self._abandon("was still running when Ctrl-C interrupted the wait", wait_at_exit=False)
                raise
            thread.join()
        if self._abandoned is not None:
            return False
        self._thread = None
        while not self._queue.empty():
            self._queue.get_nowait()
        for h in self._handoffs:
            h.restart(self.iteration)
        self._failed = None
        self._handed = 0
        self._scheduled.reset()
        self._first = True
        for op in self._pumps:  # fetched for the batches just dropped; the state rewinds them
            op.ahead.clear()
        return True

    def _own_thread(self) -> bool:
        """Whether the caller is one of our producer threads (the GC may run __del__ there)."""
        me = threading.current_thread()
        return me is self._thread or any(me is t for t in self._stage_threads)

    def restore(self, state: dict[str, Any]) -> None:
        self._check_usable()
        if not self.stop(timeout=float("inf")):
            raise PipelineError(f"{self._abandoned}; build a new pipeline")
        self.stages[0].reset(state)
        for h in self._handoffs:
            h.restart(self.iteration)

    def shutdown(self, wait: bool = True) -> None:
        """Stops and frees threads. wait=False (from __del__, which the garbage collector may run
        on any thread, the producer's own included) only signals: the producer closes the plan as
        it exits, so nothing ever waits on itself. In a child forked after this executor ran,
        nothing is done: its threads and locks belong to the parent."""
        if self._forked_from is not None:
            return
        thread = self._thread
        if not wait or self._own_thread():
            self._close_on_exit = True  # first: a producer exiting right now still sees it
            self._stop.set()
            if thread is not None and thread.is_alive():
                return  # the producer closes the plan as it exits
            self._close()  # idempotent: the producer may have closed it as it exited
            return
        if self.stop():
            self._close()

    def _close(self) -> None:
        """Every stage's shutdown, then the plan's (its pool, streams' held data, any op left)."""
        for stage in self.stages:
            stage.shutdown()
        self.plan.close()
