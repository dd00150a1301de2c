"""The CUDA streams a plan's stages run on, and the order between them.

The GPU stage has the pipeline's stream (the consumer waits on it); the mixed stage, and a stage
run on lanes, has one per lane, so batch i's crops do not queue behind batch i+1's decode. A stage
that reads what another stream made runs after that work: its thread waits for it on the host (the
GIL released; TORCH_DALI_HOST_WAITS, the default) rather than queuing a GPU wait, which would sit at
the head of one of the driver's hardware queues, shared with other streams (the training's too), and
hold them back until the event passes. The memory it read stays unreused until its own reads ran."""
from __future__ import annotations

import threading
from collections import deque
from typing import Any

import torch

from .. import _knobs
from . import reaper
from ..io import stream_queues as queues
from ..tensor_list import TensorList
from .steps import Partial, StageSpec

RECORD_MAX = 16  # storages per batch recorded on the reading stream; more are held instead
HELD_MAX = 64  # batches held for their events before the host waits for the oldest


class StageStreams:
    """The streams of one plan on `cuda` (all None without CUDA)."""

    def __init__(self, cuda: torch.device | None, priority: int = 0) -> None:
        self.cuda = cuda
        self.priority = priority  # CUDA priority of every stream made here (`_knobs.stream_priority`)
        if cuda is not None:  # before any loader stream is made (the decoder's too)
            queues.avoid_consumer(cuda)
        self.main = self._new() if cuda is not None else None
        self._lanes: dict[int, Any] = {}
        self.host_waits = bool(_knobs.get("TORCH_DALI_HOST_WAITS"))
        # (event, device data) of batches whose stage read data another stream made: the data are
        # kept until the event has passed (cheaper than record_stream on every sample)
        self._held: deque[tuple[Any, list[TensorList]]] = deque()
        self._held_lock = threading.Lock()

    def _new(self) -> Any:
        return queues.new_stream(self.cuda, self.priority)

    def for_stage(self, stage: StageSpec, lane: int = 0, laned: bool = False) -> Any:
        """The stream `stage` runs on: the lane's own for the mixed stage and for a stage run on
        lanes (`laned`), else the pipeline's."""
        if self.main is None or not (stage.kind == "mixed" or laned):
            return self.main
        if lane not in self._lanes:
            self._lanes[lane] = self._new()
        return self._lanes[lane]

    def follow(self, stream: Any, part: Partial) -> list[TensorList]:
        """Orders `stream`'s next work after the work that made `part`'s values on another stream;
        returns the device data made there, which `stream` will read (see `finish`)."""
        if stream is None or part.ready is None or part.ready_stream is stream:
            return []
        if self.host_waits:
            part.ready.synchronize()
        else:
            stream.wait_event(part.ready)
        return [tl for tl in part.values.values() if tl.is_cuda]

    def finish(self, stream: Any, part: Partial, read: list[TensorList], on_cuda: bool) -> None:
        """After a stage queued its work on `stream`: `part` is ready when that work is, and the
        device data `read` from another stream are not reused before it has run."""
        if stream is None or not (read or on_cuda):
            return
        part.ready = torch.cuda.Event()
        part.ready.record(stream)
        part.ready_stream = stream
        if read:
            self._keep_until_read(part.ready, stream, read)

    def _keep_until_read(self, event: Any, stream: Any, data: list[TensorList]) -> None:
        """Few storages (a decoded batch is one arena): recorded on `stream`, so each block returns
        to its cache as soon as the batch is dropped and the read has run. Many (samples made one by
        one): held until `event` passes, one check per batch instead of one call per sample (a held
        batch stays alive about one batch longer)."""
        storages: dict[int, Any] = {}
        for tl in data:
            for t in ([tl.dense] if tl.dense is not None else tl.samples):
                if t is not None and t.is_cuda:
                    storages.setdefault(t.untyped_storage().data_ptr(), t)
                    if len(storages) > RECORD_MAX:
                        self._hold(event, data)
                        return
        for t in storages.values():
            t.record_stream(stream)

    def _hold(self, event: Any, data: list[TensorList]) -> None:
        with self._held_lock:
            self._held.append((event, data))
            while self._held and self._held[0][0].query():
                reaper.drop(self._held.popleft())
            while len(self._held) > HELD_MAX:  # the GPU far behind the host: wait rather than grow
                self._held[0][0].synchronize()
                reaper.drop(self._held.popleft())

    def release(self) -> None:
        """Drops the held data once the GPU has read them (freed memory must not be handed out
        while kernels may still read it)."""
        with self._held_lock:
            if self._held:
                try:
                    self._held[-1][0].synchronize()
                except Exception:  # noqa: BLE001 - CUDA already torn down at exit
                    pass
            self._held.clear()
        reaper.flush(1.0)  # what was handed over is gone too (memory checks after a stop see it)
