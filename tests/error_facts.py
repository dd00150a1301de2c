"""Helpers for tests of refusals: the error's type and the facts its message must name (never a
whole sentence of DALI's), and a one-batch pipeline over fixed samples to provoke them."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import numpy as np
import pytest

from torch_dali import fn
from torch_dali.pipeline import Pipeline


@contextlib.contextmanager
def raises_with(kind: type, *facts: str) -> Iterator[Any]:
    """The error is a `kind` and its message holds each of `facts`."""
    with pytest.raises(kind) as info:
        yield info
    for f in facts:
        assert f in str(info.value), (f, str(info.value))


def run_on(make: Callable[[Any], Any], samples: list[np.ndarray], layout: str | None = None) -> None:
    """One iteration of `make` applied to an external source giving `samples` (with `layout`)."""
    pipe = Pipeline(batch_size=len(samples), num_threads=1, device_id=None, seed=1)
    with pipe:
        src = fn.external_source(lambda: samples, layout=layout)
        pipe.set_outputs(make(src))
    pipe.run()
