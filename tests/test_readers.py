"""readers.file and readers.mxnet. Expected values marked "DALI 2.4" were read off DALI's own
readers on the same layouts (CPU backend) and are recorded here as facts."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
import torch
from torch.utils.data import DistributedSampler

from torch_dali import fn, ops, pipeline_def
from torch_dali.errors import ArgumentError, DataError, GraphError, PipelineError
from torch_dali.io.recordio import write_recordio


def _pipe(reader, bs=3, threads=2, pipe_seed=1, exec_async=True, **kw):
    @pipeline_def(batch_size=bs, num_threads=threads, device_id=None, seed=pipe_seed,
                  exec_async=exec_async)
    def p():
        data, labels = reader(name="R", **kw)
        return data, labels
    pipe = p()
    pipe.build()
    return pipe


def _texts(tl) -> list[str]:
    return [bytes(tl.at(i)).decode() for i in range(len(tl))]


def _batches(pipe, n: int) -> list[list[str]]:
    return [_texts(pipe.run()[0]) for _ in range(n)]


@pytest.fixture()
def flat(tmp_path):
    """Ten files s0..s9 whose content is their name."""
    d = tmp_path / "flat"
    d.mkdir()
    for i in range(10):
        (d / f"s{i}").write_text(f"s{i}")
    return [str(d / f"s{i}") for i in range(10)]


@pytest.fixture()
def tree(tmp_path):
    """A class-per-folder tree with the corner cases DALI's listing has rules for."""
    root = tmp_path / "tree"
    files = ["b_cls/z.jpg", "b_cls/a.JPG", "b_cls/m.png", "b_cls/sub/deep.jpg", "b_cls/x.txt",
             "b_cls/n.Jpg", "b_cls/.hidden.jpg", "a_cls/2.jpeg", "a_cls/10.jpeg", "a_cls/1.bmp",
             "c_cls/only.webp", "root.jpg", "A_upper/q.jpg", "a/x.jpg", "a-b/y.jpg"]
    for f in files:
        p = root / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f)
    (root / "0empty").mkdir()
    return str(root)


# -- readers.file: listing -------------------------------------------------------------------------

def test_file_root_listing_and_labels(tree):
    pipe = _pipe(fn.readers.file, bs=12, file_root=tree)
    data, labels = pipe.run()
    # DALI 2.4: class folders sorted by name (bytewise; empty ones count for labels), files sorted
    # within a class, no recursion, files in file_root skipped, extensions case-insensitive
    assert _texts(data) == ["A_upper/q.jpg", "a/x.jpg", "a-b/y.jpg", "a_cls/1.bmp", "a_cls/10.jpeg",
                            "a_cls/2.jpeg", "b_cls/.hidden.jpg", "b_cls/a.JPG", "b_cls/m.png",
                            "b_cls/n.Jpg", "b_cls/z.jpg", "c_cls/only.webp"]
    assert [int(labels.at(i)[0]) for i in range(12)] == [1, 2, 3, 4, 4, 4, 5, 5, 5, 5, 5, 6]
    lab = labels.at(0)
    assert lab.dtype == np.int32 and lab.shape == (1,)  # DALI 2.4: int32, shape (1,)
    d = data.at(0)
    assert d.dtype == np.uint8 and d.shape == (len("A_upper/q.jpg"),)
    assert pipe.epoch_size("R") == 12
    assert ops.readers.File is not None and ops.FileReader is not None


def test_file_filters_and_dir_filters(tree):
    pipe = _pipe(fn.readers.file, bs=3, file_root=tree, file_filters=["*.jpg"], case_sensitive_filter=True)
    assert pipe.epoch_size("R") == 5
    pipe = _pipe(fn.readers.file, bs=3, file_root=tree, file_filters="*.jpg")
    assert pipe.epoch_size("R") == 7
    pipe = _pipe(fn.readers.file, bs=6, file_root=tree, dir_filters=["b*"])
    data, labels = pipe.run()  # DALI 2.4: labels count only the folders that pass dir_filters
    assert _texts(data)[:2] == ["b_cls/.hidden.jpg", "b_cls/a.JPG"]
    assert {int(labels.at(i)[0]) for i in range(6)} == {0}


