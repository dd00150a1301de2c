"""`import torch_dali` starts loading an already built CUDA extension on a background thread; it
never builds, never runs in DataLoader workers or with the knob off, and a fork mid-load leaves the
child a usable lock."""
from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from torch_dali._native import extension


def _preload_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "torch_dali-preload"]


def test_knob_off_starts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_DALI_PRELOAD_EXT", "0")
    monkeypatch.setattr(extension, "_tried", False)
    before = len(_preload_threads())
    extension.preload()
    assert len(_preload_threads()) == before


def test_without_a_build_nothing_is_loaded_or_built(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setenv("TORCH_DALI_PRELOAD_EXT", "1")
    monkeypatch.delenv("TORCH_DALI_NO_EXT", raising=False)
    monkeypatch.setattr(extension, "_tried", False)
    monkeypatch.setattr(extension, "_built_key", lambda: None)
    monkeypatch.setattr(extension, "load", lambda verbose=False: calls.append("load"))
    extension.preload()
    for t in _preload_threads():
        t.join(timeout=10)
    assert calls == []


def test_a_finished_build_is_loaded_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setenv("TORCH_DALI_PRELOAD_EXT", "1")
    monkeypatch.delenv("TORCH_DALI_NO_EXT", raising=False)
    monkeypatch.setattr(extension, "_tried", False)
    monkeypatch.setattr(extension, "_built_key", lambda: "key")
    monkeypatch.setattr(extension.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(extension, "load", lambda verbose=False: calls.append(threading.current_thread().name))
    extension.preload()
    for t in _preload_threads():
        t.join(timeout=10)
    assert calls == ["torch_dali-preload"]


def test_the_child_of_a_fork_gets_a_fresh_lock() -> None:
    code = ("import os, torch_dali\nfrom torch_dali._native import extension as e\n"
            "e._lock.acquire()\npid = os.fork()\n"
            "if pid == 0:\n    ok = e._lock.acquire(timeout=5)\n    os._exit(0 if ok else 3)\n"
            "_, st = os.waitpid(pid, 0)\nprint(os.waitstatus_to_exitcode(st))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip().splitlines()[-1] == "0", r.stderr[-2000:]
