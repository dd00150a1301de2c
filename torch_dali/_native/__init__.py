"""Native code, in one place: the optional C++/CUDA extension (`extension`: nvJPEG decoder and the
fused image kernels, JIT-built with torch's cpp_extension) and the C helpers (`helpers`: host I/O,
JPEG region decode, crop windows, built with the system C compiler). Sources are under `csrc/`,
shipped inside the package. Everything here is optional: callers fall back to pure Python/torch.
"""
from __future__ import annotations

from . import extension, helpers
from .build import LIBRARIES


def status(load: bool = False) -> dict[str, str]:
    """One line per native library: loaded from where, or why not. With `load`, builds and loads
    each first (the CUDA extension only where CUDA is available)."""
    out: dict[str, str] = {}
    if load:
        extension.load()
    out["extension"] = extension.status()
    for lib in LIBRARIES:
        if load:
            lib.load()
        name = lib.src.stem
        if not lib.tried:
            out[name] = "not loaded yet"
        elif lib.lib is not None:
            out[name] = f"loaded ({lib.src.name})"
        else:
            out[name] = f"unavailable ({lib.reason})"
    return out


__all__ = ["extension", "helpers", "status"]
