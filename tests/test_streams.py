"""The order between a plan's CUDA streams (torch_dali/executor/streams.py), with stand-in streams
and events so it runs without a GPU: a stage reading another stream's output waits for it on the
host (TORCH_DALI_HOST_WAITS, the default) or on its stream, never for its own stream's work, and
the batch is marked ready after the stage's own work."""
from __future__ import annotations

import pytest
import torch

from torch_dali.executor.steps import Partial
from torch_dali.executor.streams import StageStreams


class _Event:
    def __init__(self) -> None:
        self.synced = 0
        self.recorded_on: object = None

    def synchronize(self) -> None:
        self.synced += 1

    def record(self, stream: object) -> None:
        self.recorded_on = stream


class _Stream:
    def __init__(self) -> None:
        self.waited: list[object] = []

    def wait_event(self, event: object) -> None:
        self.waited.append(event)


@pytest.mark.parametrize("host_waits", [True, False])
def test_a_stage_follows_another_streams_work(host_waits: bool) -> None:
    streams = StageStreams(None)
    streams.host_waits = host_waits
    made_on, reader, event = _Stream(), _Stream(), _Event()
    part = Partial(0, {}, [], 1, ready=event, ready_stream=made_on)
    assert streams.follow(reader, part) == []  # no device data here to keep
    assert event.synced == (1 if host_waits else 0)
    assert reader.waited == ([] if host_waits else [event])


def test_no_wait_for_the_same_stream_or_without_cuda() -> None:
    streams = StageStreams(None)
    s, event = _Stream(), _Event()
    streams.follow(s, Partial(0, {}, [], 1, ready=event, ready_stream=s))
    streams.follow(None, Partial(0, {}, [], 1, ready=event, ready_stream=s))
    streams.follow(s, Partial(0, {}, [], 1))
    assert event.synced == 0 and s.waited == []


@pytest.mark.parametrize("on_cuda, marked", [(True, True), (False, False)])
def test_a_batch_is_ready_after_its_stages_work(monkeypatch: pytest.MonkeyPatch, on_cuda: bool,
                                                marked: bool) -> None:
    monkeypatch.setattr(torch.cuda, "Event", _Event)
    streams, s = StageStreams(None), _Stream()
    before = _Event()
    part = Partial(0, {}, [], 1, ready=before, ready_stream="elsewhere")
    streams.finish(s, part, [], on_cuda)
    if marked:
        assert isinstance(part.ready, _Event) and part.ready is not before
        assert part.ready.recorded_on is s and part.ready_stream is s
    else:
        assert part.ready is before and part.ready_stream == "elsewhere"
    ready, ready_stream = part.ready, part.ready_stream
    streams.finish(None, part, [], True)  # no CUDA: nothing to mark
    assert part.ready is ready and part.ready_stream is ready_stream


def test_without_cuda_every_stage_has_no_stream() -> None:
    from torch_dali.executor.steps import StageSpec
    streams = StageStreams(None)
    for kind in ("cpu", "mixed", "gpu"):
        assert streams.for_stage(StageSpec(kind, []), lane=1, laned=True) is None
    streams.release()  # nothing held: returns at once
