"""Regenerates tests/reference/tensor_tables.npz from NVIDIA DALI's CPU backend.

    /work/dali-venv/bin/python -m tests.reference.tensor_make      # from the repository root

Every DALI expectation in tests/test_ops_tensor_*.py and tests/test_ops_reductions.py comes from
this file's output. Needs a Python with `nvidia.dali`; never imports torch_dali.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import tensor_cases as C
from . import table_file
from .tensor_dali import run_case


def encode(name: str, result: dict, tables: dict[str, np.ndarray]) -> None:
    """One case's result as table entries (shared with the live comparison)."""
    if "error" in result:
        tables[f"{name}/error"] = np.array(result["error"])
        return
    tables[f"{name}/n_out"] = np.array(len(result["outputs"]))
    for k, (samples, layout) in enumerate(zip(result["outputs"], result["layouts"])):
        tables[f"{name}/{k}/n"] = np.array(len(samples))
        tables[f"{name}/{k}/layout"] = np.array(layout)
        if len(samples) > 8 and len({(s.shape, s.dtype) for s in samples}) == 1:  # one entry, not one per sample
            tables[f"{name}/{k}/stack"] = np.stack(samples)
            continue
        for i, s in enumerate(samples):
            tables[f"{name}/{k}/{i}"] = s


def main() -> None:
    tables: dict[str, np.ndarray] = {}
    cases = C.all_cases()
    for name in cases:
        encode(name, run_case(name), tables)
    out = Path(__file__).with_name(C.TABLES)
    meta = table_file.save(out, tables, "tests.reference.tensor_make")
    print(f"wrote {out} ({out.stat().st_size} bytes, {len(cases)} cases): {meta}")


if __name__ == "__main__":
    main()
