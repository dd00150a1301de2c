"""The stored DALI tables, and DALI itself when it can be imported (for live comparisons)."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from . import cases as C

SOURCES = ("table", "live")  # parametrize over both: "live" runs DALI now, or skips saying why


@functools.lru_cache(maxsize=1)
def stored() -> dict[str, np.ndarray]:
    path = Path(__file__).with_name(C.TABLES)
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def meta() -> dict[str, Any]:
    return json.loads(bytes(stored()["meta"]).decode())


@functools.lru_cache(maxsize=1)
def _dali() -> tuple[ModuleType | None, str]:
    try:
        from . import dali_ops
    except Exception as e:  # not installed here (CI), or it cannot load
        return None, f"{type(e).__name__}: {e}"
    return dali_ops, ""


def dali_or_skip() -> ModuleType:
    mod, why = _dali()
    if mod is None:
        pytest.skip(f"live DALI comparison needs nvidia.dali in this Python ({why}); "
                    "the stored tables were compared instead")
    return mod


def expected(source: str, key: str, live: Any) -> np.ndarray:
    """DALI's output for `key`: from the stored tables, or `live(dali_ops)` computed now."""
    if source == "live":
        return np.asarray(live(dali_or_skip()))
    return stored()[key]
