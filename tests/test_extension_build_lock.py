"""The extension's JIT build folder lock: a build killed mid-way (Ctrl-C in a first run) must not
make the next run wait on the `lock` file torch leaves behind. Builders run in subprocesses."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from torch_dali._native import extension

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the OS lock is POSIX flock")

# A builder: takes the guard, makes torch's lock as torch's build does, reports, then sleeps
# (to be killed) or finishes as a build does (removing the lock).
BUILDER = """
import sys, time
from pathlib import Path
from torch_dali._native import extension
path, mode = sys.argv[1], sys.argv[2]
with extension.build_guard(path):
    Path(path, "lock").write_text("")
    print("building", flush=True)
    if mode == "hang":
        time.sleep(120)
    time.sleep(1.0)
    Path(path, "lock").unlink()
print("built", flush=True)
"""


def _builder(path: Path, mode: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", BUILDER, str(path), mode], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TORCH_DALI_PRELOAD_EXT": "0"})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "building"
    return proc


def test_a_lock_left_by_a_killed_build_of_this_host_is_removed_at_once(tmp_path):
    proc = _builder(tmp_path, "hang")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert (tmp_path / "lock").exists()  # what torch would wait on
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with extension.build_guard(str(tmp_path)):
            assert not (tmp_path / "lock").exists()
    assert any("did not finish" in str(w.message) for w in seen)
    assert (tmp_path / "build.owner").read_text().split() == [socket.gethostname(), str(os.getpid())]


def test_a_running_build_is_waited_for_not_broken(tmp_path):
    proc = _builder(tmp_path, "finish")
    t = time.monotonic()
    with extension.build_guard(str(tmp_path)):
        waited = time.monotonic() - t
        assert not (tmp_path / "lock").exists()  # the builder finished and removed it itself
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "built" in out
    assert waited > 0.5  # held until the builder's guard was released


def test_a_fresh_lock_of_another_host_is_left_to_its_build(tmp_path):
    (tmp_path / "build.owner").write_text("some-other-host 1234\n")
    (tmp_path / "lock").write_text("")
    with extension.build_guard(str(tmp_path)):
        assert (tmp_path / "lock").exists()


def test_a_killed_builds_leftover_compiler_jobs_are_waited_for(tmp_path):
    """Killing a build leaves its running compiler jobs behind, still writing objects into the
    folder: the next build starts only once they have ended."""
    (tmp_path / "build.owner").write_text(f"{socket.gethostname()} 999999\n")
    (tmp_path / "lock").write_text("")
    job = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"], cwd=tmp_path)
    try:
        t = time.monotonic()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with extension.build_guard(str(tmp_path)):
                assert job.poll() is not None  # the leftover job ended first
                assert not (tmp_path / "lock").exists()
        assert time.monotonic() - t > 1.0
    finally:
        job.kill()
        job.wait()
