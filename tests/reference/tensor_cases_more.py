"""Cases for reductions.* and tensor_resize (registered into tensor_cases' table)."""
from __future__ import annotations

from typing import Any

import numpy as np


def inputs() -> dict[str, list[np.ndarray]]:
    return {}


CASES: dict[str, dict[str, Any]] = {}