def test_file_list(tmp_path):
    d = tmp_path / "fl"
    d.mkdir()
    (d / "a b.jpg").write_text("x")
    (d / "c.jpg").write_text("y")
    (d / "list.txt").write_text("c.jpg\t2\n\na b.jpg   7\nc.jpg 0")
    pipe = _pipe(fn.readers.file, bs=3, file_list=str(d / "list.txt"))
    data, labels = pipe.run()
    assert _texts(data) == ["y", "x", "y"]  # list order, not sorted
    assert [int(labels.at(i)[0]) for i in range(3)] == [2, 7, 0]
    (tmp_path / "other.txt").write_text("c.jpg 5\n")  # relative to file_root when given
    pipe = _pipe(fn.readers.file, bs=1, file_list=str(tmp_path / "other.txt"), file_root=str(d))
    assert _texts(pipe.run()[0]) == ["y"]


@pytest.mark.parametrize("line, match", [
    ("missing.jpg 2", r"list\.txt, line 2 .*missing\.jpg does not exist"),
    ("c.jpg x", r"list\.txt, line 2 .*label must be a non-negative integer, got 'x'"),
    ("c.jpg -2", r"line 2 .*non-negative integer, got '-2'"),
    ("c.jpg", r"line 2 .*expected 'path label'"),
    # int() of 4300+ digits raised ValueError out of the listing (no file, no line, never skipped)
    ("c.jpg " + "9" * 5000, r"line 2 .*does not fit the int32 label output"),
])
def test_file_list_errors(tmp_path, line, match):
    (tmp_path / "c.jpg").write_text("y")
    (tmp_path / "list.txt").write_text(f"c.jpg 1\n{line}\n")
    with pytest.raises(DataError, match=match):
        _pipe(fn.readers.file, file_list=str(tmp_path / "list.txt"))


def test_file_list_label_of_leading_zeros(tmp_path):
    (tmp_path / "c.jpg").write_text("y")
    (tmp_path / "list.txt").write_text("c.jpg " + "0" * 5000 + "7\n")  # int() refused the 5001 digits
    _, labels = _pipe(fn.readers.file, bs=1, file_list=str(tmp_path / "list.txt")).run()
    assert int(labels.at(0)[0]) == 7


def test_files_and_labels(flat):
    root = os.path.dirname(flat[0])
    pipe = _pipe(fn.readers.file, bs=3, files=["s2", "s0", "s1"], file_root=root)
    data, labels = pipe.run()
    assert _texts(data) == ["s2", "s0", "s1"]
    assert [int(labels.at(i)[0]) for i in range(3)] == [0, 1, 2]  # default: the position
    pipe = _pipe(fn.readers.file, bs=3, files=["s2", "s0", "s1"], file_root=root, labels=[5, 6, 7])
    assert [int(x[0]) for x in pipe.run()[1]] == [5, 6, 7]


def test_file_reader_errors(tmp_path, flat):
    with pytest.raises(DataError, match=r"`file_root` .*nope is not a folder"):
        _pipe(fn.readers.file, file_root=str(tmp_path / "nope"))
    (tmp_path / "empty" / "cls").mkdir(parents=True)
    with pytest.raises(DataError, match="dataset is empty"):
        _pipe(fn.readers.file, file_root=str(tmp_path / "empty"))
    with pytest.raises(ArgumentError, match="one entry per file"):
        _pipe(fn.readers.file, files=flat[:2], labels=[1])
    with pytest.raises(ArgumentError, match="cannot be used together"):
        _pipe(fn.readers.file, files=flat[:2], file_list="x.txt")
    with pytest.raises(DataError, match=r"missing\.jpg \(from `files`\) does not exist"):
        _pipe(fn.readers.file, files=[str(tmp_path / "missing.jpg")])
    with pytest.raises(ArgumentError, match="`shard_id` must be < num_shards"):
        _pipe(fn.readers.file, files=flat, shard_id=1, num_shards=1)
    with pytest.raises(ArgumentError, match=r"`num_shards` \(4\) must not exceed .* \(3\)"):
        _pipe(fn.readers.file, files=flat[:3], num_shards=4, shard_id=3)
    with pytest.raises((ArgumentError, GraphError), match="shuffle_after_epoch"):
        _pipe(fn.readers.file, files=flat, random_shuffle=True, shuffle_after_epoch=True)


