"""Functions in YAML: written as `module:qualname`, resolved by import, only from allowed modules.

A YAML file is data. Loading it may import a function only from a module the caller trusts: torch,
torchvision, torch_dali, the running program (`__main__`), and the modules named in `allow_modules`.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Iterable

from ..errors import SerializationError

DEFAULT_ALLOWED = ("torch", "torchvision", "torch_dali", "__main__")


def function_ref(fn: Callable[..., Any], where: str) -> str:
    """`module:qualname` for a function that can be imported back; refuses lambdas and closures."""
    target = getattr(fn, "func", None) if type(fn).__name__ == "partial" else None
    if target is not None:
        raise SerializationError(f"{where}: a functools.partial cannot be written to YAML; define a "
                                 "module-level function with the arguments fixed instead")
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname:
        raise SerializationError(f"{where}: {fn!r} has no importable name; use a module-level function "
                                 "or a class instance defined at module level")
    if "<lambda>" in qualname:
        raise SerializationError(f"{where}: a lambda cannot be written to YAML because it has no name to "
                                 "import it by; define it with `def` at module level")
    if "<locals>" in qualname:
        raise SerializationError(f"{where}: {qualname} is defined inside another function (a closure), "
                                 "so it cannot be imported by name; move it to module level and pass its "
                                 "settings as arguments or globals")
    try:
        found = _import(module, qualname)
    except Exception:  # noqa: BLE001 - any failure means it cannot round-trip
        found = None
    if found is not fn:
        raise SerializationError(f"{where}: {module}:{qualname} does not import back to the same "
                                 "function; use a module-level function")
    return f"{module}:{qualname}"


def _import(module: str, qualname: str) -> Any:
    mod = sys.modules["__main__"] if module == "__main__" else importlib.import_module(module)
    obj: Any = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _allowed(module: str, allow: Iterable[str] | None) -> bool:
    names = set(DEFAULT_ALLOWED) | set(allow or ())
    return any(module == n or module.startswith(n + ".") for n in names)


def resolve_function(ref: str, where: str, allow: Iterable[str] | None = None) -> Callable[..., Any]:
    if not isinstance(ref, str) or ref.count(":") != 1:
        raise SerializationError(f"{where}: a function must be written as 'module:qualname', got {ref!r}")
    module, qualname = ref.split(":")
    if not _allowed(module, allow):
        raise SerializationError(
            f"{where}: function {ref!r} is from module '{module}', which this load does not allow; "
            f"allowed: {', '.join(sorted(set(DEFAULT_ALLOWED) | set(allow or ())))}. Pass "
            f"allow_modules=['{module}'] (or --allow-module {module}) if you trust it")
    try:
        fn = _import(module, qualname)
    except (ImportError, AttributeError) as e:
        raise SerializationError(f"{where}: cannot import function {ref!r}: {e}") from None
    if not callable(fn):
        raise SerializationError(f"{where}: {ref!r} is not callable")
    return fn
