"""The functional API (`fn.resize(...)`, `fn.readers.file(...)`), generated from the schemas."""
from __future__ import annotations

import sys
from types import ModuleType

import functools
from typing import Any, Callable

from . import ops as _ops  # noqa: F401 - registers every schema
from .ops._registry import all_schemas, make_function
from .ops._schema import plain_kwargs


def _plain(f: Callable[..., Any]) -> Callable[..., Any]:
    """The op function with NumPy scalars accepted for `seed` (DALI code passes `np.int64` seeds)."""
    @functools.wraps(f)
    def call(*inputs: Any, **kwargs: Any) -> Any:
        return f(*inputs, **plain_kwargs(kwargs))
    return call


def _generate() -> None:
    this = sys.modules[__name__]
    for schema in all_schemas():
        parts = schema.name.split(".")
        target: ModuleType = this
        for depth, part in enumerate(parts[:-1]):
            full = f"{__name__}." + ".".join(parts[: depth + 1])
            sub = sys.modules.get(full)
            if sub is None:
                sub = ModuleType(full)
                sys.modules[full] = sub
                setattr(target, part, sub)
            target = sub
        setattr(target, parts[-1], _plain(make_function(schema)))


_generate()

# DALI's signature: `fn.external_source(source=None, num_outputs=None, ...)`, positional allowed
from .ops.external_source import external_source  # noqa: E402
