"""`not_iterable(cls)`, as DALI's `_utils.hacks`: instances of a class that defines `__iter__` only
to refuse iteration (a symbolic value) stop counting as `collections.abc.Iterable`."""
from __future__ import annotations

import collections.abc
from typing import TypeVar

T = TypeVar("T", bound=type)


def not_iterable(cls: T) -> T:
    """Makes `isinstance(x, collections.abc.Iterable)` false for instances of `cls` and `iter(x)` a
    TypeError. Iterable recognises a class by a non-None `__iter__`, so that attribute becomes None
    (Python's own marker for "not iterable"); ABCs cache their answers, so Iterable's are cleared."""
    cls.__iter__ = None  # type: ignore[attr-defined]
    for abc in (collections.abc.Iterable, collections.abc.Collection, collections.abc.Reversible):
        abc._abc_caches_clear()  # type: ignore[attr-defined]
    return cls
