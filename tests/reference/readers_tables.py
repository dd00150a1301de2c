"""The stored DALI outputs of the reader cases, and DALI itself when it can be imported."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from . import readers_cases as C


@functools.lru_cache(maxsize=1)
def stored() -> dict[str, np.ndarray]:
    with np.load(Path(__file__).with_name(C.TABLES)) as z:
        return {k: z[k] for k in z.files}


def meta() -> dict[str, Any]:
    return json.loads(bytes(stored()["meta"]).decode())


def expected(source: str, case: str, root: str) -> dict[str, np.ndarray]:
    """DALI's outputs of `case` ("table": stored; "live": DALI run now on the files in `root`)."""
    if source == "live":
        try:
            from .readers_make_tables import dali_case
            import nvidia.dali  # noqa: F401
        except Exception as e:  # not installed here (CI), or it cannot load
            pytest.skip(f"live DALI comparison needs nvidia.dali in this Python ({type(e).__name__}: {e}); "
                        "the stored tables were compared instead")
        return dali_case(case, root)
    prefix = case + "/"
    return {k[len(prefix):]: v for k, v in stored().items() if k.startswith(prefix)}
