"""`torch_dali.plugin_manager` mirrors `nvidia.dali.plugin_manager`. DALI plugins are compiled
against DALI's C++ library; torch_dali cannot load them. Python and torch functions are ordinary
ops here (`fn.python_function`, `fn.torch_python_function`), and new ops are registered in Python."""
from __future__ import annotations

from .errors import ArgumentError


def load_library(library_path: str, global_symbols: bool = False) -> None:
    """Refuses: a DALI plugin library cannot run without DALI."""
    raise ArgumentError(
        f"plugin_manager.load_library({library_path!r}): torch_dali cannot load DALI plugins (they are built "
        "against DALI's C++ library); write the op as a torch function (fn.torch_python_function) or "
        "register a schema in Python")
