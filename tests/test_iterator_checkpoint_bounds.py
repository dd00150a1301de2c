"""A framework iterator's position in a checkpoint (`iterator_data.shards`) is read as untrusted:
a negative counter made a restored iterator run past its epoch (4 batches of an epoch of 3), a
negative size made it empty, a shard id of another job was taken modulo the shard count. Each is
now refused; every state the iterator itself writes, at every step of every policy, still loads."""
from __future__ import annotations

import itertools

import pytest

from torch_dali.plugin.shard_epochs import ShardEpochs


def _epochs(policy, shards, n, batch, padded, stick):
    metas = [{"epoch_size": n, "number_of_shards": shards, "shard_id": k, "stick_to_shard": stick,
              "pad_last_batch": padded, "epoch_size_padded": -(-n // shards) * shards} for k in range(shards)]
    return ShardEpochs(metas, policy, batch, padded)


@pytest.mark.parametrize("policy,shards,padded,stick", list(itertools.product(("FILL", "DROP", "PARTIAL"), (1, 3),
                                                                         (False, True), (False, True))))
def test_every_state_the_iterator_writes_loads(policy, shards, padded, stick):
    for n, batch in ((5, 2), (7, 3), (10, 4)):
        e = _epochs(policy, shards, n, batch, padded, stick)
        for _ in range(40):
            _epochs(policy, shards, n, batch, padded, stick).load(e.state())
            e.advance()
            if e.ended() or e.overran():
                _epochs(policy, shards, n, batch, padded, stick).load(e.state())
                e.next_epoch()


@pytest.mark.parametrize("key,value", [("counter", -5), ("size", -1), ("counter", 10 ** 6),
                                       ("shard_ids", [0, 1, 7]), ("ahead", [0, -1, 0]), ("sizes", [2, -3, 2])])
def test_edited_positions_are_refused(key, value):
    e = _epochs("FILL", 3, 7, 2, False, False)
    e.advance()
    state = e.state()
    state[key] = value
    with pytest.raises(ValueError):
        _epochs("FILL", 3, 7, 2, False, False).load(state)
