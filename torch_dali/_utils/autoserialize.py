"""DALI's Triton autoserialization (`nvidia.dali._utils.autoserialize`): `@autoserialize` marks the
one `@pipeline_def` of a model's module tree, and `invoke_autoserialize(module, filename)` finds
it and writes the pipeline it makes, serialized (torch_dali's YAML), to `filename`.

The search walks the module's attributes and every module reachable from them, each once, as
DALI's does (a marked function imported from a sibling module is found); a module whose members
cannot be listed is skipped."""
from __future__ import annotations

import inspect
import types
import warnings
from typing import Any, Callable

_MARK = "_is_autoserialize"


def autoserialize(dali_pipeline: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a `@pipeline_def` function for `invoke_autoserialize` (Triton's DALI backend calls it
    on model.py). Put it above `@pipeline_def`; anything else is a TypeError."""
    if not getattr(dali_pipeline, "_is_pipeline_def", False):
        raise TypeError("@autoserialize takes a @pipeline_def function (write @autoserialize above "
                        f"@pipeline_def); got {getattr(dali_pipeline, '__qualname__', repr(dali_pipeline))}, "
                        "which is not one")
    setattr(dali_pipeline, _MARK, True)
    return dali_pipeline


def _members(module: types.ModuleType) -> list[Any]:
    try:
        names = list(vars(module))
    except TypeError:
        return []
    out = []
    for name in names:
        try:
            out.append(getattr(module, name))
        except Exception:  # noqa: BLE001 - a lazy attribute that fails to load holds no pipeline
            continue
    return out


def find_autoserialized(head_module: types.ModuleType) -> list[Callable[..., Any]]:
    """The functions marked with @autoserialize in the module tree under `head_module`."""
    found: list[Callable[..., Any]] = []
    seen_modules: set[int] = {id(head_module)}
    seen_functions: set[int] = set()
    stack = [head_module]
    with warnings.catch_warnings():  # reading every attribute of numpy/torch trips deprecation warnings
        warnings.simplefilter("ignore")
        _walk(stack, seen_modules, seen_functions, found)
    return found


def _walk(stack: list[types.ModuleType], seen_modules: set[int], seen_functions: set[int],
          found: list[Callable[..., Any]]) -> None:
    while stack:
        module = stack.pop()
        for obj in _members(module):
            if isinstance(obj, types.ModuleType):
                if id(obj) not in seen_modules:
                    seen_modules.add(id(obj))
                    stack.append(obj)
            elif inspect.isfunction(obj) and getattr(obj, _MARK, False) is True and id(obj) not in seen_functions:
                seen_functions.add(id(obj))
                found.append(obj)


def invoke_autoserialize(head_module: types.ModuleType, filename: str) -> None:
    """Finds the one @autoserialize pipeline under `head_module`, calls it with no arguments and
    serializes the pipeline it makes to `filename`. None or several found: RuntimeError."""
    found = find_autoserialized(head_module)
    if len(found) != 1:
        names = ", ".join(f"{f.__module__}.{f.__qualname__}" for f in found) or "none"
        raise RuntimeError(f"invoke_autoserialize: the module tree of {head_module.__name__} must hold exactly "
                           f"one @autoserialize pipeline; found {len(found)} ({names})")
    found[0]().serialize(filename=filename)


__all__ = ["autoserialize", "invoke_autoserialize"]
