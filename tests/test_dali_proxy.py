"""torch_dali.plugin.pytorch.experimental.proxy (DALI's DALIServer / DataLoader): a CPU pipeline fed
through a torch DataLoader, compared with DALI 2.4's outputs; the proxy's signature and refusals;
and no hang on worker errors, early exits or a server nobody stopped (those in a subprocess, with
a timeout).

The digests below were computed once with DALI 2.4 (CPU, device_id=None) for the same pipeline,
dataset and batches, in both modes: with num_workers=0 through torch's DataLoader and
produce_data (DALI 2.4's proxy.DataLoader refuses num_workers=0), with num_workers=2 through
proxy.DataLoader. Each is sha256 (first 16 hex digits) of (dtype.str, shape) and the bytes of the
batch's "img" then "vec" outputs."""
from __future__ import annotations

import collections
import hashlib
import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from torch.utils import data as td
from torch.utils.data import default_collate

from torch_dali import fn, pipeline_def
from torch_dali.plugin.pytorch.experimental import proxy as dali_proxy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DALI_BATCHES = [([0, 1, 2, 3], "b386eb287e340ba4", (4, 3, 3, 5)),
                ([4, 5, 6, 7], "cc17de7516f889ea", (4, 3, 3, 5)),
                ([8, 9], "aed1d7f5c8b342f8", (2, 3, 3, 5))]


@pipeline_def
def two_inputs():
    a = fn.external_source(name="a", layout="HWC", no_copy=True)
    b = fn.external_source(name="b", no_copy=True)
    return fn.transpose(fn.flip(a, horizontal=1), perm=[2, 0, 1]), b * 2 + 1


@pipeline_def
def square():
    return fn.external_source(name="x") ** 2


@pipeline_def
def noisy():
    x = fn.external_source(name="x")
    return x + fn.random.uniform(range=[0, 1], shape=[2])


class Samples(td.Dataset):
    """Ten samples; at module level so that spawned workers can unpickle it."""

    def __init__(self, proxy):
        self.proxy = proxy

    def __len__(self):
        return 10

    def __getitem__(self, i):
        a = ((np.arange(3 * 5 * 3) * (i + 1) + 7 * i) % 256).astype(np.uint8).reshape(3, 5, 3)
        b = (np.arange(4, dtype=np.float32) - i) / 8
        img, vec = self.proxy(a=a, b=b)
        return {"img": img, "label": i, "vec": vec}


def _digest(*ts):
    h = hashlib.sha256()
    for t in ts:
        a = np.ascontiguousarray(t.numpy())
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _summary(batches):
    out = []
    for b in batches:
        assert type(b["img"]) is torch.Tensor and b["img"].dtype == torch.uint8 and b["vec"].dtype == torch.float32
        out.append((b["label"].tolist(), _digest(b["img"], b["vec"]), tuple(b["img"].shape)))
    return out


def _server(deterministic=False):
    return dali_proxy.DALIServer(two_inputs(batch_size=4, num_threads=1, device_id=None), deterministic=deterministic)


@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize("num_workers", [0, 2])
def test_proxy_data_loader_matches_dali(num_workers, deterministic):
    with _server(deterministic) as server:
        loader = dali_proxy.DataLoader(server, Samples(server.proxy), batch_size=4, num_workers=num_workers)
        assert _summary(loader) == DALI_BATCHES
        assert _summary(loader) == DALI_BATCHES  # a second epoch


@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize("num_workers", [0, 2])
def test_torch_data_loader_and_produce_data_match_dali(num_workers, deterministic):
    with _server(deterministic) as server:
        loader = td.DataLoader(Samples(server.proxy), batch_size=4, num_workers=num_workers)
        batches = [server.produce_data(b) for b in loader]
    assert _summary(batches) == DALI_BATCHES


def test_spawned_workers():
    """DALI 2.4's proxy cannot be pickled (spawn fails); ours travels with the Dataset."""
    with _server() as server:
        loader = dali_proxy.DataLoader(server, Samples(server.proxy), batch_size=4, num_workers=2,
                                       multiprocessing_context="spawn")
        assert _summary(loader) == DALI_BATCHES