def test_missing_file_at_run_names_it(flat):
    pipe = _pipe(fn.readers.file, bs=2, files=flat[:2], exec_async=False)
    os.remove(flat[1])
    with pytest.raises(PipelineError, match=r"cannot read .*s1"):
        pipe.run()


# -- sharding, epochs and padding (DALI 2.4 facts) ------------------------------------------------

S = [f"s{i}" for i in range(10)]


@pytest.mark.parametrize("kw, bs, expected", [
    # stick_to_shard=False: shard (r + epoch) % R; the stream runs on across epochs
    (dict(num_shards=3, shard_id=0), 3, ["s0 s1 s2", "s3 s4 s5", "s6 s7 s8", "s9 s0 s1", "s2 s3 s4"]),
    (dict(num_shards=3, shard_id=2), 3, ["s6 s7 s8", "s9 s0 s1", "s2 s3 s4", "s5 s6 s7", "s8 s9 s0"]),
    # pad_last_batch: shard padded to ceil(n/R) and its last batch filled, both with its last sample
    (dict(num_shards=3, shard_id=0, pad_last_batch=True), 3,
     ["s0 s1 s2", "s2 s2 s2", "s3 s4 s5", "s5 s5 s5", "s6 s7 s8"]),
    (dict(num_shards=3, shard_id=1, pad_last_batch=True), 3,
     ["s3 s4 s5", "s5 s5 s5", "s6 s7 s8", "s9 s9 s9", "s0 s1 s2"]),
    (dict(num_shards=4, shard_id=0, pad_last_batch=True), 4, ["s0 s1 s1 s1", "s2 s3 s4 s4", "s5 s6 s6 s6"]),
    (dict(num_shards=4, shard_id=1, pad_last_batch=True), 2, ["s2 s3", "s4 s4", "s5 s6", "s6 s6"]),
    (dict(pad_last_batch=True), 3, ["s0 s1 s2", "s3 s4 s5", "s6 s7 s8", "s9 s9 s9", "s0 s1 s2"]),
    (dict(num_shards=3, shard_id=2, stick_to_shard=True), 3, ["s6 s7 s8", "s9 s6 s7", "s8 s9 s6"]),
    (dict(num_shards=3, shard_id=0, stick_to_shard=True, pad_last_batch=True), 3,
     ["s0 s1 s2", "s2 s2 s2", "s0 s1 s2"]),
])
def test_sharding_matches_dali(flat, kw, bs, expected):
    pipe = _pipe(fn.readers.file, bs=bs, files=flat, **kw)
    assert [" ".join(b) for b in _batches(pipe, len(expected))] == expected


def test_shard_of_seven_padded(flat):
    pipe = _pipe(fn.readers.file, bs=5, files=flat[:7], num_shards=4, shard_id=3, pad_last_batch=True)
    assert _batches(pipe, 2) == [["s5", "s6", "s6", "s6", "s6"], ["s0"] * 5]  # DALI 2.4
    assert pipe.reader_meta("R") == {"epoch_size": 7, "epoch_size_padded": 8, "number_of_shards": 4,
                                     "shard_id": 3, "pad_last_batch": 1, "stick_to_shard": 0}
    assert pipe.epoch_size("R") == 8  # DALI 2.4: the padded size


def test_meta_without_padding(flat):
    pipe = _pipe(fn.readers.file, files=flat, num_shards=3, shard_id=1, stick_to_shard=True)
    assert pipe.reader_meta() == {"R": {"epoch_size": 10, "epoch_size_padded": 10, "number_of_shards": 3,
                                        "shard_id": 1, "pad_last_batch": 0, "stick_to_shard": 1}}
    assert pipe.epoch_size() == {"R": 10}
    pipe = _pipe(fn.readers.file, files=flat, shuffle_after_epoch=True)
    assert pipe.reader_meta("R")["stick_to_shard"] == 1  # DALI 2.4 reports shards as fixed


# -- shuffling --------------------------------------------------------------------------------------

