"""io/stream_queues.py with stand-in streams and a stand-in probe (no GPU needed): a stream that
shares the consumer's queue is made again, at most TRIES times, and nothing is probed when off."""
from __future__ import annotations

import itertools

import torch

from torch_dali.io import stream_queues as queues


class _Stream:
    _ids = itertools.count(1)

    def __init__(self, *args, **kwargs) -> None:
        self.cuda_stream = next(self._ids)


class _Ext:
    def __init__(self, clash) -> None:
        self.clash, self.avoided, self.probes = clash, [], 0

    def streams_share_queue(self, a, b, wait_us=2000):
        self.probes += 1
        return self.clash(a)

    def avoid_queue_of(self, s):
        self.avoided.append(s)

    def avoided_streams(self):
        return list(self.avoided)


def _setup(monkeypatch, ext, on=True):
    monkeypatch.setenv("TORCH_DALI_QUEUE_PROBE", "1" if on else "0")
    monkeypatch.setattr(queues, "_ext", lambda: ext)
    monkeypatch.setattr(torch.cuda, "Stream", _Stream)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: _Stream())


def test_a_stream_in_the_consumers_queue_is_made_again(monkeypatch):
    ext = _Ext(lambda s: s % 8 == 0)  # every 8th stream lands in the consumer's queue
    _setup(monkeypatch, ext)
    assert queues.avoid_consumer(torch.device("cuda", 0))
    assert ext.avoided[0] == 0 and len(ext.avoided) == 2
    made = [queues.new_stream(torch.device("cuda", 0), 0).cuda_stream for _ in range(20)]
    assert not any(s % 8 == 0 for s in made)


def test_tries_are_bounded(monkeypatch):
    ext = _Ext(lambda s: True)  # every stream clashes: keep the last one tried
    _setup(monkeypatch, ext)
    queues.avoid_consumer(torch.device("cuda", 0))
    first = _Stream().cuda_stream
    s = queues.new_stream(torch.device("cuda", 0), 0)
    assert s.cuda_stream == first + queues.TRIES


def test_off_probes_nothing(monkeypatch):
    ext = _Ext(lambda s: True)
    _setup(monkeypatch, ext, on=False)
    assert not queues.avoid_consumer(torch.device("cuda", 0))
    queues.new_stream(torch.device("cuda", 0), 0)
    assert ext.probes == 0 and ext.avoided == []
