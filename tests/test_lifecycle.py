"""Long runs and lifecycles: flat memory, no leaked threads or files, Ctrl-C, several pipelines."""
from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.sample_data import make_image_folder

try:
    from tests._churn import churn
except ImportError:
    from _churn import churn  # type: ignore[no-redef]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("life")
    make_image_folder(d, images_per_class=2, seed=5, mean_hw=(40, 48))
    return str(d)


def _pipe(root, **kw):
    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=3, **kw)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs)
        images = fn.random_resized_crop(images, size=(24, 24))
        return fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip()), labels
    return p()


def test_memory_stats_count_batches_waiting_between_stages(root):
    """With staged execution (lanes) more batches are alive than the prefetch depth: the ones
    waiting between stages are counted too."""
    import warnings
    warnings.simplefilter("ignore", RuntimeWarning)

    @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=3, prefetch_queue_depth=1)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, name="Reader")
        return fn.resize(fn.decoders.image(jpegs, device="mixed"), device="gpu", size=(16, 16)), labels

    pipe = p()
    pipe.build()
    pipe.run()
    deadline = time.time() + 60  # a poll: returns as soon as a batch waits between stages
    stats = pipe.memory_stats()
    while stats["staged_batches"] == 0 and time.time() < deadline:
        time.sleep(0.02)
        stats = pipe.memory_stats()
    assert stats["staged_batches"] >= 1 and stats["staged_host_bytes"] > 0
    pipe.shutdown()


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_100_epochs_memory_flat(root):
    pipe = _pipe(root)
    pipe.build()
    per_epoch = pipe.epoch_size("Reader") // 8
    rss = []
    for epoch in range(100):
        for _ in range(per_epoch):
            pipe.run()
        if epoch in (9, 99):
            gc.collect()
            rss.append(_rss())
    pipe.shutdown()
    assert rss[1] <= rss[0] * 1.05, f"RSS grew from {rss[0] >> 20} MiB to {rss[1] >> 20} MiB"


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_50_pipelines_leak_no_threads_or_files(root):
    threads0, fds0 = churn(lambda: _pipe(root), baseline=_fds, settle_s=60)
    assert threading.active_count() <= threads0, [t.name for t in threading.enumerate()]
    assert _fds() <= fds0 + 2


def test_memory_stats_and_release(root):
    pipe = _pipe(root, prefetch_queue_depth=3)
    pipe.build()
    first = pipe.run()[1].as_tensor().clone()
    # the first run() scheduled 3 iterations (DALI's schedule_run) and took one: 2 are left
    deadline = time.time() + 60  # a poll: returns once both are ready
    while pipe.memory_stats()["prefetched_batches"] < 2 and time.time() < deadline:
        time.sleep(0.02)
    stats = pipe.memory_stats()
    assert stats["prefetched_batches"] == 2 and stats["prefetched_host_bytes"] > 0 and stats["threads"] >= 2
    expected = _pipe(root)
    expected.build()
    expected.run()
    want = expected.run()[1].as_tensor()
    pipe.release_memory()
    assert pipe.memory_stats()["prefetched_batches"] == 0
    assert np.array_equal(pipe.run()[1].as_tensor().numpy(), want.numpy())  # nothing skipped
    assert first.shape[0] == 8


def test_two_pipelines_and_a_non_main_thread(root):
    a, b = _pipe(root), _pipe(root)
    a.build()
    b.build()
    out = {}

    def drive():
        out["b"] = [b.run()[1].as_tensor().clone() for _ in range(3)]

    t = threading.Thread(target=drive)
    t.start()
    got_a = [a.run()[1].as_tensor().clone() for _ in range(3)]
    t.join(timeout=30)
    assert not t.is_alive()
    for x, y in zip(got_a, out["b"]):
        assert np.array_equal(x.numpy(), y.numpy())  # same definition and seed: same batches
    a.shutdown()
    b.shutdown()


