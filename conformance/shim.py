"""The import shim: `nvidia.dali` and its submodules resolve to torch_dali's modules.

Only modules torch_dali has are mapped; a DALI module or name torch_dali lacks stays missing, so
the test that needs it fails with Python's own ImportError / AttributeError and the report says
what is missing. Mapping rule for `nvidia.dali.<path>`:

* `nvidia.dali` itself is a proxy module: every attribute is looked up on `torch_dali`, then as a
  mapped submodule (DALI's package imports its submodules eagerly, so `dali.backend.X` works there
  without an explicit import).
* `RENAMES` below: DALI modules whose role a differently named torch_dali module plays.
* anything else: `torch_dali.<path>` when that module exists (including the namespaces torch_dali
  generates at import, such as `torch_dali.fn.readers`), else missing.

`STAND_INS` are opt-in (`--stand-ins`): placeholders for DALI modules that test helpers import at
module top but never use in the cases, so that one missing module does not hide every case of
every file behind an ImportError. They are reported as a separate column, never as the headline.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any, Sequence

PREFIX = "nvidia.dali"

# DALI module (relative to nvidia.dali) -> the torch_dali module (relative to torch_dali) that holds
# the same public names.
RENAMES: dict[str, str] = {
    "backend_impl": "backend",       # test_utils: `from nvidia.dali.backend_impl import TensorListCPU`
    "_conditionals": "conditionals",  # `from nvidia.dali import _conditionals`
}


def _stand_in_plugin_manager() -> ModuleType:
    mod = ModuleType(f"{PREFIX}.plugin_manager")
    mod.__doc__ = "conformance stand-in: torch_dali has no plugin_manager"

    def load_library(path: str, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"conformance stand-in: torch_dali cannot load DALI plugin {path!r}")

    mod.load_library = load_library  # type: ignore[attr-defined]
    return mod


# Imported at module top by test_utils (`from nvidia.dali import plugin_manager`) and used by no case.
STAND_INS = {"plugin_manager": _stand_in_plugin_manager}


def target_name(rel: str) -> str:
    """`fn.readers` -> `torch_dali.fn.readers`; `backend_impl` -> `torch_dali.backend`."""
    parts = rel.split(".")
    for k in range(len(parts), 0, -1):
        head = ".".join(parts[:k])
        if head in RENAMES:
            return ".".join(["torch_dali", RENAMES[head], *parts[k:]])
    return "torch_dali." + rel


def _exists(name: str) -> bool:
    if name in sys.modules:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent that is a plain module, not a package
        return False


class _Proxy(ModuleType):
    """`nvidia.dali`: torch_dali's attributes, then mapped submodules."""

    def __getattr__(self, name: str) -> Any:
        import torch_dali
        if hasattr(torch_dali, name):
            return getattr(torch_dali, name)
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{PREFIX}.{name}")
            except ImportError:
                pass
        raise AttributeError(f"module 'nvidia.dali' has no attribute '{name}' (torch_dali has none)")


class _Loader(importlib.abc.Loader):
    """Hands back an existing module object; its own `__spec__` is put back after the import
    machinery overwrote it, so torch_dali's modules are left as they were."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._spec: Any = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        mod = self._make()
        self._spec = getattr(mod, "__spec__", None)
        return mod

    def exec_module(self, module: ModuleType) -> None:
        if self._spec is not None:
            module.__spec__ = self._spec


class DaliShimFinder(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: answers every `nvidia.dali*` import, so DALI itself never loads."""

    def __init__(self, stand_ins: bool = False) -> None:
        self.stand_ins = stand_ins

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "nvidia":
            if importlib.machinery.PathFinder.find_spec("nvidia") is not None:
                return None  # the real namespace package (CUDA wheels); it holds no code
            spec = importlib.machinery.ModuleSpec("nvidia", _Loader(lambda: _package("nvidia")), is_package=True)
            spec.submodule_search_locations = []
            return spec
        if fullname == PREFIX:
            spec = importlib.machinery.ModuleSpec(fullname, _Loader(_make_proxy), is_package=True)
            spec.submodule_search_locations = []
            return spec
        if not fullname.startswith(PREFIX + "."):
            return None
        rel = fullname[len(PREFIX) + 1:]
        if self.stand_ins and rel in STAND_INS:
            return importlib.machinery.ModuleSpec(fullname, _Loader(STAND_INS[rel]))
        target_mod = target_name(rel)
        if not _exists(target_mod):
            return None  # missing stays missing: Python raises ModuleNotFoundError
        return importlib.machinery.ModuleSpec(fullname, _Loader(lambda: importlib.import_module(target_mod)))


def _package(name: str) -> ModuleType:
    mod = ModuleType(name)
    mod.__path__ = []  # type: ignore[attr-defined]
    return mod


def _make_proxy() -> ModuleType:
    import torch_dali
    mod = _Proxy(PREFIX, "conformance shim: DALI's names resolved on torch_dali")
    mod.__path__ = []  # type: ignore[attr-defined]
    mod.__version__ = getattr(torch_dali, "__version__", "0")  # type: ignore[attr-defined]
    _alias_loaded()
    return mod


def _alias_loaded() -> None:
    """Registers every loaded `torch_dali.X` as `nvidia.dali.X` (and the RENAMES).

    torch_dali generates namespaces such as `torch_dali.fn.readers` inside plain modules (no
    `__path__`), which Python's import system cannot reach through a finder as submodules;
    entries in sys.modules it finds directly.
    """
    for name, mod in list(sys.modules.items()):
        if name.startswith("torch_dali."):
            sys.modules.setdefault(PREFIX + name[len("torch_dali"):], mod)
    for rel in RENAMES:
        target = sys.modules.get(target_name(rel))
        if target is not None:
            sys.modules.setdefault(f"{PREFIX}.{rel}", target)


def install(stand_ins: bool = False) -> None:
    """Puts the finder first; any real DALI module already imported is an error (a leak)."""
    leaked = [m for m in sys.modules if m == PREFIX or m.startswith(PREFIX + ".")]
    if leaked:
        raise RuntimeError(f"conformance shim installed after DALI was imported: {leaked[:5]}")
    sys.meta_path.insert(0, DaliShimFinder(stand_ins))


def real_dali_leaks() -> list[str]:
    """Modules loaded from DALI's own files (must be none on torch_dali's side)."""
    out = []
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None) or ""
        if "/nvidia/dali/" in f.replace("\\", "/"):
            out.append(name)
    return out
