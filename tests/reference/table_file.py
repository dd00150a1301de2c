"""Writing a reference table file (the generators under tests/reference run in the DALI venv): the
arrays plus a `meta` entry saying which DALI, NumPy and Python made them, when, and with what command."""
from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

import numpy as np


def save(out: Path, tables: dict[str, np.ndarray], module: str) -> dict[str, str]:
    """Writes `tables` (with their meta) to the .npz `out`; `module` is the generator's module name
    (`tests.reference.<name>`), for the command in the meta. Returns the meta."""
    import nvidia.dali
    meta = {"dali": nvidia.dali.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
            "date": datetime.date.today().isoformat(), "command": f"/work/dali-venv/bin/python -m {module}"}
    tables["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez_compressed(out, **tables)
    return meta
