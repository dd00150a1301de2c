"""DALIGenericIterator / DALIClassificationIterator: epochs and last-batch policies as DALI 2.4 gives
them (the expected lists below were produced by DALI 2.4's own iterator on the same reader setup)."""
from __future__ import annotations

import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError
from torch_dali.plugin.pytorch import DALIClassificationIterator, DALIGenericIterator, LastBatchPolicy
from torch_dali.sample_data import make_image_folder


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    items = make_image_folder(tmp_path_factory.mktemp("it"), images_per_class=2, seed=0, mean_hw=(32, 32))
    return [p for p, _ in items][:10]


def _epochs(files, policy, pad, n=3):
    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def p():
        _, labels = fn.readers.file(files=files, labels=list(range(10)), name="R", pad_last_batch=pad)
        return labels

    it = DALIGenericIterator(p(), ["l"], reader_name="R", last_batch_policy=policy, auto_reset=True)
    out = [[b[0]["l"].flatten().tolist() for b in it] for _ in range(n)]
    return out, it


A, B, C = [0, 1, 2, 3], [4, 5, 6, 7], [8, 9]

DALI_2_4 = {
    (LastBatchPolicy.FILL, False): [[A, B, C + [0, 1]], [[2, 3, 4, 5], [6, 7, 8, 9]], [A, B, C + [0, 1]]],
    (LastBatchPolicy.FILL, True): [[A, B, C + [9, 9]]] * 3,
    (LastBatchPolicy.DROP, True): [[A, B]] * 3,
    (LastBatchPolicy.PARTIAL, False): [[A, B, C], [[2, 3, 4, 5], [6, 7, 8, 9], [0, 1]],
                                       [B, C + [0, 1], [2, 3]]],
    (LastBatchPolicy.PARTIAL, True): [[A, B, C]] * 3,
}


@pytest.mark.parametrize("policy,pad", list(DALI_2_4))
def test_epochs_match_dali(files, policy, pad):
    got, it = _epochs(files, policy, pad)
    assert got == DALI_2_4[(policy, pad)]


def test_drop_without_padding(files):
    # DALI 2.4 (measured): the reader's stream runs on, and the batch that reaches past the epoch's
    # end is read and dropped, so the third epoch starts at sample 4
    got, it = _epochs(files, LastBatchPolicy.DROP, False)
    assert got == [[A, B], [[2, 3, 4, 5], [6, 7, 8, 9]], [B, [8, 9, 0, 1]]] and len(it) == 2


def test_without_auto_reset_needs_reset(files):
    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def p():
        jpegs, labels = fn.readers.file(files=files, labels=list(range(10)), name="R", pad_last_batch=True)
        return fn.resize(fn.decoders.image(jpegs), resize_x=16, resize_y=16), labels

    it = DALIClassificationIterator(p(), reader_name="R", last_batch_policy=LastBatchPolicy.PARTIAL)
    first = list(it)
    assert len(first) == 3 and set(first[0][0]) == {"data", "label"}
    assert first[-1][0]["label"].shape[0] == 2
    with pytest.raises(StopIteration):  # epoch over: next() stops until reset()
        next(it)
    it.reset()
    assert len(list(it)) == 3
    assert len(list(it)) == 3  # a new `for` over a used iterator starts the next epoch, as in DALI


def test_bad_arguments(files):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        _, labels = fn.readers.file(files=files, name="R")
        return labels

    with pytest.raises(ArgumentError, match="single pipeline"):  # no size: one pipeline, ends on StopIteration
        DALIGenericIterator([p(), p()], ["l"])
    with pytest.raises(ArgumentError, match="duplicate"):
        DALIGenericIterator(p(), ["l", "l"], reader_name="R")
    with pytest.raises(ArgumentError, match="outputs"):
        next(iter(DALIGenericIterator(p(), ["a", "b"], reader_name="R")))


