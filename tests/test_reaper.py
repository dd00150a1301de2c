"""executor.reaper: with TORCH_DALI_REAPER=1 dead batches die on the reaper thread, not the caller's;
flush waits for them; off, drop keeps nothing; a forked child starts its own thread."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import weakref

import pytest

from torch_dali.executor import reaper


class _Dies:
    def __init__(self, where: list[str]) -> None:
        self.where = where

    def __del__(self) -> None:
        self.where.append(threading.current_thread().name)


def test_on_the_objects_die_on_the_reaper_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_DALI_REAPER", "1")
    where: list[str] = []
    batch = [_Dies(where) for _ in range(5)]
    reaper.drop(batch)
    del batch
    assert reaper.flush(10.0)
    assert where == ["torch_dali-reaper"] * 5


def test_off_nothing_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_DALI_REAPER", "0")
    where: list[str] = []
    obj = _Dies(where)
    ref = weakref.ref(obj)
    reaper.drop(obj)
    del obj
    assert ref() is None and where == [threading.current_thread().name]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_gets_its_own_thread() -> None:
    code = ("import os, threading\nos.environ['TORCH_DALI_REAPER'] = '1'\n"
            "from torch_dali.executor import reaper\nreaper.drop([1])\nassert reaper.flush(10)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    where = []\n"
            "    class D:\n"
            "        def __del__(self): where.append(threading.current_thread().name)\n"
            "    reaper.drop(D())\n"
            "    ok = reaper.flush(10) and where == ['torch_dali-reaper']\n"
            "    os._exit(0 if ok else 3)\n"
            "_, st = os.waitpid(pid, 0)\nprint(os.waitstatus_to_exitcode(st))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip().splitlines()[-1] == "0", r.stderr[-2000:]
