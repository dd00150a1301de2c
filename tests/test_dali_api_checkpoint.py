"""DALI's checkpointing API over state_dict: a restored pipeline (or iterator) gives the batches
the original gives next; checkpoints are read as untrusted input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, SerializationError
from torch_dali.plugin.pytorch import DALIGenericIterator


def _source(info):
    if info.iteration >= 3:
        raise StopIteration
    return [np.asarray([info.epoch_idx, info.iteration, i]) for i in range(2)]


@pipeline_def(batch_size=2, num_threads=2, device_id=None, enable_checkpointing=True)
def _pipe():
    return fn.external_source(source=_source, batch=True, batch_info=True), fn.random.uniform(range=[0, 1])


def _step(p):
    try:
        return p.run()
    except StopIteration:
        p.reset()
        return p.run()


@pytest.mark.parametrize("warmup", [0, 2, 4])
def test_restored_pipeline_continues(warmup, tmp_path):
    p1 = _pipe()  # no seed: the restored pipeline must use the one drawn here
    for _ in range(warmup):
        _step(p1)
    path = tmp_path / "cpt.json"
    p2 = _pipe(checkpoint=p1.checkpoint(filename=str(path)))
    assert p2.is_restored_from_checkpoint and path.read_text() == p1.checkpoint()
    for _ in range(7):
        a, b = _step(p1), _step(p2)
        for x, y in zip(a, b):
            assert np.array_equal(x.as_array(), y.as_array())


def test_iterator_checkpoints():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, enable_checkpointing=True)
    def p():
        return fn.random.uniform()

    it = DALIGenericIterator(p(), ["x"], size=100)
    before = it.checkpoints()  # before any batch was taken: where it started
    for _ in range(3):
        next(it)
    it2 = DALIGenericIterator(p(checkpoint=it.checkpoints()[0]), ["x"], size=100)
    it3 = DALIGenericIterator(p(checkpoint=it2.checkpoints()[0]), ["x"], size=100)
    fresh = DALIGenericIterator(p(checkpoint=before[0]), ["x"], size=100)
    assert float(next(fresh)[0]["x"]) == float(next(DALIGenericIterator(p(checkpoint=before[0]), ["x"],
                                                                         size=100))[0]["x"])
    for _ in range(4):
        assert float(next(it)[0]["x"]) == float(next(it2)[0]["x"]) == float(next(it3)[0]["x"])


def test_checkpoint_errors():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def plain():
        return fn.random.uniform()
    with pytest.raises(ArgumentError, match="enable_checkpointing"):
        plain().checkpoint()
    for bad in ("not json", '{"torch_dali_checkpoint": 9, "state": {}}', '{"torch_dali_checkpoint": 1, "state": 3}',
                b"\xff\xfe", '{"torch_dali_checkpoint": 1, "state": {}, "seeds": {"a": "x"}}'):
        with pytest.raises(SerializationError):
            _pipe(checkpoint=bad)


def test_sources_whose_state_cannot_be_captured_warn():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, enable_checkpointing=True)
    def p(src):
        return fn.external_source(source=src, batch=False)

    for src in (iter([np.array(1)]), [np.array(1)], lambda: np.array(42)):
        with pytest.warns(RuntimeWarning, match="does not capture the state"):
            p(src).build()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p(lambda info: np.array(info.idx_in_epoch)).build()


def test_edited_checkpoints_are_errors_not_crashes(tmp_path):
    """A checkpoint is a file: values of the wrong type or out of range (found by mutating the JSON
    of a real checkpoint) are torch_dali errors naming the checkpoint, never a ValueError or an
    OverflowError from deep inside the reader or the user's source."""
    import json
    from PIL import Image
    from torch_dali.errors import TorchDaliError
    for i in range(4):
        (tmp_path / "c").mkdir(exist_ok=True)
        Image.fromarray(np.full((4, 4, 3), i * 40, np.uint8)).save(tmp_path / "c" / f"{i}.png")

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3, enable_checkpointing=True)
    def p():
        j, _ = fn.readers.file(file_root=str(tmp_path), random_shuffle=True, name="R")
        e = fn.external_source(lambda info: np.array([info.iteration], np.int32), batch=False)
        return j, e

    pipe = p()
    pipe.run()
    good = json.loads(pipe.checkpoint())
    es = next(k for k in good["state"]["ops"] if "ExternalSource" in k)
    edits = [("seeds", "R", 2 ** 64), ("seeds", "R", 10 ** 30), (("state", "ops", "R"), "epoch", "x"),
             (("state", "ops", "R"), "epoch", 2 ** 40), (("state", "ops", "R"), "position", ""),
             (("state", "ops", es), "iteration", 2 ** 64), ("state", "iteration", 10 ** 30)]
    for path, key, value in edits:
        doc = json.loads(json.dumps(good))
        node = doc
        for k in (path if isinstance(path, tuple) else (path,)):
            node = node[k]
        node[key] = value
        with pytest.raises(TorchDaliError):
            q = p(checkpoint=json.dumps(doc))
            q.build()
            q.run()