def test_hand_given_size_warns_as_dali(files, recwarn):
    # DALI 2.4 warns (category exactly `Warning`) when an iterator is given `size=` without
    # `reader_name=`, as DALI's PyTorch examples do; reader_name= or size=-1 give no such warning
    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def p():
        _, labels = fn.readers.file(files=files, labels=list(range(10)), name="R")
        return labels, labels

    DALIGenericIterator(p(), ["l", "m"], size=10)
    DALIClassificationIterator(p(), size=10, last_batch_padded=True, last_batch_policy=LastBatchPolicy.PARTIAL)
    hits = [w for w in recwarn.list if w.category is Warning]
    assert len(hits) == 2 and "reader_name" in str(hits[0].message)
    recwarn.clear()
    DALIGenericIterator(p(), ["l", "m"], reader_name="R")
    assert not [w for w in recwarn.list if w.category is Warning]


def _sharded(files, n_shards=3):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p(sid):
        _, labels = fn.readers.file(files=files, labels=list(range(10)), shard_id=sid, num_shards=n_shards,
                                    name="R")
        return labels
    return [p(sid=i) for i in range(n_shards)]


# DALI 2.4, 3 pipelines (shards of 10 samples: 3, 3, 4), batch 2, size=10 without reader_name: the size
# is the total over the pipelines, so one step counts 3 * 2 samples
LEGACY_DALI_2_4 = {
    LastBatchPolicy.FILL: (2, [[[0, 1], [3, 4], [6, 7]], [[2, 3], [5, 6], [8, 9]]],
                           [[[4, 5], [7, 8], [0, 1]], [[6, 7], [9, 0], [2, 3]]], [[[8, 9], [1, 2], [4, 5]]]),
    LastBatchPolicy.PARTIAL: (2, [[[0, 1], [3, 4], [6, 7]], [[2, 3], [5, 6]]],
                              [[[4, 5], [7, 8], [0, 1]], [[6, 7], [9, 0]]],
                              [[[8, 9], [1, 2], [4, 5]], [[0, 1], [3, 4]]]),
    LastBatchPolicy.DROP: (1, [[[0, 1], [3, 4], [6, 7]]], [[[4, 5], [7, 8], [0, 1]]], [[[8, 9], [1, 2], [4, 5]]]),
}


@pytest.mark.parametrize("policy", list(LEGACY_DALI_2_4))
def test_size_counts_every_pipeline(files, policy, recwarn):
    it = DALIGenericIterator(_sharded(files), ["l"], size=10, last_batch_policy=policy, auto_reset=True)
    n, *epochs = LEGACY_DALI_2_4[policy]
    got = [[[d["l"].flatten().tolist() for d in b] for b in it] for _ in range(3)]
    assert len(it) == n and it.size == it._size == 10
    assert got == epochs


def test_private_size_as_dali_examples_read_it(files):
    # DALI's resnet50 example computes `ceil(loader._size / batch_size)`; DALI 2.4's values for 10
    # samples in 3 shards, batch 2: the largest shard rounded up to whole batches (4), the shard
    # size rounded down with DROP (3); with pad_last_batch the padded epoch size per shard
    it = DALIGenericIterator(_sharded(files), ["l"], reader_name="R")
    assert it._size == it.size == 4 and len(it) == 2
    it = DALIGenericIterator(_sharded(files), ["l"], reader_name="R", last_batch_policy=LastBatchPolicy.DROP)
    assert it._size == 3 and len(it) == 1

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def one():
        _, labels = fn.readers.file(files=files, labels=list(range(10)), name="R", pad_last_batch=True)
        return labels
    it = DALIGenericIterator(one(), ["l"], reader_name="R", last_batch_policy=LastBatchPolicy.PARTIAL)
    assert it._size == it.size == 10 and len(it) == 3  # the padded epoch size (10 here: one shard)


