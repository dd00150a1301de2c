"""The functional API (`fn.resize(...)`, `fn.readers.file(...)`), generated from the schemas."""
from __future__ import annotations

import sys
from types import ModuleType

from . import ops as _ops  # noqa: F401 - registers every schema
from .ops._registry import all_schemas, make_function


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
        setattr(target, parts[-1], make_function(schema))


_generate()
