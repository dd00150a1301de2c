"""`ndd.capture` (DALI 2.4's capture mode): `invariant(value)` marks a value that does not change
between the iterations of a `reader.next_epoch(..., capture=True)` loop. DALI replays such a
loop as a pipeline and needs the promise to reuse values it cannot prove stable; torch_dali runs
every iteration's ops as they come (the same results), so the marker changes nothing and the
value itself is returned: it compares, converts and is accepted by ops exactly as the value."""
from __future__ import annotations

from typing import TypeVar

__all__ = ["invariant"]

_T = TypeVar("_T")


def invariant(value: _T) -> _T:
    """Marks `value` as unchanging across capture-mode iterations; returns it (see the module)."""
    return value