def test_sigint_stops_iteration(root, tmp_path):
    """Ctrl-C reaches a loop waiting in pipe.run() (the wait polls, it does not block for good).
    Bounds are generous (a loaded 2-core CI machine is slow to start and tear down torch): what is
    checked is that it stops, not how fast (speed belongs in bench/)."""
    script = tmp_path / "loop.py"
    script.write_text(textwrap.dedent(f"""
        import time, sys
        from torch_dali import fn, pipeline_def
        def slow(x):
            time.sleep(0.05)
            return x
        @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
        def p():
            jpegs, labels = fn.readers.file(file_root={root!r})
            return fn.torch_python_function(labels, function=slow)
        pipe = p(); pipe.build(); pipe.run()
        print("ready", flush=True)
        try:
            while True:
                pipe.run()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the loop did not stop within 60 s of Ctrl-C")
    assert "interrupted" in out and proc.returncode == 0


def _slow(x):
    time.sleep(0.8)
    return x


def test_a_stalled_pipeline_prints_where_its_threads_are(root, monkeypatch, capfd):
    """No batch for TORCH_DALI_STALL_DUMP_S seconds: every thread's stack goes to stderr (once),
    and the batch still arrives when it is ready."""
    monkeypatch.setenv("TORCH_DALI_STALL_DUMP_S", "0.3")

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3, exec_async=True)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, name="Reader")
        return fn.python_function(labels, function=_slow, batch_processing=True), labels
    pipe = p()
    pipe.build()
    out = pipe.run()
    pipe.shutdown()
    assert len(out[0]) == 2
    err = capfd.readouterr().err
    assert "no batch for" in err and "after 0 batches" in err and "_slow" in err


def test_a_stall_report_says_where_the_decoders_native_threads_are(monkeypatch, capfd):
    """The stacks of a stall cannot see into the extension: the report adds each nvJPEG decoder's
    activity() (places with threads, longest first), and nothing for decoders that are idle."""
    from torch_dali.executor import watch
    from torch_dali.io import nvjpeg

    class Stuck:
        def activity(self):
            return {"waiting for the hardware lock": (1, 44.9), "in nvJPEG's hardware batch decode": (1, 45.2),
                    "waiting for a free slot": (2, 3.0)}

    class Idle:
        def activity(self):
            return {}

    monkeypatch.setattr(nvjpeg, "_NVJPEG", {(0, 1.0, "cfg"): Stuck(), (1, 0.9, "cfg"): Idle(), (2, 0.9, "cfg"): None})
    watch.dump_stall(50.0, handed=7)
    err = capfd.readouterr().err
    assert "no batch for 50 s, after 7 batches" in err
    lines = [ln for ln in err.splitlines() if "nvJPEG decoder" in ln]
    assert lines == ["torch_dali: nvJPEG decoder on cuda:0: 1 thread in nvJPEG's hardware batch decode (latest for "
                     "45.2 s); 1 thread waiting for the hardware lock (latest for 44.9 s); 2 threads waiting for a "
                     "free slot (latest for 3.0 s)"], err


def test_a_stall_report_does_not_wait_for_a_decoder_being_made(monkeypatch):
    """A decoder's construction holds the registry lock; one that never ends must not also stop
    the stall report and the timeout error: they say a decoder is being made and go on."""
    from torch_dali.executor import watch
    from torch_dali.io import nvjpeg

    monkeypatch.setattr(nvjpeg, "_NVJPEG", {})
    got: list = []
    with nvjpeg._NVJPEG_LOCK:  # as _nvjpeg_decoder holds it around the extension's constructor
        t = threading.Thread(target=lambda: got.append(watch.no_batch_error(5.0, [])), daemon=True)
        t.start()
        t.join(10)
        assert not t.is_alive(), "the timeout error waited for the decoders' lock"
    assert "no batch within timeout=5 s" in str(got[0]) and "an nvJPEG decoder is being made" in str(got[0])
    assert nvjpeg.activity_lines() == []  # the lock free again: nothing to report