def test_shuffle_is_seeded_thread_independent_and_per_epoch(flat):
    one = _batches(_pipe(fn.readers.file, bs=5, threads=1, files=flat, random_shuffle=True), 6)
    two = _batches(_pipe(fn.readers.file, bs=5, threads=2, files=flat, random_shuffle=True), 6)
    assert one == two
    epochs = [one[0] + one[1], one[2] + one[3], one[4] + one[5]]
    for e in epochs:
        assert sorted(e) == sorted(S)  # a permutation: every sample once per epoch
    assert epochs[0] != epochs[1] and epochs[1] != epochs[2] and epochs[0] != S
    other = _batches(_pipe(fn.readers.file, bs=5, files=flat, random_shuffle=True, pipe_seed=2), 2)
    assert other[0] + other[1] != epochs[0]


@pytest.mark.parametrize("n, shards", [(10, 3), (12, 4), (7, 2)])
def test_shards_equal_distributed_sampler(flat, tmp_path, n, shards):
    files = [str(tmp_path / f"f{i}") for i in range(n)]
    for i, f in enumerate(files):
        with open(f, "w") as fh:
            fh.write(str(i))
    per_rank = math.ceil(n / shards)
    seed = 1234
    for rank in range(shards):
        sampler = DistributedSampler(range(n), num_replicas=shards, rank=rank, shuffle=True, seed=seed)
        # one batch = one epoch of this rank, so batch e holds epoch e's indices in order
        pipe = _pipe(fn.readers.file, bs=per_rank, files=files, random_shuffle=True, seed=seed,
                     num_shards=shards, shard_id=rank)
        for epoch in range(3):
            sampler.set_epoch(epoch)
            got = [int(x) for x in _texts(pipe.run()[0])]
            assert got == list(sampler), (rank, epoch)


def test_ranks_share_the_derived_seed(flat):
    """Without an explicit reader seed, ranks built from the same pipeline seed split each epoch."""
    ranks = [_batches(_pipe(fn.readers.file, bs=5, files=flat, random_shuffle=True, num_shards=2,
                            shard_id=r, pipe_seed=7), 2) for r in range(2)]
    for epoch in range(2):
        assert sorted(ranks[0][epoch] + ranks[1][epoch]) == sorted(S)


def test_stick_to_shard_shuffles_within_shard(flat):
    pipe = _pipe(fn.readers.file, bs=5, files=flat, random_shuffle=True, stick_to_shard=True,
                 num_shards=2, shard_id=1)
    epochs = _batches(pipe, 3)
    assert all(sorted(e) == S[5:] for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1


def test_shuffle_after_epoch_keeps_contiguous_shards(flat):
    a = _batches(_pipe(fn.readers.file, bs=5, files=flat, shuffle_after_epoch=True, num_shards=2,
                       shard_id=0), 2)
    b = _batches(_pipe(fn.readers.file, bs=5, files=flat, shuffle_after_epoch=True, num_shards=2,
                       shard_id=1, seed=99), 2)  # the op seed does not matter: a fixed default
    assert sorted(a[0] + b[0]) == sorted(S) and sorted(a[1] + b[1]) == sorted(S)
    assert a[0] + b[0] != a[1] + b[1]


# -- resumable state ------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(random_shuffle=True), dict(num_shards=3, shard_id=1, pad_last_batch=True),
                                dict(random_shuffle=True, num_shards=2, shard_id=1, pad_last_batch=True)])
def test_state_dict_resumes_mid_epoch(flat, kw):
    pipe = _pipe(fn.readers.file, bs=4, files=flat, **kw)
    _batches(pipe, 4)  # crosses an epoch boundary
    state = pipe.state_dict()
    want = _batches(pipe, 5)
    again = _pipe(fn.readers.file, bs=4, files=flat, **kw)
    again.load_state_dict(state)
    assert _batches(again, 5) == want


def test_state_from_another_dataset_is_refused(flat):
    pipe = _pipe(fn.readers.file, bs=4, files=flat)
    pipe.run()
    state = pipe.state_dict()
    other = _pipe(fn.readers.file, bs=4, files=flat[:5])
    with pytest.raises(DataError, match="dataset of 10 samples"):
        other.load_state_dict(state)


