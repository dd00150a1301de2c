"""`torch_dali._utils.hacks.not_iterable` (DALI's `_utils.hacks`)."""
from __future__ import annotations

import collections.abc

import pytest

from torch_dali._utils import hacks


def test_not_iterable_even_after_the_abc_cached_the_answer():
    class X:
        def __iter__(self):
            return iter(())

    class Y(X):
        pass

    assert isinstance(X(), collections.abc.Iterable) and isinstance(Y(), collections.abc.Iterable)
    assert hacks.not_iterable(X) is X
    assert not isinstance(X(), collections.abc.Iterable)
    assert not isinstance(Y(), collections.abc.Iterable)  # subclasses inherit it
    with pytest.raises(TypeError, match="not iterable"):
        iter(X())
    assert isinstance([], collections.abc.Iterable)
