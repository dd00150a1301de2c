"""DALI 2.4's capture mode (`reader.next_epoch(batch_size=..., capture=True)`, `ndd.capture`):
torch_dali runs the loop's ops as they come, so results equal an ordinary epoch's (DALI's own
tests assert that parity); the mode's rules and `invariant` as DALI 2.4 gave them for the same
five files (measured 2026-12-05)."""
from __future__ import annotations

import numpy as np
import pytest

import torch_dali.experimental.dynamic as ndd

from _file_trees import root  # noqa: F401 (a fixture)


def _flipped(reader, capture, **kw):
    out = []
    for data, _ in reader.next_epoch(capture=capture, **kw):
        flipped = ndd.flip(ndd.reshape(data, shape=ndd.capture.invariant([1, -1, 1])), horizontal=1)
        out.append([np.asarray(t).ravel().tolist() for t in flipped.tensors])
    return out


def test_capture_epochs_match_dali(root):
    r = ndd.readers.File(file_root=root)
    first = [[98, 97], [101, 100, 99]], [[102], [106, 105, 104, 103]], [[108, 107], [98, 97]]
    second = [[101, 100, 99], [102]], [[106, 105, 104, 103], [108, 107]], [[98, 97], [101, 100, 99]]
    assert _flipped(r, True, batch_size=2) == list(first)
    assert _flipped(r, True, batch_size=2) == list(second)
    assert _flipped(ndd.readers.File(max_batch_size=2, file_root=root), True) == list(first)
    r = ndd.readers.File(file_root=root)
    for _ in r.next_epoch(batch_size=2, capture=True):
        break  # the stream goes on where the loop stopped
    assert _flipped(r, True, batch_size=2) == [[[102], [106, 105, 104, 103]], [[108, 107], [98, 97]],
                                               [[101, 100, 99], [102]]]


def test_capture_rules(root):
    with pytest.raises(ValueError, match="batch_size"):
        ndd.readers.File(file_root=root).next_epoch(capture=True)
    r = ndd.readers.File(file_root=root)
    _flipped(r, False, batch_size=2)
    with pytest.raises(RuntimeError, match="cannot switch to capture mode"):
        _flipped(r, True, batch_size=2)
    r = ndd.readers.File(file_root=root)
    _flipped(r, True, batch_size=2)
    with pytest.raises(RuntimeError, match="cannot switch to eager mode"):
        _flipped(r, False, batch_size=2)
    r = ndd.readers.File(file_root=root)
    r()
    with pytest.raises(RuntimeError):  # called first: epochs of either mode are refused
        _flipped(r, True, batch_size=2)


def test_invariant():
    assert ndd.capture.__all__ == ["invariant"]
    assert ndd.capture.invariant(3) + 1 == 4 and isinstance(ndd.capture.invariant(3), int)
    assert ndd.capture.invariant([1]) == [1]
    img = np.uint8([[[1], [2]]])
    assert np.asarray(ndd.flip(img, horizontal=ndd.capture.invariant(1))).ravel().tolist() == [2, 1]