def test_iterator_restored_at_an_epochs_end_is_empty_until_reset(tmp_path):
    """DALI 2.4 (checkpointing test_reset): a checkpoint taken after a whole epoch, before reset(),
    restores an iterator that is empty (next() raises StopIteration) until reset(), then reads
    the next epoch; a checkpoint taken after reset() reads at once. torch_dali refused the first
    with 'the pipeline has no data'. Measured on DALI 2.4 with a 32-file folder: the same."""
    (tmp_path / "0").mkdir()
    for i in range(3):
        (tmp_path / "0" / f"{i}.jpg").write_bytes(bytes([i]) * (i + 1))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, enable_checkpointing=True)
    def pipe():
        data, _ = fn.readers.file(file_root=str(tmp_path), name="Reader")
        return data

    def make(p):
        return DALIGenericIterator(p, output_map=["data"], auto_reset=False, reader_name="Reader")

    def take(it):
        try:
            return next(it)[0]["data"].numel()
        except StopIteration:
            return None

    it = make(pipe())
    assert sum(1 for _ in it) == 3
    before = it.checkpoints()[0]
    it.reset()
    after = it.checkpoints()[0]
    restored = make(pipe(checkpoint=before))
    assert [take(restored), take(restored)] == [None, None]
    restored.reset()
    assert take(restored) == 1
    assert take(make(pipe(checkpoint=after))) == 1


def test_a_checkpoint_of_another_pipeline_is_refused(tmp_path):
    """DALI 2.4 refuses a checkpoint naming an op the pipeline lacks, or lacking one it has (checked
    with a file reader named "R" restored into one named "Z", and into one with one more random op).
    torch_dali applied it by name: the reader silently started over, extra ops drew fresh seeds."""
    from torch_dali.errors import SerializationError
    (tmp_path / "0").mkdir()
    for i in range(3):
        (tmp_path / "0" / f"{i}.jpg").write_bytes(bytes([i]) * 4)

    def make(name, extra=False, checkpoint=None):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1, enable_checkpointing=True)
        def p():
            data, _ = fn.readers.file(file_root=str(tmp_path), name=name)
            return (data, fn.random.uniform(), fn.random.normal()) if extra else (data, fn.random.uniform())
        return p(checkpoint=checkpoint)

    first = make("R")
    first.run()
    ck = first.checkpoint()
    for other, match in ((make("Z", checkpoint=ck), "saved op 'R'"),
                         (make("R", extra=True, checkpoint=ck), "nothing for op '__Normal")):
        with pytest.raises(SerializationError, match=match):
            other.build()
    import json
    doc = json.loads(ck)
    doc["state"]["ops"] = {}  # the reader's position dropped: it would restart at sample 0
    with pytest.raises(SerializationError, match="no state for op 'R'"):
        make("R", checkpoint=json.dumps(doc)).build()
    same = make("R", checkpoint=ck)
    assert np.array_equal(same.run()[0].as_array(), first.run()[0].as_array())
