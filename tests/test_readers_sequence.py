"""readers.sequence against DALI 2.4: tests/reference/sequence_reader_tables.npz (made once by
`/work/dali-venv/bin/python -m tests.reference.sequence_reader_ref`) holds a stream tree's files
and DALI's batches, reader_meta and refusals for each case of tests/reference/sequence_reader_ref.py
(lengths, step, stride, RGB / BGR / GRAY, shards, padding)."""
from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from reference import sequence_reader_ref as R
from torch_dali import fn, ops, pipeline_def, types


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, np.ndarray]:
    with np.load(R.TABLES) as z:
        return {k: z[k] for k in z.files}


def _text(key: str) -> str:
    return bytes(_tables()[key]).decode()


@pytest.fixture
def tree(tmp_path):
    files = {k: bytes.fromhex(v) for k, v in json.loads(_text("files")).items()}
    R.write_tree(tmp_path, files)
    return tmp_path


def _pipe(root, args, bs):
    kw = dict(args)
    if "image_type" in kw:
        kw["image_type"] = getattr(types, kw["image_type"])

    @pipeline_def(batch_size=bs, num_threads=1, device_id=None)
    def pipe():
        return fn.readers.sequence(file_root=str(root), name="r", **kw)

    p = pipe()
    p.build()
    return p


@pytest.mark.parametrize("name", list(R.CASES))
def test_matches_dali(tree, name):
    args, bs, batches = R.CASES[name]
    p = _pipe(tree, args, bs)
    assert p.reader_meta("r") == json.loads(_text(f"{name}/meta"))
    for b in range(batches):
        (out,) = p.run()
        assert out.layout() == "FHWC"
        for i in range(bs):
            got, want = out[i].numpy(), _tables()[f"{name}/{b}/{i}"]
            assert got.dtype == want.dtype and got.shape == want.shape, (name, b, i, got.shape, want.shape)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} batch {b} sample {i}")


@pytest.mark.parametrize("name", list(R.ERRORS))
def test_refuses_what_dali_refuses(tree, name):
    assert _text(f"error/{name}") != "no error"
    with pytest.raises(RuntimeError):
        _pipe(tree, R.ERRORS[name], 2).run()


def test_frames_of_different_shapes_fail(tree):
    from PIL import Image
    Image.fromarray(np.zeros((7, 6, 3), np.uint8)).save(tree / "b" / "001.png")
    p = _pipe(tree, {"sequence_length": 2}, 8)
    with pytest.raises(RuntimeError, match="differ in shape"):
        p.run()


def test_names_and_missing_root(tree, tmp_path):
    assert ops.readers.Sequence is not None and ops.SequenceReader is not None

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def legacy():
        return fn.sequence_reader(file_root=str(tree), sequence_length=3)  # DALI's old name

    with pytest.warns(DeprecationWarning):
        p = legacy()
    p.build()
    (out,) = p.run()
    np.testing.assert_array_equal(out[1].numpy(), _tables()["len3/0/1"])
    with pytest.raises(RuntimeError):
        _pipe(tmp_path / "nope", {"sequence_length": 1}, 1)