def test_deterministic_runs_batches_in_loader_order():
    """A random pipeline gives, through 2 workers, what it gives fed directly in the loader's order."""
    class Rows(td.Dataset):
        def __init__(self, proxy):
            self.proxy = proxy

        def __len__(self):
            return 12

        def __getitem__(self, i):
            return self.proxy(np.full(2, 10.0 * i, np.float32))

    ref_pipe = noisy(batch_size=3, num_threads=1, device_id=None, seed=7, prefetch_queue_depth=1)
    ref = []
    for k in range(4):
        (out,) = ref_pipe.run(x=[np.full(2, 10.0 * i, np.float32) for i in range(3 * k, 3 * k + 3)])
        ref.append(np.stack([np.asarray(s) for s in out]))
    for _ in range(2):
        with dali_proxy.DALIServer(noisy(batch_size=3, num_threads=1, device_id=None, seed=7),
                                   deterministic=True) as server:
            got = [b.numpy() for b in dali_proxy.DataLoader(server, Rows(server.proxy), batch_size=3,
                                                             num_workers=2)]
        np.testing.assert_array_equal(np.stack(got), np.stack(ref))


Pair = collections.namedtuple("Pair", "first second")


class Holder:
    def __init__(self):
        self.me = self
        self.data = None


def test_manual_collate_and_produce_data_in_nested_structures():
    with _server() as server:
        samples = []
        for i in range(3):
            a = np.full((2, 2, 1), i, np.uint8)
            b = np.arange(3, dtype=np.float32) * i
            samples.append(server.proxy(a=a, b=b) + (b,))
        img, vec, b = default_collate(samples)
        assert isinstance(img, dali_proxy.DALIOutputBatchRef)
        holder = Holder()
        holder.data = {"pair": Pair(img, [vec, 5]), "plain": b}
        out = server.produce_data([holder, (img,)])
    assert out[0] is holder and holder.me is holder  # objects and dicts are changed in place
    assert isinstance(holder.data["pair"], Pair)
    np.testing.assert_array_equal(holder.data["pair"].second[0].numpy(), b.numpy() * 2 + 1)
    assert holder.data["pair"].second[1] == 5
    assert out[1][0] is holder.data["pair"].first and tuple(out[1][0].shape) == (3, 1, 2, 2)


def test_proxy_signature():
    server = _server()
    assert str(inspect.signature(server.proxy)).startswith("(*, a, b)")
    with pytest.raises(ValueError, match="too many positional arguments"):
        server.proxy(np.zeros(1), np.zeros(1))
    with pytest.raises(ValueError, match="missing"):
        server.proxy(a=np.zeros(1))
    one = dali_proxy.DALIServer(noisy(batch_size=2, num_threads=1, device_id=None))
    assert str(inspect.signature(one.proxy)).startswith("(x)")
    assert isinstance(one.proxy(np.zeros(2, np.float32)), dali_proxy.DALIOutputSampleRef)


def test_refusals():
    with pytest.raises(TypeError):
        dali_proxy.DALIServer("not a pipeline")

    @pipeline_def
    def no_inputs():
        return fn.random.uniform(range=[0, 1])

    with pytest.raises(RuntimeError, match="external source"):
        dali_proxy.DALIServer(no_inputs(batch_size=2, num_threads=1, device_id=None))

    @pipeline_def
    def with_source():
        return fn.external_source(source=lambda: [np.zeros(1)] * 2) + fn.external_source(name="y")

    with pytest.raises(RuntimeError, match="source"):
        dali_proxy.DALIServer(with_source(batch_size=2, num_threads=1, device_id=None))

    server = dali_proxy.DALIServer(noisy(batch_size=4, num_threads=1, device_id=None))
    first = [server.proxy(np.zeros(2, np.float32)) for _ in range(2)]
    with pytest.raises(RuntimeError, match="order"):
        default_collate(first[::-1])
    default_collate(first)
    second = [server.proxy(np.zeros(2, np.float32)) for _ in range(2)]
    with pytest.raises(RuntimeError, match="one batch"):
        default_collate([first[0], second[1]])


def test_produce_data_without_a_running_server_raises():
    server = _server(deterministic=True)
    ref = default_collate([server.proxy(a=np.zeros((1, 1, 1), np.uint8), b=np.zeros(1, np.float32))])
    with pytest.raises(RuntimeError, match="not running"):
        server.produce_data(ref)


def test_pipeline_error_reaches_the_loop_and_restart():
    class Ragged(td.Dataset):
        def __init__(self, proxy):
            self.proxy = proxy

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return self.proxy(np.zeros(1 + i % 2, np.float32))  # samples of two shapes: no dense batch

    server = dali_proxy.DALIServer(square(batch_size=2, num_threads=1, device_id=None))
    loader = dali_proxy.DataLoader(server, Ragged(server.proxy), batch_size=2, num_workers=2)
    with pytest.raises(RuntimeError):  # as DALI 2.4's (a RuntimeError: not a dense batch)
        next(iter(loader))
    server.stop_thread()
    assert server._thread is None
    loader = dali_proxy.DataLoader(server, Ragged(server.proxy), batch_size=1, num_workers=0)
    assert [b.shape[1] for b in loader] == [1, 2, 1, 2]  # started again by the loader
    server.stop_thread()


