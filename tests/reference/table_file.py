"""Writing a reference table file (the generators under tests/reference run in the DALI venv): the
arrays plus a `meta` entry saying which DALI, NumPy and Python made them, when, and with what command."""
from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

import numpy as np


def dali_error(e: BaseException) -> str:
    """What a DALI error says is wrong: the first line after "encountered:" (DALI's header and stack
    come before it), at most 400 characters; the error's type when it says nothing."""
    lines = [ln.strip() for ln in str(e).splitlines()]
    if "encountered:" in lines:
        lines = lines[lines.index("encountered:") + 1:]
    return next((ln for ln in lines if ln), "")[:400] or type(e).__name__


def save(out: Path, tables: dict[str, np.ndarray], module: str) -> dict[str, str]:
    """Writes `tables` (with their meta) to the .npz `out`; `module` is the generator's module name
    (`tests.reference.<name>`), for the command in the meta. Returns the meta."""
    import nvidia.dali
    meta = {"dali": nvidia.dali.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
            "date": datetime.date.today().isoformat(), "command": f"/work/dali-venv/bin/python -m {module}"}
    tables["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez_compressed(out, **tables)
    return meta