# DALI 2.4 (measured): 10 samples in 3 shards (3, 3, 4) read by batches of 3, shards moving each
# epoch. Every rank takes the same number of steps in an epoch (a rank with fewer would leave DDP's
# all-reduce waiting for ever): FILL carries what each read past its shard into the next epoch;
# PARTIAL returns the samples left of its shard, or none; DROP ends before a batch reaching past one.
UNEVEN = {
    LastBatchPolicy.FILL: [[[[0, 1, 2], [3, 4, 5]], [[6, 7, 8]], [[9, 0, 1]]],
                           [[[3, 4, 5], [6, 7, 8]], [[9, 0, 1]], [[2, 3, 4]]],
                           [[[6, 7, 8], [9, 0, 1]], [[2, 3, 4]], [[5, 6, 7]]]],
    LastBatchPolicy.PARTIAL: [[[[0, 1, 2], []], [[6, 7, 8], []], [[2, 3, 4], [5]]],
                              [[[3, 4, 5], []], [[9, 0, 1], [2]], [[5, 6, 7], []]],
                              [[[6, 7, 8], [9]], [[2, 3, 4], []], [[8, 9, 0], []]]],
    LastBatchPolicy.DROP: [[[[0, 1, 2]], [[3, 4, 5]], [[6, 7, 8]]], [[[3, 4, 5]], [[6, 7, 8]], [[9, 0, 1]]],
                           [[[6, 7, 8]], [[9, 0, 1]], [[2, 3, 4]]]],
}


def _shard_pipe(files, sid, checkpoint=None):
    @pipeline_def(batch_size=3, num_threads=1, device_id=None, enable_checkpointing=True)
    def p():
        _, labels = fn.readers.file(files=files, labels=list(range(10)), name="R", shard_id=sid, num_shards=3)
        return labels
    return p(checkpoint=checkpoint) if checkpoint else p()


@pytest.mark.parametrize("policy", list(UNEVEN))
def test_uneven_shards_take_the_same_steps_on_every_rank(files, policy):
    for sid in range(3):
        it = DALIGenericIterator(_shard_pipe(files, sid), ["l"], reader_name="R", last_batch_policy=policy,
                                 auto_reset=True)
        got = [[b[0]["l"].flatten().tolist() for b in it] for _ in range(3)]
        assert got == UNEVEN[policy][sid], (sid, got)


def test_uneven_shards_resume_from_an_iterator_checkpoint(files):
    """The shard bookkeeping is part of the iterator's checkpoint: resumed after the first step, the
    steps that follow are those of the run that went on."""
    def rest(it):
        return [[b[0]["l"].flatten().tolist() for b in it] for _ in range(3)]

    it = DALIGenericIterator(_shard_pipe(files, 0), ["l"], reader_name="R", auto_reset=True)
    assert next(it)[0]["l"].flatten().tolist() == [0, 1, 2]
    resumed = DALIGenericIterator(_shard_pipe(files, 0, it.checkpoints()[0]), ["l"], reader_name="R",
                                  auto_reset=True)
    assert rest(it) == rest(resumed) == [[[3, 4, 5]], [[6, 7, 8]], [[9, 0, 1]]]


def test_torch_utils_submodule_as_dali():
    # DALI 2.4 (measured, CPU): nvidia.dali.plugin.pytorch.torch_utils.to_torch_tensor(sample, copy)
    # gives a torch.Tensor of the sample (copy=False shares its memory, DLPack there); a batch is
    # refused (TypeError with copy=True, RuntimeError with copy=False)
    import numpy as np

    from torch_dali.plugin import pytorch
    from torch_dali.plugin.pytorch.torch_utils import feed_ndarray, to_torch_tensor, to_torch_type

    assert feed_ndarray is pytorch.feed_ndarray and to_torch_type is pytorch.to_torch_type

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(source=lambda: [np.arange(6, dtype=np.int16).reshape(2, 3)] * 2)

    p = pipe()
    p.build()
    (out,) = p.run()
    for obj, shape in ((out[0], (2, 3)), (out.as_tensor(), (2, 2, 3))):
        for copy in (True, False):
            t = to_torch_tensor(obj, copy)
            assert type(t) is torch.Tensor and t.dtype == torch.int16 and tuple(t.shape) == shape
            assert t.flatten()[:6].tolist() == list(range(6))
            assert (t.data_ptr() == torch.as_tensor(obj).data_ptr()) is (not copy)
    with pytest.raises(TypeError):
        to_torch_tensor(out, True)
    with pytest.raises(RuntimeError):
        to_torch_tensor(out, False)
