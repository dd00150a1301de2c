"""The functional API (`fn.resize(...)`, `fn.readers.file(...)`), generated from the schemas."""
from __future__ import annotations

import sys
from types import ModuleType

import functools
from typing import Any, Callable

from . import ops as _ops  # noqa: F401 - registers every schema
from .ops._naming import class_for as _class_for, dali_schema_name as _dali_schema_name
from .ops._naming import schema_name as _schema_name_of, to_snake_case as _to_snake_case  # noqa: F401
from .ops._registry import all_schemas as _all_schemas, make_function as _make_function
from .ops._schema import plain_inputs as _plain_inputs, plain_kwargs as _plain_kwargs


def _plain(f: Callable[..., Any], op: str) -> Callable[..., Any]:
    """The op function taking what DALI's takes: constants as inputs, NumPy scalars and
    `types.Constant` as arguments."""
    @functools.wraps(f)
    def call(*inputs: Any, **kwargs: Any) -> Any:
        kwargs = _plain_kwargs(kwargs)
        return f(*_plain_inputs(op, inputs, kwargs), **kwargs)
    return call


def _generate() -> None:
    this = sys.modules[__name__]
    for schema in _all_schemas():
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
        if schema.name == "external_source":  # DALI's signature: the source may be positional
            from .ops.external_source_api import external_source
            external_source._schema_name = "ExternalSource"  # type: ignore[attr-defined]
            setattr(target, parts[-1], external_source)
            continue
        f = _plain(_make_function(schema), schema.display_name())
        f._schema_name = _dali_schema_name(schema.name, schema.class_name)  # type: ignore
        setattr(target, parts[-1], f)



def _deprecated(f: Callable[..., Any], old: str, new: str) -> Callable[..., Any]:
    """`f` (the op `new`) under DALI's old name `old`: each call warns, as DALI's do (once: where
    the op is itself deprecated, its own function gives that warning)."""
    from .ops import legacy
    msg = "" if new in legacy.OPS else legacy.message(f"fn.{old}", f"fn.{new}")

    @functools.wraps(f)
    def call(*inputs: Any, **kwargs: Any) -> Any:
        if msg:
            legacy.warn(msg)
        return f(*inputs, **kwargs)
    return call


def _space(root: ModuleType, parts: list[str]) -> ModuleType:
    """The namespace module root.<parts...>, made where missing."""
    space = root
    for depth, part in enumerate(parts):
        sub = getattr(space, part, None)
        if sub is None:
            full = f"{root.__name__}." + ".".join(parts[: depth + 1])
            sub = sys.modules.get(full) or ModuleType(full)
            sys.modules[full] = sub
            setattr(space, part, sub)
        space = sub
    return space


def _generate_legacy() -> None:
    """DALI's deprecated functional names (ops/legacy.py), each the current op under its old name."""
    from .ops.legacy import FN
    this = sys.modules[__name__]
    for old, new in FN.items():
        target: Any = this
        for part in new.split("."):
            target = getattr(target, part)
        parts = old.split(".")
        f = _deprecated(target, old, new)
        # named as called, as DALI's aliases are (fn.caffe_reader.__name__ == "caffe_reader")
        f.__name__, f.__qualname__ = parts[-1], old
        f._schema_name = _schema_name_of(parts[:-1], _legacy_class(parts[-1], new))  # type: ignore[attr-defined]
        setattr(_space(this, parts[:-1]), parts[-1], f)


def _legacy_class(old: str, new: str) -> str:
    """The class name DALI gave the op under its old functional name `old` (`FileReader` for
    `file_reader`): one of the op's legacy class names, else the CamelCase of `old`."""
    from .ops._registry import lookup
    return _class_for(old, *lookup(new).legacy_names)


_generate()
_generate_legacy()


def __getattr__(name: str) -> Any:
    """A DALI op torch_dali leaves out (fn.optical_flow) says why; any other name is missing."""
    from .ops.legacy import not_provided
    raise not_provided(__name__, name)