def test_last_sources_and_writable_buffers(flat):
    pipe = _pipe(fn.readers.file, bs=2, files=flat, exec_async=False)
    data, _ = pipe.run()
    reader = pipe.executor.plan.readers()[0][1]
    assert reader.last_sources == flat[:2]
    t = data[0]
    assert isinstance(t, torch.Tensor) and t.dtype == torch.uint8 and t.dim() == 1
    t[0] = 0  # the buffer is the sample's own memory


# -- readers.mxnet -------------------------------------------------------------------------------

ITEMS = [(3.0, b"abc"), ([1.0, 2.5], b"hello world!"), (7.0, b"xxxx\x0a\x23\xd7\xceyy"), ([4.0], b"z"),
         (2.0, b"wxyz\x0a\x23\xd7\xce"), (5.0, b"\x0a\x23\xd7\xceq"), (6.0, b"")]


@pytest.fixture()
def rec(tmp_path):
    write_recordio(tmp_path / "a.rec", tmp_path / "a.idx", ITEMS)
    return str(tmp_path / "a.rec"), str(tmp_path / "a.idx")


@pytest.mark.parametrize("mmap", [True, False])
def test_mxnet_reads_records_and_labels(rec, mmap):
    pipe = _pipe(fn.readers.mxnet, bs=7, path=rec[0], index_path=[rec[1]], dont_use_mmap=not mmap)
    for _ in range(2):
        data, labels = pipe.run()
        assert [bytes(data.at(i)) for i in range(7)] == [p for _, p in ITEMS]
        got = [labels.at(i) for i in range(7)]
        # DALI 2.4: float32; shape (1,) for a header label, (flag,) for stored labels
        assert all(g.dtype == np.float32 for g in got)
        assert [g.tolist() for g in got] == [[3.0], [1.0, 2.5], [7.0], [4.0], [2.0], [5.0], [6.0]]
        assert data.at(0).dtype == np.uint8
    assert ops.MXNetReader is not None and ops.readers.MXNet is not None


def test_mxnet_sharding_and_padding(rec):
    pipe = _pipe(fn.readers.mxnet, bs=4, path=rec[0], index_path=rec[1], num_shards=2, shard_id=0,
                 pad_last_batch=True)
    data, labels = pipe.run()  # DALI 2.4: shard 0 = records 0..2, padded with record 2
    assert [bytes(data.at(i)) for i in range(4)] == [ITEMS[0][1], ITEMS[1][1], ITEMS[2][1], ITEMS[2][1]]
    assert pipe.reader_meta("R")["epoch_size_padded"] == 8


def test_mxnet_several_files(rec, tmp_path):
    size = os.path.getsize(rec[0])
    with open(rec[1]) as f:
        lines = f.read().split()
    offsets = [int(x) for x in lines[1::2]]
    # DALI 2.4: one .idx over the concatenated files, read in offset order (here written reversed)
    glob = tmp_path / "g.idx"
    glob.write_text("".join(f"{k}\t{o}\n" for k, o in reversed(list(enumerate(offsets + [o + size for o in offsets])))))
    pipe = _pipe(fn.readers.mxnet, bs=14, path=[rec[0], rec[0]], index_path=str(glob), exec_async=False)
    data, _ = pipe.run()
    assert [bytes(data.at(i)) for i in range(14)] == [p for _, p in ITEMS] * 2
    reader = pipe.executor.plan.readers()[0][1]
    assert reader.last_sources[0] == f"{rec[0]}#record 0" and reader.last_sources[13] == f"{rec[0]}#record 13"
    # an addition: one .idx per file
    pipe = _pipe(fn.readers.mxnet, bs=14, path=[rec[0], rec[0]], index_path=[rec[1], rec[1]])
    assert [bytes(x.numpy()) for x in pipe.run()[0]] == [p for _, p in ITEMS] * 2
    with pytest.raises(ArgumentError, match="one per file"):
        _pipe(fn.readers.mxnet, path=[rec[0]] * 3, index_path=[rec[1]] * 2)


ONE_LABEL = [(float(k) + 0.5, bytes([k]) * (k + 1)) for k in range(7)]


