"""DALIServer: runs one pipeline in the main process for batches that torch DataLoader workers
(or the main process itself) put together with the proxy, and replaces the batch references the
loader returns with the pipeline's outputs (`produce_data`).

Daemon threads: the inbox (channel.py, for the server's whole life) moves what workers send onto a
local queue, which the main process feeds directly; the runner (start_thread / stop_thread) feeds
each batch to the pipeline's external sources, runs it and files the outputs (or the error) under
the batch's id. Both wake every `_POLL` seconds to see whether they should stop, so stop_thread()
returns promptly and a forgotten server never keeps the interpreter from exiting."""
from __future__ import annotations

import atexit
import queue
import threading
import weakref
from typing import Any

import torch

from ...executor.watch import stop_timeout_s
from ...graph.pipeline import Pipeline
from ...tensor_list import plain
from .channel import Inbox
from .refs import DALIOutputBatchRef, DALIPipelineRunRef, DALIProxy
from .walk import replace_refs

_POLL = 0.1
_LIVE: "weakref.WeakSet[DALIServer]" = weakref.WeakSet()


@atexit.register
def _stop_all_at_exit() -> None:
    """Stops every server's threads before the interpreter finalizes: a daemon thread still inside a
    torch call then (a pipeline run, a worker's tensors unpickled) aborts the process ("terminate
    called without an active exception"), as a loop left early with the server running did. Runs
    before the pipelines' own exit handler (registered earlier, so called later)."""
    for server in list(_LIVE):
        try:
            server._stop_at_exit()
        except BaseException:  # noqa: BLE001 - exiting anyway (a second Ctrl-C included)
            pass


def _input_names(pipe: Pipeline) -> list[str]:
    """The external sources the proxy feeds: those the outputs need, in definition order."""
    names = []
    for node in pipe.graph.reachable():
        if node.op != "external_source":
            continue
        if node.args.get("source") is not None:
            raise RuntimeError(f"DALIServer: external source '{node.name}' has a `source`; the proxy feeds the "
                               "pipeline's inputs itself, so each external source must be one without a source")
        names.append(node.name)
    return names


def _to_torch(tl: Any) -> torch.Tensor:
    t = plain(tl).as_tensor()
    return t.as_subclass(torch.Tensor) if type(t) is not torch.Tensor else t


class _Runner:
    """What the threads share; kept apart from DALIServer so that a running thread does not keep a
    forgotten server alive (its __del__ stops them)."""

    def __init__(self, server: "DALIServer") -> None:
        self.pipe, self.names, self.local_queue = server._pipe, server._names, server._local_queue
        self.results, self.cond = server._results, server._cond  # the server's: outputs outlive a restart
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                batch_id, args = self.local_queue.get(timeout=_POLL)
            except queue.Empty:
                continue
            try:
                out: Any = (self._process(args), None)
            except Exception as e:  # noqa: BLE001 - handed to whoever asks for this batch
                out = (None, e)
            with self.cond:
                self.results[batch_id] = out
                self.cond.notify_all()

    def _process(self, args: dict[str, list]) -> tuple[torch.Tensor, ...]:
        missing = [n for n in self.names if n not in args]
        sizes = {len(args[n]) for n in self.names if n in args}
        if missing or len(sizes) != 1:
            raise RuntimeError(f"DALIServer: a batch must give every input the same number of samples; missing "
                               f"{missing}, sizes {sorted(sizes)}")
        for name in self.names:  # checked first, so that a bad batch leaves no input fed ahead
            self.pipe.feed_input(name, args[name])
        return tuple(_to_torch(tl) for tl in self.pipe.run())