class Labelled(td.Dataset):
    def __init__(self, proxy):
        self.proxy = proxy

    def __len__(self):
        return 48

    def __getitem__(self, i):
        return i, self.proxy(np.array([i], np.int32))


def test_an_epoch_left_early_leaves_no_stale_batch():
    """DALI 2.4 names a worker's batches (worker id, count), afresh in each epoch: after a loop left
    early, the outputs of the other workers' first batches, already sent, are handed out for the
    next epoch's batches of the same name (measured: 5 of the next epoch's first 6 batches held
    other samples' data). Ours are named per worker process, so each batch gets its own data."""
    import time
    torch.manual_seed(0)
    with dali_proxy.DALIServer(square(batch_size=2, num_threads=1, device_id=None)) as server:
        loader = dali_proxy.DataLoader(server, Labelled(server.proxy), batch_size=2, num_workers=3, shuffle=True)
        for _ in loader:
            time.sleep(0.5)  # the other workers' first batches reach the server meanwhile
            break
        for k, (labels, data) in enumerate(loader):
            assert data.ravel().tolist() == [v * v for v in labels.tolist()]
            if k == 6:
                break


class SlowBig(td.Dataset):
    def __init__(self, proxy):
        self.proxy = proxy

    def __len__(self):
        return 64

    def __getitem__(self, i):
        import time
        time.sleep(0.05)
        return self.proxy(np.full((512, 1024), i, np.uint8))


def test_workers_do_not_wait_at_exit_for_a_stopped_server():
    """Batches a worker sent after the server stopped fill the pipe; the worker must not wait at exit
    to flush them (torch would kill it only after 5 s per worker: 10 s here before the fix)."""
    import time
    server = dali_proxy.DALIServer(square(batch_size=4, num_threads=1, device_id=None))
    it = iter(dali_proxy.DataLoader(server, SlowBig(server.proxy), batch_size=4, num_workers=2))
    next(it)
    server.stop_thread()
    time.sleep(2)  # the workers send their next batches meanwhile
    start = time.monotonic()
    del it
    assert time.monotonic() - start < 4


class RaisesAfterProxy(td.Dataset):
    def __init__(self, proxy):
        self.proxy = proxy

    def __len__(self):
        return 16

    def __getitem__(self, i):
        out = self.proxy(np.array([i], np.float32))
        if i == 5:
            raise ValueError("sample 5 is broken")
        return i, out


@pytest.mark.parametrize("num_workers", [0, 2])
def test_batches_go_on_after_a_sample_raised(num_workers):
    """A Dataset that raises after calling the proxy leaves that batch's first samples with the
    proxy. DALI 2.4 then refuses every later batch of that worker ("Unexpected sample order"; with
    2 workers: batch 3 of 4); ours drops the abandoned samples and goes on."""
    with dali_proxy.DALIServer(square(batch_size=4, num_threads=1, device_id=None)) as server:
        it = iter(dali_proxy.DataLoader(server, RaisesAfterProxy(server.proxy), batch_size=4,
                                        num_workers=num_workers))
        got = []
        for _ in range(4):
            try:
                labels, data = next(it)
            except ValueError:
                got.append("raised")
                continue
            got.append(data.ravel().tolist())
            assert data.ravel().tolist() == [float(v * v) for v in labels.tolist()]
    assert got[1] == "raised" and got[3] == [144.0, 169.0, 196.0, 225.0]


SCRIPT = """
import os, sys, numpy as np
from torch.utils import data as td
from torch_dali import fn, pipeline_def
from torch_dali.plugin.pytorch.experimental import proxy as P

@pipeline_def
def sq():
    return fn.external_source(name="a") ** 2

class DS(td.Dataset):
    def __init__(self, proxy, mode):
        self.proxy, self.mode = proxy, mode
    def __len__(self):
        return 16
    def __getitem__(self, i):
        if i == 5 and self.mode == "raise":
            raise ValueError("sample 5 is broken")
        if i == 5 and self.mode == "die":
            os._exit(3)
        return self.proxy(np.array([i], np.float32))

mode = sys.argv[1]
server = P.DALIServer(sq(batch_size=2, num_threads=1, device_id=None))
loader = P.DataLoader(server, DS(server.proxy, mode), batch_size=2, num_workers=2)
try:
    for b in loader:
        if mode == "break":
            break
except Exception as e:
    print("raised", type(e).__name__)
print("done", flush=True)
"""


@pytest.mark.parametrize("mode, expect", [("nostop", "done"), ("break", "done"), ("raise", "raised ValueError"),
                                          ("die", "raised RuntimeError")])
