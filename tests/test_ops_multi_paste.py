"""multi_paste against DALI 2.4's CPU backend (cases in tests/reference/geometry_cases.py): exact
outputs for in_ids and positional inputs, absolute and relative coordinates (relative anchors
round down, relative shapes up, as DALI's), overlapping pastes in order, type conversion; the
cases DALI refuses are refused, with DALI's wording where its own tests match it."""
from __future__ import annotations

import numpy as np
import pytest

from reference import geometry_cases as G
from reference.geometry_tables import SOURCES, check_refused, dali, ours

CASES = [k for k in G.CASES if k.startswith("multi_paste/")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", CASES)
def test_matches_dali(name, source):
    want = dali(source, name)
    if isinstance(want, str):
        check_refused(name, want)
        return
    got = ours(name)
    for g, w in zip(got[0], want[0]):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name,key", [("multi_paste/err_idx", "The `in_idx` must be in range"),
                                      ("multi_paste/err_sizes", "all the input samples must have the same shape"),
                                      ("multi_paste/err_channels", "must have the same number of channels")])
def test_dali_wording(name, key):
    from torch_dali.errors import TorchDaliError
    with pytest.raises(TorchDaliError, match=key):
        ours(name)
