"""`if` on a DataNode with namedtuples as branch values: merged field by field into the same
namedtuple type, as DALI 2.4 does (measured on this pipeline: [41, 42, 41, 42], [40, 43, 40, 43])."""
from __future__ import annotations

import collections

import numpy as np

from torch_dali import fn, pipeline_def, types

NT = collections.namedtuple("NT", ["a", "b"])


def test_namedtuple_branch_values():
    @pipeline_def(enable_conditionals=True, num_threads=1, batch_size=4, device_id=None)
    def pipe():
        pred = fn.external_source(source=lambda x: np.array(x.idx_in_batch % 2), batch=False)
        data = types.Constant(np.array(42), device="cpu")
        if pred:
            out = NT(data, data + 1)
        else:
            out = NT(data - 1, data - 2)
        assert isinstance(out, NT)
        return out.a, out.b
    got = [[np.asarray(o[i]).item() for i in range(4)] for o in pipe().run()]
    assert got == [[41, 42, 41, 42], [40, 43, 40, 43]]  # was a TypeError (NT.__new__ given one list)
