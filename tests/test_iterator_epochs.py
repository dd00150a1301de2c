"""Which samples each epoch of a framework iterator hands out, as DALI 2.4's iterators hand them out.
The expected id lists were produced by DALI 2.4 (CPU) on the same reader setup
(conformance/epochs.py runs the whole matrix beside DALI)."""
from __future__ import annotations

import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("ep")
    out = []
    for i in range(17):
        p = d / f"s{i:03d}.jpg"
        p.write_bytes(b"%08d" % i)
        out.append(str(p))
    return out


def _pipe(files, n, bs, shards=1, shard=0, **reader):
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=1234)
    def p():
        return fn.readers.file(files=files[:n], labels=list(range(n)), name="Reader",
                               num_shards=shards, shard_id=shard, **reader)[1]
    return p()


def _epochs(it, count=3, reset=True):
    out = []
    for _ in range(count):
        out.append([d[0]["id"].flatten().tolist() for d in it])
        if reset:
            it.reset()
    return out


# size= without reader_name (DALI's older way). DALI 2.4 starts every DROP epoch afresh (its counter
# goes back to 0: the dropped batch does not count towards the next epoch) and carries FILL's
# overrun modulo the size; torch_dali carried `counter - size` in both, so DROP's later epochs
# came out a batch short (17 samples, batch 4: 3 batches instead of 4) or empty (10, batch 8).
SIZE_MODE_DALI_2_4 = [
    # n, batch, shards, size, policy, rank 0's ids per epoch
    (17, 4, 1, 17, "DROP", [[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]],
                            [[3, 4, 5, 6], [7, 8, 9, 10], [11, 12, 13, 14], [15, 16, 0, 1]],
                            [[6, 7, 8, 9], [10, 11, 12, 13], [14, 15, 16, 0], [1, 2, 3, 4]]]),
    (10, 8, 1, 10, "DROP", [[[0, 1, 2, 3, 4, 5, 6, 7]], [[6, 7, 8, 9, 0, 1, 2, 3]],
                            [[2, 3, 4, 5, 6, 7, 8, 9]]]),
    (10, 4, 2, 5, "DROP", [[[0, 1, 2, 3]], [[8, 9, 0, 1]], [[6, 7, 8, 9]]]),
    (10, 8, 3, 3, "FILL", [[[0, 1, 2, 3, 4, 5, 6, 7]], [[8, 9, 0, 1, 2, 3, 4, 5]],
                           [[6, 7, 8, 9, 0, 1, 2, 3]]]),
]


@pytest.mark.parametrize("n,bs,shards,size,policy,expected", SIZE_MODE_DALI_2_4)
@pytest.mark.parametrize("auto", [False, True])
@pytest.mark.filterwarnings("ignore::Warning")
def test_size_mode_epochs(files, n, bs, shards, size, policy, expected, auto):
    it = DALIGenericIterator([_pipe(files, n, bs, shards)], ["id"], size=size, auto_reset=auto,
                             last_batch_policy=getattr(LastBatchPolicy, policy))
    assert _epochs(it, reset=not auto) == expected


# Sharded random_shuffle reads torch's DistributedSampler split on purpose (conformance/on_purpose.md):
# ceil(n/R) samples on every rank, the permutation wrapped. The iterator counted DALI's contiguous
# shard sizes (3, 3, 4 for 10 samples on 3 ranks), so PARTIAL cut the 4th sample of two ranks, a
# sample no other rank read: 1 of 10 samples missing from every epoch.
# (Without pad_last_batch a batch that runs into the next epoch loses its tail to PARTIAL and
# carries it with FILL, in DALI too: only a batch size dividing the 4 keeps epochs whole.)
@pytest.mark.parametrize("policy,bs,pad", [("PARTIAL", 4, True), ("PARTIAL", 3, True), ("FILL", 3, True),
                                           ("PARTIAL", 4, False), ("FILL", 4, False)])
def test_sharded_shuffle_every_sample_every_epoch(files, policy, bs, pad):
    its = [DALIGenericIterator([_pipe(files, 10, bs, 3, r, random_shuffle=True, pad_last_batch=pad)],
                               ["id"], reader_name="Reader", auto_reset=True,
                               last_batch_policy=getattr(LastBatchPolicy, policy))
           for r in range(3)]
    assert [len(it) for it in its] == [2 if bs == 3 else 1] * 3
    per_rank = [_epochs(it, reset=False) for it in its]
    for e in range(3):
        seen = [i for rank in per_rank for b in rank[e] for i in b]
        assert set(seen) == set(range(10)), (e, per_rank)
        if policy == "PARTIAL":  # each rank its ceil(10 / 3) = 4 samples, 2 of them read twice
            assert [sum(len(b) for b in rank[e]) for rank in per_rank] == [4, 4, 4]


def _ckpt_pipe(files, n, bs, shards=1, shard=0, checkpoint=None):
    kw = {"checkpoint": checkpoint} if checkpoint is not None else {}

    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=1234, enable_checkpointing=True, **kw)
    def p():
        return fn.readers.file(files=files[:n], labels=list(range(n)), name="Reader",
                               num_shards=shards, shard_id=shard)[1]
    return p()


