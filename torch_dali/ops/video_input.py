"""experimental.inputs.video: encoded videos fed with `pipe.feed_input(name, ...)`, handed out as
batches of `sequence_length`-frame FHWC uint8 RGB sequences over successive iterations.

As DALI 2.4's CPU backend does it (measured here):

* each `feed_input` queues one video: a batch of one uint8 sample (any shape; `np.array([[buf]])`
  and `[buf]` both work); the videos are read in the order fed;
* an iteration takes the next `batch_size` sequences of the current video; a video's last batch
  holds what is left (fewer samples), its last sequence has the remaining frames
  (`last_sequence_policy="partial"`) or is filled up with zero frames ("pad"); the next iteration
  starts the next video (a sequence or a batch never spans two videos);
* running with no video left is an error (`blocking=True` waits for another thread to feed one;
  a pipeline that prefetches, exec_async=True, then waits on its prefetch thread after the last
  video, until a feed or until the pipeline is stopped, which leaves that wait behind);
* frames are decoded only a batch at a time (not the whole video), as decoders.video decodes them
  (the same pixels; `torch_dali.io.video`).

Differences: feeding a batch of several videos is refused here (DALI 2.4 reads its first sample and
silently drops the others); a `sequence_length` below 1 is refused (DALI 2.4 hangs). device="mixed"
decodes on the CPU and moves the frames to the GPU; `affine` and `no_copy` have no effect.
"""
from __future__ import annotations

import collections
import threading
from typing import Any

import numpy as np
import torch

from ..errors import ArgumentError, DataError
from ..io import video as V
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import REQUIRED, Arg, OpSchema, one_of


class VideoInput(Operator):
    sample_wise = False
    order_sensitive = True  # it sets the iteration's batch size, as an external source does
    accepts_feed = True  # pipe.feed_input(name, data) reaches `feed`

    def setup(self) -> None:
        a = self.args
        self.length = int(a["sequence_length"])
        if self.length < 1:
            raise ArgumentError(f"{self.name}: `sequence_length` must be at least 1, got {self.length}")
        self.pad = a["last_sequence_policy"] == "pad"
        self.blocking = bool(a["blocking"])
        self._queue: collections.deque[bytes] = collections.deque()
        self._cond = threading.Condition()
        self._video: V.Video | None = None
        self._next = 0  # the current video's next frame
        self._fed = 0
        V.require_backend(self.name)

    def output_layout(self, index: int) -> str:
        return "FHWC"

    def feed(self, data: Any, layout: str | None = None, output: int | None = None,
             batch_size: int = -1) -> None:
        """Queues one encoded video (a batch of one uint8 sample)."""
        if isinstance(data, TensorList):
            samples = list(data)
        elif isinstance(data, (list, tuple)):
            samples = list(data)
        else:
            arr = np.asarray(data.cpu() if isinstance(data, torch.Tensor) else data)
            samples = list(arr) if arr.ndim >= 1 else [arr]
        if len(samples) != 1:
            raise DataError(f"{self.name}: feed one video at a time (a batch of 1 sample), got a "
                            f"batch of {len(samples)}")
        s = samples[0]
        arr = s.cpu().numpy() if isinstance(s, torch.Tensor) else np.asarray(s)
        if arr.dtype != np.uint8:
            raise DataError(f"{self.name}: the encoded video must be uint8 bytes, got {arr.dtype}")
        with self._cond:
            self._queue.append(np.ascontiguousarray(arr).reshape(-1).tobytes())
            self._cond.notify_all()

    def _current(self) -> V.Video:
        if self._video is None:
            with self._cond:
                while not self._queue:
                    if not self.blocking:
                        raise DataError(f"{self.name}: no video left to decode; feed one with "
                                        f"pipe.feed_input('{self.node.name}', [encoded_video]) first")
                    self._cond.wait()
                raw = self._queue.popleft()
            self._fed += 1
            self._video = V.Video(raw, f"{self.name}: video {self._fed}")
            self._next = 0
        return self._video

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        video = self._current()
        ix = video.index()
        n = ix.num_frames
        start = self._next
        stop = min(n, start + ctx.batch_size * self.length)
        frames = video.frames(range(start, stop))
        seqs: list[torch.Tensor] = []
        for a in range(start, stop, self.length):
            b = min(a + self.length, stop)
            seq = np.zeros((self.length if self.pad else b - a, ix.height, ix.width, 3), np.uint8)
            for k in range(a, b):
                seq[k - a] = frames[k]
            seqs.append(torch.from_numpy(seq))
        self._next = stop
        if stop >= n:
            self._video = None
        if self.device.type == "cuda":
            seqs = [t.pin_memory().to(self.device, non_blocking=True) for t in seqs]
        return [TensorList(seqs, "FHWC")]


register(OpSchema(
    name="experimental.inputs.video", impl=VideoInput, devices=("cpu", "mixed"), min_inputs=0,
    max_inputs=0, output_layout="FHWC",
    doc="Decodes videos fed with pipe.feed_input (one encoded video per feed) into batches of "
        "FHWC uint8 sequences of `sequence_length` frames, a batch per iteration.",
    args=(
        Arg("sequence_length", "int", REQUIRED, "frames per output sequence"),
        Arg("last_sequence_policy", "str", "partial", "a video's last, shorter sequence: 'partial' "
            "(as it is) or 'pad' (filled up with zero frames)", check=one_of("partial", "pad")),
        Arg("blocking", "bool", False, "with no video queued, wait for one to be fed (from another "
            "thread) instead of failing"),
        Arg("no_copy", "bool", False, "accepted; the fed bytes are copied once"),
        Arg("affine", "bool", True, "accepted; no effect (thread pinning of DALI's mixed backend)"),
    ),
))
