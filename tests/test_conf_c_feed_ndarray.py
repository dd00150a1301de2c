"""plugin.pytorch.feed_ndarray's mismatch errors: AssertionErrors (DALI asserts),
and torch_dali's ArgumentError still."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import Pipeline, fn
from torch_dali.errors import ArgumentError
from torch_dali.plugin.pytorch import feed_ndarray


def _batch():
    pipe = Pipeline(1, 1, None)
    with pipe:
        pipe.set_outputs(fn.external_source(source=[[np.zeros(1, np.float32)]]))
    return pipe.run()[0]


def test_an_element_type_mismatch_is_an_assertion_error_naming_both_types():
    with pytest.raises(AssertionError, match=r"element types differ: torch.float32 \(data\) vs torch.int8 "
                                             r"\(target\)") as e:
        feed_ndarray(_batch(), torch.empty(1, dtype=torch.int8))
    assert isinstance(e.value, ArgumentError)


def test_a_shape_mismatch_is_an_assertion_error_too():
    with pytest.raises(AssertionError, match=r"shapes differ: \[1, 1\] \(data\) vs \[3\] \(target\)"):
        feed_ndarray(_batch(), torch.empty(3, dtype=torch.float32))
    out = torch.empty(1, 1, dtype=torch.float32)
    assert feed_ndarray(_batch(), out) is out
