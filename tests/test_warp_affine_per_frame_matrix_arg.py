"""warp_affine's `matrix` argument given per frame (`matrix=fn.per_frame(m)`, one 2x3 matrix per
frame of an FHWC sequence), as DALI 2.4's CPU backend takes it (DALI's `test_warp.test_video` does
so); torch_dali refused it at build. Digests: sha256 (first 16 hex digits) of DALI 2.4's outputs.
A per-frame `size` is refused, as DALI refuses it (there at run time)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from torch_dali import fn, types
from torch_dali.errors import ArgumentError
from torch_dali.pipeline import Pipeline

RNG = np.random.default_rng(7)
SEQS = [RNG.integers(0, 256, (3, 6, 5, 2), dtype=np.uint8), RNG.integers(0, 256, (2, 4, 7, 2), dtype=np.uint8)]
MATS = [np.array([[[1 + 0.2 * f, 0.1, f], [0.05, 1, -f]] for f in range(s.shape[0])], np.float32) + 0.1 * i
        for i, s in enumerate(SEQS)]


def _run(**kw):
    pipe = Pipeline(2, 1, None)
    with pipe:
        x = fn.external_source(lambda: SEQS, layout="FHWC")
        pipe.set_outputs(fn.warp_affine(x, matrix=fn.per_frame(fn.external_source(lambda: MATS)), **kw))
    pipe.build()
    return pipe.run()[0]


@pytest.mark.parametrize("kw, digests", [
    ({}, ["8ffce67db6e96fba(3, 6, 5, 2)", "fadced9bdf73e6cb(2, 4, 7, 2)"]),
    ({"interp_type": types.INTERP_NN, "fill_value": 7, "inverse_map": False},
     ["040b3a154696f974(3, 6, 5, 2)", "dff116746e309f14(2, 4, 7, 2)"]),
    ({"size": [3, 4]}, ["ac388880b866c418(3, 3, 4, 2)", "7979e24f4a1d9810(2, 3, 4, 2)"]),
])
def test_per_frame_matrix_argument_matches_dali(kw, digests):
    out = _run(**kw)
    assert out.layout() == "FHWC"
    got = [np.ascontiguousarray(np.array(out[i])) for i in range(2)]
    assert [hashlib.sha256(a).hexdigest()[:16] + str(a.shape) for a in got] == digests


def test_per_frame_size_is_refused():
    pipe = Pipeline(2, 1, None)
    with pipe:
        x = fn.external_source(lambda: SEQS, layout="FHWC")
        m = fn.per_frame(fn.external_source(lambda: MATS))
        size = fn.per_frame(fn.external_source(lambda: [np.array([[4, 3]] * 3, np.float32), np.array([[5, 9]] * 2, np.float32)]))
        pipe.set_outputs(fn.warp_affine(x, matrix=m, size=size))
    with pytest.raises(ArgumentError, match="size"):
        pipe.build()