def test_no_hang_at_exit(tmp_path, mode, expect):
    """The loader starts the server and nobody stops it (DALI 2.4's non-daemon thread keeps such a
    process from exiting), a loop left early, a worker that raises, a worker that dies: each script
    ends by itself."""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    assert expect in res.stdout and "done" in res.stdout, res.stdout + res.stderr[-2000:]


BUSY_AT_EXIT = """
import numpy as np, torch
from torch.utils import data as td
from torch_dali import fn, pipeline_def
from torch_dali.plugin.pytorch.experimental import proxy as P

def busy(x):  # torch work with the GIL released, as the interpreter starts to exit
    a = torch.randn(400, 400)
    for _ in range(6):
        a = a @ a / 400
    return x

@pipeline_def
def sq():
    return fn.python_function(fn.external_source(name="a"), function=busy) ** 2

class DS(td.Dataset):
    def __init__(self, proxy):
        self.proxy = proxy
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return self.proxy(np.array([i], np.float32))

server = P.DALIServer(sq(batch_size=2, num_threads=1, device_id=None))
loader = P.DataLoader(server, DS(server.proxy), batch_size=2, num_workers=2)
for b in loader:
    break
print("done", flush=True)
"""


def test_exit_while_the_server_runs_torch_work(tmp_path):
    """A loop left early while the server's thread is inside a torch call: the interpreter's exit
    used to end that daemon thread mid-call ("terminate called without an active exception", the
    process aborted; 4 of 4 runs before the fix). The server's threads are now stopped first."""
    script = tmp_path / "busy.py"
    script.write_text(textwrap.dedent(BUSY_AT_EXIT))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "done" in res.stdout


def test_deserialized_pipeline():
    """DALI 2.4 refuses a deserialized pipeline here; ours names its external sources from the graph
    (conformance/on_purpose.md)."""
    from torch_dali.pipeline import Pipeline
    pipe = Pipeline.deserialize(square(batch_size=2, num_threads=1, device_id=None).serialize(), batch_size=2,
                                num_threads=1, device_id=None)
    with dali_proxy.DALIServer(pipe) as server:
        refs = default_collate([server.proxy(np.full(2, v, np.float32)) for v in (2, 3)])
        np.testing.assert_array_equal(server.produce_data(refs).numpy(), [[4, 4], [9, 9]])


EARLY_BREAKS = """
import numpy as np
from torch.utils import data as td
from torch_dali import fn, pipeline_def
from torch_dali.plugin.pytorch.experimental import proxy as P

@pipeline_def
def ident():
    return fn.external_source(name="a") * 1

class DS(td.Dataset):
    def __init__(self, proxy):
        self.proxy = proxy
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return i, self.proxy(np.array([i], np.int32))

bad = 0
for _ in range(8):
    with P.DALIServer(ident(batch_size=1, num_threads=1, device_id=None)) as server:
        loader = P.DataLoader(server, DS(server.proxy), batch_size=1, num_workers=4, shuffle=True)
        for _ in range(4):
            for labels, data in loader:
                bad += labels.tolist() != data.ravel().tolist()
                break
print("done", bad, flush=True)
"""


def test_many_epochs_left_early_do_not_hang():
    """8 servers x 4 epochs of 4 workers, each epoch left after its first batch: torch shuts the
    workers down mid-flight each time. With one multiprocessing queue shared by the workers, a
    worker gone while its feeder thread held the queue's lock left later batches stuck (this script
    hung 3 runs of 3); with a connection per worker it ends, every batch with its own data."""
    script = textwrap.dedent(EARLY_BREAKS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=150, env=env)
    assert res.returncode == 0 and "done 0" in res.stdout, res.stdout + res.stderr[-2000:]


def test_a_loader_collected_late_stops_only_the_thread_it_started():
    """A loader that started the server, then the server stopped and started again by another
    loader: the first one's collection must leave the second one's thread running (CI saw the
    second loader's epoch fail "server is not running" when the first was collected mid-epoch)."""
    server = dali_proxy.DALIServer(square(batch_size=2, num_threads=1, device_id=None))
    first = dali_proxy.DataLoader(server, Samples(server.proxy), batch_size=2, num_workers=0)
    first.ensure_server_listening()
    server.stop_thread()
    second = dali_proxy.DataLoader(server, Samples(server.proxy), batch_size=2, num_workers=0)
    second.ensure_server_listening()
    assert server.is_thread_running()
    first.__del__()  # what the collector does, at whatever moment it comes
    assert server.is_thread_running()
    second.__del__()
    assert not server.is_thread_running()
