"""The functional API (`fn.resize(...)`, `fn.readers.file(...)`), generated from the schemas."""
from __future__ import annotations

import sys
from types import ModuleType

import functools
from typing import Any, Callable

from . import ops as _ops  # noqa: F401 - registers every schema
from .ops._registry import all_schemas, make_function
from .ops._schema import plain_inputs, plain_kwargs


def _plain(f: Callable[..., Any], op: str) -> Callable[..., Any]:
    """The op function taking what DALI's takes: constants as inputs, NumPy scalars and
    `types.Constant` as arguments."""
    @functools.wraps(f)
    def call(*inputs: Any, **kwargs: Any) -> Any:
        kwargs = plain_kwargs(kwargs)
        return f(*plain_inputs(op, inputs, kwargs), **kwargs)
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
        if schema.name == "external_source":  # DALI's signature: the source may be positional
            from .ops.external_source_api import external_source
            setattr(target, parts[-1], external_source)
            continue
        setattr(target, parts[-1], _plain(make_function(schema), schema.display_name()))



def _deprecated(f: Callable[..., Any], old: str, new: str) -> Callable[..., Any]:
    warned: list[bool] = []

    @functools.wraps(f)
    def call(*inputs: Any, **kwargs: Any) -> Any:
        if not warned:
            warned.append(True)
            import warnings
            warnings.warn(f"fn.{old} is deprecated in DALI; use fn.{new}", DeprecationWarning, stacklevel=2)
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
        setattr(_space(this, parts[:-1]), parts[-1], _deprecated(target, old, new))


# Words DALI keeps whole in its functional names (`BBox` -> `bbox`, not `b_box`).
_WHOLE_WORDS = {"b_box": "bbox", "mx_net": "mxnet", "tf_record": "tfrecord"}


def _to_snake_case(name: str) -> str:
    """DALI's class-to-function name rule (`RandomBBoxCrop` -> `random_bbox_crop`): a word starts at
    an upper-case letter that follows a lower-case one or is followed by one (`COCOReader` ->
    `coco_reader`), except at the start or after an underscore; digits join the word before."""
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i > 0 and name[i - 1] != "_":
            follows_lower = name[i - 1].islower()
            lower_next = i + 1 < len(name) and name[i + 1].islower()
            if follows_lower or lower_next:
                out.append("_")
        out.append(c.lower())
    snake = "".join(out)
    for split, whole in _WHOLE_WORDS.items():
        snake = snake.replace(split, whole)
    return snake


_generate()
_generate_legacy()
