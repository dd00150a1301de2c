"""Regenerates tests/reference/color_ops_tables.npz from NVIDIA DALI's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.color_ops_make      # from the repository root

Every DALI expectation in tests/test_ops_color_*.py comes from this file's output. Needs a Python
with `nvidia.dali`; never imports torch_dali.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import color_ops_cases as C
from . import table_file
from .color_ops_dali import run_case


def main() -> None:
    tables: dict[str, np.ndarray] = {}
    for name in C.CASES:
        *samples, layout = run_case(name)
        case = C.CASES[name]
        if case["op"].startswith("noise."):  # random: only statistics are compared
            xs = C.inputs()[case["input"]]
            for i, s in enumerate(samples):
                tables[f"{name}/{i}"] = C.noise_stats(case, xs[i], s)[0]
        else:
            for i, s in enumerate(samples):
                tables[f"{name}/{i}"] = s
        tables[f"{name}/layout"] = layout
        tables[f"{name}/n"] = np.array(len(samples))
    out = Path(__file__).with_name(C.TABLES)
    meta = table_file.save(out, tables, "tests.reference.color_ops_make")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(C.CASES)} cases): {meta}")


if __name__ == "__main__":
    main()