# A checkpoint taken at an epoch's end (auto_reset off, before reset()): in DALI 2.4 the restored
# iterator's next `for` loop reads the next epoch, as the original's does; torch_dali's restored
# iterator gave an empty epoch first, so a resumed training loop lost one epoch.
@pytest.mark.parametrize("n,shards,policy,expected", [
    (10, 1, "FILL", [[[2, 3, 4, 5], [6, 7, 8, 9]], [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]]),
    (17, 1, "DROP", [[[3, 4, 5, 6], [7, 8, 9, 10], [11, 12, 13, 14], [15, 16, 0, 1]],
                     [[6, 7, 8, 9], [10, 11, 12, 13], [14, 15, 16, 0], [1, 2, 3, 4]]]),
    (10, 3, "PARTIAL", [[[4, 5, 6]], [[8, 9, 0, 1]]]),
])
def test_checkpoint_at_epoch_end_resumes_with_next_epoch(files, n, shards, policy, expected):
    pol = getattr(LastBatchPolicy, policy)
    it = DALIGenericIterator([_ckpt_pipe(files, n, 4, shards)], ["id"], reader_name="Reader",
                             last_batch_policy=pol)
    [d for d in it]  # the whole first epoch; no reset()
    cp = it.checkpoints()[0]
    assert _epochs(it, 2) == expected  # the original goes on
    restored = DALIGenericIterator([_ckpt_pipe(files, n, 4, shards, checkpoint=cp)], ["id"],
                                   reader_name="Reader", last_batch_policy=pol)
    assert _epochs(restored, 2) == expected


# The same with prepare_first_batch=False: DALI 2.4's restored iterator gives an empty epoch first
# there (on_purpose.md); here it goes on as the original (DALI's ids of the original's next epochs).
# DROP with the checkpoint after the epoch's last whole batch counts as its end too.
@pytest.mark.parametrize("n,policy,cut,expected", [
    (10, "FILL", None, [[[2, 3, 4, 5], [6, 7, 8, 9]], [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]]),
    (10, "DROP", 2, [[[2, 3, 4, 5], [6, 7, 8, 9]], [[4, 5, 6, 7], [8, 9, 0, 1]]]),
])
def test_checkpoint_at_epoch_end_without_first_batch(files, n, policy, cut, expected):
    pol = getattr(LastBatchPolicy, policy)
    it = DALIGenericIterator([_ckpt_pipe(files, n, 4)], ["id"], reader_name="Reader", last_batch_policy=pol,
                             prepare_first_batch=False)
    for k, _ in enumerate(it):
        if cut is not None and k + 1 == cut:
            break
    cp = it.checkpoints()[0]
    assert _epochs(it, 2) == expected
    restored = DALIGenericIterator([_ckpt_pipe(files, n, 4, checkpoint=cp)], ["id"], reader_name="Reader",
                                   last_batch_policy=pol, prepare_first_batch=False)
    assert _epochs(restored, 2) == expected


# Dynamic mode (ndd.readers.*.next_epoch) over a sharded random_shuffle reader: the epochs were cut
# at DALI's contiguous sizes (3, 3, 4) while the reader read ceil(10/3) = 4 per rank, so an epoch
# began with the previous one's last sample and one sample of 10 was never read in an epoch.
@pytest.mark.parametrize("bs,pad", [(None, False), (2, False), (None, True), (4, True)])
def test_ndd_sharded_shuffle_every_sample_every_epoch(files, bs, pad):
    import torch_dali.experimental.dynamic as ndd

    def ids(out):
        lab = out[1].torch() if hasattr(out[1], "torch") else out[1]
        return torch.as_tensor(lab).reshape(-1).tolist()

    readers = [ndd.readers.File(files=files[:10], labels=list(range(10)), num_shards=3, shard_id=r,
                                random_shuffle=True, pad_last_batch=pad, seed=3) for r in range(3)]
    for _ in range(3):
        per_rank = [[i for out in rd.next_epoch(batch_size=bs) for i in ids(out)] for rd in readers]
        assert [len(x) for x in per_rank] == [4, 4, 4]
        assert set(sum(per_rank, [])) == set(range(10)), per_rank


# A source giving a short batch (10 samples in batches of 4) under `size=`: DALI 2.4 refuses it
# (AssertionError) since epochs are counted in whole batches; torch_dali counted 4 for the batch of 2,
# so with a cycling source the next epoch lost samples 8 and 9 (and a batch of the one after).
@pytest.mark.parametrize("policy", ["FILL", "DROP", "PARTIAL"])
def test_short_batch_under_size_is_refused(policy):
    import numpy as np

    def batches():
        for k in range(0, 10, 4):
            yield [np.array([i], np.int32) for i in range(k, min(k + 4, 10))]

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def p():
        return fn.external_source(batches, cycle="raise")

    it = DALIGenericIterator([p()], ["id"], size=10, last_batch_policy=getattr(LastBatchPolicy, policy))
    with pytest.raises(AssertionError):
        [d for d in it]


# A dynamic-mode reader of shard 0 of 3 (10 samples, batch 4: an epoch is one batch) restored from a
# state taken after epoch 1: the restored stream started at the shard of the *next* epoch (the state
# kept the rotated shard id), so it repeated [4, 5, 6, 7] and shifted every later batch. DALI 2.4's
# ids of the original's next two epochs (its own restored reader gives them too).
@pytest.mark.parametrize("shard,expected", [(0, [[[8, 9, 0, 1]], [[2, 3, 4, 5]]]),
                                            (1, [[[1, 2, 3, 4]], [[5, 6, 7, 8]]]),
                                            (2, [[[4, 5, 6, 7]], [[8, 9, 0, 1]]])])
def test_ndd_state_of_a_sharded_reader(files, shard, expected):
    import torch_dali.experimental.dynamic as ndd

    def make():
        return ndd.readers.File(files=files[:10], labels=list(range(10)), num_shards=3, shard_id=shard,
                                seed=3, enable_checkpointing=True)

    def epoch(rd):
        return [torch.as_tensor(out[1].torch()).reshape(-1).tolist() for out in rd.next_epoch(batch_size=4)]

    rd = make()
    epoch(rd), epoch(rd)
    state = rd.get_state()
    assert [epoch(rd), epoch(rd)] == expected
    restored = make()
    restored.set_state(state)
    assert [epoch(restored), epoch(restored)] == expected
