"""`nvidia.dali.pickling` as in DALI 2.4: `pickle_by_value` marks a global function that DALI's
worker processes (a parallel external source started with `spawn`) should pickle by value.

torch_dali runs parallel sources on the pipeline's threads, so nothing is ever pickled; the mark is
set and the same objects are refused, so that code written for DALI imports and runs unchanged."""
from __future__ import annotations

import inspect
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
MARK = "_dali_pickle_by_value"  # the attribute DALI 2.4 sets (and its workers' pickler reads)


def pickle_by_value(fun: F) -> F:
    """Marks `fun` (a `def` or a lambda) to be pickled by value; anything else is a TypeError (as
    in DALI 2.4: callable objects, builtins and bound methods are refused)."""
    if not inspect.isfunction(fun):
        raise TypeError(f"pickle_by_value: {fun!r} is not a Python function; only functions defined "
                        "with `def` or `lambda` can be marked")
    setattr(fun, MARK, True)
    return fun
