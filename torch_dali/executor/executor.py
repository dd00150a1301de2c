"""Runs a Plan: synchronously, or on a producer thread that keeps `prefetch_queue_depth` batches ready."""
from __future__ import annotations

import atexit
import queue
import threading
import weakref
from typing import Any

import torch

from .plan import Batch, Partial, Plan

_POLL_S = 0.1  # how often a waiting consumer checks for shutdown and Ctrl-C
_LIVE: "weakref.WeakSet[Executor]" = weakref.WeakSet()


@atexit.register
def _shutdown_all() -> None:
    """Stop producer threads and pools before the interpreter tears down torch and CUDA;
    a thread still inside a torch op at that point aborts the process."""
    for ex in list(_LIVE):
        try:
            ex.shutdown()
        except Exception:  # noqa: BLE001 - exiting anyway
            pass


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
        self.iteration = 0  # next iteration to produce
        self._queue: queue.Queue[Batch | BaseException] = queue.Queue(maxsize=self.depth)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._failed: BaseException | None = None
        self._close_on_exit = False
        self.two_stage = bool(exec_pipelined) and plan.has_device_stage
        self._mid: queue.Queue[Partial | BaseException] = queue.Queue(maxsize=1)
        self._cpu_thread: threading.Thread | None = None
        _LIVE.add(self)

    # -- producing -----------------------------------------------------------------------------
    def _cpu_stage(self) -> Partial:
        it = self.iteration
        part = self.plan.run_cpu_stage(it)
        self.iteration = it + 1
        part.state = {"iteration": self.iteration, "ops": self.plan.state_dict(), "info": self.plan.batch_info()}
        return part

    def _device_stage(self, part: Partial) -> Batch:
        outputs = self.plan.run_device_stage(part)
        event = None
        if self.plan.stream is not None:
            event = torch.cuda.Event()
            event.record(self.plan.stream)
        return Batch(outputs, event, part.state, part.iteration)

    def _produce_one(self) -> Batch:
        return self._device_stage(self._cpu_stage())

    def _put(self, q: "queue.Queue[Any]", item: Any) -> None:
        while not self._stop.is_set():
            try:
                q.put(item, timeout=_POLL_S)
                return
            except queue.Full:
                continue

    def _get(self, q: "queue.Queue[Any]") -> Any:
        while not self._stop.is_set():
            try:
                return q.get(timeout=_POLL_S)
            except queue.Empty:
                continue
        return None

    def _loop(self) -> None:
        try:
            if self.plan.cuda is not None:
                torch.cuda.set_device(self.plan.cuda)
            if self.two_stage:
                self._device_loop()
            else:
                self._produce_loop()
        finally:
            if self._cpu_thread is not None:
                self._stop.set()
                self._cpu_thread.join()
                self._cpu_thread = None
            if self._close_on_exit:
                self.plan.close()

    def _produce_loop(self) -> None:
        while not self._stop.is_set():
            try:
                item: Batch | BaseException = self._produce_one()
            except BaseException as e:  # noqa: BLE001 - handed to the consumer, never lost
                item = e
            self._put(self._queue, item)
            if isinstance(item, BaseException):
                return

    def _cpu_loop(self) -> None:
        """exec_pipelined with device ops: the CPU stage of the next batches runs on its own
        thread while this batch's decode and GPU ops are issued (both release the GIL)."""
        while not self._stop.is_set():
            try:
                item: Partial | BaseException = self._cpu_stage()
            except BaseException as e:  # noqa: BLE001 - handed on, never lost
                item = e
            self._put(self._mid, item)
            if isinstance(item, BaseException):
                return

    def _device_loop(self) -> None:
        self._cpu_thread = threading.Thread(target=self._cpu_loop, name="torch_dali-cpu-stage", daemon=True)
        self._cpu_thread.start()
        while not self._stop.is_set():
            part = self._get(self._mid)
            if part is None:
                return
            try:
                item: Batch | BaseException = part if isinstance(part, BaseException) else self._device_stage(part)
            except BaseException as e:  # noqa: BLE001 - handed to the consumer, never lost
                item = e
            self._put(self._queue, item)
            if isinstance(item, BaseException):
                return

    def _start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="torch_dali-prefetch", daemon=True)
            self._thread.start()

    # -- consuming -----------------------------------------------------------------------------
    def next(self) -> Batch:
        if self._failed is not None:
            raise self._failed
        if not self.exec_async:
            batch = self._produce_one()
        else:
            self._start()
            while True:
                try:
                    item = self._queue.get(timeout=_POLL_S)
                    break
                except queue.Empty:
                    if self._thread is not None and not self._thread.is_alive() and self._queue.empty():
                        raise RuntimeError("torch_dali: the prefetch thread stopped unexpectedly")
            if isinstance(item, BaseException):
                self._failed = item
                self._thread = None
                raise item
            batch = item
        self._hand_off(batch)
        return batch

    def _hand_off(self, batch: Batch) -> None:
        """The consumer's stream waits for the batch; its memory stays reserved for that stream."""
        if batch.event is None:
            return
        consumer = torch.cuda.current_stream(self.plan.cuda)
        consumer.wait_event(batch.event)
        for tl in batch.outputs:
            if tl.is_cuda:
                for t in ([tl._dense] if tl._dense is not None else tl.samples):
                    t.record_stream(consumer)

    def memory_stats(self) -> dict[str, int]:
        host = dev = 0
        queued = list(self._queue.queue)
        batches = [b for b in queued if isinstance(b, Batch)]
        for b in batches:
            for tl in b.outputs:
                ts = [tl._dense] if tl._dense is not None else tl.samples
                for t in ts:
                    n = t.numel() * t.element_size()
                    if t.is_cuda:
                        dev += n
                    else:
                        host += n
        pool = self.plan.pool
        threads = (len(getattr(pool, "_threads", ())) if pool is not None else 0) + \
            (1 if self._thread is not None and self._thread.is_alive() else 0)
        return {"prefetched_batches": len(batches), "prefetched_host_bytes": host,
                "prefetched_device_bytes": dev, "threads": threads}

    # -- control -------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stops the producer and drops prefetched batches (state rewinds to what was consumed)."""
        self._stop.set()
        if self._own_thread():
            return  # never wait on ourselves
        if self._thread is not None:
            while self._thread.is_alive():
                try:
                    self._queue.get(timeout=_POLL_S)
                except queue.Empty:
                    pass
            self._thread.join()
        self._thread = None
        for q in (self._queue, self._mid):
            while not q.empty():
                q.get_nowait()
        self._failed = None

    def _own_thread(self) -> bool:
        """Whether the caller is one of our producer threads (the GC may run __del__ there)."""
        me = threading.current_thread()
        return me is self._thread or me is self._cpu_thread

    def restore(self, state: dict[str, Any]) -> None:
        self.stop()
        self.iteration = int(state.get("iteration", 0))
        self.plan.load_state_dict(state.get("ops", {}))

    def shutdown(self, wait: bool = True) -> None:
        """Stops and frees threads. wait=False (from __del__, which the garbage collector may run
        on any thread, the producer's own included) only signals: the producer closes the plan as
        it exits, so nothing ever waits on itself."""
        thread = self._thread
        if not wait or self._own_thread():
            self._stop.set()
            if thread is not None and thread.is_alive():
                self._close_on_exit = True
                return
            self.plan.close()
            return
        self.stop()
        self.plan.close()
