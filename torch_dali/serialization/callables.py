"""Functions in YAML: written as `module:name`, resolved only as a person allowed.

A YAML file is data. A function reference in it resolves only to
  * one of DEFAULT_FUNCTIONS (torch_dali's own augmentations, which the shipped configs use), or
  * a function named one by one in `allow_functions` (`"mymod:fn"`): exactly that attribute of
    exactly that module, whatever it is (the caller vouches for it), or
  * a module-level Python function (a `def`, defined in that module, not imported into it) of a
    module named in `allow_modules` (exactly that module: its submodules and parents are not open).
A reference is one module path and one name: no attribute chains (`torch:os.system`), no modules
called `__main__` of packages (importing one runs a tool), no import of a module nobody named.
Only through `allow_functions` can a reference reach a C function (`os.system`, `pickle.loads`),
a class (constructing one runs its code) or any other callable object.
"""
from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..errors import ArgumentTypeError, SerializationError

DEFAULT_FUNCTIONS = ("torch_dali.augment:color_jitter", "torch_dali.augment:trivial_augment",
                     "torch_dali.augment:random_grayscale")


@dataclass(frozen=True)
class Allow:
    """What a load may resolve beyond DEFAULT_FUNCTIONS: whole modules, and single functions."""

    modules: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()


def _names(value: Any, what: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ArgumentTypeError(f"`{what}` must be a list of strings, got {value!r}")
    return frozenset(value)


def allow_list(modules: Iterable[str] | None = None, functions: Iterable[str] | None = None) -> Allow:
    """The caller's opt-ins, checked: `allow_modules=["mymod"]`, `allow_functions=["mymod:fn"]`."""
    allow = Allow(_names(modules, "allow_modules"), _names(functions, "allow_functions"))
    for ref in allow.functions:
        _split(ref, "allow_functions")
    return allow


def _module_ok(module: str) -> bool:
    parts = module.split(".")
    return module == "__main__" or (all(p.isidentifier() for p in parts) and "__main__" not in parts)


def _split(ref: Any, where: str) -> tuple[str, str]:
    """`module:name` -> (module, name), refusing anything that is not exactly that."""
    if not isinstance(ref, str) or ref.count(":") != 1:
        raise SerializationError(f"{where}: a function must be written as 'module:name', got {ref!r}")
    module, name = ref.split(":")
    if not name.isidentifier():
        raise SerializationError(f"{where}: {ref!r} is not a module-level name: a reference is one name in "
                                 "one module, with no attribute chain (write 'module:function')")
    if not _module_ok(module):
        raise SerializationError(f"{where}: {ref!r}: {module!r} is not a module that may be named (a dotted "
                                 "module path; modules called __main__ inside packages are never imported)")
    return module, name


def _module(module: str, may_import: bool) -> types.ModuleType | None:
    """The module, importing it only if a person named it; never re-runs the program (`__main__`)."""
    found = sys.modules.get(module)
    if found is not None or module == "__main__" or not may_import:
        return found
    return importlib.import_module(module)


def function_ref(fn: Callable[..., Any], where: str) -> str:
    """`module:name` for a function that can be found back by that name; refuses lambdas, closures,
    methods and partials, which have none."""
    if type(fn).__name__ == "partial":
        raise SerializationError(f"{where}: a functools.partial cannot be written to YAML; define a "
                                 "module-level function with the arguments fixed instead")
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or ""
    if "<lambda>" in qualname:
        raise SerializationError(f"{where}: a lambda cannot be written to YAML because it has no name to "
                                 "import it by; define it with `def` at module level")
    if "<locals>" in qualname:
        raise SerializationError(f"{where}: {qualname} is defined inside another function (a closure), "
                                 "so it cannot be imported by name; move it to module level and pass its "
                                 "settings as arguments or globals")
    mod = sys.modules.get(module) if isinstance(module, str) else None
    for name in (qualname, getattr(fn, "__name__", None)):
        if mod is not None and isinstance(name, str) and name.isidentifier() and vars(mod).get(name) is fn:
            return f"{module}:{name}"
    raise SerializationError(f"{where}: {fn!r} is not a module-level function of its module ({module}), so "
                             "it cannot be found back by name; use a module-level function")


def resolve_function(ref: Any, where: str, allow: Allow | None = None) -> Callable[..., Any]:
    """The function `ref` names, if DEFAULT_FUNCTIONS or `allow` lets this load have it."""
    module, name = _split(ref, where)
    allow = allow or Allow()
    by_name = ref in allow.functions or ref in DEFAULT_FUNCTIONS
    if not by_name and module not in allow.modules:
        raise SerializationError(
            f"{where}: function {ref!r} is not allowed in this load. A config may name torch_dali's own "
            f"functions ({', '.join(DEFAULT_FUNCTIONS)}) and what the caller allows: if you trust it, pass "
            f"allow_functions=['{ref}'] (--allow-function {ref}), or allow_modules=['{module}'] "
            f"(--allow-module {module}) for the functions defined in that module")
    try:
        mod = _module(module, may_import=True)
    except Exception as e:  # noqa: BLE001 - an allowed module that fails to import, for any reason
        raise SerializationError(f"{where}: cannot import module {module!r} for {ref!r}: "
                                 f"{type(e).__name__}: {e}") from None
    fn = vars(mod).get(name) if mod is not None else None  # the module's own names: no __getattr__ hook
    if fn is None:
        raise SerializationError(f"{where}: {ref!r}: module {module!r} has no {name!r}")
    if ref in allow.functions:
        if not callable(fn):
            raise SerializationError(f"{where}: {ref!r} is not callable")
        return fn
    if type(fn) is not types.FunctionType:
        raise SerializationError(
            f"{where}: {ref!r} is a {type(fn).__name__}, not a Python function defined with `def`; a "
            f"module allowed as a whole only lends its functions. If you trust it, allow it by name: "
            f"allow_functions=['{ref}'] (--allow-function {ref})")
    if name.startswith("__"):
        raise SerializationError(f"{where}: {ref!r} is a special name of the module, not one of its "
                                 f"functions; allow it by name if you mean it: allow_functions=['{ref}']")
    if fn.__module__ != module or fn.__qualname__ != name:
        raise SerializationError(
            f"{where}: {ref!r} is {fn.__module__}:{fn.__qualname__}, defined elsewhere and imported into "
            f"{module!r}; name it where it is defined, or allow it by name: allow_functions=['{ref}']")
    return fn
