"""Dynamic mode: ndd.ExternalSource, ndd.checkpoint (reader and RNG states), one EvalContext per
thread. Behaviour measured with DALI 2.4's dynamic mode (CPU) on the same calls."""
import json
import threading

import numpy as np
import pytest

import torch_dali.experimental.dynamic as ndd


def _files(tmp_path, n=10):
    lines = []
    for i in range(n):
        (tmp_path / f"f{i}.bin").write_bytes(bytes([i]) * (i + 1))
        lines.append(f"f{i}.bin {i}")
    (tmp_path / "list.txt").write_text("\n".join(lines) + "\n")
    return dict(file_root=str(tmp_path), file_list=str(tmp_path / "list.txt"))


def _labels(batch):
    return [int(np.asarray(t)[0]) for t in batch[1].tensors]


def test_external_source_sources_and_outputs():
    es = ndd.ExternalSource([np.full((2, 2), i) for i in range(2)], cycle="raise")
    assert isinstance(es(), ndd.Tensor) and int(np.asarray(es())[0, 0]) == 1
    with pytest.raises(StopIteration):
        es()
    assert int(np.asarray(es())[0, 0]) == 0  # restarted after the raise
    b = ndd.ExternalSource(lambda: np.arange(3))(batch_size=4)
    assert isinstance(b, ndd.Batch) and b.batch_size == 4
    with pytest.raises(ValueError, match="expected batch size 5"):
        ndd.ExternalSource(lambda: ndd.batch([np.zeros(2)] * 2))(batch_size=5)
    a, c = ndd.ExternalSource(lambda: (np.zeros((4, 4, 3)), np.zeros(3)), num_outputs=2,
                              layout=["HWC", None], dtype=[None, ndd.int32])()
    assert a.layout == "HWC" and c.dtype == ndd.int32
    with pytest.raises(ValueError, match="expected 2 outputs"):
        ndd.ExternalSource(lambda: (np.zeros(2),), num_outputs=2)()
    with pytest.raises(ValueError, match="no parameters"):
        ndd.ExternalSource(lambda info: 0)
    with pytest.raises(ValueError, match="cycle"):
        ndd.ExternalSource(lambda: 0, cycle=True)


def test_eval_context_one_thread_at_a_time():
    ctx = ndd.EvalContext()
    errors = []
    entered, release = threading.Event(), threading.Event()

    def hold():
        with ctx:
            entered.set()
            release.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    entered.wait(5)
    try:
        with ctx:
            pass
    except RuntimeError as e:
        errors.append(e)
    release.set()
    t.join()
    assert len(errors) == 1 and "EvalContext" in str(errors[0])
    with ctx:  # free again, and re-entrant in one thread
        with ctx:
            assert ndd.EvalContext.current() is ctx


def test_checkpoint_rng_roundtrip_and_files(tmp_path):
    rng = ndd.random.RNG(seed=42)
    rng()
    ckpt = ndd.checkpoint.Checkpoint()
    assert ckpt.register(rng) == "__op_0"
    ckpt.collect()
    payload = json.loads(ckpt.serialize())
    assert payload["version"] == 2 and payload["states"]["__op_0"]["type"] == "RNG"
    expected = [rng() for _ in range(3)]
    pattern = str(tmp_path / "ck_{seq:03d}.json")
    assert ckpt.save(pattern) != ckpt.save(pattern)
    other = ndd.checkpoint.Checkpoint()
    assert other.load(pattern).endswith("ck_001.json")
    rng2 = ndd.random.RNG(seed=7)
    other.register(rng2)
    assert [rng2() for _ in range(3)] == expected
    with pytest.raises(KeyError, match="no state"):
        other.register(ndd.random.RNG(seed=1))
    with pytest.raises(ValueError, match="seq"):
        other.save(str(tmp_path / "plain.json"))
    assert ndd.checkpoint.current() is ndd.EvalContext.current().checkpoint


def test_reader_state_resumes(tmp_path):
    kw = _files(tmp_path)
    ref = ndd.readers.File(**kw, random_shuffle=True, enable_checkpointing=True)
    with pytest.raises(RuntimeError, match="before its first iteration"):
        ref.get_state()
    it = ref.next_epoch(batch_size=3)
    next(it)
    state = ref.get_state()
    rest = [_labels(b) for b in it]
    following = [_labels(b) for b in ref.next_epoch(batch_size=3)]
    with pytest.raises(RuntimeError, match="after iteration has begun"):
        ref.set_state(state)
    restored = ndd.readers.File(**kw, random_shuffle=True)
    restored.set_state(str(state))
    assert [_labels(b) for b in restored.next_epoch(batch_size=3)] == rest
    assert [_labels(b) for b in restored.next_epoch(batch_size=3)] == following
    with pytest.raises(TypeError, match="ReaderState"):
        ndd.readers.File(**kw).set_state(42)
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(ndd.random.RNG(seed=1), "x")
    with pytest.raises(TypeError, match="Cannot replace operator"):
        ckpt.register(ndd.readers.File(**kw), "x")