class DALIServer:
    """Runs `pipeline` for the batches its `proxy` collects in torch DataLoader workers.
    `deterministic=True`: batches run in the order the loader returns them (sent when
    produce_data meets them), so a stateful (random) pipeline gives the same results each run;
    otherwise each runs as soon as its worker has collated it. Start and stop it with `with`
    (or start_thread/stop_thread); proxy.DataLoader starts it when needed."""

    def __init__(self, pipeline: Pipeline, deterministic: bool = False) -> None:
        self._thread: threading.Thread | None = None
        self._runner: _Runner | None = None
        self._inbox: Inbox | None = None
        if not isinstance(pipeline, Pipeline):
            raise TypeError(f"DALIServer: expected a Pipeline, got {type(pipeline).__name__}: {pipeline!r}")
        self._pipe = pipeline
        self._names = _input_names(pipeline)
        if not self._names:
            raise RuntimeError("DALIServer: the pipeline has no external source (without a `source`) that the "
                               "proxy could feed")
        self._num_outputs = len(pipeline.graph.outputs)
        self._deterministic = bool(deterministic)
        self._local_queue: queue.Queue = queue.Queue()
        self._inbox = Inbox(self._local_queue)
        self._results: dict[tuple, tuple[Any, BaseException | None]] = {}
        self._cond = threading.Condition()
        self._proxy: DALIProxy | None = None
        _LIVE.add(self)

    @property
    def proxy(self) -> DALIProxy:
        if self._proxy is None:
            self._proxy = DALIProxy(self._names, self._num_outputs, self._deterministic,
                                    (self._inbox.address, self._inbox.authkey), self._local_queue)
        return self._proxy

    # -- the threads -------------------------------------------------------------------------------
    def start_thread(self) -> None:
        if self._thread is not None:
            return
        runner = _Runner(self)
        thread = threading.Thread(target=runner.run, name="DALIServer", daemon=True)
        thread.start()
        self._runner, self._thread = runner, thread

    def stop_thread(self) -> None:
        if self._thread is None or self._runner is None:
            return
        self._runner.stop.set()
        with self._cond:
            self._cond.notify_all()  # wakes produce_data waiters: they see the server stopped
        self._thread.join()
        self._thread = self._runner = None

    def _stop_at_exit(self) -> None:
        """stop_thread() and the inbox closed, each wait bounded (TORCH_DALI_STOP_TIMEOUT_S): a
        pipeline run that never returns is left behind, as the pipelines' exit handler does."""
        runner, thread = self._runner, self._thread
        if runner is not None and thread is not None:
            runner.stop.set()
            with self._cond:
                self._cond.notify_all()
            if thread is not threading.current_thread():
                thread.join(stop_timeout_s())
        if self._inbox is not None:
            self._inbox.close(wait_s=1.0)

    def is_thread_running(self) -> bool:
        return self._thread is not None

    def running_thread(self) -> threading.Thread | None:
        """The thread running now (None when stopped): who started it can later stop that one only."""
        return self._thread

    def __enter__(self) -> "DALIServer":
        self.start_thread()
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.stop_thread()
        return False

    def __del__(self) -> None:
        if getattr(self, "_runner", None) is not None:
            self._runner.stop.set()  # type: ignore[union-attr]
        if getattr(self, "_inbox", None) is not None:
            self._inbox.close()  # type: ignore[union-attr]

    # -- the data ------------------------------------------------------------------------------------
    def _outputs(self, run: DALIPipelineRunRef) -> tuple:
        if run.result is None:
            if not run.is_scheduled:  # deterministic: the batch goes to the pipeline now, in the loader's order
                self.proxy.send_run(run)
            run.result = self._wait(run.batch_id)
        value, err = run.result
        if err is not None:
            raise err
        return value

    def _wait(self, batch_id: tuple) -> tuple:
        with self._cond:
            while batch_id not in self._results:
                runner = self._runner
                if runner is None or runner.stop.is_set():
                    raise RuntimeError("DALIServer: the server is not running; start it (`with DALIServer(...)`, "
                                       "start_thread() or proxy.DataLoader) before asking for the data")
                if self._inbox is not None and self._inbox.fatal is not None:
                    raise RuntimeError(f"DALIServer: reading a worker's batch failed: {self._inbox.fatal}")
                self._cond.wait(_POLL)
            return self._results.pop(batch_id)

    def produce_data(self, obj: Any) -> Any:
        """`obj` with every DALIOutputBatchRef in it (in lists, tuples, dicts and objects' attributes,
        at any depth) replaced by that batch of the pipeline's output, a torch tensor. Lists, dicts
        and objects are changed in place; tuples are rebuilt."""
        def fetch(ref: DALIOutputBatchRef) -> Any:
            return self._outputs(ref.pipe_run_ref)[ref.output_idx]
        return replace_refs(obj, DALIOutputBatchRef, fetch)
