"""Regenerates tests/reference/auto_aug_tables.npz from NVIDIA DALI's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.auto_aug_make      # from the repository root

Every DALI expectation in tests/test_auto_aug_ops.py comes from this file's output. Needs a Python
with `nvidia.dali`; never imports torch_dali.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import auto_aug_cases as C
from . import table_file
from .auto_aug_dali import run_suite


def main() -> None:
    tables: dict[str, np.ndarray] = {}
    for name in C.SUITES:
        tables.update(run_suite(name))
    out = Path(__file__).with_name(C.TABLES)
    meta = table_file.save(out, tables, "tests.reference.auto_aug_make")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays): {meta}")


if __name__ == "__main__":
    main()
