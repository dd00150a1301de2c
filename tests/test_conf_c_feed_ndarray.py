"""plugin.pytorch.feed_ndarray's mismatch errors: AssertionErrors in DALI's words (DALI asserts),
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


def test_an_element_type_mismatch_is_an_assertion_error_in_dalis_words():
    with pytest.raises(AssertionError, match="The element type of DALI Tensor/TensorList doesn't match the "
                                             "element type of the target PyTorch Tensor:") as e:
        feed_ndarray(_batch(), torch.empty(1, dtype=torch.int8))
    assert isinstance(e.value, ArgumentError)


def test_a_shape_mismatch_is_an_assertion_error_too():
    with pytest.raises(AssertionError, match="Shapes do not match"):
        feed_ndarray(_batch(), torch.empty(3, dtype=torch.float32))
    out = torch.empty(1, 1, dtype=torch.float32)
    assert feed_ndarray(_batch(), out) is out
