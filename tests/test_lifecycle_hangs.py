"""Hangs that must not take the process with them: a hung Python function, Ctrl-C while an op
never returns, os.fork() after a pipeline ran. Each case runs in a subprocess with a timeout, so a
regression fails the test instead of hanging the test run."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from torch_dali.sample_data import make_image_folder

REPO = Path(__file__).resolve().parent.parent
BOUND_S = 60  # generous: a loaded 2-core CI machine takes seconds just to import torch


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("hangs")
    make_image_folder(d, images_per_class=1, seed=5, mean_hw=(24, 32))
    return str(d)


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *extra.pop("PATHS", "").split(os.pathsep)]).rstrip(os.pathsep)
    env.update(extra)
    return env


def _run_script(tmp_path: Path, body: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    try:
        return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=BOUND_S, env=env or _env())
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the script did not exit within {BOUND_S} s (hung); output so far:\n{e.stdout}\n{e.stderr}")


def test_a_script_whose_python_function_timed_out_exits(root, tmp_path):
    """timeout= reports the hung call; the call's thread must not keep the interpreter alive."""
    r = _run_script(tmp_path, f"""
        import time
        from torch_dali import fn, pipeline_def
        def hang(x):
            time.sleep(100000)
            return x
        @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
        def p():
            jpegs, labels = fn.readers.file(file_root={root!r})
            return fn.python_function(labels, function=hang, timeout=0.5)
        pipe = p()
        pipe.build()
        try:
            pipe.run()
        except Exception as e:
            print("reported:", e)
        print("end of script", flush=True)
    """)
    assert r.returncode == 0, r.stderr
    assert "did not return within timeout=0.5 s" in r.stdout and "end of script" in r.stdout