@pytest.mark.parametrize("shards", [1, 2])
def test_mxnet_one_label_batches_read_alike_mapped_or_not(tmp_path, shards):
    """Records with one header label each take the mapped batch path (labels gathered as one
    array); padding repeats a record. The same samples and labels as the record-by-record path."""
    write_recordio(tmp_path / "b.rec", tmp_path / "b.idx", ONE_LABEL)
    runs = {}
    for mmap in (True, False):
        pipe = _pipe(fn.readers.mxnet, bs=5, path=str(tmp_path / "b.rec"), index_path=str(tmp_path / "b.idx"),
                     dont_use_mmap=not mmap, random_shuffle=True, seed=3, num_shards=shards, shard_id=0,
                     pad_last_batch=True)
        got = []
        for _ in range(3):
            data, labels = pipe.run()
            assert labels.as_tensor().shape == (5, 1) and labels.as_tensor().dtype == torch.float32
            got.append([(bytes(data.at(i)), labels.at(i).tolist()) for i in range(5)])
        runs[mmap] = got
    assert runs[True] == runs[False]
    pairs = {p: [lab] for lab, p in ONE_LABEL}
    assert all(pairs[d] == lab for batch in runs[True] for d, lab in batch)
    if shards == 2:  # shard 0 holds 4 samples (shuffled as DistributedSampler), padded to 5 with its last
        assert len({d for d, _ in runs[True][0]}) == 4


def test_mxnet_shuffle_matches_distributed_sampler(rec):
    sampler = DistributedSampler(range(7), num_replicas=2, rank=1, shuffle=True, seed=5)
    pipe = _pipe(fn.readers.mxnet, bs=4, path=rec[0], index_path=rec[1], random_shuffle=True, seed=5,
                 num_shards=2, shard_id=1)
    payloads = [p for _, p in ITEMS]
    for epoch in range(2):
        sampler.set_epoch(epoch)
        data, _ = pipe.run()
        assert [payloads.index(bytes(data.at(i))) for i in range(4)] == list(sampler)


def test_mxnet_errors(rec, tmp_path):
    bad = tmp_path / "bad.rec"
    with open(rec[0], "rb") as f:
        good = f.read()
    bad.write_bytes(b"\0" * 4 + good[4:])
    pipe = _pipe(fn.readers.mxnet, bs=1, path=str(bad), index_path=rec[1], exec_async=False)
    with pytest.raises(PipelineError, match=r"bad\.rec, record 0 at byte 0: bad magic"):
        pipe.run()
    short = tmp_path / "short.rec"
    short.write_bytes(good[:40])
    with pytest.raises(DataError, match=r"a\.idx, line 2: offset \d+ is beyond the end"):
        _pipe(fn.readers.mxnet, path=str(short), index_path=rec[1])
    with pytest.raises(DataError, match=r"RecordIO file .*nope\.rec does not exist"):
        _pipe(fn.readers.mxnet, path=str(tmp_path / "nope.rec"), index_path=rec[1])
    empty = tmp_path / "empty.idx"
    empty.write_text("")
    with pytest.raises(DataError, match="lists no records"):
        _pipe(fn.readers.mxnet, path=rec[0], index_path=str(empty))


def test_mxnet_state_resume(rec):
    kw = dict(path=rec[0], index_path=rec[1], random_shuffle=True)
    pipe = _pipe(fn.readers.mxnet, bs=3, **kw)
    _batches_raw = [pipe.run() for _ in range(3)]
    state = pipe.state_dict()
    want = [[bytes(x.numpy()) for x in pipe.run()[0]] for _ in range(4)]
    again = _pipe(fn.readers.mxnet, bs=3, **kw)
    again.load_state_dict(state)
    assert [[bytes(x.numpy()) for x in again.run()[0]] for _ in range(4)] == want
    assert len(_batches_raw) == 3


def test_lazy_init_lists_on_first_use(tmp_path):
    root = tmp_path / "later"
    pipe = _pipe(fn.readers.file, bs=1, file_root=str(root), lazy_init=True, exec_async=False)
    with pytest.raises((DataError, PipelineError), match="later"):
        pipe.run()
    (root / "c").mkdir(parents=True)
    (root / "c" / "x.png").write_text("x")
    pipe = _pipe(fn.readers.file, bs=1, file_root=str(root), lazy_init=True)
    assert pipe.epoch_size("R") == 1 and _texts(pipe.run()[0]) == ["x"]
