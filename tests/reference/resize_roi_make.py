"""Regenerates tests/reference/resize_roi_tables.npz from NVIDIA DALI's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.resize_roi_make      # from the repository root

Each case of resize_roi_cases.py runs through DALI; its output samples are stored (`name/i`), or,
when DALI refuses the case, its error's first line (`name/error`); of the size cases
(`SIZE_CASES`) only the output shapes, all in one array (`sizes`). Needs a Python with
`nvidia.dali`; never imports torch_dali.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import resize_roi_cases as R
from . import table_file


def run_dali(case: R.Case) -> list[np.ndarray]:
    from nvidia.dali import fn, pipeline_def, types
    return R.run_case(case, fn, pipeline_def, types)


def build() -> dict[str, np.ndarray]:
    t: dict[str, np.ndarray] = {}
    for name, case in R.CASES.items():
        try:
            outs = run_dali(case)
        except Exception as e:  # DALI refuses: the tests check torch_dali refuses too
            t[f"{name}/error"] = np.frombuffer(table_file.dali_error(e).encode(), np.uint8)
            continue
        for i, a in enumerate(outs):
            t[f"{name}/{i}"] = a
    # shapes only, every size case's samples in one array (in SIZE_CASES' order)
    t["sizes"] = np.array([a.shape[:2] for case in R.SIZE_CASES.values() for a in run_dali(case)], dtype=np.int32)
    return t


def main() -> None:
    out = Path(__file__).with_name(R.TABLES)
    tables = build()
    table_file.save(out, tables, "tests.reference.resize_roi_make")
    errors = sorted(k[:-6] for k in tables if k.endswith("/error"))
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(tables)} arrays); refused by DALI: {errors}")


if __name__ == "__main__":
    main()
