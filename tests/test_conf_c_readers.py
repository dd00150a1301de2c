"""Reader argument errors as DALI 2.4 raises them."""
from __future__ import annotations

import pytest

from torch_dali import Pipeline, fn
from torch_dali.errors import ArgumentError


def test_an_unknown_argument_is_a_key_error_naming_the_operator():
    with Pipeline(2, 1, None):
        with pytest.raises(KeyError) as e:
            fn.readers.coco(file_root="/tmp", annotations_file="a.json", preprocessed_annotations_dir="/tmp")
    assert isinstance(e.value, ArgumentError)  # still torch_dali's argument error (a ValueError)
    # unquoted (a KeyError's str() would quote it): the argument, the operator, then its arguments
    assert str(e.value).startswith("COCOReader: unknown argument `preprocessed_annotations_dir` (operator "
                                   "readers.coco has no such argument)")
    assert "annotations_file" in str(e.value)