def test_reader_state_needs_checkpointing_switched_on(tmp_path):
    """DALI 2.4: get_state() of a reader made without enable_checkpointing=True is a RuntimeError
    (after the first iteration; before it, the no-state one); Checkpoint.register and set_state
    switch it on before the first iteration, register after it is a RuntimeError; capture mode
    and checkpointing exclude each other (NotImplementedError both ways)."""
    kw = _files(tmp_path)
    for made in (ndd.readers.File(**kw), ndd.readers.File(**kw, enable_checkpointing=False)):
        with pytest.raises(RuntimeError, match="before its first iteration"):
            made.get_state()
        next(made.next_epoch(batch_size=2))
        with pytest.raises(RuntimeError, match="without checkpointing"):
            made.get_state()
        with pytest.raises(RuntimeError, match="before the first iteration"):
            ndd.checkpoint.Checkpoint().register(made, "late")
    registered = ndd.readers.File(**kw)
    ndd.checkpoint.Checkpoint().register(registered, "r")
    next(registered.next_epoch(batch_size=2))
    state = registered.get_state()
    restored = ndd.readers.File(**kw)
    restored.set_state(state)
    next(restored.next_epoch(batch_size=2))
    assert json.loads(str(restored.get_state()))["consumed"] == 4
    with pytest.raises(NotImplementedError):
        next(ndd.readers.File(**kw, enable_checkpointing=True).next_epoch(batch_size=2, capture=True))
    captured = ndd.readers.File(**kw)
    next(captured.next_epoch(batch_size=2, capture=True))
    with pytest.raises(NotImplementedError):
        ndd.checkpoint.Checkpoint().register(captured, "c")
    with pytest.raises(RuntimeError, match="without checkpointing"):
        captured.get_state()


_RESUME_FAR = """
import json, resource, sys
import torch_dali.experimental.dynamic as ndd
root = sys.argv[1]
kw = dict(file_root=root, file_list=root + "/list.txt")
ref = ndd.readers.File(**kw, enable_checkpointing=True)
next(ref.next_epoch(batch_size=4))
state = json.loads(str(ref.get_state()))
state["consumed"] = 4000  # 400 epochs of ten 100 kB files
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
restored = ndd.readers.File(**kw)
restored.set_state(json.dumps(state))
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
labels = [int(t.item()) for t in next(restored.next_epoch(batch_size=4))[1].tensors]
print(json.dumps({"grown_kb": grown, "labels": labels}))
"""


def test_reader_resumes_far_without_holding_the_skipped_samples(tmp_path):
    """A restored reader replays the `consumed` samples of its state: they were all taken into one
    list first, so resuming after 4,000 samples of 100 kB held 400 MB (20,000: 2.4 GB), and the
    count comes from a checkpoint file. Now one batch at a time. In a child, for its peak memory."""
    import subprocess
    import sys
    from pathlib import Path
    lines = []
    for i in range(10):
        (tmp_path / f"f{i}.bin").write_bytes(bytes([i]) * 100_000)
        lines.append(f"f{i}.bin {i}")
    (tmp_path / "list.txt").write_text("\n".join(lines) + "\n")
    r = subprocess.run([sys.executable, "-c", _RESUME_FAR, str(tmp_path)], capture_output=True, text=True,
                       timeout=300, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["labels"] == [0, 1, 2, 3]  # 4000 = 400 whole epochs: the next batch starts an epoch
    assert out["grown_kb"] < 100_000, out  # was ~400,000


@pytest.mark.parametrize("consumed", [-1, "12", 1.5, True])
def test_reader_state_consumed_must_be_a_count(tmp_path, consumed):
    kw = _files(tmp_path)
    ref = ndd.readers.File(**kw, enable_checkpointing=True)
    next(ref.next_epoch(batch_size=2))
    state = json.loads(str(ref.get_state()))
    state["consumed"] = consumed
    with pytest.raises(ValueError, match="`consumed` must be a non-negative integer"):
        ndd.readers.File(**kw).set_state(json.dumps(state))


_LOAD = """
import sys
import torch_dali.experimental.dynamic as ndd
try:
    ndd.checkpoint.Checkpoint().load(sys.argv[1])
    print("loaded")
except ValueError as e:
    print("ValueError:", e)
"""


@pytest.mark.parametrize("kind,says", [("fifo", "is not a regular file"), ("deep", "nested too deeply"),
                                       ("binary", "is not UTF-8 text")])
def test_checkpoint_load_refuses_hostile_files(tmp_path, kind, says):
    """Checkpoint.load read the newest matching file with open(): a FIFO in its place blocked for
    ever, and JSON nested 100,000 deep raised RecursionError. Now a regular file of at most 64 MiB,
    and a ValueError naming the problem. In a child with a timeout."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    path = tmp_path / "ck_007.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    else:
        path.write_bytes(b"\xff\xfe{}")
    r = subprocess.run([sys.executable, "-c", _LOAD, str(tmp_path / "ck_{seq:03d}.json")], capture_output=True,
                       text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 0 and says in r.stdout, (r.stdout, r.stderr[-1500:])
