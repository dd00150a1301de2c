"""Which samples each epoch of a framework iterator hands out, as DALI 2.4's iterators hand them out.
The expected id lists were produced by DALI 2.4 (CPU) on the same reader setup
(conformance/epochs.py runs the whole matrix beside DALI)."""
from __future__ import annotations

import pytest

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