def _hung_cli(tmp_path: Path, root: str, env_extra: dict[str, str]) -> tuple[subprocess.Popen, Path]:
    """`torch-dali run` on a config whose Python op never returns; waits until the op is inside it."""
    marker = tmp_path / "inside"
    (tmp_path / "hangmod.py").write_text(textwrap.dedent("""
        import os, time
        def hang(x):
            open(os.environ["HANG_MARKER"], "w").close()
            time.sleep(100000)
            return x
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        import hangmod  # type: ignore[import-not-found]

        from torch_dali import fn, pipeline_def

        @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
        def p():
            jpegs, labels = fn.readers.file(file_root=root, name="Reader")
            return fn.python_function(labels, function=hangmod.hang, name="Stuck")
        config = tmp_path / "hung.yaml"
        p().serialize(filename=str(config))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("hangmod", None)
    env = _env(PATHS=str(tmp_path), HANG_MARKER=str(marker), **env_extra)
    proc = subprocess.Popen([sys.executable, "-m", "torch_dali.cli", "run", str(config), "--allow-module", "hangmod",
                             "--batches", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_default_sigint)
    deadline = time.monotonic() + BOUND_S
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"the op was never entered (rc {proc.returncode}):\n{out}\n{err}")
        time.sleep(0.05)
    return proc, marker


def _default_sigint() -> None:
    """Python makes SIGINT a KeyboardInterrupt only if it is not ignored at start (it is in a
    shell's background jobs, which a CI runner may be)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait(proc: subprocess.Popen, bound: float) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"still running {bound} s after Ctrl-C:\n{out}\n{err}")


def test_cli_run_with_a_hung_op_ends_on_a_second_ctrl_c(root, tmp_path):
    """Stopping waits for the running op; a second Ctrl-C stops the wait (the stop limit is set far
    beyond the test's bound, so only the second Ctrl-C can end the process in time)."""
    proc, _ = _hung_cli(tmp_path, root, {"TORCH_DALI_STOP_TIMEOUT_S": "100000"})
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)
    assert proc.poll() is None  # still waiting for the op
    proc.send_signal(signal.SIGINT)
    out, err = _wait(proc, 30)
    assert proc.returncode == 130, err
    assert "PythonFunction 'Stuck'" in err and "Ctrl-C interrupted the wait" in err


def test_cli_run_with_a_hung_op_gives_up_after_the_stop_limit(root, tmp_path):
    """One Ctrl-C: the wait for the stuck op is bounded, and the message names the op."""
    proc, _ = _hung_cli(tmp_path, root, {"TORCH_DALI_STOP_TIMEOUT_S": "1"})
    proc.send_signal(signal.SIGINT)
    out, err = _wait(proc, 30)
    assert proc.returncode == 130, err
    assert "PythonFunction 'Stuck'" in err and "did not return within 1 s" in err


_FORK_PRELUDE = """
    import os, sys, threading, time
    import torch
    from torch_dali import fn, pipeline_def
    inside, release = threading.Event(), threading.Event()
    calls = []
    def blocking(x):
        calls.append(1)
        if len(calls) > 1:  # the first batch passes; the next one waits inside the op
            inside.set()
            release.wait(60)
        return x
    def ident(x):
        return x
    def make(f, **kw):
        @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1, **kw)
        def p():
            jpegs, labels = fn.readers.file(file_root={root!r})
            return fn.python_function(labels, function=f, batch_processing=True)
        return p()
    parent = make(blocking)
    parent.build()
    torch.manual_seed(123)
    parent.run()          # the pipeline ran; its producer prefetches the next batch: inside `blocking`
    inside.wait(60)       # a parent thread holds the Python ops' RNG lock, the RNGs seeded for a sample
"""


def test_fork_while_a_python_op_runs_gives_the_child_a_clean_state(root, tmp_path):
    """The child makes and runs a new pipeline (its Python op on the child's main thread, which does
    not own the parent's lock), gets the caller's RNG state back, and the parent's pipeline object
    refuses to run there with a clear error; nothing hangs."""
    r = _run_script(tmp_path, _FORK_PRELUDE.format(root=root) + """
    pid = os.fork()
    if pid == 0:
        try:
            rng_ok = torch.equal(torch.rand(3), torch.rand(3, generator=torch.Generator().manual_seed(123)))
            child = make(ident, exec_async=False)
            child.build()
            print("child batch", tuple(child.run()[0].as_tensor().shape), "rng restored", rng_ok, flush=True)
            try:
                parent.run()
            except Exception as e:
                print("parent pipeline in child:", type(e).__name__, e, flush=True)
        finally:
            sys.stdout.flush()
        sys.exit(0)
    release.set()
    _, status = os.waitpid(pid, 0)
    print("child status", status, flush=True)
    """)
    assert r.returncode == 0, r.stderr
    assert "child batch (2, 1) rng restored True" in r.stdout, r.stdout + r.stderr
    assert "parent pipeline in child: PipelineError" in r.stdout and "before os.fork()" in r.stdout
    assert "child status 0" in r.stdout


def test_torch_dataloader_fork_workers_use_torch_dali_after_a_pipeline_ran(root, tmp_path):
    """torch's DataLoader forks its workers while our producer thread is inside a Python op; each
    worker builds its own pipeline on first use (as the error in the child says to)."""
    r = _run_script(tmp_path, _FORK_PRELUDE.format(root=root) + """
    class Batches(torch.utils.data.Dataset):
        pipe = None
        def __len__(self):
            return 4
        def __getitem__(self, i):
            if Batches.pipe is None:
                Batches.pipe = make(ident, exec_async=False)
                Batches.pipe.build()
            return Batches.pipe.run()[0].as_tensor()
    loader = torch.utils.data.DataLoader(Batches(), batch_size=None, num_workers=2,
                                         multiprocessing_context="fork", timeout=30)
    shapes = [tuple(b.shape) for b in loader]
    release.set()
    print("worker batches", shapes, flush=True)
    """)
    assert r.returncode == 0, r.stderr
    assert "worker batches [(2, 1), (2, 1), (2, 1), (2, 1)]" in r.stdout, r.stdout + r.stderr


def test_exit_while_a_slow_torch_op_runs_past_the_stop_limit(tmp_path):
    """A script that ends while an op runs torch code past TORCH_DALI_STOP_TIMEOUT_S: the op is
    given one more stop limit at exit, so it returns before the interpreter tears torch down.
    Before, the thread was still inside torch then and the process aborted ("terminate called
    without an active exception", exit code 134)."""
    r = _run_script(tmp_path, """
        import time
        import torch
        from torch_dali import fn, pipeline_def

        def slow(x):
            t, a = time.time(), torch.randn(400, 400)
            while time.time() - t < 3:
                a = (a @ a).tanh()
            return x

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            return fn.python_function(fn.random.uniform(range=[0, 1], shape=[4]), function=slow)

        pipe = p()
        pipe.build()
        pipe.run()  # the next batch's slow call starts now, in the prefetch thread
        print("done", flush=True)
    """, _env(TORCH_DALI_STOP_TIMEOUT_S="2"))
    assert r.returncode == 0 and "done" in r.stdout, (r.returncode, r.stderr[-800:])
    assert "terminate called" not in r.stderr


def test_exit_while_a_timed_out_python_function_still_runs_torch(tmp_path):
    """python_function(timeout=...) leaves a call past its timeout running on its watcher thread.
    A script that ends right after the error used to finalize while that thread was inside a torch
    call: "terminate called without an active exception", exit code 134 (4 of 4 runs before). The
    executor's exit handler now waits for such threads too (one stop limit in all)."""
    body = """
        import time
        import torch
        from torch_dali import fn, pipeline_def

        def slow(x):
            t, a = time.time(), torch.randn(400, 400)
            while time.time() - t < 1:
                a = (a @ a).tanh()
            return x

        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def p():
            return fn.python_function(fn.random.uniform(range=[0, 1], shape=[4]), function=slow, timeout=0.05)

        pipe = p()
        pipe.build()
        try:
            pipe.run()
        except Exception as e:
            print("reported:", type(e).__name__, flush=True)
    """
    for _ in range(3):
        r = _run_script(tmp_path, body)
        assert r.returncode == 0 and "reported:" in r.stdout, (r.returncode, r.stdout, r.stderr[-800:])
        assert "terminate called" not in r.stderr


def test_exit_right_after_build_while_an_op_prepares(tmp_path):
    """An op's build-time set-up (`prepare`: nvJPEG states, the CUDA extension on a GPU) runs on a
    daemon thread. A script that ended right after build() finalized while that thread was inside
    torch and aborted ("terminate called...", 3 of 3 runs with a set-up standing in for the GPU
    decoder's); the exit handler now waits for it (bounded)."""
    body = """
        import time
        import torch
        from torch_dali import fn, pipeline_def
        from torch_dali.ops.python_function import PythonFunction

        def slow_prepare(self):
            t, a = time.time(), torch.randn(400, 400)
            while time.time() - t < 1:
                a = (a @ a).tanh()

        PythonFunction.prepare = slow_prepare

        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def p():
            return fn.python_function(fn.random.uniform(range=[0, 1], shape=[4]), function=lambda x: x)

        p().build()
        print("built", flush=True)
    """
    for _ in range(3):
        r = _run_script(tmp_path, body)
        assert r.returncode == 0 and "built" in r.stdout, (r.returncode, r.stdout, r.stderr[-800:])
        assert "terminate called" not in r.stderr


def test_exit_while_the_extension_preloads(tmp_path):
    """`import torch_dali` loads a finished build of the CUDA extension on a daemon thread (GPU
    machines). A script that ended while that thread was inside torch aborted ("terminate
    called...", 3 of 3 runs with a load standing in for the real one, which needs a GPU and a
    build); the exit now waits for it (bounded)."""
    body = """
        import time
        import torch
        from torch_dali._native import extension as e

        def busy_load():
            t, a = time.time(), torch.randn(300, 300)
            while time.time() - t < 0.5:
                a = a @ a / 300

        e._built_key = lambda: "a build"
        torch.cuda.is_available = lambda: True
        e.load = busy_load
        e._tried = False
        e.preload()
        print("done", flush=True)
    """
    for _ in range(3):
        r = _run_script(tmp_path, body)
        assert r.returncode == 0 and "done" in r.stdout, (r.returncode, r.stdout, r.stderr[-800:])
        assert "terminate called" not in r.stderr
